// The cost of the performance model (docs/model.md, docs/perf.md): a CPU
// launch of a generated kernel without the access trace, the same launch
// traced into the TrafficObserver (every block), and a whole profile
// (NVRTC with ptxas -v, a sampled traced launch, the roofline). Kernels come
// from the built-in plugins on standard fusions at 1024 x 1024.
#include <benchmark/benchmark.h>

#include <memory>

#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace {

using namespace schedlab;

struct Case {
  const char* fusion;
  const char* plugin;
};
constexpr Case kCases[] = {
    {"softmax", "normalization"}, {"transpose2d", "transpose"}, {"pointwise_add_mul", "pointwise"}};

const model::DeviceModel& h200() {
  static const model::DeviceModel d = model::load_device("h200", {SCHEDLAB_CONFIG_DIR "/devices"});
  return d;
}

runtime::Backend& cpu() {
  static std::unique_ptr<runtime::Backend> b =
      runtime::make_cpu_backend(model::model_device_properties());
  return *b;
}

/// A case scheduled by its plugin at 1024 x 1024 and lowered.
struct Prepared {
  sweep::BoundFusion bf;
  runtime::PreparedKernel kernel;
};

std::unique_ptr<Prepared> prepare(const Case& c) {
  auto p = std::make_unique<Prepared>();
  p->bf =
      sweep::bind_fusion(c.fusion, {SCHEDLAB_CONFIG_DIR "/fusions"}, {{"N", 1024}, {"K", 1024}});
  plugin::Registry registry(plugin::plugin_search_path());
  sweep::schedule_with_plugin(*registry.get(c.plugin), p->bf, model::device_properties(h200()), {});
  p->kernel = runtime::prepare(*p->bf.def.fusion, p->bf.sizes);
  return p;
}

void BM_LaunchUntraced(benchmark::State& state) {
  auto p = prepare(kCases[state.range(0)]);
  auto compiled = cpu().compile(p->kernel.source);
  runtime::BoundArgs args(cpu(), p->kernel, ref::make_inputs(*p->bf.def.fusion, p->bf.sizes, 1),
                          p->bf.sizes);
  args.launch(*compiled);
  for (auto _ : state) args.launch(*compiled);
  state.SetLabel(kCases[state.range(0)].fusion);
}
BENCHMARK(BM_LaunchUntraced)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LaunchTraced(benchmark::State& state) {
  auto p = prepare(kCases[state.range(0)]);
  auto compiled = cpu().compile(runtime::traced_source(p->kernel));
  runtime::BoundArgs args(cpu(), p->kernel, ref::make_inputs(*p->bf.def.fusion, p->bf.sizes, 1),
                          p->bf.sizes);
  const runtime::TraceKernel trace = runtime::trace_kernel(p->kernel, args, p->bf.sizes);
  for (auto _ : state) {
    model::TrafficObserver observer(h200().l2_bytes, h200().shared_banks);
    args.launch_traced(*compiled, trace, observer);
    benchmark::DoNotOptimize(observer.counts().sector_bytes());
  }
  state.SetLabel(kCases[state.range(0)].fusion);
}
BENCHMARK(BM_LaunchTraced)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Profile(benchmark::State& state) {
  auto p = prepare(kCases[state.range(0)]);
  const ir::Fusion& f = *p->bf.def.fusion;
  for (auto _ : state)
    benchmark::DoNotOptimize(model::profile_kernel(cpu(), p->kernel, f, p->bf.sizes,
                                                   sweep::io_bytes(f, p->bf.sizes), h200(), {},
                                                   kCases[state.range(0)].fusion));
  state.SetLabel(kCases[state.range(0)].fusion);
}
BENCHMARK(BM_Profile)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
