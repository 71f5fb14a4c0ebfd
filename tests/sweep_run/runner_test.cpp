// The sweep runner in-process: an adaptive (model-guided) strategy plugs in
// through RunOptions::strategy and is driven round by round with outcomes,
// and records carry what the report needs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/runner.h"
#include "schedlab/sweep/spec.h"
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

  auto backend = runtime::make_cpu_backend((dir / "cache").string());
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
}

}  // namespace
}  // namespace schedlab::sweep
