// The cost of the emulation sanitizer: a validation run of a few standard
// fusions with their example schedules on the CPU backend, plain
// (runtime::execute) against sanitized (runtime::execute_sanitized: the
// traced unit, every access through the host, shadow state per element).
// Both exclude compilation (the units are compiled before timing starts) and
// include the launch's buffer setup, as a validation does. Figures go to
// docs/perf.md with the command that produced them.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/model/device.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/executor.h"

namespace {

using namespace schedlab;

std::string config(const std::string& rel) { return std::string(SCHEDLAB_CONFIG_DIR) + "/" + rel; }

struct Case {
  const char* fusion;
  const char* schedule;
  ir::SizeBindings sizes;
};
// Pointwise (global only), a block reduction with barriers, a grid reduction.
const Case kCases[] = {
    {"pointwise_add_mul", "pointwise_add_mul", {{"N", 256}, {"K", 1024}}},
    {"softmax", "softmax_block", {{"N", 64}, {"K", 1024}}},
    {"row_sum", "row_sum_grid", {{"N", 4}, {"K", 65536}}},
};

runtime::Backend& backend() {
  static auto b = runtime::make_cpu_backend(
      model::model_device_properties(),
      (std::filesystem::temp_directory_path() / "schedlab-bench-cache").string());
  return *b;
}

struct Prepared {
  frontend::FusionDefinition def;
  runtime::PreparedKernel kernel;
  std::vector<ref::HostTensor> inputs;
};

Prepared prepare(const Case& c) {
  Prepared p{frontend::load_fusion_file(config("fusions/" + std::string(c.fusion) + ".yaml")), {},
             {}};
  auto plain = frontend::load_fusion_file(config("fusions/" + std::string(c.fusion) + ".yaml"));
  frontend::apply_schedule_file(config("schedules/" + std::string(c.schedule) + ".sched"), p.def,
                                {});
  p.kernel = runtime::prepare(*p.def.fusion, c.sizes);
  p.inputs = ref::make_inputs(*plain.fusion, c.sizes, 1, plain.input_ranges);
  return p;
}

void BM_ValidatePlain(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  Prepared p = prepare(c);
  auto compiled = backend().compile(p.kernel.source);
  for (auto _ : state) {
    auto out = runtime::execute(backend(), *compiled, p.kernel, p.inputs, c.sizes);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(c.fusion);
}
BENCHMARK(BM_ValidatePlain)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ValidateSanitized(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  Prepared p = prepare(c);
  backend().compile(runtime::traced_source(p.kernel));  // compiled before timing
  for (auto _ : state) {
    auto run = runtime::execute_sanitized(backend(), p.kernel, p.inputs, c.sizes, c.fusion);
    if (!run.findings.empty()) state.SkipWithError(run.report.c_str());
    benchmark::DoNotOptimize(run.outputs.data());
  }
  state.SetLabel(c.fusion);
}
BENCHMARK(BM_ValidateSanitized)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
