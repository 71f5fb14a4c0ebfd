// Sweep specs that load: defaults, size grids, spaces, settings, and the
// expansion into points by the grid and random strategies. The fake plugin
// schemas are in sweep_test_util.h; malformed files are in invalid/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/search/strategy.h"
#include "sweep_test_util.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

using testing::ElementsAre;
using testing_util::load_text;

std::vector<int64_t> ints(const std::vector<Value>& values) {
  std::vector<int64_t> r;
  for (const Value& v : values) r.push_back(v.i);
  return r;
}

TEST(SweepSpec, DefaultsOfAMinimalFile) {
  SweepSpec s = load_text(R"(
fusions: [softmax]
schedulers:
  - plugin: pointwise
)");
  EXPECT_EQ(s.name, "inline");  // the file's stem
  ASSERT_EQ(s.fusions.size(), 1u);
  EXPECT_EQ(s.fusions[0].name, "softmax");
  EXPECT_EQ(s.fusions[0].path, test_support::config_fusion_dir() + "/softmax.yaml");
  // No sizes: the fusion file's defaults.
  EXPECT_THAT(s.fusions[0].sizes, ElementsAre(ir::SizeBindings{{"N", 3}, {"K", 5}}));
  ASSERT_EQ(s.schedulers.size(), 1u);
  const SchedulerSpec& p = s.schedulers[0];
  EXPECT_EQ(p.name, "pointwise");  // the plugin's name
  EXPECT_TRUE(p.uses_heuristic());
  EXPECT_EQ(p.schema.size(), 3u);
  EXPECT_EQ(s.baseline, "pointwise");  // the first scheduler
  EXPECT_EQ(s.strategy.kind, StrategySpec::Kind::Grid);
  EXPECT_EQ(s.backend, Backend::Auto);
  EXPECT_FALSE(s.validation.rtol || s.validation.atol);
  EXPECT_TRUE(s.validation.sanitize);  // on by default
  EXPECT_EQ(s.measure.repetitions, 10);
  // The heuristic scheduler is one point with the empty configuration.
  std::vector<Point> pts = expand(s);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_TRUE(pts[0].config.empty());
  EXPECT_TRUE(p.settings(pts[0].config).empty());
  EXPECT_EQ(describe(s, pts[0]), "softmax N=3,K=5 | pointwise | (heuristic)");
}

TEST(SweepSpec, EveryTopLevelKey) {
  SweepSpec s = load_text(R"(
sweep: norm_study
description: persistent softmax
fusions:
  - fusion: softmax
    sizes: {N: 8, K: 64}
schedulers:
  - {name: builtin, plugin: normalization}
  - name: tuned
    plugin: normalization
    set: {order: outer, eps_scale: 0.25, welford: true}
    space: {persist: [1, 2]}
strategy: {method: random, n: 1, seed: 9}
baseline: tuned
validation: {rtol: 1e-4, atol: default, sanitize: false}
measure: {repetitions: 5, warmup: 0, min_time: 0.25, flush_l2: false}
backend: cpu
)");
  EXPECT_EQ(s.name, "norm_study");
  EXPECT_EQ(s.description, "persistent softmax");
  EXPECT_EQ(s.baseline, "tuned");
  EXPECT_EQ(s.strategy.kind, StrategySpec::Kind::Random);
  EXPECT_EQ(s.strategy.budget, 1u);
  EXPECT_EQ(s.strategy.seed, 9u);
  EXPECT_EQ(s.validation.rtol, 1e-4);
  EXPECT_FALSE(s.validation.atol);
  EXPECT_FALSE(s.validation.sanitize);
  EXPECT_EQ(s.measure.repetitions, 5);
  EXPECT_EQ(s.measure.warmup, 0);
  EXPECT_EQ(s.measure.min_time, 0.25);
  EXPECT_FALSE(s.measure.flush_l2);
  EXPECT_EQ(s.backend, Backend::Cpu);
  const SchedulerSpec& t = *s.scheduler("tuned");
  EXPECT_EQ(t.fixed.str(), "order=outer, eps_scale=0.25, welford=true");
  EXPECT_THAT(t.settings(t.space.point(1)),
              ElementsAre("order=outer", "eps_scale=0.25", "welford=true", "persist=2"));
}

TEST(SweepSpec, FastMathIsTheSweepsDefaultAndEachSchedulersOwn) {
  SweepSpec s = load_text(R"(
fusions: [softmax]
fast_math: true
schedulers:
  - plugin: pointwise
  - name: accurate
    plugin: pointwise
    fast_math: false
)");
  EXPECT_TRUE(s.fast_math);
  ASSERT_EQ(s.schedulers.size(), 2u);
  EXPECT_TRUE(s.schedulers[0].fast_math);   // the sweep's
  EXPECT_FALSE(s.schedulers[1].fast_math);  // its own
  SweepSpec plain = load_text(R"(
fusions: [softmax]
schedulers:
  - plugin: pointwise
  - name: fast
    plugin: pointwise
    fast_math: true
)");
  EXPECT_FALSE(plain.fast_math);
  EXPECT_FALSE(plain.schedulers[0].fast_math);  // off by default
  EXPECT_TRUE(plain.schedulers[1].fast_math);
}

TEST(SweepSpec, MathNativeIsEachSchedulersOwn) {
  SweepSpec s = load_text(R"(
fusions: [softmax]
schedulers:
  - plugin: pointwise
  - name: native
    plugin: pointwise
    math: native
  - name: explicit_default
    plugin: pointwise
    math: default
)");
  ASSERT_EQ(s.schedulers.size(), 3u);
  EXPECT_FALSE(s.schedulers[0].native_half_math);  // off by default
  EXPECT_TRUE(s.schedulers[1].native_half_math);
  EXPECT_FALSE(s.schedulers[2].native_half_math);
}

TEST(SweepSpec, CompactSizesGridIsTheCrossProductLastKeyFastest) {
  SweepSpec s = load_text(R"(
fusions:
  - fusion: softmax
    sizes: {N: [1024, 4096], K: [256, 512, 1024]}
  - fusion: softmax
    sizes:
      - {N: 8, K: 8}
      - {N: 8, K: [8, 16]}   # 8x8 again: kept once
  - fusion: ../../configs/fusions/row_sum.yaml
    sizes: {K: 7}            # N from the file's defaults
schedulers:
  - plugin: pointwise
)");
  ASSERT_EQ(s.fusions.size(), 3u);
  std::vector<std::pair<int64_t, int64_t>> nk;
  for (const auto& b : s.fusions[0].sizes) nk.emplace_back(b.at("N"), b.at("K"));
  EXPECT_THAT(
      nk,
      ElementsAre(std::pair<int64_t, int64_t>{1024, 256}, std::pair<int64_t, int64_t>{1024, 512},
                  std::pair<int64_t, int64_t>{1024, 1024}, std::pair<int64_t, int64_t>{4096, 256},
                  std::pair<int64_t, int64_t>{4096, 512}, std::pair<int64_t, int64_t>{4096, 1024}));
  EXPECT_THAT(s.fusions[1].sizes, ElementsAre(ir::SizeBindings{{"N", 8}, {"K", 8}},
                                              ir::SizeBindings{{"N", 8}, {"K", 16}}));
  EXPECT_EQ(s.fusions[2].name, "row_sum");
  EXPECT_THAT(s.fusions[2].sizes, ElementsAre(ir::SizeBindings{{"N", 3}, {"K", 7}}));
  EXPECT_EQ(expand(s).size(), 6u + 2u + 1u);
}

TEST(SweepSpec, RangesListsAndPowersOfTwo) {
  SweepSpec s = load_text(R"(
fusions: [softmax]
schedulers:
  - name: ranges
    plugin: normalization
    space:
      block: {from: 32, to: 1024, pow2: true}
      persist: {from: 2, to: 11, step: 3}
      eps_scale: {from: 0.5, to: 2, step: 0.5}
      order: [outer, inner]
      welford: [true, false]
)");
  const ParamSpace& sp = s.schedulers[0].space;
  ASSERT_EQ(sp.dims.size(), 5u);
  EXPECT_THAT(ints(sp.dims[0].values), ElementsAre(32, 64, 128, 256, 512, 1024));
  EXPECT_THAT(ints(sp.dims[1].values), ElementsAre(2, 5, 8, 11));
  std::vector<std::string> eps, order;
  for (const Value& v : sp.dims[2].values) eps.push_back(v.str());
  for (const Value& v : sp.dims[3].values) order.push_back(v.str());
  EXPECT_THAT(eps, ElementsAre("0.5", "1", "1.5", "2"));
  EXPECT_THAT(order, ElementsAre("outer", "inner"));
  EXPECT_EQ(sp.size(), 6u * 4u * 4u * 2u * 2u);
  // Odometer order, the last dimension fastest.
  EXPECT_EQ(sp.point(0).str(), "block=32, persist=2, eps_scale=0.5, order=outer, welford=true");
  EXPECT_EQ(sp.point(1).str(), "block=32, persist=2, eps_scale=0.5, order=outer, welford=false");
  EXPECT_EQ(sp.point(2).str(), "block=32, persist=2, eps_scale=0.5, order=inner, welford=true");
  EXPECT_EQ(sp.point(sp.size() - 1).str(),
            "block=1024, persist=11, eps_scale=2, order=inner, welford=false");
}

/// block in 32..1024 (powers of two) x vector in {1, 2, 4, 8}, at K=1024 and
/// K=4096, with `block * vector <= K and K % (block * vector) == 0`.
const char* kConstrained = R"(
fusions:
  - fusion: softmax
    sizes: {N: 2, K: [1024, 4096]}
schedulers:
  - name: pw
    plugin: pointwise
    space:
      block: {from: 32, to: 1024, pow2: true}
      vector: [1, 2, 4, 8]
    constraints:
      - block * vector <= K
      - "K % (block * vector) == 0"
)";

/// The admissible (block, vector) pairs, computed independently of the loader.
std::vector<std::string> brute_force(int64_t k) {
  std::vector<std::string> r;
  for (int64_t block = 32; block <= 1024; block *= 2)
    for (int64_t vector : {1, 2, 4, 8})
      if (block * vector <= k && k % (block * vector) == 0)
        r.push_back("block=" + std::to_string(block) + ", vector=" + std::to_string(vector));
  return r;
}

TEST(Strategy, GridIsEveryAdmissiblePointInOdometerOrder) {
  SweepSpec s = load_text(kConstrained);
  std::vector<Point> pts = expand(s);
  std::vector<std::string> at1024, at4096;
  for (const Point& p : pts) {
    int64_t k = s.fusions[p.fusion].sizes[p.sizes].at("K");
    (k == 1024 ? at1024 : at4096).push_back(p.config.str());
  }
  EXPECT_EQ(at1024, brute_force(1024));
  EXPECT_EQ(at4096, brute_force(4096));
  EXPECT_LT(at4096.size(), 6u * 4u);        // the constraints removed points
  EXPECT_LT(at1024.size(), at4096.size());  // ... more of them at the smaller K
  // Sizes in order: every K=1024 point comes before the K=4096 ones.
  EXPECT_EQ(s.fusions[0].sizes[pts.front().sizes].at("K"), 1024);
  EXPECT_EQ(s.fusions[0].sizes[pts.back().sizes].at("K"), 4096);
  // A choice with integer names ("1", "2", ...) is handed over as written.
  EXPECT_THAT(s.schedulers[0].settings(pts[0].config), ElementsAre("block=32", "vector=1"));
}

std::vector<std::string> random_configs(uint64_t n, uint64_t seed, int64_t k = 1024) {
  std::string text = std::string(kConstrained) +
                     "strategy: {method: random, n: " + std::to_string(n) +
                     ", seed: " + std::to_string(seed) + "}\n";
  SweepSpec s = load_text(text);
  std::vector<std::string> r;
  for (const Point& p : expand(s))
    if (s.fusions[p.fusion].sizes[p.sizes].at("K") == k) r.push_back(p.config.str());
  return r;
}

TEST(Strategy, RandomIsDeterministicDistinctAndAdmissible) {
  std::vector<std::string> a = random_configs(5, 7);
  EXPECT_EQ(a, random_configs(5, 7));  // the same seed, the same points
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), a.size());
  std::vector<std::string> all = brute_force(1024);
  for (const std::string& c : a) EXPECT_THAT(all, testing::Contains(c));
  // In space order, like the grid.
  std::vector<std::string> sorted = a;
  std::sort(sorted.begin(), sorted.end(), [&](const std::string& x, const std::string& y) {
    return std::find(all.begin(), all.end(), x) < std::find(all.begin(), all.end(), y);
  });
  EXPECT_EQ(a, sorted);
  // Another seed draws another sample (fixed seeds: this is deterministic).
  EXPECT_NE(a, random_configs(5, 8));
  // A larger n only adds points.
  std::vector<std::string> b = random_configs(9, 7);
  for (const std::string& c : a) EXPECT_THAT(b, testing::Contains(c));
}

TEST(Strategy, RandomNIsCappedByTheAdmissiblePoints) {
  EXPECT_EQ(random_configs(1000, 1), brute_force(1024));
}

TEST(Strategy, AskTellLoopAndObserveDefault) {
  SweepSpec s = load_text(kConstrained);
  SearchProblem problem{&s.schedulers[0], &s.fusions[0], &s.fusions[0].sizes[1]};
  auto strategy = make_strategy(s.strategy, problem);
  size_t proposed = 0;
  for (auto batch = strategy->propose(); !batch.empty(); batch = strategy->propose())
    for (const Config& c : batch) {
      ++proposed;
      strategy->observe(c, Outcome{"ok", 1e-6, std::nullopt, {}, {}});  // grid ignores
    }
  EXPECT_EQ(proposed, brute_force(4096).size());
  EXPECT_TRUE(strategy->propose().empty());
}

TEST(Strategy, PointOrderIsFusionsThenSizesThenSchedulers) {
  SweepSpec s = load_text(R"(
fusions:
  - {fusion: softmax, sizes: {N: 2, K: [8, 16]}}
  - {fusion: row_sum}
schedulers:
  - plugin: pointwise
  - {name: blocks, plugin: pointwise, space: {block: [64, 32]}}
)");
  std::vector<std::string> got;
  for (const Point& p : expand(s)) got.push_back(describe(s, p));
  EXPECT_THAT(
      got, ElementsAre(
               "softmax N=2,K=8 | pointwise | (heuristic)", "softmax N=2,K=8 | blocks | block=64",
               "softmax N=2,K=8 | blocks | block=32", "softmax N=2,K=16 | pointwise | (heuristic)",
               "softmax N=2,K=16 | blocks | block=64", "softmax N=2,K=16 | blocks | block=32",
               "row_sum N=3,K=5 | pointwise | (heuristic)", "row_sum N=3,K=5 | blocks | block=64",
               "row_sum N=3,K=5 | blocks | block=32"));
}

TEST(SweepSpec, ScriptSchedulers) {
  SweepSpec s = load_text(R"(
fusions: [softmax]
schedulers:
  - script: ../../configs/schedules/softmax_block.sched
  - name: persist-space
    script: softmax_block    # a name: configs/schedules/softmax_block.sched
    space: {persist: [2, 4]}
    constraints: ["K <= 1024 * persist"]
)");
  const std::string script =
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/softmax_block.sched";
  const SchedulerSpec& plain = s.schedulers[0];
  EXPECT_EQ(plain.name, "softmax_block");  // the script's stem
  EXPECT_EQ(plain.plugin, "script");
  EXPECT_EQ(plain.script, script);
  EXPECT_TRUE(plain.uses_heuristic());  // the script's own params(...) defaults
  EXPECT_THAT(plain.settings({}), ElementsAre("script=" + script, "args="));
  const SchedulerSpec& sp = s.schedulers[1];
  EXPECT_THAT(sp.settings(sp.space.point(1)), ElementsAre("script=" + script, "args=persist=4"));
  EXPECT_EQ(expand(s).size(), 3u);
}

TEST(SweepSpec, RelativePathsAreRelativeToTheSweepFile) {
  // The same text at another path no longer finds the script.
  const char* text = R"(
fusions: [softmax]
schedulers:
  - script: ../../configs/schedules/softmax_block.sched
)";
  EXPECT_NO_THROW(load_text(text, SCHEDLAB_SOURCE_DIR "/tests/sweep/a.yaml"));
  EXPECT_THAT(test_support::user_error_of([&] { load_text(text, SCHEDLAB_SOURCE_DIR "/a.yaml"); }),
              testing::HasSubstr("does not exist"));
}

TEST(SweepSpec, GridRefusesAHugeSpaceButRandomSamplesIt) {
  const char* space = R"(
fusions: [softmax]
schedulers:
  - name: big
    plugin: normalization
    space:
      persist: {from: 1, to: 16}
      block: {from: 32, to: 1024}
      eps_scale: {from: 0, to: 2, step: 0.01}
    constraints: ["block % 32 == 0"]
)";
  EXPECT_EQ(test_support::user_error_of([&] { load_text(space); }),
            "space: scheduler 'big' has " + std::to_string(16 * 993 * 201) +
                " points; expected at most 1000000 for strategy grid (narrow the space or use "
                "{method: random, budget: ...})");
  SweepSpec s = load_text(std::string(space) + "strategy: {method: random, n: 20, seed: 3}\n");
  std::vector<Point> pts = expand(s);
  EXPECT_EQ(pts.size(), 20u);
  std::set<std::string> distinct;
  for (const Point& p : pts) {
    EXPECT_EQ(p.config.find("block")->i % 32, 0) << p.config.str();
    distinct.insert(p.config.str());
  }
  EXPECT_EQ(distinct.size(), 20u);
  // Too large to scan: the load-time check asks the spec's draw (what random
  // would propose) for a point that passes the constraints.
  std::string none = space;
  none.replace(none.find("block % 32 == 0"), 15, "block > 2000");
  EXPECT_THAT(test_support::user_error_of(
                  [&] { load_text(none + "strategy: {method: random, n: 20, seed: 3}\n"); }),
              testing::HasSubstr("no point of the space of scheduler 'big' (" +
                                 std::to_string(16 * 993 * 201) + " points) satisfies them"));
}

TEST(SweepSpec, ReadingAMissingFileIsAUserError) {
  EXPECT_EQ(test_support::user_error_of(
                [] { load_sweep_file("/nonexistent/x.yaml", testing_util::fake_options()); }),
            "cannot read sweep file '/nonexistent/x.yaml': no such file");
}

}  // namespace
}  // namespace schedlab::sweep
