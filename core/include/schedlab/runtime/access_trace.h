// schedlab/runtime/access_trace: every memory access of a CPU-emulated
// kernel as an event, for observers (the sanitizer, the performance model).
//
// Owns: the description of a traced launch (its access sites and buffers),
// the events, and the observer interface. The printer gives each buffer
// access of a generated kernel a site id (codegen::AccessSite): a load or
// store through SL_LD/SL_ST/SL_VLD/SL_VST, a Local array declaration
// (SL_LOCAL) or a barrier (SL_SYNC, and the barriers inside sl_block_reduce).
// On CUDA and in a plain CPU unit those macros are plain accesses; in a unit
// compiled with KernelSource::trace the CPU shim calls the host for each,
// which turns it into an event here.
// May depend on: schedlab/runtime/kernel.h and cpu_backend.h (CpuDim3) only.
// Invariants: events of one launch arrive from one OS thread, in the
// emulator's execution order: a block's events lie between its
// on_block_begin and on_block_end, and blocks do not interleave. Inside a
// block, fibers interleave only at barriers and warp exchanges, so the
// events of one barrier interval (one `epoch`) come thread after thread.
// What is *not* traced: the accesses inside the runtime header's
// sl_block_reduce workspace and sl_grid_reduce (its partials, semaphores and
// the final store of the result), which follow their own protocol.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime {

/// Where a buffer lives.
enum class MemorySpace : uint8_t {
  Global,  ///< a kernel parameter (fusion input/output or workspace)
  Shared,  ///< carved from the block's dynamic shared memory
  Local,   ///< a per-thread register array
};
const char* memory_space_name(MemorySpace s);

/// One access site of the generated kernel.
struct TraceSite {
  enum class Kind : uint8_t {
    Read,     ///< SL_LD / SL_VLD
    Write,    ///< SL_ST / SL_VST
    Declare,  ///< SL_LOCAL: a Local array comes into scope (its contents are undefined)
    Barrier,  ///< SL_SYNC: __syncthreads (or a block reduction's barriers)
  };
  Kind kind = Kind::Read;
  int buffer = -1;    ///< index into TraceKernel::buffers; -1 for a barrier
  int elements = 1;   ///< elements per access (a vector copy's width)
  int line = 0;       ///< 1-based line of the generated unit (print_cuda's text)
};

/// One buffer the kernel accesses.
struct TraceBuffer {
  std::string name;         ///< "T3", as in the generated code
  std::string label;        ///< "T3 (m)", for reports
  MemorySpace space = MemorySpace::Global;
  int elem_bytes = 4;       ///< bytes per element
  int64_t elements = 0;     ///< allocated elements at this launch (Local: per thread)
  bool initialized = false; ///< defined at launch start (a fusion input)
  const void* base = nullptr;  ///< Global: the allocation (else null)
  int64_t shared_offset = -1;  ///< Shared: byte offset in the block's dynamic smem
};

/// A traced launch, handed to every observer before its first block.
struct TraceKernel {
  std::string name;                 ///< for reports: the fusion, or the kernel's name
  std::string source;               ///< the generated unit (TraceSite::line indexes it)
  std::vector<TraceSite> sites;     ///< by site id
  std::vector<TraceBuffer> buffers; ///< by buffer id
  LaunchDims dims;
  /// The text of `line` (1-based) of `source`, trimmed; empty when out of range.
  std::string line_text(int line) const;
};

/// A block, when it begins or ends.
struct BlockEvent {
  CpuDim3 block;           ///< blockIdx
  int64_t block_linear;    ///< x + gx * (y + gy * z)
  const char* smem;        ///< the block's dynamic shared memory (byte 0)
  uint64_t barriers;       ///< barriers the block completed (on_block_end)
};

/// One load or store (or Local declaration) by one thread.
struct AccessEvent {
  int site;                 ///< TraceKernel::sites index
  int buffer;               ///< TraceKernel::buffers index
  MemorySpace space;
  bool is_write;
  const void* address;      ///< the first byte accessed
  /// A scalar store's bytes (what will be written; `address` still holds the
  /// old ones); null for reads, declarations and vector stores.
  const void* value;
  int64_t offset;           ///< bytes from the buffer's first element (may be out of range)
  int bytes;                ///< bytes accessed (elements * elem_bytes)
  /// Inside the buffer (and, for Shared, inside the launch's dynamic shared
  /// memory). An access that is not goes to a zeroed scratch area instead,
  /// so the kernel runs on and nothing outside the buffer is touched.
  bool in_bounds;
  CpuDim3 block, thread;    ///< blockIdx, threadIdx
  int64_t block_linear;     ///< as BlockEvent
  int32_t thread_linear;    ///< x + bx * (y + by * z): warp = thread_linear / 32
  uint64_t epoch;           ///< barriers the block completed before this access
  /// How many times this thread executed this site before, in this block:
  /// the 32 lanes of a warp at the same (site, occurrence) are one warp-wide
  /// access on the GPU (for sector and bank-conflict counting).
  uint32_t occurrence;
};

/// A barrier of a block completed (every live thread arrived, or some exited).
struct BarrierEvent {
  CpuDim3 block;
  int64_t block_linear;
  uint64_t epoch;  ///< the barrier interval that ends here (AccessEvent::epoch)
  /// Per thread (by thread_linear): the barrier site it waits at, kExited
  /// if it has exited, kNoSite at a __syncthreads the printer did not number
  /// (hand-written code). Divergent when these differ.
  const std::vector<int>* sites;
  static constexpr int kExited = -1;
  static constexpr int kNoSite = -2;
};

/// The lanes of one warp met at different warp-collective instructions
/// (ldmatrix, mma.sync: every lane must execute the same one), reported by
/// the CPU emulation of a traced unit (core/codegen/mma.cuh); or some lanes
/// wait at a warp exchange that others never reach (they exited, or wait at
/// __syncthreads), reported by the fiber scheduler, which then lets the
/// waiting lanes go on.
struct WarpDivergenceEvent {
  CpuDim3 block;
  int64_t block_linear;
  uint64_t epoch;
  int32_t first_thread;  ///< thread_linear of the warp's lane 0
  struct Lane {
    int line;                ///< the line of the generated unit it executes (0: unknown)
    std::string instruction;  ///< "mma.sync.m16n8k16", "ldmatrix.x4.trans", "__syncwarp",
                              ///< "exit", "__syncthreads", ...
  };
  std::vector<Lane> lanes;  ///< by lane
};
/// The blocks of a kernel with grid barriers (KernelSource::grid_sync) came
/// to a grid barrier: every block that has not exited waits at it, and the
/// barrier completes (on_grid_barrier); or some blocks exited while others
/// wait (a deadlock on the GPU: the waiting blocks would never be released),
/// reported with the first of each, and the waiting blocks then go on.
struct GridBarrierEvent {
  int64_t waiting = 0;          ///< blocks waiting at the grid barrier
  int64_t exited = 0;           ///< blocks that exited before it
  CpuDim3 waiting_block{};      ///< the first waiting block
  CpuDim3 exited_block{};       ///< the first block that exited (when exited > 0)
  int site = BarrierEvent::kNoSite;  ///< the barrier site the first waiting block waits at
};
/// Receives a traced launch's events. Default: ignore.
///
/// Order: on_launch_begin, then per block on_block_begin, its events and
/// on_block_end; blocks one after another. A kernel with grid barriers runs
/// its blocks interleaved: each runs until it waits at the grid barrier
/// (on_block_suspend), the next block begins or resumes (on_block_resume),
/// and once every block waits, on_grid_barrier, and the blocks resume in
/// order; every access before a grid barrier happens before every access
/// after it.
class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  virtual void on_launch_begin(const TraceKernel& /*kernel*/) {}
  virtual void on_block_begin(const BlockEvent& /*block*/) {}
  virtual void on_access(const AccessEvent& /*access*/) {}
  /// A Local array declared (`is_write` false, `bytes` its whole size).
  virtual void on_declare(const AccessEvent& /*decl*/) {}
  /// A cp.async issued its copy into Shared memory (`is_write`, no value):
  /// the bytes land later, reported then as an on_access write at the same
  /// site by the same thread (when a wait_group of that thread completes its
  /// group). Observers that count traffic ignore the issue.
  virtual void on_async_issue(const AccessEvent& /*copy*/) {}
  virtual void on_warp_divergence(const WarpDivergenceEvent& /*warp*/) {}
  virtual void on_barrier(const BarrierEvent& /*barrier*/) {}
  virtual void on_block_end(const BlockEvent& /*block*/) {}
  virtual void on_block_suspend(const BlockEvent& /*block*/) {}
  virtual void on_block_resume(const BlockEvent& /*block*/) {}
  virtual void on_grid_barrier(const GridBarrierEvent& /*barrier*/) {}
  virtual void on_launch_end() {}
};

}  // namespace schedlab::runtime
