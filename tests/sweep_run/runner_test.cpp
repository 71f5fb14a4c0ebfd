// The sweep runner in-process: an adaptive (model-guided) strategy plugs in
// through RunOptions::strategy and is driven round by round with outcomes,
// and records carry what the report needs.
#include <algorithm>
#include <set>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/spec/spec.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

namespace fs = std::filesystem;

const char* kSweep = R"(sweep: adaptive
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [32], K: [256]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128, 256, 512]
measure: {repetitions: 3, warmup: 0}
backend: cpu
)";

/// A stand-in for a model-guided search: proposes one block size at a time,
/// walking up the space while the time improves, and records what it was
/// told. The runner knows nothing of it.
class HillClimb : public SearchStrategy {
 public:
  HillClimb(const SearchProblem& p, std::vector<Outcome>* seen) : problem_(p), seen_(seen) {}
  std::vector<Config> propose() override {
    if (stop_ || next_ >= problem_.scheduler->space.size()) return {};
    return {problem_.scheduler->space.point(next_++)};
  }
  void observe(const Config&, const Outcome& o) override {
    seen_->push_back(o);
    // Stop at the first point slower than the best so far, or after three.
    if (o.ok() && best_ > 0 && o.median_s > best_) stop_ = true;
    if (o.ok() && (best_ == 0 || o.median_s < best_)) best_ = o.median_s;
    if (seen_->size() >= 3) stop_ = true;
  }

 private:
  SearchProblem problem_;
  std::vector<Outcome>* seen_;
  uint64_t next_ = 0;
  double best_ = 0;
  bool stop_ = false;
};

TEST(SweepRunner, DrivesAnAdaptiveStrategyRoundByRound) {
  const fs::path dir = fs::path(SCHEDLAB_BINARY_DIR) / "tests/sweep_run/adaptive";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sweep_file = (dir / "adaptive.yaml").string();
  std::ofstream(sweep_file) << kSweep;

  plugin::Registry registry(plugin::plugin_search_path());
  LoadOptions lo;
  lo.fusion_dirs = {test_support::config_fusion_dir()};
  lo.plugins = registry_lookup(registry);
  SweepSpec spec = load_sweep_file(sweep_file, lo);

  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  std::vector<Outcome> seen;
  RunOptions ro;
  ro.output = (dir / "r.jsonl").string();
  ro.strategy = [&](const SearchProblem& p) { return std::make_unique<HillClimb>(p, &seen); };
  std::vector<size_t> progress;
  ro.on_record = [&](const report::Record&, size_t done, size_t) { progress.push_back(done); };
  RunResult res = run_sweep(spec, registry, *backend, ro);

  // One point per round: each record arrived before the next was proposed.
  ASSERT_GE(seen.size(), 2u);
  ASSERT_LE(seen.size(), 3u);
  EXPECT_EQ(res.records.size(), seen.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].status, "ok") << i;
    EXPECT_GT(seen[i].median_s, 0) << i;
    EXPECT_EQ(res.records[i].config[0], (std::pair<std::string, std::string>(
                                            "block", std::to_string(32 << i))));
    EXPECT_EQ(res.records[i].times_us.size(), 3u);
    EXPECT_GT(res.records[i].bytes_moved, 0);
    EXPECT_TRUE(res.records[i].device.emulated);
  }
  EXPECT_EQ(report::read_records(ro.output).records.size(), seen.size());
  // Each outcome says what the plugin would choose itself (the warm start):
  // the same at every point, its whole schema, and not the point's own
  // configuration each time; the records keep it.
  const auto& own = seen[0].own_choice;
  ASSERT_EQ(own.size(), res.records[0].config.size());
  EXPECT_EQ(own[0].first, "block");
  bool differs = false;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].own_choice, own) << i;
    EXPECT_EQ(res.records[i].own_choice, own) << i;
    differs = differs || res.records[i].config != own;
  }
  EXPECT_TRUE(differs) << "the own choice is the plugin's, not the point's";
  EXPECT_EQ(report::read_records(ro.output).records[0].own_choice, own);
}

// The sizes are written K first; the fusion declares N first (x: [N, K]).
const char* kTwins = R"(sweep: twins
fusions:
  - fusion: pointwise_add_mul
    sizes: {K: [256], N: [16]}
schedulers:
  - name: first
    plugin: pointwise
  - name: second
    plugin: pointwise
  - name: other
    plugin: pointwise
    set: {block: 64}
baseline: second
measure: {repetitions: 4, warmup: 1, seed: 99, min_effect: 3%}
backend: cpu
)";

/// Loads `text` as a sweep file in `dir`.
SweepSpec load_text(const fs::path& dir, const std::string& text, plugin::Registry& registry) {
  const std::string file = (dir / "sweep.yaml").string();
  std::ofstream(file) << text;
  LoadOptions lo;
  lo.fusion_dirs = {test_support::config_fusion_dir()};
  lo.plugins = registry_lookup(registry);
  return load_sweep_file(file, lo);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SCHEDLAB_BINARY_DIR) / "tests/sweep_run" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(SweepRunner, InterleavedGroupSameKernelOnceAndGoogleBenchmarkJsonAlways) {
  const fs::path dir = fresh_dir("twins");
  plugin::Registry registry(plugin::plugin_search_path());
  SweepSpec spec = load_text(dir, kTwins, registry);
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  const std::string gb = (dir / "gb.json").string();
  RunOptions ro;
  ro.output = (dir / "r.jsonl").string();
  ro.benchmark_args = {"schedlab", "--benchmark_out=" + gb, "--benchmark_out_format=json"};
  RunResult res = run_sweep(spec, registry, *backend, ro);
  ASSERT_EQ(res.records.size(), 3u);
  const report::Record &first = res.records[0], &second = res.records[1], &other = res.records[2];
  for (const report::Record& r : res.records) {
    ASSERT_EQ(r.status, report::Status::Ok) << r.error;
    EXPECT_EQ(r.times_us.size(), 4u);
    EXPECT_EQ(r.group, first.group);  // one (fusion, sizes) group: paired rounds
    EXPECT_TRUE(r.own_choice.empty()) << "a heuristic row runs its own choice";
    EXPECT_EQ(r.seed, 99u);
    EXPECT_EQ(r.baseline, "second");  // the sweep's, for `report`
    EXPECT_EQ(r.min_effect, 0.03);
    EXPECT_NE(r.launch.find("block="), std::string::npos) << r.launch;
  }
  // The same kernel and launch: measured once, the second shares it.
  EXPECT_EQ(first.kernel_hash, second.kernel_hash);
  EXPECT_EQ(first.same_kernel_as, "");
  // Sizes in the fusion's declaration order, in the record and in its JSON
  // (docs/reports.md), whatever order the sweep file wrote them in.
  EXPECT_EQ(first.size_label(), "N=16,K=256");
  {
    std::ifstream in(ro.output);
    std::string line;
    std::getline(in, line);
    EXPECT_NE(line.find(R"("sizes":{"N":16,"K":256},"size_label":"N=16,K=256")"), std::string::npos)
        << line;
  }
  const std::string where = "pointwise_add_mul/N=16,K=256/";
  EXPECT_EQ(second.same_kernel_as, where + "first/" + first.config_label());
  EXPECT_EQ(second.times_us, first.times_us);
  EXPECT_TRUE(report::same_kernel(first, second));
  EXPECT_NE(other.kernel_hash, first.kernel_hash);
  EXPECT_EQ(other.same_kernel_as, "");

  // Google Benchmark's JSON: every point a benchmark with its repetitions,
  // the samples the records hold (its run names carry Google Benchmark's
  // own suffix for one iteration per repetition, manual time).
  auto read_json = [&] {
    std::ifstream in(gb);
    return nlohmann::json::parse(in);
  };
  nlohmann::json j = read_json();
  std::map<std::string, std::vector<double>> reps;
  std::map<std::string, std::string> labels;
  for (const auto& b : j["benchmarks"])
    if (b["run_type"] == "iteration") {
      reps[b["run_name"]].push_back(b["real_time"].get<double>());
      labels[b["run_name"]] = b.value("label", "");
    }
  ASSERT_EQ(reps.size(), 3u);
  for (const report::Record& r : res.records) {
    const std::string name =
        where + r.scheduler + "/" + r.config_label() + "/iterations:1/repeats:4/manual_time";
    ASSERT_EQ(reps[name].size(), 4u) << name;
    for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(reps[name][k], r.times_us[k], 1e-6 * r.times_us[k]);
  }
  EXPECT_NE(labels[where + "second/" + second.config_label() + "/iterations:1/repeats:4/manual_time"].find(
                "same kernel as"),
            std::string::npos);

  // Again with every kernel unchanged: nothing is timed, and the JSON is
  // still written (the old one removed first), every benchmark marked reused.
  fs::remove(gb);
  RunOptions again = ro;
  again.output = (dir / "r2.jsonl").string();
  again.measured = res.records;
  RunResult res2 = run_sweep(spec, registry, *backend, again);
  EXPECT_EQ(res2.cached, 3u);
  ASSERT_TRUE(fs::exists(gb));
  j = read_json();
  size_t reused = 0;
  for (const auto& b : j["benchmarks"])
    reused += b["run_type"] == "iteration" && b.value("label", "").find("reused") != std::string::npos;
  EXPECT_EQ(reused, 3u * 4u);
  for (const report::Record& r : res2.records) EXPECT_TRUE(r.reused);
}

// watch's A/B reruns (RunOptions::validated): a point whose kernel an
// earlier record validated and profiled keeps that verdict and prediction,
// skips its validating (sanitized) run, and is timed afresh; another kernel
// is validated as ever. In this process and in isolated workers.
TEST(SweepRunner, AnEarlierVerdictStandsForTheSameKernelWhichIsTimedAgain) {
  for (const bool isolate : {false, true}) {
    const fs::path dir = fresh_dir(isolate ? "validated_isolated" : "validated");
    plugin::Registry registry(plugin::plugin_search_path());
    SweepSpec spec = load_text(dir, R"(sweep: validated
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [32], K: [256]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      block: [64, 128]
measure: {repetitions: 3, warmup: 0}
backend: cpu
)",
                               registry);
    auto backend =
        runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
    RunOptions ro;
    ro.output = (dir / "r.jsonl").string();
    ro.isolate = isolate;
    ro.profile_device = model::load_device("h200", {SCHEDLAB_SOURCE_DIR "/configs/devices"});
    RunResult first = run_sweep(spec, registry, *backend, ro);
    ASSERT_EQ(first.records.size(), 2u);
    for (const report::Record& r : first.records) {
      ASSERT_EQ(r.status, report::Status::Ok) << r.error;
      ASSERT_TRUE(r.prediction && r.max_abs_error);
    }
    // The earlier verdict of the first kernel only, marked so that a copy
    // shows: a real rerun would validate to the same numbers.
    report::Record earlier = first.records[0];
    earlier.max_abs_error = 0.125;
    earlier.prediction->predicted_us = 1234.5;
    RunOptions again = ro;
    again.output = (dir / "r2.jsonl").string();
    again.validated = {earlier};
    const fs::path trace = dir / "trace.jsonl";
    setenv("SCHEDLAB_POINT_TRACE", trace.c_str(), 1);
    RunResult second = run_sweep(spec, registry, *backend, again);
    unsetenv("SCHEDLAB_POINT_TRACE");
    ASSERT_EQ(second.records.size(), 2u);
    const report::Record &kept = second.records[0], &checked = second.records[1];
    for (const report::Record& r : second.records) {
      ASSERT_EQ(r.status, report::Status::Ok) << r.error;
      EXPECT_EQ(r.times_us.size(), 3u);  // timed in this run
      EXPECT_FALSE(r.reused);
    }
    EXPECT_EQ(second.cached, 0u);
    EXPECT_EQ(kept.kernel_hash, earlier.kernel_hash);
    EXPECT_EQ(kept.max_abs_error, 0.125);
    EXPECT_EQ(kept.prediction->predicted_us, 1234.5);
    EXPECT_NE(checked.kernel_hash, earlier.kernel_hash);
    EXPECT_EQ(checked.max_abs_error, first.records[1].max_abs_error);
    EXPECT_EQ(checked.prediction->predicted_us, first.records[1].prediction->predicted_us);
    // The trace: one validation, of the other kernel's point; the kept one
    // stopped after lowering (in the worker, then in the host to be compiled).
    std::ifstream in(trace);
    size_t validations = 0, profiles = 0;
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json e = nlohmann::json::parse(line);
      if (e["event"] != "end") continue;
      validations += e["stage"] == "validate";
      profiles += e["stage"] == "profile";
    }
    EXPECT_EQ(validations, 1u) << (isolate ? "isolated" : "in process");
    EXPECT_EQ(profiles, 1u) << (isolate ? "isolated" : "in process");
  }
}

TEST(SweepRunner, WrongResultPointIsRecordedAndNeverTimed) {
  // A zero tolerance: the reduction plugin's tree-shaped sum differs from
  // the reference's serial sum in the last bits, a real wrong_result.
  const fs::path dir = fresh_dir("wrong");
  plugin::Registry registry(plugin::plugin_search_path());
  SweepSpec spec = load_text(dir, R"(sweep: wrong
fusions:
  - fusion: row_sum
    sizes: {N: [4], K: [4096]}
schedulers:
  - name: tree
    plugin: reduction
validation: {rtol: 0, atol: 0}
measure: {repetitions: 3, warmup: 0}
backend: cpu
)",
                             registry);
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  RunOptions ro;
  ro.output = (dir / "r.jsonl").string();
  RunResult res = run_sweep(spec, registry, *backend, ro);
  ASSERT_EQ(res.records.size(), 1u);
  const report::Record& r = res.records[0];
  EXPECT_EQ(r.status, report::Status::WrongResult);
  EXPECT_NE(r.error.find("max abs error"), std::string::npos) << r.error;
  EXPECT_TRUE(r.times_us.empty());
  EXPECT_TRUE(r.group.empty());
  EXPECT_EQ(report::read_records(ro.output).records.at(0).status, report::Status::WrongResult);
}

}  // namespace
// --isolate, three ways: in the process, in workers that also compile and
// validate (the CPU default), and in workers that only schedule while this
// process compiles and validates (what a CUDA run does, driven here on the
// CPU). The host never runs plugin code in the last two (its registry holds
// descriptions only), and all three give the same kernels and verdicts.
TEST(SweepRunner, IsolatedRunsGiveTheSameKernelsAsInProcess) {
  const fs::path dir = fs::path(SCHEDLAB_BINARY_DIR) / "tests/sweep_run/isolated";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  std::vector<std::vector<std::pair<std::string, std::string>>> runs;
  for (int mode = 0; mode < 3; ++mode) {
    plugin::Registry registry(plugin::plugin_search_path());
    if (mode > 0) registry.load_isolated(std::chrono::seconds(60));
    SweepSpec spec = load_text(dir, kTwins, registry);
    RunOptions ro;
    ro.output = (dir / ("r" + std::to_string(mode) + ".jsonl")).string();
    ro.cache_dir = (dir / "cache").string();
    ro.jobs = 2;
    ro.isolate = mode > 0;
    ro.isolate_launches = mode == 1;
    RunResult res = run_sweep(spec, registry, *backend, ro);
    if (mode > 0) {
      for (const auto& p : registry.plugins()) EXPECT_FALSE(p->loaded()) << p->name();
    }
    std::vector<std::pair<std::string, std::string>> got;
    for (const report::Record& r : res.records) {
      EXPECT_EQ(r.status, report::Status::Ok) << mode << " " << r.scheduler << ": " << r.error;
      EXPECT_FALSE(r.times_us.empty()) << mode << " " << r.scheduler;
      got.emplace_back(r.scheduler, r.kernel_hash);
    }
    std::sort(got.begin(), got.end());
    runs.push_back(got);
  }
  ASSERT_EQ(runs[0].size(), 3u);
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_EQ(runs[2], runs[0]);
}

// The scheduler's own choice (the adaptive strategies' warm start) is made
// where the plugin runs: under --isolate in a worker, whose record carries it
// back to the host before the host names its search.
TEST(SweepRunner, TheOwnChoiceComesBackFromAnIsolatedWorker) {
  const fs::path dir = fresh_dir("own_choice");
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  std::vector<std::vector<report::ConfigList>> runs;
  for (int mode = 0; mode < 2; ++mode) {
    plugin::Registry registry(plugin::plugin_search_path());
    if (mode > 0) registry.load_isolated(std::chrono::seconds(60));
    SweepSpec spec = load_text(dir, kSweep, registry);
    RunOptions ro;
    ro.output = (dir / ("r" + std::to_string(mode) + ".jsonl")).string();
    ro.cache_dir = (dir / "cache").string();
    ro.isolate = mode > 0;
    RunResult res = run_sweep(spec, registry, *backend, ro);
    std::vector<report::ConfigList> own;
    for (const report::Record& r : res.records) {
      EXPECT_EQ(r.status, report::Status::Ok) << mode << ": " << r.error;
      EXPECT_FALSE(r.own_choice.empty()) << mode << " " << r.config_label();
      own.push_back(r.own_choice);
    }
    runs.push_back(own);
  }
  ASSERT_EQ(runs[0].size(), 5u);
  EXPECT_EQ(runs[1], runs[0]);
}

// --resume after a run killed with one record written: twins (one plugin
// binary, the same settings) are told apart by their scheduler, so the
// missing twin runs and the recorded one is not taken for it.
TEST(SweepRunner, ResumeTellsTwinsApart) {
  const fs::path dir = fs::path(SCHEDLAB_BINARY_DIR) / "tests/sweep_run/resume_twins";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  plugin::Registry registry(plugin::plugin_search_path());
  SweepSpec spec = load_text(dir, kTwins, registry);
  RunOptions ro;
  ro.output = (dir / "r.jsonl").string();
  ro.cache_dir = (dir / "cache").string();
  ro.isolate = false;
  run_sweep(spec, registry, *backend, ro);
  // Keep only "first"'s record, as a run killed after writing it would.
  std::string kept;
  {
    std::ifstream in(ro.output);
    for (std::string line; std::getline(in, line);)
      if (line.find("\"scheduler\":\"first\"") != std::string::npos) kept = line + "\n";
  }
  ASSERT_FALSE(kept.empty());
  std::ofstream(ro.output, std::ios::trunc) << kept;
  ro.resume = true;
  RunResult res = run_sweep(spec, registry, *backend, ro);
  std::set<std::string> schedulers;
  for (const report::Record& r : res.records) schedulers.insert(r.scheduler);
  EXPECT_EQ(schedulers, (std::set<std::string>{"first", "second", "other"}));
  EXPECT_EQ(res.resumed, 1u);
  std::set<std::string> in_file;
  for (const report::Record& r : report::read_records(ro.output).records)
    in_file.insert(r.scheduler);
  EXPECT_EQ(in_file, (std::set<std::string>{"first", "second", "other"}));
  EXPECT_EQ(report::read_records(ro.output).records.size(), 3u);
}

}  // namespace schedlab::sweep

namespace schedlab::sweep {
namespace {

// Halving from a sweep file, driven by the runner: rung 0 times 4 points
// with half the 4 repetitions configured, rung 1 the best 2 with all 4;
// each configuration keeps one record (the latest stands) and its first
// evaluation number, and every record names its search.
TEST(SweepRunner, HalvingRetimesTheBestHalfWithMoreRepetitions) {
  const fs::path dir = fresh_dir("halving");
  plugin::Registry registry(plugin::plugin_search_path());
  SweepSpec spec = load_text(dir, R"(sweep: halving
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [32], K: [256]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128, 256, 512]
strategy: {method: halving, budget: 4, seed: 5}
measure: {repetitions: 4, warmup: 0}
backend: cpu
)",
                             registry);
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  RunOptions ro;
  ro.output = (dir / "r.jsonl").string();
  RunResult res = run_sweep(spec, registry, *backend, ro);
  ASSERT_EQ(res.records.size(), 4u);
  std::multiset<size_t> repetitions;
  std::set<int64_t> evaluations;
  for (const report::Record& r : res.records) {
    repetitions.insert(r.times_us.size());
    evaluations.insert(r.evaluation);
    EXPECT_EQ(r.strategy, "halving");
    EXPECT_EQ(r.objective, "measured");
  }
  EXPECT_EQ(repetitions, (std::multiset<size_t>{2, 2, 4, 4}));
  EXPECT_EQ(evaluations, (std::set<int64_t>{1, 2, 3, 4}));
  // The file has every timing, the re-timed points twice; the last stands.
  EXPECT_EQ(report::read_records(ro.output).records.size(), 6u);

  // --resume of the finished run: every measurement is found, each rung's
  // its own (the brief rung-0 timing never stands for the re-timing), and
  // nothing is appended.
  ro.resume = true;
  RunResult again = run_sweep(spec, registry, *backend, ro);
  EXPECT_EQ(again.resumed, 6u);
  ASSERT_EQ(again.records.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(again.records[k].config_label(), res.records[k].config_label());
    EXPECT_EQ(again.records[k].times_us, res.records[k].times_us) << res.records[k].config_label();
  }
  EXPECT_EQ(report::read_records(ro.output).records.size(), 6u);
}

}  // namespace
}  // namespace schedlab::sweep
