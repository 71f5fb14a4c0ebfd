// One point through `schedlab exec`, `schedlab run` and the fuzzer's runner:
// each drives core/point (schedlab/point/point.h), whose stage trace
// ($SCHEDLAB_POINT_TRACE, schedlab/point/trace.h) shows the same stages in the
// same order, the same generated kernel, and the same validation figures; the
// sweep's record agrees with them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "schedlab/fuzz/fuzz.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/report/record.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab {
namespace {

namespace fs = std::filesystem;

/// What one driver's trace says about its one point.
struct Trace {
  std::vector<std::string> stages;  ///< "schedule", "lower", ... as they ended
  std::vector<std::string> kernels;  ///< the generated sources' hashes (after lower)
  std::string fusion, sizes, verdict;
  double max_abs_error = -1, max_ratio = -1;
};

/// The points of a trace, one per process in the order they began (a
/// sweep's isolated worker, then its host's replay).
std::vector<Trace> read_trace(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "no trace at " << path;
  std::vector<Trace> points;
  std::vector<int64_t> pids;
  std::map<int64_t, std::vector<std::string>> begun;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const int64_t pid = j.at("pid");
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) {
      pids.push_back(pid);
      points.emplace_back();
    }
    Trace& t = points[std::find(pids.begin(), pids.end(), pid) - pids.begin()];
    const std::string stage = j.at("stage");
    if (j.at("event") == "begin") {
      begun[pid].push_back(stage);
      continue;
    }
    EXPECT_TRUE(!begun[pid].empty() && begun[pid].back() == stage)
        << "an end without its begin: " << line;
    t.stages.push_back(stage);
    t.fusion = j.at("fusion");
    t.sizes = j.at("sizes");
    if (j.contains("kernels")) t.kernels = j.at("kernels").get<std::vector<std::string>>();
    if (j.contains("verdict")) {
      t.verdict = j.at("verdict");
      t.max_abs_error = j.at("max_abs_error");
      t.max_ratio = j.at("max_ratio");
    }
  }
  for (const auto& [pid, b] : begun) {
    const Trace& t = points[std::find(pids.begin(), pids.end(), pid) - pids.begin()];
    EXPECT_EQ(b.size(), t.stages.size()) << "a stage began and never ended in " << path;
  }
  return points;
}

class PointAcceptance : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("schedlab_point_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("SCHEDLAB_POINT_TRACE");
    fs::remove_all(dir_);
  }
  /// Runs the CLI with the trace going to `trace`; its exit code.
  int cli(const std::string& args, const fs::path& trace) {
    const std::string cmd = "SCHEDLAB_POINT_TRACE='" + trace.string() + "' '" SCHEDLAB_CLI "' " +
                            args + " --cache-dir '" + (dir_ / "cache").string() + "' > '" +
                            (dir_ / "out.txt").string() + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream out(dir_ / "out.txt");
    std::stringstream ss;
    ss << out.rdbuf();
    output_ = ss.str();
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  fs::path dir_;
  std::string output_;  ///< the last command's stdout and stderr
};

TEST_F(PointAcceptance, ExecRunAndFuzzReachTheKernelThroughTheSamePoint) {
  // 1. exec, in its isolated child (the default), with the normalization plugin.
  ASSERT_EQ(cli("exec softmax --size N=8,K=128 --plugin normalization --backend cpu",
                dir_ / "exec.jsonl"),
            0)
      << output_;
  // 2. run: a one-point sweep of the same point (no sanitizer, as exec's
  // default; no profile, as exec's).
  {
    std::ofstream sweep(dir_ / "one.yaml");
    sweep << "sweep: one_point\n"
             "fusions:\n"
             "  - fusion: softmax\n"
             "    sizes: {N: [8], K: [128]}\n"
             "schedulers:\n"
             "  - plugin: normalization\n"
             "validation: {sanitize: false}\n"
             "measure: {repetitions: 2, warmup: 0}\n"
             "backend: cpu\n";
  }
  ASSERT_EQ(cli("run '" + (dir_ / "one.yaml").string() + "' --device none --output '" +
                    (dir_ / "records.jsonl").string() + "'",
                dir_ / "run.jsonl"),
            0)
      << output_;
  // 3. the fuzzer's runner, in this process, on the same fusion text at the
  // same sizes: its segmenter path, offered the normalization plugin only.
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/softmax.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string softmax = text.str();
  const std::string defaults = "sizes: {N: 3, K: 5}";
  ASSERT_NE(softmax.find(defaults), std::string::npos) << softmax;
  softmax.replace(softmax.find(defaults), defaults.size(), "sizes: {N: 8, K: 128}");
  plugin::Registry registry(
      plugin::plugin_search_path({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"}));
  fuzz::RunOptions fo;
  fo.plugins = sweep::segmenter_plugins(registry, {"normalization"});
  fo.cache_dir = (dir_ / "cache").string();
  setenv("SCHEDLAB_POINT_TRACE", (dir_ / "fuzz.jsonl").c_str(), 1);
  const std::string payload = fuzz::run_here(softmax, std::nullopt, fo);
  unsetenv("SCHEDLAB_POINT_TRACE");
  ASSERT_EQ(payload.rfind("validated\n", 0), 0u) << payload;

  // exec: one point, in its isolated child. run: the point in its isolated
  // worker, then the host replays the worker's schedule (as data) and
  // compiles it for the benchmark: Lower and Compile again, the same kernel.
  const std::vector<Trace> execs = read_trace(dir_ / "exec.jsonl");
  const std::vector<Trace> runs = read_trace(dir_ / "run.jsonl");
  const std::vector<Trace> fuzzes = read_trace(dir_ / "fuzz.jsonl");
  ASSERT_EQ(execs.size(), 1u);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(fuzzes.size(), 1u);
  const Trace &exec = execs[0], &run = runs[0], &replay = runs[1], &fuzzed = fuzzes[0];
  const std::vector<std::string> stages = {"schedule", "lower", "compile", "run", "validate"};
  for (const Trace* t : {&exec, &run, &fuzzed}) {
    EXPECT_EQ(t->stages, stages);
    EXPECT_EQ(t->fusion, "softmax");
    EXPECT_EQ(t->sizes, "N=8, K=128");
    EXPECT_EQ(t->verdict, "ok");
    ASSERT_EQ(t->kernels.size(), 1u);
  }
  EXPECT_EQ(replay.stages, (std::vector<std::string>{"lower", "compile"}));
  EXPECT_EQ(replay.kernels, exec.kernels);
  // The same kernel, byte for byte (its hash), and the same figures.
  EXPECT_EQ(run.kernels, exec.kernels);
  EXPECT_EQ(fuzzed.kernels, exec.kernels);
  EXPECT_EQ(run.max_abs_error, exec.max_abs_error);
  EXPECT_EQ(fuzzed.max_abs_error, exec.max_abs_error);
  EXPECT_EQ(run.max_ratio, exec.max_ratio);
  EXPECT_EQ(fuzzed.max_ratio, exec.max_ratio);
  EXPECT_GT(exec.max_abs_error, 0.0);  // a real comparison, not an empty one

  // The sweep's record says what the traces say; the fuzzer's payload too.
  const std::vector<report::Record> records =
      report::read_records((dir_ / "records.jsonl").string()).records;
  ASSERT_EQ(records.size(), 1u);
  const report::Record& r = records[0];
  EXPECT_EQ(r.status, report::Status::Ok) << r.error;
  EXPECT_EQ(r.plugin, "normalization");
  EXPECT_EQ(r.kernel_hash, exec.kernels[0]);
  EXPECT_EQ(r.max_abs_error, exec.max_abs_error);
  EXPECT_EQ(r.times_us.size(), 2u);
  const std::string ratio_line = payload.substr(payload.find('\n') + 1);
  EXPECT_EQ(std::strtod(ratio_line.c_str() + 6, nullptr), exec.max_ratio) << payload;
}

// `auto`'s candidates come from the plugins' own priorities, the most
// specific first, with no plugin named in core: the general autosched
// (priority 0) and script (never offered) are not among them. Asked again,
// as every point asks, the registry loads nothing twice.
TEST(AutoCandidates, TheBuiltinsInTheOrderTheyDeclare) {
  plugin::Registry registry({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"});
  std::vector<std::string> reasons;
  const auto candidates = sweep::builtin_candidates(registry, &reasons);
  std::vector<std::string> names;
  for (const auto& p : candidates) names.push_back(p->name() + " " + std::to_string(p->priority()));
  EXPECT_EQ(names, (std::vector<std::string>{"matmul 50", "normalization 40", "reduction 30",
                                             "transpose 20", "pointwise 10"}));
  EXPECT_EQ(sweep::builtin_candidates(registry, &reasons), candidates);  // the same instances
  EXPECT_TRUE(reasons.empty()) << reasons.front();
}

}  // namespace
}  // namespace schedlab
