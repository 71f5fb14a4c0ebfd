// Propagation: make other tensors look like a reference, as nvFuser's
// TransformPropagator and scheduler_utils::parallelizeAllLike.
#pragma once

#include <set>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Replays reference's splits and merges (root -> logical -> loop, so an
/// rfactor producer can be the reference) onto the selected
/// tensors (all but the reference when empty), then orders their loop axes
/// like the reference's, with the axes the reference lacks last. Tensors are
/// reached along a max-information spanning tree of producer-consumer edges
/// (through broadcasts and reductions), only through selected tensors. A
/// tensor's previous loop transforms are replaced. Inlined tensors are an
/// error: propagate before inlining.
void propagate_transformation(ir::TensorView* reference,
                              const std::vector<ir::TensorView*>& selected = {});

/// Copies the bindings of reference's first `pos` loop axes (all when -1) to
/// every mapped loop axis of the selected tensors (all when empty); a
/// ParallelType goes to one axis of a tensor, when Broadcast ties map two of
/// its axes to one reference axis (the first non-Broadcast one). `types`
/// limits which ParallelTypes are copied (all when empty); `transforms` says
/// which LoopTransforms are copied (Unroll and Unswitch by default; Vectorize
/// only when asked, and then checked per tensor).
void parallelize_all_like(ir::TensorView* reference, int pos = -1,
                          const std::vector<ir::TensorView*>& selected = {},
                          const std::set<ir::ParallelType>& types = {},
                          const std::set<ir::LoopTransform>& transforms = {
                              ir::LoopTransform::Unroll, ir::LoopTransform::Unswitch});

}  // namespace schedlab::sched
