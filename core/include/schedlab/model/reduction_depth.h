// schedlab/model: the depth of a kernel's reduction trees, for the floor of
// the time model (roofline.h, docs/model.md "6. The floor").
//
// Owns: counting, from the kernel IR, the dependent warp-shuffle levels of
// one thread's block reductions and its grid reductions. The trace cannot
// see them: sl_block_reduce's shuffles and sl_grid_reduce's protocol are not
// access sites (runtime/access_trace.h); the barriers are, and are counted
// there.
// May depend on: schedlab/lower (kir), runtime/kernel.h (LaunchDims).
// Invariants: a loop's trip count is its extent once blockDim and gridDim
// are bound; an extent that is still not a constant (a kernel compiled for
// every shape) counts once, and both sides of a branch count, as in
// runtime/work_estimate.h.
#pragma once

#include "schedlab/lower/kir.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::model {

/// Dependent warp-shuffle levels of one sl_block_reduce over `group`
/// threads: 5 for the warps' trees (__shfl over offsets 16..1), and for a
/// group of several warps 5 more for the warps' partials when the group is
/// whole warps, else a serial fold of one step per further warp.
int block_reduce_levels(int64_t group);

struct ReductionDepth {
  double shuffle_levels = 0;   ///< over one thread's block reductions
  double grid_reductions = 0;  ///< sl_grid_reduce calls on one thread's path
  double grid_barriers = 0;    ///< grid-persistent allreduces' grid barriers on one thread's path
};

ReductionDepth reduction_depth(const kir::Kernel& kernel, const runtime::LaunchDims& dims);

}  // namespace schedlab::model
