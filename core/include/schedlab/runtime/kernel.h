// schedlab/runtime: executing generated kernels.
//
// Owns: the Backend interface (compile, launch, time), the kernel parameter
// ABI shared by every backend, and the two real backends: CUDA (NVRTC and
// the driver API loaded with dlopen) and CPU (the same CUDA source compiled
// by the host compiler against a shim, CUDA threads as fibers).
// May depend on: schedlab/base, schedlab/ir (dtypes only). It never looks at
// the fusion IR: a kernel is source text plus a launch description.
// Invariants: both backends run the *same* translation unit; anything that
// differs between them lives in the runtime header under SCHEDLAB_CPU, never
// in the generated code. CPU timings are never reported as GPU timings.
//
// Kernel ABI. The generated unit defines
//   extern "C" __global__ void schedlab_kernel(Tensor<T0, N0> p0, ...);
// and, for the CPU backend, an entry
//   extern "C" void schedlab_kernel_entry(void** params);
// Every parameter is a Tensor<T, N> (runtime header): a data pointer then N
// sizes and N strides (in elements) of the index type (int32 or int64, chosen
// by codegen and recorded in KernelSource::index_bits). Rank-0 tensors carry
// the pointer only. params[i] points at parameter i's bytes, as
// cuLaunchKernel expects.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedlab/ir/dtype.h"

namespace schedlab::runtime {

struct TraceKernel;
class AccessObserver;

/// One translation unit and what a launch needs to know about it.
struct KernelSource {
  std::string name = "schedlab_kernel";  ///< the __global__ function
  std::string source;                    ///< the whole unit, runtime header included
  int index_bits = 32;                   ///< 32 or 64: the Tensor size/stride type
  bool has_barrier = false;              ///< uses __syncthreads (CPU: fibers needed)
  /// Has grid-wide barriers (sl_grid_sync): every block must be resident at
  /// once. CUDA: a cooperative launch, refused past the occupancy; CPU: every
  /// block's threads as resident fibers, refused past the emulated device's.
  bool grid_sync = false;
  /// Bytes of Local arrays per thread (CPU: a fiber's stack must hold them).
  size_t local_bytes = 0;
  /// CPU: compile the unit with SCHEDLAB_TRACE, so that every access site
  /// calls the host (access_trace.h); a different unit, hence cache key.
  /// Other backends ignore it.
  bool trace = false;
  /// A stable hash of `source` (hex), the cache key of compiled objects.
  std::string hash() const;
};

/// Grid and block extents and dynamic shared memory of one launch.
struct LaunchDims {
  std::array<int64_t, 3> grid{1, 1, 1};   ///< blocks in x, y, z
  std::array<int64_t, 3> block{1, 1, 1};  ///< threads in x, y, z
  size_t shared_bytes = 0;                ///< dynamic shared memory per block
};

/// One kernel argument: a strided view of memory the backend can address.
struct TensorArg {
  void* data = nullptr;          ///< device pointer (CUDA) or host pointer (CPU)
  ir::DataType dtype = ir::DataType::F32;
  std::vector<int64_t> sizes;    ///< extents, outermost first
  std::vector<int64_t> strides;  ///< in elements
};

/// Packs arguments into the parameter bytes of the kernel ABI above and
/// returns the pointer array cuLaunchKernel/the CPU entry take. The pointers
/// stay valid while the ParamPack lives. user_error if a size or stride does
/// not fit the index type.
class ParamPack {
 public:
  ParamPack(const std::vector<TensorArg>& args, int index_bits);
  void** pointers() { return ptrs_.data(); }

 private:
  std::vector<std::vector<std::byte>> blobs_;
  std::vector<void*> ptrs_;
};

/// A compiled kernel, owned by the backend that made it.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  const KernelSource& source() const { return source_; }

 protected:
  explicit CompiledKernel(KernelSource s) : source_(std::move(s)) {}

 private:
  KernelSource source_;
};

/// Timing of repeated launches.
struct Timing {
  std::vector<double> seconds;  ///< one entry per repetition
  std::string clock;            ///< "cuda-events" or "cpu-emulation"
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// "cuda" or "cpu".
  virtual std::string name() const = 0;
  /// Compiles (or fetches from the memory and disk caches). A compile error
  /// is a user_error carrying the compiler's log and the path where the
  /// source was saved.
  virtual std::shared_ptr<CompiledKernel> compile(const KernelSource& src) = 0;
  /// Allocates, fills and frees memory the kernel can address.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void memset_zero(void* p, size_t bytes) = 0;
  /// The most dynamic shared memory one block may have: the device's opt-in
  /// limit (CUDA), or the emulated device's (CPU, which has none of its own
  /// but must refuse what the GPU would; make_cpu_backend).
  virtual size_t max_shared_bytes() const = 0;
  /// The most statement instances one launch may execute (work_estimate.h),
  /// 0 for no limit: the CPU backend emulates every thread (a traced launch,
  /// which calls the host for every access, far more slowly), the GPU does
  /// not need a guard.
  virtual double max_emulated_work(bool /*traced*/) const { return 0; }
  /// Runs one launch and waits for it.
  virtual void launch(CompiledKernel& k, const LaunchDims& dims,
                      const std::vector<TensorArg>& args) = 0;
  /// `warmup` launches, then `reps` timed launches (both >= 0; reps = 0 only
  /// warms up, as the sweep's timer does before its measured batches).
  virtual Timing time(CompiledKernel& k, const LaunchDims& dims,
                      const std::vector<TensorArg>& args, int warmup, int reps) = 0;
  /// One launch of a kernel compiled with KernelSource::trace, its blocks one
  /// after another, reporting every access to `observer` (access_trace.h).
  /// Only the CPU backend traces; the default is a user_error naming the backend.
  virtual void launch_traced(CompiledKernel& k, const LaunchDims& dims,
                             const std::vector<TensorArg>& args, const TraceKernel& trace,
                             AccessObserver& observer);
};

/// Where compiled kernels are cached on disk: --cache-dir, else
/// $SCHEDLAB_CACHE_DIR, else $XDG_CACHE_HOME/schedlab, else ~/.cache/schedlab.
std::string cache_dir(const std::string& flag = "");

}  // namespace schedlab::runtime
