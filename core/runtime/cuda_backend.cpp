// The CUDA backend: NVRTC to CUBIN, the driver API through dlopen, and
// event timing with an L2 flush before every timed launch.
#include "schedlab/runtime/cuda_backend.h"

// cuda.h only for types and prototypes: no symbol of libcuda is linked, every
// entry point is looked up with dlsym.
#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "cache_entry.h"
#include "schedlab/base/error.h"

namespace schedlab::runtime {
namespace {

namespace fs = std::filesystem;

// NOLINTBEGIN(cppcoreguidelines-macro-usage)
// The driver entry points we call. Each name passes through cuda.h's macros,
// so the member and the dlsym'ed symbol are both the versioned one
// (cuMemAlloc_v2, cuEventElapsedTime_v2, ...) whose prototype we compile
// against.
// clang-format off
#define SL_CUDA_DRIVER_FUNCS(X)                                                            \
  X(cuInit) X(cuGetErrorName) X(cuGetErrorString)                                          \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)            \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)             \
  X(cuCtxSetCurrent) X(cuCtxSynchronize)                                                   \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)      \
  X(cuLaunchKernel) X(cuLaunchCooperativeKernel)                                           \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                           \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8)                 \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)                \
  X(cuEventElapsedTime)
// clang-format on
#define SL_STR2(x) #x
#define SL_STR(x) SL_STR2(x)

struct Driver {
#define SL_MEMBER(f) decltype(&::f) f = nullptr;
  SL_CUDA_DRIVER_FUNCS(SL_MEMBER)
#undef SL_MEMBER
  std::string unusable;  ///< why the driver cannot be used; empty when it can
};

std::string error_name(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName == nullptr || d.cuGetErrorName(r, &name) != CUDA_SUCCESS) {
    return "CUresult " + std::to_string(static_cast<int>(r));
  }
  std::string s = name;
  if (d.cuGetErrorString(r, &text) == CUDA_SUCCESS && text != nullptr)
    s += " (" + std::string(text) + ")";
  return s;
}

Driver load_driver() {
  Driver d;
  // Never dlclose'd: contexts and modules may live until exit.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    d.unusable = "libcuda.so.1 not found" + (e != nullptr ? ": " + std::string(e) : "");
    return d;
  }
#define SL_RESOLVE(f)                                                  \
  d.f = reinterpret_cast<decltype(d.f)>(dlsym(lib, SL_STR(f)));        \
  if (d.f == nullptr && d.unusable.empty()) {                          \
    d.unusable = "libcuda.so.1 lacks " SL_STR(f) " (driver too old?)"; \
  }
  SL_CUDA_DRIVER_FUNCS(SL_RESOLVE)
#undef SL_RESOLVE
  if (!d.unusable.empty()) return d;
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    d.unusable = "cuInit failed: " + error_name(d, r);
    return d;
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    d.unusable = "cuDeviceGetCount failed: " + error_name(d, r);
  } else if (count == 0) {
    d.unusable = "the driver reports no device";
  }
  return d;
}

const Driver& driver() {
  static const Driver d = load_driver();
  return d;
}
// NOLINTEND(cppcoreguidelines-macro-usage)

void check(const Driver& d, CUresult r, const char* call) {
  user_assert(r == CUDA_SUCCESS) << "cuda: " << call << " failed: " << error_name(d, r);
}

DeviceProperties query_properties(const Driver& d, CUdevice dev) {
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    check(d, d.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return v;
  };
  DeviceProperties p;
  char name[256] = {};
  check(d, d.cuDeviceGetName(name, int(sizeof name) - 1, dev), "cuDeviceGetName");
  p.name = name;
  p.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p.arch = "sm_" + std::to_string(p.cc_major) + std::to_string(p.cc_minor);
  p.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p.registers_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p.registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  p.shared_bytes_per_block = size_t(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p.shared_bytes_per_block_optin =
      size_t(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  p.shared_bytes_per_sm = size_t(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  p.l2_bytes = size_t(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  check(d, d.cuDeviceTotalMem(&p.global_memory_bytes, dev), "cuDeviceTotalMem");
  p.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  p.memory_bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  p.peak_bandwidth_bytes_per_s = 2.0 * p.memory_clock_khz * 1e3 * p.memory_bus_bits / 8.0;
  return p;
}

/// Writes through a unique temporary and renames, so that concurrent
/// processes sharing the cache never see a half-written file.
void write_file_atomic(const fs::path& path, const std::string& bytes) {
  static std::atomic<int> counter{0};
  fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    ok = !out.fail();
  }
  std::error_code ec;
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    user_error << "cannot write " << path.string();
  }
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Saves a source that failed to compile and says where, or why it could not.
std::string save_failed_source(const KernelSource& src, const std::string& cache_dir_flag) {
  fs::path path = fs::path(cache_dir(cache_dir_flag)) / (src.hash() + ".cu");
  try {
    write_file_atomic(path, src.source);
    return "source saved to " + path.string();
  } catch (const std::exception&) {
    return "could not save the source to " + path.string();
  }
}

void nvrtc_check(nvrtcResult r, const char* call) {
  user_assert(r == NVRTC_SUCCESS) << "nvrtc: " << call << " failed: " << nvrtcGetErrorString(r);
}

/// The retained primary context of one device. Kernels hold it too, so that
/// their modules can be unloaded after the backend is gone.
struct Context {
  const Driver& d;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;

  Context(const Driver& drv, CUdevice device) : d(drv), dev(device) {
    check(d, d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() { d.cuDevicePrimaryCtxRelease(dev); }
  /// Every entry point calls this first: the caller's thread may have no
  /// current context, or another one.
  void make_current() const { check(d, d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }
};

class CudaKernel final : public CompiledKernel {
 public:
  CudaKernel(KernelSource s, std::shared_ptr<const Context> ctx, CUmodule module, CUfunction fn)
      : CompiledKernel(std::move(s)), ctx_(std::move(ctx)), module_(module), fn_(fn) {}
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;
  ~CudaKernel() override {
    if (ctx_->d.cuCtxSetCurrent(ctx_->ctx) == CUDA_SUCCESS) ctx_->d.cuModuleUnload(module_);
  }
  CUfunction fn() const { return fn_; }
  /// Dynamic shared memory beyond the default 48 KiB needs an opt-in per
  /// function; atomic because launches may come from several threads.
  std::atomic<size_t> smem_opted_in{0};

 private:
  std::shared_ptr<const Context> ctx_;
  CUmodule module_;
  CUfunction fn_;
};

std::string dims_str(const LaunchDims& dims) {
  auto three = [](const std::array<int64_t, 3>& a) {
    return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]) +
           ")";
  };
  return "grid " + three(dims.grid) + ", block " + three(dims.block) + ", shared " +
         std::to_string(dims.shared_bytes) + " B";
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::shared_ptr<const Context> ctx, DeviceProperties props, std::string cache_dir,
              std::vector<std::string> extra_options)
      : ctx_(std::move(ctx)),
        props_(std::move(props)),
        cache_dir_(std::move(cache_dir)),
        extra_options_(std::move(extra_options)) {}
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  ~CudaBackend() override {
    if (flush_ != 0 && d().cuCtxSetCurrent(ctx_->ctx) == CUDA_SUCCESS) d().cuMemFree(flush_);
  }

  std::string name() const override { return "cuda"; }
  size_t max_shared_bytes() const override { return props_.shared_bytes_per_block_optin; }

  std::shared_ptr<CompiledKernel> compile(const KernelSource& src) override {
    std::string hash = src.hash();
    std::lock_guard lock(mu_);
    std::string key = hash + "/" + src.name;
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    ctx_->make_current();
    fs::path path = fs::path(cache_dir_) / nvrtc_cache_name(src, props_.arch, extra_options_);
    CUmodule module = nullptr;
    // A self-checking cache (cache_entry.h): an image that is not the sealed
    // one of this key, or does not load (another driver), is rebuilt.
    const std::string entry_key = path.filename().string();
    std::string problem = cache::check(path, entry_key);
    std::optional<std::string> cubin = problem.empty() ? read_file(path) : std::nullopt;
    if (!problem.empty() && problem != "is missing")
      std::fprintf(stderr, "warning: kernel cache: %s %s; rebuilding it\n", path.string().c_str(),
                   problem.c_str());
    if (!cubin || d().cuModuleLoadData(&module, cubin->data()) != CUDA_SUCCESS) {
      cubin = nvrtc_compile_all(src, props_.arch, extra_options_, nullptr, cache_dir_).image;
      // The disk cache only saves time: an unwritable one must not stop a run.
      try {
        cache::seal(path, entry_key, *cubin);
        write_file_atomic(path, *cubin);
      } catch (const std::exception&) {
      }
      check(d(), d().cuModuleLoadData(&module, cubin->data()), "cuModuleLoadData");
    }
    CUfunction fn = nullptr;
    if (CUresult r = d().cuModuleGetFunction(&fn, module, src.name.c_str()); r != CUDA_SUCCESS) {
      d().cuModuleUnload(module);
      user_error << "cuda: kernel '" << src.name << "' not found in its compiled module ("
                 << path.string() << "): " << error_name(d(), r);
    }
    auto k = std::make_shared<CudaKernel>(src, ctx_, module, fn);
    kernels_.emplace(key, k);
    return k;
  }

  void* alloc(size_t bytes) override {
    if (bytes == 0) return nullptr;
    ctx_->make_current();
    CUdeviceptr p = 0;
    check(d(), d().cuMemAlloc(&p, bytes), "cuMemAlloc");
    return to_ptr(p);
  }
  void free(void* p) override {
    if (p == nullptr) return;
    ctx_->make_current();
    check(d(), d().cuMemFree(to_dev(p)), "cuMemFree");
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    ctx_->make_current();
    check(d(), d().cuMemcpyHtoD(to_dev(dst), src, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    ctx_->make_current();
    check(d(), d().cuMemcpyDtoH(dst, to_dev(src), bytes), "cuMemcpyDtoH");
  }
  void memset_zero(void* p, size_t bytes) override {
    if (bytes == 0) return;
    ctx_->make_current();
    check(d(), d().cuMemsetD8(to_dev(p), 0, bytes), "cuMemsetD8");
  }

  void launch(CompiledKernel& k, const LaunchDims& dims,
              const std::vector<TensorArg>& args) override {
    CudaKernel& ck = as_cuda(k);
    ctx_->make_current();
    ParamPack pack(args, k.source().index_bits);
    launch_async(ck, dims, pack.pointers());
    check_kernel(ck, dims, d().cuCtxSynchronize(), "running");
  }

  Timing time(CompiledKernel& k, const LaunchDims& dims, const std::vector<TensorArg>& args,
              int warmup, int reps) override {
    user_assert(warmup >= 0 && reps >= 0)
        << "cuda: time() needs warmup >= 0 and reps >= 0, got warmup " << warmup << ", reps "
        << reps << " (kernel '" << k.source().name << "')";
    CudaKernel& ck = as_cuda(k);
    ctx_->make_current();
    // Packed once, so host work never sits between the two events.
    ParamPack pack(args, k.source().index_bits);
    for (int i = 0; i < warmup; ++i) launch_async(ck, dims, pack.pointers());
    check_kernel(ck, dims, d().cuCtxSynchronize(), "warming up");
    size_t flush_bytes = flush_buffer();
    Events ev(d());
    Timing t{{}, "cuda-events"};
    for (int i = 0; i < reps; ++i) {
      // Every timed launch starts from a cold L2, as the kernel would inside
      // a model where other work runs in between.
      check(d(), d().cuMemsetD8(flush_, static_cast<unsigned char>(i), flush_bytes), "cuMemsetD8");
      check(d(), d().cuEventRecord(ev.start, nullptr), "cuEventRecord");
      launch_async(ck, dims, pack.pointers());
      check(d(), d().cuEventRecord(ev.stop, nullptr), "cuEventRecord");
      check_kernel(ck, dims, d().cuEventSynchronize(ev.stop), "timing");
      float ms = 0;
      check(d(), d().cuEventElapsedTime(&ms, ev.start, ev.stop), "cuEventElapsedTime");
      t.seconds.push_back(double(ms) * 1e-3);
    }
    return t;
  }

 private:
  /// Two timing events, destroyed however time() ends.
  struct Events {
    const Driver& d;
    CUevent start = nullptr;
    CUevent stop = nullptr;
    explicit Events(const Driver& drv) : d(drv) {
      check(d, d.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
      if (CUresult r = d.cuEventCreate(&stop, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
        d.cuEventDestroy(start);
        check(d, r, "cuEventCreate");
      }
    }
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;
    ~Events() {
      d.cuEventDestroy(start);
      d.cuEventDestroy(stop);
    }
  };

  const Driver& d() const { return ctx_->d; }
  static void* to_ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
  static CUdeviceptr to_dev(const void* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  }

  static CudaKernel& as_cuda(CompiledKernel& k) {
    auto* ck = dynamic_cast<CudaKernel*>(&k);
    user_assert(ck != nullptr) << "cuda: kernel '" << k.source().name
                               << "' was not compiled by the CUDA backend";
    return *ck;
  }

  void check_kernel(const CudaKernel& k, const LaunchDims& dims, CUresult r, const char* what) {
    user_assert(r == CUDA_SUCCESS) << "cuda: " << what << " kernel '" << k.source().name << "' ("
                                   << dims_str(dims) << ") failed: " << error_name(d(), r);
  }

  /// Queues one launch on the default stream; the caller synchronizes.
  void launch_async(CudaKernel& k, const LaunchDims& dims, void** params) {
    constexpr int64_t kMax = std::numeric_limits<unsigned int>::max();
    auto in_range = [](int64_t v) { return v >= 1 && v <= kMax; };
    user_assert(std::all_of(dims.grid.begin(), dims.grid.end(), in_range) &&
                std::all_of(dims.block.begin(), dims.block.end(), in_range) &&
                dims.shared_bytes <= size_t(kMax))
        << "cuda: kernel '" << k.source().name
        << "': launch extents must be positive and fit 32 bits, got " << dims_str(dims);
    if (dims.shared_bytes > props_.shared_bytes_per_block && dims.shared_bytes > k.smem_opted_in) {
      check_kernel(k, dims,
                   d().cuFuncSetAttribute(k.fn(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          int(dims.shared_bytes)),
                   "opting in to the dynamic shared memory of");
      k.smem_opted_in = dims.shared_bytes;
    }
    auto u = [](int64_t v) { return static_cast<unsigned int>(v); };
    if (k.source().grid_sync) {
      // Grid barriers: a cooperative launch, which the driver runs only with
      // every block resident; refused here first with the occupancy's count.
      const int64_t threads = dims.block[0] * dims.block[1] * dims.block[2];
      const int64_t blocks = dims.grid[0] * dims.grid[1] * dims.grid[2];
      int per_sm = 0;
      check_kernel(k, dims,
                   d().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.fn(), int(threads),
                                                                   dims.shared_bytes),
                   "querying the occupancy of");
      const int64_t resident = int64_t{per_sm} * props_.sm_count;
      user_assert(blocks <= resident)
          << "cuda: launch of '" << k.source().name << "': a kernel with grid barriers "
          << "(grid-persistent reductions) needs all " << blocks << " blocks of grid ("
          << dims.grid[0] << "," << dims.grid[1] << "," << dims.grid[2]
          << ") resident at once, but " << props_.name << " holds at most " << resident << " ("
          << props_.sm_count << " SMs x " << per_sm << " blocks of " << threads << " threads and "
          << dims.shared_bytes
          << " bytes of shared memory, cuOccupancyMaxActiveBlocksPerMultiprocessor); expected "
             "fewer blocks (a larger split per block)";
      check_kernel(k, dims,
                   d().cuLaunchCooperativeKernel(k.fn(), u(dims.grid[0]), u(dims.grid[1]),
                                                 u(dims.grid[2]), u(dims.block[0]),
                                                 u(dims.block[1]), u(dims.block[2]),
                                                 u(int64_t(dims.shared_bytes)), nullptr, params),
                   "launching (cooperatively)");
      return;
    }
    check_kernel(k, dims,
                 d().cuLaunchKernel(k.fn(), u(dims.grid[0]), u(dims.grid[1]), u(dims.grid[2]),
                                    u(dims.block[0]), u(dims.block[1]), u(dims.block[2]),
                                    u(int64_t(dims.shared_bytes)), nullptr, params, nullptr),
                 "launching");
  }

  /// The L2 flush buffer, twice the L2 and at least 64 MiB, made on first use.
  size_t flush_buffer() {
    size_t bytes = std::max<size_t>(size_t(64) << 20, 2 * props_.l2_bytes);
    std::lock_guard lock(mu_);
    if (flush_ == 0) check(d(), d().cuMemAlloc(&flush_, bytes), "cuMemAlloc (L2 flush buffer)");
    return bytes;
  }

  std::shared_ptr<const Context> ctx_;
  DeviceProperties props_;
  std::string cache_dir_;
  std::vector<std::string> extra_options_;  ///< appended to nvrtc_options on every compile
  std::mutex mu_;  ///< guards kernels_ and flush_
  std::unordered_map<std::string, std::shared_ptr<CudaKernel>> kernels_;
  CUdeviceptr flush_ = 0;
};

class CudaDeviceBuffers final : public DeviceBuffers {
 public:
  CudaDeviceBuffers(std::shared_ptr<const Context> ctx, int ordinal)
      : ctx_(std::move(ctx)), ordinal_(ordinal) {}
  int device() const override { return ordinal_; }
  void make_current() override { ctx_->make_current(); }
  void* alloc(size_t bytes) override {
    if (bytes == 0) return nullptr;
    ctx_->make_current();
    CUdeviceptr p = 0;
    check(ctx_->d, ctx_->d.cuMemAlloc(&p, bytes), "cuMemAlloc");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void free(void* p) override {
    if (p == nullptr) return;
    ctx_->make_current();
    check(ctx_->d, ctx_->d.cuMemFree(dev(p)), "cuMemFree");
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    ctx_->make_current();
    check(ctx_->d, ctx_->d.cuMemcpyHtoD(dev(dst), src, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    ctx_->make_current();
    check(ctx_->d, ctx_->d.cuMemcpyDtoH(dst, dev(src), bytes), "cuMemcpyDtoH");
  }
  void synchronize() override {
    ctx_->make_current();
    check(ctx_->d, ctx_->d.cuCtxSynchronize(), "cuCtxSynchronize");
  }

 private:
  static CUdeviceptr dev(const void* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  }
  std::shared_ptr<const Context> ctx_;
  int ordinal_;
};

}  // namespace

bool cuda_available(std::string* why) {
  const Driver& d = driver();
  if (why != nullptr) *why = d.unusable;
  return d.unusable.empty();
}

std::optional<DeviceProperties> cuda_device_properties() {
  const Driver& d = driver();
  if (!d.unusable.empty()) return std::nullopt;
  CUdevice dev = 0;
  check(d, d.cuDeviceGet(&dev, 0), "cuDeviceGet");
  return query_properties(d, dev);
}

NvrtcOutput nvrtc_compile_all(const KernelSource& src, const std::string& arch,
                              const std::vector<std::string>& extra_options,
                              std::string* log, const std::string& cache_dir_flag) {
  bool cubin = arch.starts_with("sm_");
  user_assert(cubin || arch.starts_with("compute_"))
      << "nvrtc: arch must be sm_XX (CUBIN) or compute_XX (PTX), got '" << arch << "' (kernel '"
      << src.name << "')";
  // Named after the file a failure is saved to, so the log's positions
  // ("<hash>.cu(12): error: ...") point into it.
  std::string file = src.hash() + ".cu";
  nvrtcProgram prog = nullptr;
  nvrtc_check(nvrtcCreateProgram(&prog, src.source.c_str(), file.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  // No option selects the index width: codegen bakes it into the Tensor
  // types. -default-device lets helpers without __device__ compile, as they
  // do on the CPU backend.
  std::vector<std::string> all = nvrtc_options(arch);
  all.insert(all.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> opts;
  for (const std::string& o : all) opts.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtc_check(nvrtcGetProgramLogSize(prog, &log_size), "nvrtcGetProgramLogSize");
  std::string text(log_size, '\0');
  nvrtc_check(nvrtcGetProgramLog(prog, text.data()), "nvrtcGetProgramLog");
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  if (log != nullptr) *log = text;
  user_assert(r == NVRTC_SUCCESS) << "nvrtc: kernel '" << src.name << "' does not compile for "
                                  << arch << " (" << nvrtcGetErrorString(r) << "); "
                                  << save_failed_source(src, cache_dir_flag) << "\n"
                                  << text;
  NvrtcOutput out;
  size_t size = 0;
  nvrtc_check(nvrtcGetPTXSize(prog, &size), "nvrtcGetPTXSize");
  out.ptx.resize(size);
  nvrtc_check(nvrtcGetPTX(prog, out.ptx.data()), "nvrtcGetPTX");
  if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();  // size counts the NUL
  if (cubin) {
    nvrtc_check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    out.image.resize(size);
    nvrtc_check(nvrtcGetCUBIN(prog, out.image.data()), "nvrtcGetCUBIN");
  } else {
    out.image = out.ptx;
  }
  return out;
}

std::string nvrtc_compile(const KernelSource& src, const std::string& arch, std::string* log,
                          const std::string& cache_dir_flag) {
  return nvrtc_compile_all(src, arch, {}, log, cache_dir_flag).image;
}

std::vector<std::string> nvrtc_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "--std=c++17", "-default-device", "-lineinfo"};
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_cache_name(const KernelSource& src, const std::string& arch,
                             const std::vector<std::string>& extra_options) {
  KernelSource build;
  build.source = "nvrtc " + nvrtc_version();
  for (const std::string& o : nvrtc_options(arch)) build.source += "\n" + o;
  for (const std::string& o : extra_options) build.source += "\n" + o;
  return src.hash() + "." + arch + "." + build.hash().substr(0, 8) + ".cubin";
}

int cuda_device_count() {
  const Driver& d = driver();
  if (!d.unusable.empty()) return 0;
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

std::unique_ptr<DeviceBuffers> make_cuda_device_buffers(int ordinal) {
  std::string why;
  user_assert(cuda_available(&why)) << "no CUDA device: " << why;
  const int count = cuda_device_count();
  user_assert(ordinal >= 0 && ordinal < count)
      << "cuda: device " << ordinal << " requested, the driver shows " << count;
  const Driver& d = driver();
  CUdevice dev = 0;
  check(d, d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  return std::make_unique<CudaDeviceBuffers>(std::make_shared<const Context>(d, dev), ordinal);
}

std::unique_ptr<Backend> make_cuda_backend(const std::string& cache_dir_flag,
                                           std::vector<std::string> extra_nvrtc_options) {
  std::string why;
  user_assert(cuda_available(&why)) << "no CUDA device: " << why;
  const Driver& d = driver();
  CUdevice dev = 0;
  check(d, d.cuDeviceGet(&dev, 0), "cuDeviceGet");
  return std::make_unique<CudaBackend>(std::make_shared<const Context>(d, dev),
                                       query_properties(d, dev), cache_dir(cache_dir_flag),
                                       std::move(extra_nvrtc_options));
}

}  // namespace schedlab::runtime
