// What --isolate costs (issue 16). Per call: a plugin's schedule of a
// standard fusion in the process, forked per call (the old --isolate), and
// in a reused worker that sends its transform log back for the host to
// replay (the new one). Per load: a plugin loaded in the process and in a
// child. (A whole sweep in and out of isolation is timed with the CLI:
// docs/perf.md. A sweep reports through Google Benchmark itself, so it
// cannot run inside one of these.)
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/plugin/transform_log.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace {

using namespace schedlab;
namespace fs = std::filesystem;

const std::string kFusion = std::string(SCHEDLAB_CONFIG_DIR) + "/fusions/pointwise_add_mul.yaml";
const std::string kPlugin = plugin::builtin_plugin_dir() + "/pointwise.so";

/// Schedules the fusion with `p` and returns its transform log.
std::string schedule_log(const plugin::Plugin& p) {
  sweep::BoundFusion bf = sweep::bind_fusion(kFusion, {}, {{"N", 1024}, {"K", 1024}});
  return plugin::serialize(sweep::schedule_with_plugin(p, bf, std::nullopt, {}).transforms);
}

/// The host's half of an isolated point: replay the log, lower, print.
void replay_here(const std::string& log) {
  sweep::BoundFusion bf = sweep::bind_fusion(kFusion, {}, {{"N", 1024}, {"K", 1024}});
  plugin::replay(*bf.def.fusion, plugin::parse_log(log, "bench"));
  benchmark::DoNotOptimize(runtime::prepare(*bf.def.fusion, bf.sizes).source.source.size());
}

// Without isolation: schedule, lower and print in one process.
void BM_Schedule_InProcess(benchmark::State& state) {
  auto p = plugin::load_plugin(kPlugin);
  for (auto _ : state) {
    sweep::BoundFusion bf = sweep::bind_fusion(kFusion, {}, {{"N", 1024}, {"K", 1024}});
    sweep::schedule_with_plugin(*p, bf, std::nullopt, {});
    benchmark::DoNotOptimize(runtime::prepare(*bf.def.fusion, bf.sizes).source.source.size());
  }
}
BENCHMARK(BM_Schedule_InProcess)->Unit(benchmark::kMicrosecond);

void BM_Schedule_ForkPerCall(benchmark::State& state) {
  auto p = plugin::load_plugin(kPlugin);  // the old --isolate: loaded in the host
  for (auto _ : state) {
    isolate::Outcome o = isolate::run_isolated([&] { return schedule_log(*p); }, isolate::Options{});
    if (!o.ok()) state.SkipWithError(isolate::describe(o).c_str());
    replay_here(o.payload);
  }
}
BENCHMARK(BM_Schedule_ForkPerCall)->Unit(benchmark::kMicrosecond);

void BM_Schedule_Worker(benchmark::State& state) {
  std::shared_ptr<const plugin::Plugin> in_child;  // loaded by the worker, on its first request
  isolate::Worker worker(
      [&](const std::string&) {
        if (!in_child) in_child = plugin::load_plugin(kPlugin);
        return schedule_log(*in_child);
      },
      isolate::Options{});
  for (auto _ : state) {
    isolate::Outcome o = worker.call("");
    if (!o.ok()) state.SkipWithError(isolate::describe(o).c_str());
    replay_here(o.payload);
  }
  state.counters["forks"] = static_cast<double>(worker.forks());
}
BENCHMARK(BM_Schedule_Worker)->Unit(benchmark::kMicrosecond);

void BM_Load_InProcess(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(plugin::load_plugin(kPlugin)->schema().size());
}
BENCHMARK(BM_Load_InProcess)->Unit(benchmark::kMicrosecond);

void BM_Load_Isolated(benchmark::State& state) {
  const std::string shadow = (fs::temp_directory_path() / "isolate_bench_shadow.so").string();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        plugin::load_plugin_isolated(kPlugin, shadow, std::chrono::seconds(60))->schema().size());
}
BENCHMARK(BM_Load_Isolated)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
