// The host half of the CPU backend's access trace (private to core/runtime):
// the hooks a SCHEDLAB_TRACE unit calls for every access site, turned into
// access_trace.h events for the launch's observer.
//
// A traced launch runs its blocks one after another on the calling thread
// (Executor::run_traced), so one TraceContext per launch, reached through a
// thread_local, sees every event in execution order and needs no lock.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "schedlab/runtime/access_trace.h"

namespace schedlab::runtime::cpu {

/// The `write` argument of the access hook: 0 a read, 1 a write, 2 the issue
/// of a cp.async into Shared memory (mma.cuh; its landing is a write), 3 a
/// warp whose lanes met at different warp-collective instructions (mma.cuh's
/// sl_tc_meet, from the warp's lane 0: site -1, `base` the 32 lanes' source
/// lines (int), `offset` the warp's first thread, `value` the 32 lanes'
/// instruction names (const char*)).
inline constexpr int kTraceRead = 0;
inline constexpr int kTraceWrite = 1;
inline constexpr int kTraceAsyncIssue = 2;
inline constexpr int kTraceWarpDivergence = 3;

class TraceContext {
 public:
  TraceContext(const TraceKernel& kernel, AccessObserver& observer, CpuThreadState* state);
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  /// st->block_idx is set and the shared memory is in place.
  void begin_block(int64_t block_linear);
  void end_block();
  /// Grid barriers: the block running now stops at one (its state is kept),
  /// and a block stopped earlier goes on (st->block_idx and smem are its).
  void suspend_block();
  void resume_block(int64_t block_linear);
  /// Every block came to a grid barrier (or some exited): the observer's
  /// on_grid_barrier.
  void grid_barrier(const GridBarrierEvent& e) { observer_.on_grid_barrier(e); }
  /// A barrier completed; `sites[t]`: the barrier site thread t waits at, or
  /// -1 when it has exited. Starts the next epoch.
  void barrier(const std::vector<int>& sites);
  /// The barrier site thread t announced before its current wait
  /// (BarrierEvent::kNoSite for a __syncthreads without SL_SYNC).
  int announced(size_t t) const { return announced_[t]; }

  void* access(int site, const void* base, long long offset, int bytes, int write,
               const void* value);
  void declare(int site, const void* base, int bytes);
  void announce_barrier(int site) { announced_[thread_linear()] = site; }
  /// Lanes of the warp from `first_thread` at different warp-collective
  /// instructions or exchanges, or some exited (the fiber scheduler, mma.cuh).
  void warp_divergence(int32_t first_thread, std::vector<WarpDivergenceEvent::Lane> lanes);

 private:
  int32_t thread_linear() const;
  AccessEvent event(int site, const void* base, long long offset, int bytes, bool write,
                    const void* value);

  const TraceKernel& kernel_;
  AccessObserver& observer_;
  CpuThreadState* st_;
  int64_t block_linear_ = 0;
  uint64_t epoch_ = 0;
  std::vector<uint32_t> occurrences_;  // per (thread, site) in this block
  std::vector<int> announced_;         // per thread: its last barrier site
  struct Suspended {
    uint64_t epoch;
    std::vector<uint32_t> occurrences;
    std::vector<int> announced;
  };
  std::map<int64_t, Suspended> suspended_;  // blocks stopped at a grid barrier
  alignas(64) char scratch_[256];      // where out-of-bounds accesses go
};

/// The trace of the launch this thread runs (null: not traced).
extern thread_local TraceContext* tl_trace;

/// The CpuHooks entries (cpu_backend.h).
void* trace_access(int site, const void* base, long long offset, int bytes, int write,
                   const void* value);
void trace_declare(int site, const void* base, int bytes);
void trace_barrier_site(int site);

}  // namespace schedlab::runtime::cpu
