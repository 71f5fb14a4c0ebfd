// The CPU backend's executor (private to core/runtime): runs one launch of a
// loaded kernel unit over a pool of worker threads, with CUDA threads as
// fibers when the kernel has barriers.
//
// Blocks are taken in row-major order (x fastest) from a shared counter; a
// worker runs one block at a time, all of its threads on that worker's OS
// thread, so the unit's thread_local state and __shared__ variables are the
// block's. Fibers never migrate between OS threads.
#pragma once

#include <memory>
#include <string>

#include "schedlab/runtime/access_trace.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime::cpu {

/// What the executor needs from a loaded unit.
struct Entry {
  void (*entry)(void**) = nullptr;              ///< schedlab_kernel_entry
  CpuThreadState* (*thread_state)() = nullptr;  ///< the unit's per-thread state
  std::string name;                             ///< for diagnostics
  bool has_barrier = false;                     ///< run threads as fibers
  size_t local_bytes = 0;                       ///< Local arrays per thread (fiber stacks)
  bool grid_sync = false;                       ///< grid barriers: every block resident at once
};

/// A pool of worker threads that runs launches, one at a time.
class Executor {
 public:
  /// workers == 0: std::thread::hardware_concurrency().
  explicit Executor(unsigned workers = 0);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Runs every block of the launch and waits. Rethrows the first error a
  /// worker met (a deadlock, or an exception out of the kernel); the other
  /// workers stop taking blocks.
  void run(const Entry& k, const LaunchDims& dims, void** params);
  /// run() for a unit compiled with KernelSource::trace: the blocks run one
  /// after another on the calling thread, every access and barrier reported
  /// to `observer` (access_trace.h). A barrier some threads never reach is
  /// reported to the observer, not thrown: the waiting threads go on.
  void run_traced(const Entry& k, const LaunchDims& dims, void** params,
                  const TraceKernel& trace, AccessObserver& observer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The block barrier handed to every unit as CpuHooks::syncthreads.
void syncthreads();

/// The grid barrier handed to every unit as CpuHooks::grid_sync (sl_grid_sync).
void grid_sync(int site);
/// The warp exchange handed to every unit as CpuHooks::warp_exchange
/// (__shfl*_sync and __syncwarp).
unsigned long long warp_exchange(int op, unsigned mask, unsigned long long value, int arg,
                                 int width);

}  // namespace schedlab::runtime::cpu
