// Host latency of the steps between a schedule and a runnable kernel:
// schedule script + lowering + CUDA printing for softmax, NVRTC compile (cold,
// uncached) and a cache hit on the CPU backend, and the CPU backend running a
// generated pointwise kernel against a plain C++ loop over the same data.
// Figures go to docs/perf.md with the command that produced them.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/lower.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"

namespace {

using namespace schedlab;

std::string config(const std::string& rel) { return std::string(SCHEDLAB_CONFIG_DIR) + "/" + rel; }

frontend::FusionDefinition scheduled(const std::string& fusion, const std::string& schedule) {
  auto def = frontend::load_fusion_file(config("fusions/" + fusion + ".yaml"));
  frontend::apply_schedule_file(config("schedules/" + schedule + ".sched"), def, {});
  return def;
}

void BM_ScheduleLowerCodegen(benchmark::State& state) {
  for (auto _ : state) {
    auto def = scheduled("softmax", "softmax_pointwise");
    auto k = lower::lower(*def.fusion);
    std::string src = codegen::print_cuda(k);
    benchmark::DoNotOptimize(src.data());
  }
}
BENCHMARK(BM_ScheduleLowerCodegen)->Unit(benchmark::kMicrosecond);

void BM_NvrtcCompileCold(benchmark::State& state) {
  auto def = scheduled("softmax", "softmax_pointwise");
  auto p = runtime::prepare(*def.fusion, {{"N", 1024}, {"K", 1024}});
  for (auto _ : state) {
    std::string log;
    auto cubin = runtime::nvrtc_compile(p.source, "sm_90", &log);
    benchmark::DoNotOptimize(cubin.data());
  }
}
BENCHMARK(BM_NvrtcCompileCold)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CpuCompileCacheHit(benchmark::State& state) {
  auto dir = std::filesystem::temp_directory_path() / "schedlab-bench-cache";
  auto def = scheduled("pointwise_add_mul", "pointwise_add_mul");
  auto p = runtime::prepare(*def.fusion, {{"N", 1024}, {"K", 1024}});
  runtime::make_cpu_backend(model::model_device_properties(), dir.string())
      ->compile(p.source);  // warm the disk cache
  for (auto _ : state) {
    auto backend = runtime::make_cpu_backend(model::model_device_properties(),
                                             dir.string());  // fresh memory cache
    benchmark::DoNotOptimize(backend->compile(p.source).get());
  }
}
BENCHMARK(BM_CpuCompileCacheHit)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The generated kernel for pointwise_add_mul with the example schedule, run by
// the CPU backend, against the same arithmetic as a plain loop.
void BM_CpuPointwiseKernel(benchmark::State& state) {
  int64_t n = state.range(0), k = 1024;
  ir::SizeBindings sizes{{"N", n / k}, {"K", k}};
  auto def = scheduled("pointwise_add_mul", "pointwise_add_mul");
  auto plain = frontend::load_fusion_file(config("fusions/pointwise_add_mul.yaml"));
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 1, plain.input_ranges);
  auto backend = runtime::make_cpu_backend(model::model_device_properties());
  auto p = runtime::prepare(*def.fusion, sizes);
  auto compiled = backend->compile(p.source);
  for (auto _ : state) {
    auto out = runtime::execute(*backend, *compiled, p, inputs, sizes);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel("includes host<->buffer conversion of inputs and outputs");
}
BENCHMARK(BM_CpuPointwiseKernel)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlainLoopPointwise(benchmark::State& state) {
  int64_t n = state.range(0), k = 1024;
  std::vector<float> x(static_cast<size_t>(n), 0.5f), y(x), b(static_cast<size_t>(k), 0.25f), out(x);
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) {
      size_t u = static_cast<size_t>(i);
      out[u] = ((x[u] + y[u]) * y[u] + b[u % static_cast<size_t>(k)]) * 2.0f - x[u];
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_PlainLoopPointwise)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
