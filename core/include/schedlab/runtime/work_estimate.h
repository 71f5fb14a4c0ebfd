// How much work an emulated launch would do, before doing it.
//
// The CPU backend runs every thread of every block; a schedule that leaves a
// large intermediate unbound (every thread computes all of it) is correct but
// can take hours to emulate. check_emulated_work refuses such a launch up
// front with a user error that names the tensor doing the most work, instead
// of hanging a sweep or the fuzzer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/lower/kir.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime {

/// Loop iterations of one buffer's statements (stores, block and grid
/// reductions) in one thread.
struct BufferWork {
  const kir::Buffer* buffer = nullptr;
  double per_thread = 0;
};

/// A barrier arrival (__syncthreads, and each of a block reduction's) costs
/// the emulation a fiber switch: measured at 20-40 ns against about 1 ns for a
/// store (fuzz seed 1 case 2025: a Shared cache computed redundantly in every
/// thread, two barriers per element, 89 s of emulation at 3.6e9 stores), so
/// it counts as this many statement instances.
inline constexpr double kBarrierCost = 32;

/// A kir::MmaTile (one warp's mma.sync m16n8k16) in each of its lanes, as
/// statements of the accumulator: the 12 operand elements it reads and the 4
/// accumulator elements it updates, the accesses a traced run reports. Its
/// two warp exchanges and 64 multiply-adds are not traced accesses: counted
/// as barriers and statements they made one block of the matmul plugin's
/// 128x128 tensor-core tile at 4096^3 an estimated 2.7e8 traced statements
/// (over the traced budget) for a traced run of 3 s, where 2e8 takes about
/// 17 s elsewhere.
inline constexpr double kMmaTileStatements = 16;

/// What one launch would execute, before executing it: the innermost
/// statement instances each thread executes, by buffer written, largest
/// first (the product of the enclosing loops' trip counts, summed), and the
/// barriers each thread arrives at, and the mma.sync tiles (kir::MmaTile) it
/// takes part in. Predicates are ignored (an upper bound; an MmaTile is never
/// under one: the warp executes every tile, its edges zero-filled); a trip
/// count that is not known at launch (it depends on a loop variable) counts
/// as 1. Loop extents may read the parameters' sizes ("T0.size[1]"),
/// bound from `args` (param_shapes in executor.h gives them).
struct EmulatedWork {
  std::vector<BufferWork> buffers;
  double barriers_per_thread = 0;
  /// kir::MmaTile instances of one thread (a warp executes each once for its
  /// 32 lanes: the launch's mma.sync instructions are this x threads / 32 x
  /// blocks when blocks are whole warps).
  double mma_tiles_per_thread = 0;
  double threads = 1, blocks = 1;

  /// Statement instances of one thread, barriers weighted by kBarrierCost.
  double per_thread() const;
  /// per_thread() times threads times blocks.
  double total() const { return per_thread() * threads * blocks; }
};
EmulatedWork emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                           const std::vector<TensorArg>& args);

/// The budget of the CPU emulation in statement instances over the whole
/// launch: $SCHEDLAB_CPU_MAX_WORK when set (0: unlimited), else 2e10 (tens of
/// seconds of emulation). A traced launch (the sanitizer) calls the host for
/// every access, kTraceSlowdown times more slowly: its budget is that much
/// smaller.
inline constexpr double kTraceSlowdown = 100;
double cpu_work_limit(bool traced = false);

/// user_error when the whole launch (EmulatedWork::total) exceeds `limit` (0:
/// no limit), naming the buffer doing the most work, or the barriers.
void check_emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                         const std::vector<TensorArg>& args, double limit, bool traced = false);

}  // namespace schedlab::runtime
