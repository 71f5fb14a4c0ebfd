// schedlab/runtime: the CPU backend (docs/architecture.md: runtime).
//
// Owns: running the *same* CUDA translation unit the GPU runs on the host.
// The unit is prefixed with a light shim (cpu_shim()), compiled by the host
// C++ compiler into a shared object, cached on disk by hash, loaded with
// Boost.DLL, and launched block by block over a pool of worker threads. A
// kernel with __syncthreads runs each CUDA thread as a Boost.Context fiber; a
// kernel without one runs its threads as a plain loop.
// May depend on: schedlab/base, schedlab/runtime/kernel.h and device.h.
// Invariants: the kernel unit never includes Boost or schedlab headers (a
// light unit compiles in ~60 ms, one with Boost.Context in ~1 s); everything
// the kernel needs from the host crosses the small C ABI below. Timings are
// labelled "cpu-emulation".
//
// Kernel-side ABI. Besides schedlab_kernel_entry (kernel.h), the shim makes
// every compiled unit export
//   extern "C" CpuThreadState* schedlab_cpu_thread_state();
//   extern "C" int schedlab_cpu_bind(const CpuHooks* hooks);
// The thread-index variables and the shared-memory pointer live in the
// unit's own thread_local CpuThreadState, so each worker OS thread has its own
// copy and the unit needs no symbol from the host program (which links
// libschedlab statically and exports nothing). The fiber scheduler writes
// thread_idx before resuming each fiber; __syncthreads calls hooks->syncthreads;
// the warp shuffles and __syncwarp call hooks->warp_exchange.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "schedlab/runtime/device.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime {

/// Bumped whenever CpuThreadState or CpuHooks change layout; the shim and
/// the host must agree (schedlab_cpu_bind returns the shim's version).
inline constexpr int kCpuAbiVersion = 4;

/// CUDA's dim3, as the shim declares it.
struct CpuDim3 {
  unsigned x, y, z;
};

/// One worker thread's view of the launch, mirrored by the shim's struct.
struct CpuThreadState {
  CpuDim3 thread_idx;  ///< threadIdx of the fiber (or loop iteration) running now
  CpuDim3 block_idx;   ///< blockIdx of the block this worker runs
  CpuDim3 block_dim;   ///< blockDim
  CpuDim3 grid_dim;    ///< gridDim
  char* smem;          ///< this block's dynamic shared memory (SL_DYNAMIC_SMEM)
};

/// The warp-level operations, as the shim passes them to CpuHooks::warp_exchange.
enum class CpuWarpOp : int {
  Idx = 0,       ///< __shfl_sync: arg is srcLane
  Xor = 1,       ///< __shfl_xor_sync: arg is laneMask
  Up = 2,        ///< __shfl_up_sync: arg is delta
  Down = 3,      ///< __shfl_down_sync: arg is delta
  SyncWarp = 4,  ///< __syncwarp: no value
};

/// Host functions handed to a unit once, when it is loaded.
struct CpuHooks {
  int abi_version;        ///< kCpuAbiVersion
  void (*syncthreads)();  ///< the block barrier (switches to the fiber scheduler)
  /// A warp barrier among the lanes of `mask` that exchanges `value` (the
  /// caller's bits, up to 8 bytes): returns the bits of the source lane that
  /// `op`, `arg` and `width` select, as PTX shfl.sync defines it.
  unsigned long long (*warp_exchange)(int op, unsigned mask, unsigned long long value, int arg,
                                      int width);
  /// The access trace (access_trace.h), called by units compiled with
  /// KernelSource::trace only. `access`: site `site` reads (write = 0) or
  /// writes `bytes` at byte `offset` of the buffer starting at `base`
  /// (`value`: the bytes a store writes, or null when unknown); returns the
  /// address to access (a scratch area when out of bounds).
  void* (*access)(int site, const void* base, long long offset, int bytes, int write,
                  const void* value);
  /// A Local array of `bytes` at `base` was declared at `site`.
  void (*declare)(int site, const void* base, int bytes);
  /// The calling thread is about to wait at the barrier of `site`.
  void (*barrier_site)(int site);
  /// The grid-wide barrier of `site` (sl_grid_sync): returns once every
  /// thread of every block of the launch has arrived (KernelSource::grid_sync).
  void (*grid_sync)(int site);
};

/// The shim prepended to every kernel unit on the CPU: SCHEDLAB_CPU, the
/// standard headers the runtime header relies on, the CUDA qualifiers, dim3,
/// threadIdx & co., __syncthreads, SL_DYNAMIC_SMEM, atomics and fences.
std::string_view cpu_shim();

/// A CPU backend emulating `device`: a launch beyond its limits (shared
/// memory per block with opt-in, threads per block) is refused as that GPU
/// would refuse it. The device is the one plugins schedule for on this
/// backend, model::model_device_properties() (an H100 SXM, sm_90, from its
/// YAML device model): runtime cannot see the model, so the layer that
/// creates the backend passes it in. Compiled objects go to
/// cache_dir(cache_dir_flag); workers are std::thread::hardware_concurrency()
/// threads.
std::unique_ptr<Backend> make_cpu_backend(const DeviceProperties& device,
                                          const std::string& cache_dir_flag = "");

/// How many times this process has run the host compiler (all CPU backends
/// together). Lets tests and benchmarks tell a cache hit from a compile.
uint64_t cpu_compile_count();

/// Synchronizations the CPU backend has completed in this process (all
/// launches together), for benchmarks' rates: block barriers (one per
/// __syncthreads of a block) and the thread arrivals at them, warp exchanges
/// (one per completed __shfl*_sync/__syncwarp of a group of lanes) and the
/// lanes that took part. Blocks add theirs when they finish.
struct CpuSyncCounts {
  uint64_t barriers = 0;
  uint64_t thread_barriers = 0;
  uint64_t exchanges = 0;
  uint64_t thread_exchanges = 0;
};
CpuSyncCounts cpu_sync_counts();

}  // namespace schedlab::runtime
