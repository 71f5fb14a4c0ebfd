// The CPU backend: the shim, host compilation with a disk cache, loading with
// Boost.DLL, host memory, and launches through the fiber executor.
//
// Cache layout, in cache_dir(): <key>.cu.cpp (the unit exactly as compiled),
// <key>.so, its seal <key>.so.sum (cache_entry.h: an entry that fails its
// check is rebuilt), and <key>.log after a failed compile. The key hashes the whole
// unit, whose first line names the compiler and flags, so a new shim, flag
// or compiler is a new key. Files are written under a temporary name and
// renamed, so a concurrent process never sees a half-written .so.
#include "schedlab/runtime/cpu_backend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/dll/shared_library.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "cache_entry.h"
#include "cpu_fibers.h"
#include "cpu_trace.h"
#include "schedlab/base/error.h"
#include "schedlab/runtime/work_estimate.h"

extern char** environ;

namespace schedlab::embedded {
extern const std::string_view kCpuTraceText;  // cpu_trace.cuh (sources.cmake)
}

namespace schedlab::runtime {

namespace {

namespace fs = std::filesystem;

// What NVRTC provides built in, for the host compiler. Keep it light: it is
// compiled with every kernel (see the header for why nothing heavier).
constexpr std::string_view kShim = R"SHIM(// ---- schedlab CPU shim ----
// Contract with generated code:
//  * SL_DYNAMIC_SMEM(name); declares `char* name`, this block's dynamic shared
//    memory (LaunchDims::shared_bytes, 64-byte aligned, zeroed per block). On
//    CUDA the runtime header maps it to `extern __shared__ char name[]`.
//  * __shared__ variables are static thread_local: a worker thread runs one
//    block at a time, so each running block has its own copy. As on the GPU,
//    their contents at block start are undefined.
//  * __syncthreads() switches to the host's fiber scheduler, and is a compiler
//    memory barrier, so shared values are re-read after it.
//  * threadIdx, blockIdx, blockDim, gridDim read this worker thread's state,
//    which the host sets before running each CUDA thread.
//  * sl_cpu_grid_sync(site) (the runtime header's sl_grid_sync) is the grid
//    barrier: every block of the launch runs as resident fibers on one worker
//    thread, and the host switches blocks there (a kernel with grid barriers).
//  * __shfl*_sync and __syncwarp are warp barriers in the host's fiber
//    scheduler (warp = 32 consecutive linear thread ids); like __syncthreads
//    they need has_barrier. Values cross as up to 8 bytes of bits.
//  * With SCHEDLAB_TRACE (defined before this shim), cpu_trace.cuh follows
//    it: every access site calls the host through CpuHooks::access & co.
#define SCHEDLAB_CPU 1
#include <cstdint>
#include <cstring>
// The C math library is declared, not included: <cmath> alone costs ~70 ms
// per kernel. As in CUDA, each function also has a float overload in the
// global namespace, so exp(float) is expf, never a double computation.
#define SL_CPU_MATH1(fn) extern "C" float fn##f(float); extern "C" double fn(double); \
  inline float fn(float x) { return fn##f(x); }
#define SL_CPU_MATH2(fn) extern "C" float fn##f(float, float); extern "C" double fn(double, double); \
  inline float fn(float x, float y) { return fn##f(x, y); }
SL_CPU_MATH1(exp) SL_CPU_MATH1(exp2) SL_CPU_MATH1(expm1) SL_CPU_MATH1(log) SL_CPU_MATH1(log2)
SL_CPU_MATH1(log10) SL_CPU_MATH1(log1p) SL_CPU_MATH1(sqrt) SL_CPU_MATH1(cbrt) SL_CPU_MATH1(sin)
SL_CPU_MATH1(cos) SL_CPU_MATH1(tan) SL_CPU_MATH1(asin) SL_CPU_MATH1(acos) SL_CPU_MATH1(atan)
SL_CPU_MATH1(sinh) SL_CPU_MATH1(cosh) SL_CPU_MATH1(tanh) SL_CPU_MATH1(asinh) SL_CPU_MATH1(acosh)
SL_CPU_MATH1(atanh) SL_CPU_MATH1(erf) SL_CPU_MATH1(erfc) SL_CPU_MATH1(lgamma) SL_CPU_MATH1(tgamma)
SL_CPU_MATH1(fabs) SL_CPU_MATH1(floor) SL_CPU_MATH1(ceil) SL_CPU_MATH1(trunc) SL_CPU_MATH1(round)
SL_CPU_MATH1(rint) SL_CPU_MATH1(nearbyint)
SL_CPU_MATH2(pow) SL_CPU_MATH2(atan2) SL_CPU_MATH2(fmod) SL_CPU_MATH2(fmin) SL_CPU_MATH2(fmax)
SL_CPU_MATH2(hypot) SL_CPU_MATH2(remainder) SL_CPU_MATH2(copysign) SL_CPU_MATH2(fdim)
#undef SL_CPU_MATH1
#undef SL_CPU_MATH2
extern "C" float fmaf(float, float, float);
extern "C" double fma(double, double, double);
inline float fma(float x, float y, float z) { return fmaf(x, y, z); }
extern "C" float ldexpf(float, int);
extern "C" double ldexp(double, int);
inline float ldexp(float x, int e) { return ldexpf(x, e); }
#define SL_CPU_CLASSIFY(fn) inline bool fn(float x) { return __builtin_##fn(x); } \
  inline bool fn(double x) { return __builtin_##fn(x); }
SL_CPU_CLASSIFY(isnan) SL_CPU_CLASSIFY(isinf) SL_CPU_CLASSIFY(isfinite) SL_CPU_CLASSIFY(signbit)
#undef SL_CPU_CLASSIFY
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __shared__ static thread_local
struct dim3 { unsigned x, y, z; };
// Mirrors schedlab::runtime::CpuThreadState and CpuHooks (cpu_backend.h).
struct SlCpuThreadState { dim3 thread_idx, block_idx, block_dim, grid_dim; char* smem; };
struct SlCpuHooks {
  int abi_version;
  void (*syncthreads)();
  unsigned long long (*warp_exchange)(int, unsigned, unsigned long long, int, int);
  void* (*access)(int, const void*, long long, int, int, const void*);
  void (*declare)(int, const void*, int);
  void (*barrier_site)(int);
  void (*grid_sync)(int);
};
static thread_local SlCpuThreadState sl_cpu_state;
static void (*sl_cpu_syncthreads)();
static unsigned long long (*sl_cpu_warp_exchange)(int, unsigned, unsigned long long, int, int);
// The access trace (SCHEDLAB_TRACE units only call these; see cpu_trace.cuh).
static void* (*sl_cpu_access)(int, const void*, long long, int, int, const void*);
static void (*sl_cpu_declare)(int, const void*, int);
static void (*sl_cpu_barrier_site)(int);
static void (*sl_cpu_grid_sync)(int);
extern "C" SlCpuThreadState* schedlab_cpu_thread_state() { return &sl_cpu_state; }
extern "C" int schedlab_cpu_bind(const SlCpuHooks* h) {
  sl_cpu_syncthreads = h->syncthreads;
  sl_cpu_warp_exchange = h->warp_exchange;
  sl_cpu_access = h->access;
  sl_cpu_declare = h->declare;
  sl_cpu_barrier_site = h->barrier_site;
  sl_cpu_grid_sync = h->grid_sync;
  return 4;  // kCpuAbiVersion
}
#define threadIdx (sl_cpu_state.thread_idx)
#define blockIdx (sl_cpu_state.block_idx)
#define blockDim (sl_cpu_state.block_dim)
#define gridDim (sl_cpu_state.grid_dim)
#define SL_DYNAMIC_SMEM(name) char* name = sl_cpu_state.smem
inline void __syncthreads() {
  __asm__ __volatile__("" ::: "memory");
  sl_cpu_syncthreads();
  __asm__ __volatile__("" ::: "memory");
}
// Warp shuffles (op codes: schedlab::runtime::CpuWarpOp) and __syncwarp.
template <typename T> inline T sl_cpu_shfl(int op, unsigned mask, T v, int arg, int width) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle of more than 8 bytes");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  __asm__ __volatile__("" ::: "memory");
  bits = sl_cpu_warp_exchange(op, mask, bits, arg, width);
  __asm__ __volatile__("" ::: "memory");
  T r;
  __builtin_memcpy(&r, &bits, sizeof(T));
  return r;
}
#define SL_CPU_SHFL(T) \
  inline T __shfl_sync(unsigned m, T v, int src, int w = 32) { return sl_cpu_shfl(0, m, v, src, w); } \
  inline T __shfl_xor_sync(unsigned m, T v, int x, int w = 32) { return sl_cpu_shfl(1, m, v, x, w); } \
  inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) { \
    return sl_cpu_shfl(2, m, v, (int)d, w); } \
  inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) { \
    return sl_cpu_shfl(3, m, v, (int)d, w); }
SL_CPU_SHFL(int) SL_CPU_SHFL(unsigned) SL_CPU_SHFL(long) SL_CPU_SHFL(unsigned long)
SL_CPU_SHFL(long long) SL_CPU_SHFL(unsigned long long) SL_CPU_SHFL(float) SL_CPU_SHFL(double)
#undef SL_CPU_SHFL
inline void __syncwarp(unsigned mask = 0xffffffffu) { sl_cpu_shfl(4, mask, 0, 0, 32); }
// Blocks run concurrently on worker threads; atomics are real, relaxed as on CUDA.
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __asm__ __volatile__("" ::: "memory"); }
template <typename T> inline T sl_cpu_atomic_add(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <typename T> inline T sl_cpu_atomic_add_float(T* p, T v) {
  T old, want;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do { want = old + v; } while (!__atomic_compare_exchange(p, &old, &want, false,
                                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
inline int atomicAdd(int* p, int v) { return sl_cpu_atomic_add(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return sl_cpu_atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  return sl_cpu_atomic_add(p, v);
}
inline float atomicAdd(float* p, float v) { return sl_cpu_atomic_add_float(p, v); }
inline double atomicAdd(double* p, double v) { return sl_cpu_atomic_add_float(p, v); }
template <typename T> inline T sl_cpu_atomic_cas(T* p, T expect, T want) {
  __atomic_compare_exchange_n(p, &expect, want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expect;
}
inline int atomicCAS(int* p, int c, int v) { return sl_cpu_atomic_cas(p, c, v); }
inline unsigned atomicCAS(unsigned* p, unsigned c, unsigned v) { return sl_cpu_atomic_cas(p, c, v); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c,
                                    unsigned long long v) { return sl_cpu_atomic_cas(p, c, v); }
inline int atomicExch(int* p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicExch(unsigned* p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
// ---- end of schedlab CPU shim ----
)SHIM";

static_assert(sizeof(CpuThreadState) == 4 * sizeof(CpuDim3) + sizeof(char*),
              "CpuThreadState must match the shim's SlCpuThreadState");

// No -ffast-math: results must match the reference bit for bit where the
// reference is exact. -fno-math-errno only lets sqrtf and friends inline.
constexpr const char* kFlags[] = {"-std=c++17",      "-O2", "-shared", "-fPIC",
                                  "-fno-math-errno", "-x",  "c++"};

// Beyond this much generated source (a fusion of thousands of statements in
// one kernel) GCC's -O2 is superlinear: 48 s for an 850 KB unit where -O1
// takes 20 s (docs/perf.md). Such units get -O1; IEEE semantics are the
// same at either level (no -ffast-math, and ISO C++ mode contracts no FMA).
constexpr size_t kLargeUnitBytes = 256 * 1024;

/// kFlags, with -O1 for a large unit.
std::vector<std::string> compile_flags(size_t source_bytes) {
  std::vector<std::string> flags(std::begin(kFlags), std::end(kFlags));
  if (source_bytes > kLargeUnitBytes)
    std::replace(flags.begin(), flags.end(), std::string("-O2"), std::string("-O1"));
  return flags;
}

std::atomic<uint64_t> g_compile_count{0};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A name no other thread or process uses, next to `final_path`.
fs::path temp_name(const fs::path& final_path) {
  static std::atomic<uint64_t> counter{0};
  return final_path.string() + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

void write_atomically(const fs::path& path, std::string_view text) {
  fs::path tmp = temp_name(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    user_assert(out.good()) << "cpu backend: cannot write " << tmp.string();
  }
  fs::rename(tmp, path);
}

// Runs argv[0] with stdout and stderr into `log`; returns the exit status.
int run_compiler(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  user_assert(rc == 0) << "cpu backend: cannot run the host compiler " << args[0] << ": "
                       << std::strerror(rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A loaded unit; kernels compiled from the same unit share it.
struct Unit {
  boost::dll::shared_library lib;
  cpu::Entry entry;
};

class CpuKernel final : public CompiledKernel {
 public:
  CpuKernel(KernelSource src, std::shared_ptr<Unit> unit)
      : CompiledKernel(std::move(src)), unit_(std::move(unit)) {
    entry_ = unit_->entry;
    entry_.name = source().name;
    entry_.has_barrier = source().has_barrier;
    entry_.local_bytes = source().local_bytes;
    entry_.grid_sync = source().grid_sync;
  }
  const cpu::Entry& entry() const { return entry_; }

 private:
  std::shared_ptr<Unit> unit_;
  cpu::Entry entry_;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(DeviceProperties device, std::string dir)
      : device_(std::move(device)), dir_(std::move(dir)) {}

  std::string name() const override { return "cpu"; }
  // The emulated device's opt-in limit: what fits here fits that GPU.
  size_t max_shared_bytes() const override { return device_.shared_bytes_per_block_optin; }
  double max_emulated_work(bool traced) const override { return cpu_work_limit(traced); }

  std::shared_ptr<CompiledKernel> compile(const KernelSource& src) override {
    std::string unit_text =
        "// schedlab cpu unit, compiled with: " + std::string(SCHEDLAB_HOST_CXX);
    for (const std::string& f : compile_flags(src.source.size())) unit_text += " " + f;
    unit_text += "\n";
    if (src.trace) unit_text += "#define SCHEDLAB_TRACE 1\n";
    unit_text += kShim;
    if (src.trace) unit_text += embedded::kCpuTraceText;
    unit_text += src.source;
    const std::string key = KernelSource{.source = unit_text}.hash();
    std::shared_ptr<Unit> unit;
    {
      std::lock_guard lock(mutex_);
      if (auto it = units_.find(key); it != units_.end()) unit = it->second;
    }
    if (!unit) {
      // Compiled outside the lock: two threads may compile the same unit; the
      // rename makes that harmless and the first one loaded wins the map.
      unit = load(src, key, unit_text);
      std::lock_guard lock(mutex_);
      unit = units_.emplace(key, unit).first->second;
    }
    return std::make_shared<CpuKernel>(src, unit);
  }

  void* alloc(size_t bytes) override {
    const size_t n = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, n);
    user_assert(p != nullptr) << "cpu backend: cannot allocate " << bytes << " bytes";
    return p;
  }
  void free(void* p) override { std::free(p); }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void memset_zero(void* p, size_t bytes) override { std::memset(p, 0, bytes); }

  void launch(CompiledKernel& k, const LaunchDims& dims,
              const std::vector<TensorArg>& args) override {
    const cpu::Entry& e = checked(k, dims);
    ParamPack pack(args, k.source().index_bits);
    executor_.run(e, dims, pack.pointers());
  }

  void launch_traced(CompiledKernel& k, const LaunchDims& dims, const std::vector<TensorArg>& args,
                     const TraceKernel& trace, AccessObserver& observer) override {
    const cpu::Entry& e = checked(k, dims);
    user_assert(k.source().trace)
        << "launch of '" << k.source().name
        << "': a traced launch needs a kernel compiled with KernelSource::trace";
    ParamPack pack(args, k.source().index_bits);
    executor_.run_traced(e, dims, pack.pointers(), trace, observer);
  }

  Timing time(CompiledKernel& k, const LaunchDims& dims, const std::vector<TensorArg>& args,
              int warmup, int reps) override {
    const cpu::Entry& e = checked(k, dims);
    ParamPack pack(args, k.source().index_bits);
    for (int i = 0; i < warmup; ++i) executor_.run(e, dims, pack.pointers());
    Timing t;
    t.clock = "cpu-emulation";
    for (int i = 0; i < reps; ++i) {
      auto start = std::chrono::steady_clock::now();
      executor_.run(e, dims, pack.pointers());
      t.seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return t;
  }

 private:
  std::shared_ptr<Unit> load(const KernelSource& src, const std::string& key,
                             const std::string& unit_text) {
    const fs::path dir(dir_);
    std::error_code ec;
    fs::create_directories(dir, ec);
    user_assert(!ec) << "cpu backend: cannot create the kernel cache directory " << dir_ << ": "
                     << ec.message();
    const fs::path so = dir / (key + ".so");
    const fs::path cpp = dir / (key + ".cu.cpp");
    // A self-checking cache: an entry is used only when its seal says it was
    // built from this unit and its bytes are the ones sealed, and its source
    // copy is the unit; anything else is rebuilt, with a warning.
    std::string problem = cache::check(so, key);
    if (problem.empty()) {
      std::string kept;
      std::ifstream in(cpp, std::ios::binary);
      kept.assign(std::istreambuf_iterator<char>(in), {});
      if (kept != unit_text) problem = "has an edited or missing source copy " + cpp.filename().string();
    }
    bool compiled = false;
    if (!problem.empty()) {
      if (problem != "is missing") warn_rebuild(so, problem);
      compile_unit(src, cpp, so, unit_text, key);
      compiled = true;
    }

    auto unit = std::make_shared<Unit>();
    try {
      unit->lib.load(so.string());
    } catch (const std::exception& e) {
      user_assert(!compiled) << "cpu backend: cannot load " << so.string() << ": " << e.what();
      // Sealed and yet not loadable (another host library, a changed loader): rebuild once.
      warn_rebuild(so, std::string("does not load: ") + e.what());
      compile_unit(src, cpp, so, unit_text, key);
      try {
        unit->lib.load(so.string());
      } catch (const std::exception& e2) {
        user_error << "cpu backend: cannot load " << so.string() << ": " << e2.what();
      }
    }
    user_assert(unit->lib.has("schedlab_kernel_entry"))
        << "cpu backend: kernel '" << src.name
        << "' does not define extern \"C\" void schedlab_kernel_entry(void**) (unit "
        << (dir / (key + ".cu.cpp")).string() << ")";
    unit->entry.entry = &unit->lib.get<void(void**)>("schedlab_kernel_entry");
    unit->entry.thread_state = &unit->lib.get<CpuThreadState*()>("schedlab_cpu_thread_state");
    static const CpuHooks hooks{kCpuAbiVersion,       &cpu::syncthreads,   &cpu::warp_exchange,
                                &cpu::trace_access,   &cpu::trace_declare, &cpu::trace_barrier_site,
                                &cpu::grid_sync};
    const int version = unit->lib.get<int(const CpuHooks*)>("schedlab_cpu_bind")(&hooks);
    internal_assert(version == kCpuAbiVersion)
        << "shim ABI " << version << " but host ABI " << kCpuAbiVersion;
    return unit;
  }

  static void warn_rebuild(const fs::path& so, const std::string& problem) {
    std::fprintf(stderr, "warning: kernel cache: %s %s; rebuilding it\n", so.string().c_str(),
                 problem.c_str());
  }

  static void compile_unit(const KernelSource& src, const fs::path& cpp, const fs::path& so,
                           const std::string& unit_text, const std::string& key) {
    write_atomically(cpp, unit_text);
    const fs::path tmp_so = temp_name(so);
    const fs::path log = temp_name(so.string() + ".log");
    std::vector<std::string> args{SCHEDLAB_HOST_CXX};
    for (const std::string& f : compile_flags(src.source.size())) args.push_back(f);
    args.insert(args.end(), {cpp.string(), "-o", tmp_so.string()});
    ++g_compile_count;
    const int rc = run_compiler(args, log);
    std::string output = read_file(log);
    std::error_code ec;
    if (rc != 0) {
      fs::path kept = cpp;
      kept.replace_extension().replace_extension(".log");
      fs::rename(log, kept, ec);
      fs::remove(tmp_so, ec);
      user_error << "cpu backend: the host compiler failed on kernel '" << src.name
                 << "' (exit status " << rc << "); source saved at " << cpp.string() << "\n"
                 << output;
    }
    fs::remove(log, ec);
    // Sealed before it is in place: whoever sees the .so sees its seal.
    cache::seal(so, key, read_file(tmp_so));
    fs::rename(tmp_so, so);
  }

  const cpu::Entry& checked(CompiledKernel& k, const LaunchDims& dims) {
    auto* ck = dynamic_cast<CpuKernel*>(&k);
    user_assert(ck != nullptr) << "cpu backend: kernel '" << k.source().name
                               << "' was compiled by another backend";
    auto dims_str = [](const std::array<int64_t, 3>& a) {
      return "(" + std::to_string(a[0]) + "," + std::to_string(a[1]) + "," + std::to_string(a[2]) +
             ")";
    };
    for (int i = 0; i < 3; ++i)
      user_assert(dims.grid[i] > 0 && dims.block[i] > 0)
          << "launch of '" << k.source().name << "': grid " << dims_str(dims.grid) << " and block "
          << dims_str(dims.block) << " must be positive in every dimension";
    // CUDA's limits, enforced here too so a launch valid on the CPU is valid on the GPU.
    const int64_t max_threads = device_.max_threads_per_block;
    const bool each_fits = dims.block[0] <= 1024 && dims.block[1] <= 1024 && dims.block[2] <= 64;
    const int64_t threads = each_fits ? dims.block[0] * dims.block[1] * dims.block[2] : -1;
    user_assert(each_fits && threads <= max_threads)
        << "launch of '" << k.source().name << "': block " << dims_str(dims.block)
        << " exceeds CUDA's limits: at most " << max_threads
        << " threads, 1024 in x and y, 64 in z";
    user_assert(dims.grid[0] <= 2147483647 && dims.grid[1] <= 65535 && dims.grid[2] <= 65535)
        << "launch of '" << k.source().name << "': grid " << dims_str(dims.grid)
        << " exceeds CUDA's limits (2^31-1, 65535, 65535)";
    if (k.source().grid_sync) {
      // As a cooperative launch on the emulated device: every block resident.
      const int64_t blocks = dims.grid[0] * dims.grid[1] * dims.grid[2];
      const Residency r = resident_blocks(device_, threads, dims.shared_bytes);
      user_assert(blocks <= r.total)
          << "launch of '" << k.source().name << "': a kernel with grid barriers (grid-persistent "
          << "reductions) needs all " << blocks << " blocks of grid " << dims_str(dims.grid)
          << " resident at once, but " << device_.name << " holds at most " << r.total << " ("
          << device_.sm_count << " SMs x " << r.per_sm << " blocks of " << threads
          << " threads and " << dims.shared_bytes << " bytes of shared memory, limited by "
          << r.limit << "); expected fewer blocks (a larger split per block)";
    }
    return ck->entry();
  }

  DeviceProperties device_;  ///< the emulated device: its limits are this backend's
  std::string dir_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Unit>> units_;
  cpu::Executor executor_;
};

}  // namespace

std::string_view cpu_shim() {
  return kShim;
}

std::unique_ptr<Backend> make_cpu_backend(const DeviceProperties& device,
                                          const std::string& cache_dir_flag) {
  return std::make_unique<CpuBackend>(device, cache_dir(cache_dir_flag));
}

uint64_t cpu_compile_count() {
  return g_compile_count.load();
}

}  // namespace schedlab::runtime
