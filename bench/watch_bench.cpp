// The prototyping loop, end to end (issue 7, "watch"): the time from saving
// a one-constant change to a plugin's source to `schedlab watch` printing
// the new table, on the CPU backend. One `schedlab watch` process serves
// every iteration; each iteration toggles the heuristic's block size
// (tests/watch/watch_plugin.cpp, WATCH_BLOCK 64 -> 128 -> 96 -> 128 -> ...)
// and waits for the "points re-run" line that follows the delta table.
// Manual time: the interval from the write to that line. The first two
// edits make new kernels; the later ones bring back kernels the session
// has validated, whose verdicts stand (only their timing is redone).
// BM_WatchLoopNewKernels makes a kernel never seen before at every edit.
// BM_WatchLoopPython edits a Python heuristic instead: a save, no build.
#include <benchmark/benchmark.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::trunc) << text;
}

/// Reads lines from `f` until one contains `needle`; false at EOF.
bool wait_for(FILE* f, const std::string& needle) {
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f))
    if (std::string(buf).find(needle) != std::string::npos) return true;
  return false;
}

/// One `schedlab watch` session in `work` over its sweep.yaml (the caller
/// wrote it and the plugin), with `flags`; after `banner`, each iteration
/// writes `text(i)` to `edited` and times the write to the "points re-run"
/// line.
template <typename Text>
void time_edits(benchmark::State& state, const fs::path& work, const std::string& flags,
                const std::string& banner, const fs::path& edited, Text text) {
  const int64_t reruns = state.max_iterations;
  const std::string cmd = fmt::format(
      "'{}' watch '{}/sweep.yaml' -o '{}/r.jsonl' --cache-dir '{}/cache' {} "
      "--max-reruns {} 2>&1",
      SCHEDLAB_CLI, work.string(), work.string(), work.string(), flags, reruns);
  FILE* watch = popen(cmd.c_str(), "r");
  if (!watch || !wait_for(watch, banner)) {
    state.SkipWithError("schedlab watch did not start");
    return;
  }
  int edit = 0;
  for (auto _ : state) {
    // File systems with one-second mtimes would miss a second edit within
    // the same second; the poll compares stamps, so wait for a new one.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const std::string next = text(edit++);
    auto start = std::chrono::steady_clock::now();
    write_file(edited, next);
    if (!wait_for(watch, "points re-run")) {
      state.SkipWithError("schedlab watch stopped");
      break;
    }
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  pclose(watch);
  fs::remove_all(work);
}

/// A fresh work directory for one benchmark.
fs::path work_dir(const char* what) {
  const fs::path work =
      fs::temp_directory_path() / fmt::format("schedlab-watch-bench-{}-{}", what, getpid());
  fs::remove_all(work);
  fs::create_directories(work / "src");
  return work;
}

/// `next(i)`: the block size the i-th edit (from 0) writes.
template <typename Next>
void watch_loop(benchmark::State& state, Next next) {
  const fs::path work = work_dir("cpp");
  const std::string original = read_file(SCHEDLAB_SOURCE_DIR "/tests/watch/watch_plugin.cpp");
  write_file(work / "src/watch_plugin.cpp", original);
  // A quick plugin build (docs/plugins.md): the plugin API precompiled by the
  // project (its .gch beside SCHEDLAB_PLUGIN_PCH) and its entry-point
  // machinery linked from the schedlab_plugin_api_impl archive, so that only
  // the plugin's own code is compiled.
  const std::string build = fmt::format(
      "{} {} -shared -include {} -I{}/plugin-api/include {}/src/watch_plugin.cpp {} "
      "-o {}/tmp.so && mv {}/tmp.so {}/watch_plugin.so",
      SCHEDLAB_HOST_CXX, SCHEDLAB_PLUGIN_QUICK_FLAGS, SCHEDLAB_PLUGIN_PCH, SCHEDLAB_SOURCE_DIR,
      work.string(), SCHEDLAB_PLUGIN_API_IMPL, work.string(), work.string(), work.string());
  if (std::system(build.c_str()) != 0) {
    state.SkipWithError("cannot build the watch plugin");
    return;
  }
  write_file(work / "sweep.yaml", fmt::format(R"(sweep: watch_bench
fusions:
  - fusion: pointwise_add_mul
    sizes: {{N: [256], K: [1024]}}
schedulers:
  - name: mine
    plugin: {}/watch_plugin.so
measure: {{repetitions: 5, warmup: 1}}
backend: cpu
)",
                                              work.string()));
  time_edits(state, work, fmt::format("--build '{}' --source '{}/src'", build, work.string()),
             "watching watch_plugin", work / "src/watch_plugin.cpp", [&](int i) {
               std::string edited = original;
               edited.replace(edited.find("#define WATCH_BLOCK 64"), 22,
                              fmt::format("#define WATCH_BLOCK {}", next(i)));
               return edited;
             });
}
void BM_WatchLoop(benchmark::State& state) {
  watch_loop(state, [](int i) { return i % 2 == 0 ? 128 : 96; });
}
void BM_WatchLoopNewKernels(benchmark::State& state) {
  watch_loop(state, [](int i) { return 96 + 32 * i; });  // 96, 128, 160, ...
}
// A Python heuristic (tests/watch/fixtures/softmax_persist.py): the edit
// saves the .py itself, which watch reloads with no build; PERSIST 8 -> 4 ->
// 16 -> 4 ...: two new kernels, then kernels the session validated. The
// sweep is tests/watch/fixtures/watch_python.yaml, watch_python.sh's.
void BM_WatchLoopPython(benchmark::State& state) {
  const fs::path work = work_dir("python");
  const std::string original =
      read_file(SCHEDLAB_SOURCE_DIR "/tests/watch/fixtures/softmax_persist.py");
  write_file(work / "mine.py", original);
  write_file(work / "sweep.yaml",  // file: mine.py
             read_file(SCHEDLAB_SOURCE_DIR "/tests/watch/fixtures/watch_python.yaml"));
  time_edits(state, work, "", "watching py_persist", work / "mine.py", [&](int i) {
    std::string edited = original;
    edited.replace(edited.find("PERSIST = 8"), 11, fmt::format("PERSIST = {}", i % 2 ? 16 : 4));
    return edited;
  });
}
BENCHMARK(BM_WatchLoop)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_WatchLoopPython)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_WatchLoopNewKernels)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
