// The plugin host's costs: a hot reload (from the file being written to the
// new version serving), one ABI call, and scheduling a segment through a
// plugin. BM_Reload runs 1000 reloads and reports how much the resident set
// grew over them (rss_growth_kib): a version that is never unloaded shows up
// there.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "host_api.h"  // core/plugin: the C table and SchedlabSegment
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/plugin/registry.h"

namespace {

using namespace schedlab;

std::string bench_plugin(const char* version) {
  return std::string(SCHEDLAB_BENCH_PLUGIN_DIR) + "/bench_pointwise_" + version + ".so";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

long rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

frontend::FusionDefinition fusion(const char* name) {
  return frontend::load_fusion_file(std::string(SCHEDLAB_CONFIG_DIR) + "/fusions/" + name +
                                    ".yaml");
}

void BM_Reload(benchmark::State& state) {
  std::string dir =
      (std::filesystem::temp_directory_path() / "schedlab-plugin-bench-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return state.SkipWithError("mkdtemp failed");
  std::string path = dir + "/bench_pointwise.so";
  std::string v[2] = {read_file(bench_plugin("v1")), read_file(bench_plugin("v2"))};
  write_file(path, v[0]);
  long rss_before = 0;
  {
    plugin::Registry registry;
    registry.add(path);
    for (int i = 0; i < 20; ++i) {  // warm up the allocator and the loader
      write_file(path, v[(i + 1) % 2]);
      registry.reload("bench_pointwise");
    }
    rss_before = rss_bytes();
    int i = 0;
    for (auto _ : state) {
      write_file(path, v[++i % 2]);
      plugin::ReloadResult r = registry.reload("bench_pointwise");
      if (!r.ok) return state.SkipWithError(r.message.c_str());
    }
    state.counters["rss_growth_kib"] = static_cast<double>(rss_bytes() - rss_before) / 1024;
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Reload)->Iterations(1000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One host entry called through the C table: tensor_info on a fusion output.
void BM_AbiCall(benchmark::State& state) {
  auto def = fusion("pointwise_add_mul");
  plugin::HostSegment seg;
  seg.fusion = def.fusion.get();
  seg.sizes = def.default_sizes;
  SchedlabSegment ctx;
  ctx.segment = &seg;
  auto* t = reinterpret_cast<SchedlabTensor*>(def.fusion->outputs()[0]);
  const SchedlabHostApi* api = plugin::host_api();
  SchedlabTensorInfo info{};
  for (auto _ : state) {
    info.struct_size = sizeof info;
    benchmark::DoNotOptimize(api->tensor_info(&ctx, t, &info));
    ctx.strings.clear();  // the per-call arena, as when a plugin call returns
  }
}
BENCHMARK(BM_AbiCall);

// can_schedule: host -> plugin -> host queries over every tensor -> host.
void BM_CanSchedule(benchmark::State& state) {
  auto p = plugin::load_plugin(bench_plugin("v1"));
  auto def = fusion("pointwise_add_mul");
  plugin::HostSegment seg;
  seg.fusion = def.fusion.get();
  seg.sizes = def.default_sizes;
  auto params = p->defaults();
  for (auto _ : state) benchmark::DoNotOptimize(p->can_schedule(seg, params));
}
BENCHMARK(BM_CanSchedule)->Unit(benchmark::kMicrosecond);

// Scheduling pointwise_add_mul through the plugin (parsing excluded).
void BM_SchedulePointwise(benchmark::State& state) {
  auto p = plugin::load_plugin(bench_plugin("v1"));
  auto params = p->defaults();
  for (auto _ : state) {
    state.PauseTiming();
    auto def = fusion("pointwise_add_mul");
    plugin::HostSegment seg;
    seg.fusion = def.fusion.get();
    seg.sizes = def.default_sizes;
    state.ResumeTiming();
    p->schedule(seg, params);
  }
}
BENCHMARK(BM_SchedulePointwise)->Unit(benchmark::kMicrosecond);

// Each built-in plugin scheduling a segment it is made for, at a realistic
// size: compute_params (the heuristic) plus schedule, parsing excluded.
void BM_ScheduleBuiltin(benchmark::State& state, const char* plugin_name, const char* fusion_name,
                        ir::SizeBindings sizes) {
  plugin::Registry registry({plugin::builtin_plugin_dir()});
  auto p = registry.get(plugin_name);
  for (auto _ : state) {
    state.PauseTiming();
    auto def = fusion(fusion_name);
    plugin::HostSegment seg;
    seg.fusion = def.fusion.get();
    seg.sizes = frontend::bind_sizes(def, sizes);
    state.ResumeTiming();
    p->schedule(seg, p->compute_params(seg));
  }
}
BENCHMARK_CAPTURE(BM_ScheduleBuiltin, pointwise, "pointwise", "gelu",
                  ir::SizeBindings{{"N", 4096}, {"K", 4096}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleBuiltin, reduction, "reduction", "row_sum",
                  ir::SizeBindings{{"N", 4096}, {"K", 4096}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleBuiltin, normalization, "normalization", "layernorm",
                  ir::SizeBindings{{"N", 4096}, {"K", 4096}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleBuiltin, transpose, "transpose", "transpose2d",
                  ir::SizeBindings{{"N", 4096}, {"K", 4096}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
