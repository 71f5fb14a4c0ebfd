// The CPU backend's two costs that users feel: compiling a kernel unit with
// the host compiler (cold, and from the disk cache) and running barriers and
// warp shuffles as fibers. Timings are wall clock: the compiler runs in a
// child process.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "schedlab/codegen/runtime_header.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/cpu_backend.h"

namespace {

using namespace schedlab;
using runtime::LaunchDims;

constexpr std::string_view kAdd = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 a, T1 b, T1 out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < out.size[0]) out.data[i] = a.data[i] + b.data[i];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0], *(T1*)p[1], *(T1*)p[2]); }
#endif
)CUDA";

// 256 threads per block: one barrier after the load and eight in the tree.
constexpr int kBarriersPerThread = 9;
constexpr std::string_view kBlockSum = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 in, T1 out) {
  SL_DYNAMIC_SMEM(sl_smem);
  float* s = reinterpret_cast<float*>(sl_smem);
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < in.size[0] ? in.data[i] : 0.0f;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out.data[blockIdx.x] = s[0];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0], *(T1*)p[1]); }
#endif
)CUDA";

// A row sum as the lowering emits it: a serial loop over the row, then the
// runtime header's sl_block_reduce (warp shuffles plus shared memory).
constexpr std::string_view kRowReduce = R"CUDA(
typedef Tensor<float, 2, int32_t> T2;
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T2 in, T1 out) {
  SL_DYNAMIC_SMEM(sl_smem);
  const int row = blockIdx.x;
  float acc = 0.0f;
  for (int k = threadIdx.x; k < in.size[1]; k += blockDim.x) acc += in.data[row * in.stride[0] + k];
  acc = sl_block_reduce<true, false, false, float>(acc, SlOpSum(), 0.0f,
                                                   reinterpret_cast<float*>(sl_smem), true);
  if (threadIdx.x == 0) out.data[row] = acc;
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T2*)p[0], *(T1*)p[1]); }
#endif
)CUDA";

runtime::KernelSource source(std::string_view body, bool has_barrier) {
  runtime::KernelSource k;
  k.source = std::string(codegen::runtime_header()) + std::string(body);
  k.has_barrier = has_barrier;
  return k;
}

// A cache directory that lives for one benchmark.
struct TempCache {
  std::string path;
  TempCache() {
    std::string t = (std::filesystem::temp_directory_path() / "schedlab-bench-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempCache() { std::filesystem::remove_all(path); }
};

// A new unit every iteration (a distinct comment changes the hash): the host
// compiler runs each time. This is what a first-time kernel costs.
void BM_CpuCompileCold(benchmark::State& state) {
  TempCache cache;
  auto be = runtime::make_cpu_backend(model::model_device_properties(), cache.path);
  const uint64_t before = runtime::cpu_compile_count();
  int64_t n = 0;
  for (auto _ : state) {
    auto src = source(kAdd, false);
    src.source += "// variant " + std::to_string(n++) + "\n";
    benchmark::DoNotOptimize(be->compile(src));
  }
  if (runtime::cpu_compile_count() - before != static_cast<uint64_t>(n))
    state.SkipWithError("a cold compile hit a cache");
}
BENCHMARK(BM_CpuCompileCold)->Unit(benchmark::kMillisecond)->UseRealTime();

// A new backend every iteration over a warm disk cache: hash, stat, dlopen.
void BM_CpuCompileDiskCached(benchmark::State& state) {
  TempCache cache;
  const auto src = source(kAdd, false);
  runtime::make_cpu_backend(model::model_device_properties(), cache.path)->compile(src);
  const uint64_t before = runtime::cpu_compile_count();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        runtime::make_cpu_backend(model::model_device_properties(), cache.path)->compile(src));
  if (runtime::cpu_compile_count() != before) state.SkipWithError("the disk cache missed");
}
BENCHMARK(BM_CpuCompileDiskCached)->Unit(benchmark::kMillisecond)->UseRealTime();

// Runs `body` over n = state.range(0) floats in blocks of 256 threads.
template <typename Fn>
void run_1d(benchmark::State& state, std::string_view body, bool has_barrier, int args, Fn report) {
  TempCache cache;
  auto be = runtime::make_cpu_backend(model::model_device_properties(), cache.path);
  auto k = be->compile(source(body, has_barrier));
  const int64_t n = state.range(0), blocks = (n + 255) / 256;
  std::vector<void*> bufs;
  std::vector<runtime::TensorArg> targs;
  for (int i = 0; i < args; ++i) {
    bufs.push_back(be->alloc(n * sizeof(float)));
    be->memset_zero(bufs.back(), n * sizeof(float));
    targs.push_back({bufs.back(), ir::DataType::F32, {n}, {1}});
  }
  LaunchDims dims;
  dims.grid = {blocks, 1, 1};
  dims.block = {256, 1, 1};
  dims.shared_bytes = has_barrier ? 256 * sizeof(float) : 0;
  be->launch(*k, dims, targs);  // warm-up: worker fiber stacks, page faults
  for (auto _ : state) be->launch(*k, dims, targs);
  report(state, n, blocks);
  for (void* p : bufs) be->free(p);
}

// The figure of docs/perf.md (2026-11-29): a 1M-element block sum, nine barriers per thread.
void BM_CpuBlockSumBarriers(benchmark::State& state) {
  run_1d(state, kBlockSum, true, 2, [](benchmark::State& s, int64_t n, int64_t blocks) {
    using C = benchmark::Counter;
    s.counters["barriers/s"] = C(double(blocks * kBarriersPerThread), C::kIsIterationInvariantRate);
    s.counters["arrivals/s"] = C(double(n * kBarriersPerThread), C::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_CpuBlockSumBarriers)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

// Rows x 4096 floats, one block of state.range(1) threads per row, each
// row summed by sl_block_reduce. The counters are the backend's own counts
// (runtime::cpu_sync_counts) over the timed launches: block barriers, thread
// arrivals at them, and lanes through warp shuffles, per second.
void BM_CpuBlockReduceRows(benchmark::State& state) {
  TempCache cache;
  auto be = runtime::make_cpu_backend(model::model_device_properties(), cache.path);
  auto k = be->compile(source(kRowReduce, true));
  const int64_t rows = state.range(0), cols = 4096, threads = state.range(1);
  void* in = be->alloc(rows * cols * sizeof(float));
  void* out = be->alloc(rows * sizeof(float));
  be->memset_zero(in, rows * cols * sizeof(float));
  std::vector<runtime::TensorArg> args{{in, ir::DataType::F32, {rows, cols}, {cols, 1}},
                                       {out, ir::DataType::F32, {rows}, {1}}};
  LaunchDims dims;
  dims.grid = {rows, 1, 1};
  dims.block = {threads, 1, 1};
  dims.shared_bytes = static_cast<size_t>(threads) * sizeof(float);
  be->launch(*k, dims, args);  // warm-up: worker fiber stacks, page faults
  const runtime::CpuSyncCounts before = runtime::cpu_sync_counts();
  for (auto _ : state) be->launch(*k, dims, args);
  const runtime::CpuSyncCounts after = runtime::cpu_sync_counts();
  using C = benchmark::Counter;
  state.counters["barriers/s"] = C(double(after.barriers - before.barriers), C::kIsRate);
  state.counters["thread_barriers/s"] =
      C(double(after.thread_barriers - before.thread_barriers), C::kIsRate);
  state.counters["thread_shuffles/s"] =
      C(double(after.thread_exchanges - before.thread_exchanges), C::kIsRate);
  state.counters["rows/s"] = C(double(rows), C::kIsIterationInvariantRate);
  be->free(in);
  be->free(out);
}
BENCHMARK(BM_CpuBlockReduceRows)
    ->Args({1024, 256})
    ->Args({256, 1000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same size without barriers: threads run as a plain loop, no fibers.
void BM_CpuElementwiseLoop(benchmark::State& state) {
  run_1d(state, kAdd, false, 3, [](benchmark::State& s, int64_t n, int64_t) {
    s.counters["threads/s"] =
        benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_CpuElementwiseLoop)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
