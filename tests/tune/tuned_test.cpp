// Tuned configurations (core/sweep/tuned/tuned.cpp, ABI 1.4): size buckets, the
// choice of the best configuration per scheduler and (fusion, bucket), the
// tuned file's YAML both ways with every diagnostic at its file:line:col,
// the lookup, and the offer to real plugins: the built-in pointwise plugin
// serves it, a plugin built against ABI 1.3 is unaffected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "schedlab/plugin/host.h"
#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/tuned/tuned.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

using ::testing::HasSubstr;
using test_support::user_error_what_of;

ir::SizeBindings sizes(std::initializer_list<std::pair<const std::string, int64_t>> s) {
  return ir::SizeBindings(s);
}

// ---- buckets ------------------------------------------------------------------

TEST(Buckets, EachRuleGivesItsRange) {
  std::vector<BucketRule> rules = {{"K", BucketRule::Kind::Pow2, {}, {}},
                                   {"N", BucketRule::Kind::Any, {}, {}},
                                   {"M", BucketRule::Kind::Edges, {256, 1024}, {}}};
  const std::vector<std::string> names = {"N", "K", "M", "L"};
  auto label = [&](int64_t n, int64_t k, int64_t m) {
    return bucket_str(bucket_of(rules, names, sizes({{"N", n}, {"K", k}, {"M", m}, {"L", 7}})));
  };
  EXPECT_EQ(label(64, 3000, 100), "N=any K=[2048, 4095] M=[1, 255] L=7");
  EXPECT_EQ(label(1, 4096, 256), "N=any K=[4096, 8191] M=[256, 1023] L=7");
  EXPECT_EQ(label(1, 1, 1023), "N=any K=1 M=[256, 1023] L=7");  // [1, 1]: one value
  EXPECT_EQ(label(1, 2, 1024), "N=any K=[2, 3] M=[1024, inf] L=7");
  EXPECT_EQ(label(1, 4095, 1 << 30), "N=any K=[2048, 4095] M=[1024, inf] L=7");
}

TEST(Buckets, ContainsIsInclusive) {
  BucketRange r{"K", 4096, 8191};
  EXPECT_TRUE(r.contains(4096));
  EXPECT_TRUE(r.contains(8191));
  EXPECT_FALSE(r.contains(8192));
  EXPECT_FALSE(r.contains(4095));
  EXPECT_FALSE(r.any());
}

// ---- choosing -------------------------------------------------------------------

SchedulerSpec scheduler(const std::string& name, const std::string& plugin,
                        const std::string& script = "") {
  SchedulerSpec s;
  s.name = name;
  s.plugin = plugin;
  s.script = script;
  return s;
}

report::Record record(const std::string& sched, int64_t k, const std::string& block,
                      double us, report::Status status = report::Status::Ok) {
  report::Record r;
  r.sweep = "t";
  r.fusion = "softmax";
  r.sizes = {{"N", 8}, {"K", k}};
  r.scheduler = sched;
  r.plugin = "pointwise";
  r.config = {{"block", block}, {"vector", "4"}};
  r.status = status;
  r.times_us = {us, us, us};
  r.device.name = "CPU emulation (test)";
  r.kernel_hash = "k" + block + "_" + std::to_string(k);
  r.bytes_moved = 1000;
  return r;
}

SweepSpec two_schedulers() {
  SweepSpec spec;
  spec.name = "t";
  spec.schedulers = {scheduler("space", "pointwise"), scheduler("scr", "script", "a.sched")};
  spec.buckets = {{"K", BucketRule::Kind::Pow2, {}, {}}};
  return spec;
}

TEST(ChooseTuned, TheBestGeometricMeanAmongConfigsMeasuredAtEverySize) {
  SweepSpec spec = two_schedulers();
  std::vector<report::Record> records = {
      // Bucket K=[1024, 2047], sizes 1024 and 1536. best: 10 and 15.
      record("space", 1024, "A", 10), record("space", 1536, "A", 20),  // 1 and 1.333
      record("space", 1024, "B", 12), record("space", 1536, "B", 15),  // 1.2 and 1
      record("space", 1024, "C", 5),  // fastest, but at one size of two: not a candidate
      record("space", 1536, "D", 1, report::Status::WrongResult),  // never a candidate
      record("scr", 1024, "E", 1),                                   // a script: no entry
      // Bucket K=[4096, 8191]: one configuration.
      record("space", 4096, "A", 40)};
  TunedFile t = choose_tuned(spec, records, "2026-12-02T00:00:00Z");
  ASSERT_EQ(t.entries.size(), 2u);
  const TunedEntry& e = t.entries[0];
  EXPECT_EQ(e.scheduler, "space");
  EXPECT_EQ(e.plugin, "pointwise");
  EXPECT_EQ(e.fusion, "softmax");
  EXPECT_EQ(bucket_str(e.bucket), "N=8 K=[1024, 2047]");
  EXPECT_EQ(e.config, (report::ConfigList{{"block", "B"}, {"vector", "4"}}));
  // C sets the best at 1024 (5 us) without being a candidate: B is 12 / 5
  // there and 15 / 15 at 1536 (A: 10 / 5 and 20 / 15, a larger mean).
  EXPECT_NEAR(e.relative, std::sqrt(12.0 / 5.0 * 1.0), 1e-9);
  EXPECT_EQ(e.candidates, 3);
  ASSERT_EQ(e.figures.size(), 2u);
  EXPECT_EQ(e.figures[0].sizes, "N=8,K=1024");
  EXPECT_DOUBLE_EQ(e.figures[0].objective_us, 12);
  EXPECT_EQ(e.figures[1].kernel_hash, "kB_1536");
  EXPECT_EQ(e.objective, "measured");
  EXPECT_EQ(e.device, "CPU emulation (test)");
  EXPECT_EQ(e.date, "2026-12-02T00:00:00Z");
  EXPECT_EQ(bucket_str(t.entries[1].bucket), "N=8 K=[4096, 8191]");
  EXPECT_EQ(t.entries[1].config[0].second, "A");
}

TEST(ChooseTuned, PredictedObjectiveReadsThePrediction) {
  SweepSpec spec = two_schedulers();
  spec.strategy.objective = StrategySpec::Objective::Predicted;
  std::vector<report::Record> records = {record("space", 1024, "A", 1),
                                         record("space", 1024, "B", 100),
                                         record("space", 1024, "C", 0.5)};  // no prediction
  records[0].prediction = report::Prediction{"h200", 30, "dram", 0.5, "[]"};
  records[1].prediction = report::Prediction{"h200", 20, "dram", 0.7, "[]"};
  TunedFile t = choose_tuned(spec, records, "d");
  ASSERT_EQ(t.entries.size(), 1u);
  EXPECT_EQ(t.entries[0].config[0].second, "B");
  EXPECT_EQ(t.entries[0].candidates, 2);
  EXPECT_EQ(t.entries[0].objective, "predicted");
  EXPECT_DOUBLE_EQ(t.entries[0].figures[0].objective_us, 20);
}

TEST(ChooseTuned, ATieGoesToTheConfigurationEvaluatedFirst) {
  SweepSpec spec = two_schedulers();
  for (const char* first : {"64", "256"}) {
    const std::string second = std::string(first) == "64" ? "256" : "64";
    TunedFile t = choose_tuned(
        spec, {record("space", 1024, first, 7), record("space", 1024, second, 7)}, "d");
    ASSERT_EQ(t.entries.size(), 1u);
    EXPECT_EQ(t.entries[0].config[0].second, first);
  }
}

// Timed objectives: noise never displaces the configuration evaluated first.
// 8 interleaved rounds each (paired), a sweep minimum effect of 10 %.
TEST(ChooseTuned, TheFirstEvaluatedStandsUnlessMeasurablySlower) {
  SweepSpec spec = two_schedulers();
  auto timed = [](const std::string& block, std::vector<double> times) {
    report::Record r = record("space", 1024, block, 0);
    r.times_us = std::move(times);
    r.group = "run-1";
    r.min_effect = 0.10;
    return r;
  };
  const std::vector<double> ten = {10.0, 10.3, 9.9, 10.1, 10.2, 9.8, 10.0, 10.1};
  auto chosen = [&](std::vector<report::Record> records) {
    TunedFile t = choose_tuned(spec, records, "d");
    EXPECT_EQ(t.entries.size(), 1u);
    return t.entries.empty() ? std::string() : t.entries[0].config[0].second;
  };
  // B's median is lower, by noise: A, evaluated first, stays, and the entry
  // names B as the faster median it was kept over.
  const std::vector<report::Record> noise = {
      timed("A", ten), timed("B", {9.9, 10.0, 10.2, 9.8, 10.1, 9.9, 10.0, 10.0})};
  EXPECT_EQ(chosen(noise), "A");
  const TunedFile kept = choose_tuned(spec, noise, "d");
  ASSERT_EQ(kept.entries.size(), 1u);
  EXPECT_EQ(kept.entries[0].fastest, (report::ConfigList{{"block", "B"}, {"vector", "4"}}));
  EXPECT_EQ(parse_tuned_text(tuned_yaml(kept), "t.yaml").entries[0].fastest,
            kept.entries[0].fastest);
  // B faster every round, but by 5 %, under the minimum effect: A stays.
  std::vector<double> five = ten;
  for (double& x : five) x *= 0.95;
  EXPECT_EQ(chosen({timed("A", ten), timed("B", five)}), "A");
  // B faster by half, every round: B.
  std::vector<double> half = ten;
  for (double& x : half) x *= 0.5;
  EXPECT_EQ(chosen({timed("A", ten), timed("B", half)}), "B");
  EXPECT_TRUE(choose_tuned(spec, {timed("A", ten), timed("B", half)}, "d").entries[0].fastest.empty());
  // The same kernel and launch: the same configuration in effect, A stays
  // however few the timings.
  report::Record a = record("space", 1024, "A", 10), b = record("space", 1024, "B", 5);
  b.kernel_hash = a.kernel_hash;
  EXPECT_EQ(chosen({a, b}), "A");
  // Three timings a side cannot be significant at 5 %: the medians decide.
  EXPECT_EQ(chosen({record("space", 1024, "A", 10), record("space", 1024, "B", 9.9)}), "B");
}

TEST(ChooseTuned, NothingValidatedIsNoEntry) {
  SweepSpec spec = two_schedulers();
  EXPECT_TRUE(choose_tuned(spec, {record("space", 1024, "A", 1, report::Status::Racy)}, "d")
                  .entries.empty());
}

// ---- YAML both ways ----------------------------------------------------------------

TEST(TunedYaml, RoundTrips) {
  SweepSpec spec = two_schedulers();
  spec.buckets.push_back({"N", BucketRule::Kind::Any, {}, {}});
  std::vector<report::Record> records = {record("space", 1024, "128", 10),
                                         record("space", 8192, "256", 10)};
  records[0].config.emplace_back("script", "\"my \\\"fast\\\" one.sched\"");  // a String, as formatted
  TunedFile t = choose_tuned(spec, records, "2026-12-02T10:00:00Z");
  t.sweep_hash = "abc123";
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_EQ(t.entries[0].config.back().second, "my \"fast\" one.sched");  // as --set takes it
  const std::string text = tuned_yaml(t);
  TunedFile back = parse_tuned_text(text, "t.yaml");
  EXPECT_EQ(back.sweep, "t");
  EXPECT_EQ(back.sweep_hash, "abc123");
  ASSERT_EQ(back.buckets.size(), 2u);
  EXPECT_EQ(back.buckets[0].kind, BucketRule::Kind::Pow2);
  EXPECT_EQ(back.buckets[1].kind, BucketRule::Kind::Any);
  ASSERT_EQ(back.entries.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.entries[i].plugin, t.entries[i].plugin);
    EXPECT_EQ(back.entries[i].scheduler, t.entries[i].scheduler);
    EXPECT_EQ(back.entries[i].fusion, t.entries[i].fusion);
    EXPECT_EQ(bucket_str(back.entries[i].bucket), bucket_str(t.entries[i].bucket));
    EXPECT_EQ(back.entries[i].config, t.entries[i].config);
    EXPECT_EQ(back.entries[i].date, "2026-12-02T10:00:00Z");
    ASSERT_EQ(back.entries[i].figures.size(), 1u);
    EXPECT_EQ(back.entries[i].figures[0].kernel_hash, t.entries[i].figures[0].kernel_hash);
    EXPECT_DOUBLE_EQ(back.entries[i].figures[0].objective_us, 10);
  }
  EXPECT_EQ(bucket_str(back.entries[0].bucket), "N=any K=[1024, 2047]");
  // Each entry knows its line, for messages.
  EXPECT_GT(back.entries[1].loc.line, back.entries[0].loc.line);
  EXPECT_EQ(back.entries[0].loc.file, "t.yaml");
}

constexpr const char* kHeader = "schema: schedlab.tuned.v1\n";

TunedFile entries(const std::string& body) {
  return parse_tuned_text(std::string(kHeader) + "entries:\n" + body, "t.yaml");
}

TEST(TunedYaml, DiagnosticsNameTheFileLineAndColumn) {
  struct Case {
    std::string text, want;
  };
  const std::vector<Case> cases = {
      {"schema: schedlab.tuned.v2\nentries: []\n",
       "t.yaml:1:9: error: schema: expected schedlab.tuned.v1, found 'schedlab.tuned.v2'"},
      {"entries: []\n", "t.yaml:1:1: error: missing required key 'schema'"},
      {std::string(kHeader) + "entries: []\nentires: []\n",
       "t.yaml:3:1: error: unknown key 'entires' in the tuned file"},
      {std::string(kHeader) + "entries:\n  - {plugin: p, fusion: f, bucket: {K: 1}}\n",
       "t.yaml:3:5: error: tuned entry: missing required key 'config'"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {K: [8, 4]}, config: {}}\n",
       "t.yaml:3:40: error: bucket K: expected [lo, hi] with lo <= hi, found [8, 4]"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {K: lots}, config: {}}\n",
       "t.yaml:3:40: error: bucket K: expected an integer, found 'lots'"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {}, config: {}}\n",
       "t.yaml:3:36: error: bucket: expected a mapping from each size to a value"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {K: 1}, config: {a: [1]}}\n",
       "t.yaml:3:56: error: config a: expected a value, found a list"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {K: 1}, config: {a: 1, a: 2}}\n",
       "t.yaml:3:59: error: config: duplicate parameter 'a'"},
      {std::string(kHeader) +
           "entries:\n  - {plugin: p, fusion: f, bucket: {K: 1}, config: {}, fastest: 4}\n",
       "t.yaml:3:65: error: fastest: expected a mapping from parameter to value such as {block: 128, vector: 4}, found '4'"},
      {std::string(kHeader) + "buckets: {K: sqrt}\nentries: []\n",
       "t.yaml:2:14: error: buckets K: expected pow2, any, exact or a list of edges"},
      {std::string(kHeader) + "entries: [\n", "t.yaml:3:1: error: invalid YAML"},
  };
  for (const Case& c : cases)
    EXPECT_THAT(user_error_what_of([&] { parse_tuned_text(c.text, "t.yaml"); }),
                HasSubstr(c.want))
        << c.text;
}

TEST(TunedYaml, AFileThatCannotBeReadSaysSo) {
  EXPECT_THAT(user_error_what_of([] { load_tuned_file("/no/such/tuned.yaml"); }),
              HasSubstr("cannot read the tuned file '/no/such/tuned.yaml'"));
}

// ---- lookup ------------------------------------------------------------------------

TEST(TunedFileMatches, TheMostSpecificBucketFirstAndNothingOutside) {
  TunedFile t = entries(
      "  - {plugin: pointwise, fusion: softmax, bucket: {N: any, K: [1024, 2047]}, "
      "config: {block: 64}}\n"
      "  - {plugin: pointwise, fusion: softmax, bucket: {N: 8, K: [1024, 2047]}, "
      "config: {block: 128}}\n"
      "  - {plugin: pointwise, fusion: layernorm, bucket: {N: any, K: any}, config: {block: 32}}\n");
  auto first = [&](const std::string& plugin, const std::string& fusion,
                   const ir::SizeBindings& s) -> std::string {
    auto m = t.matches(plugin, fusion, s);
    return m.empty() ? "none" : m.front()->config.front().second;
  };
  EXPECT_EQ(first("pointwise", "softmax", sizes({{"N", 8}, {"K", 1500}})), "128");
  EXPECT_EQ(t.matches("pointwise", "softmax", sizes({{"N", 8}, {"K", 1500}})).size(), 2u);
  EXPECT_EQ(first("pointwise", "softmax", sizes({{"N", 9}, {"K", 1024}})), "64");
  EXPECT_EQ(first("pointwise", "softmax", sizes({{"N", 8}, {"K", 2048}})), "none");
  EXPECT_EQ(first("reduction", "softmax", sizes({{"N", 8}, {"K", 1500}})), "none");
  EXPECT_EQ(first("pointwise", "layernorm", sizes({{"N", 1}, {"K", 1}})), "32");
  // A segment with a size the bucket does not name is not in it.
  EXPECT_EQ(first("pointwise", "layernorm", sizes({{"N", 1}, {"K", 1}, {"M", 1}})), "none");
}

// ---- the offer, to real plugins ------------------------------------------------------

std::shared_ptr<const plugin::Plugin> builtin(const std::string& name) {
  return plugin::load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/" + name + ".so");
}

struct Bound {
  frontend::FusionDefinition def;
  plugin::HostSegment seg;
};

Bound bound(const std::string& fusion, const ir::SizeBindings& s) {
  Bound b{test_support::load_config_fusion(fusion), {}};
  b.seg.fusion = b.def.fusion.get();
  b.seg.sizes = frontend::bind_sizes(b.def, s);
  return b;
}

constexpr const char* kPointwiseEntry =
    "  - {plugin: pointwise, fusion: pointwise_add_mul, bucket: {N: any, K: [256, 511]}, "
    "config: {block: 256, vector: 2, unroll: 2, break_point: 0}}\n";

TEST(TunedOffer, TheBuiltInPointwisePluginServesItInItsBucketOnly) {
  auto p = builtin("pointwise");
  TunedFile t = entries(kPointwiseEntry);
  Bound in = bound("pointwise_add_mul", sizes({{"N", 64}, {"K", 256}}));
  const std::string own = p->format(p->compute_params(in.seg));
  std::optional<plugin::TunedOffer> offer =
      t.offer(*p, "pointwise_add_mul", in.seg.sizes);
  ASSERT_TRUE(offer);
  EXPECT_EQ(offer->source, "t.yaml:3: pointwise_add_mul N=any K=[256, 511]");
  EXPECT_EQ(p->format(offer->values), "block=256, vector=2, unroll=2, break_point=0");
  // The heuristic alone chooses otherwise, so the check below can fail.
  EXPECT_NE(own, p->format(offer->values));
  in.seg.tuned = &*offer;
  EXPECT_EQ(p->format(p->compute_params(in.seg)), "block=256, vector=2, unroll=2, break_point=0");
  // Outside the bucket there is no offer, and the plugin's own choice stands.
  Bound out = bound("pointwise_add_mul", sizes({{"N", 64}, {"K", 1024}}));
  EXPECT_FALSE(t.offer(*p, "pointwise_add_mul", out.seg.sizes));
  EXPECT_FALSE(t.offer(*p, "softmax", in.seg.sizes));
}

TEST(TunedOffer, APluginBuiltAgainstAbi13IsUnaffected) {
  auto p = plugin::load_plugin(std::string(TUNE_PLUGIN_DIR) + "/abi13.so");
  EXPECT_EQ(p->abi_str(), "1.3");
  TunedFile t = entries(
      "  - {plugin: abi13, fusion: pointwise_add_mul, bucket: {N: any, K: any}, "
      "config: {block: 256}}\n");
  Bound b = bound("pointwise_add_mul", sizes({{"N", 64}, {"K", 256}}));
  std::optional<plugin::TunedOffer> offer = t.offer(*p, "pointwise_add_mul", b.seg.sizes);
  ASSERT_TRUE(offer);
  b.seg.tuned = &*offer;
  EXPECT_EQ(p->format(p->compute_params(b.seg)), "block=64");  // its own choice
}

TEST(TunedOffer, AnEntryThatDoesNotFitThePluginIsAUserErrorAtTheEntry) {
  auto p = builtin("pointwise");
  const ir::SizeBindings s = sizes({{"N", 64}, {"K", 256}});
  auto error = [&](const std::string& config) {
    TunedFile t = entries(
        "  - {plugin: pointwise, fusion: pointwise_add_mul, bucket: {N: any, K: any}, config: " +
        config + "}\n");
    return user_error_what_of([&] { t.offer(*p, "pointwise_add_mul", s); });
  };
  EXPECT_THAT(error("{block: 256, vector: 2, unroll: 2}"),
              HasSubstr("t.yaml:3:5: error: tuned configuration for plugin 'pointwise' on "
                        "pointwise_add_mul: expected a value for every parameter of the "
                        "plugin's schema; 'break_point' is missing"));
  EXPECT_THAT(error("{block: 256, vector: 2, unroll: 2, break_point: 0, tile: 4}"),
              HasSubstr("t.yaml:3:5: error: tuned configuration for plugin 'pointwise' on "
                        "pointwise_add_mul: "));
  EXPECT_THAT(error("{block: 256, vector: 2, unroll: 2, break_point: 0, tile: 4}"),
              HasSubstr("tile"));
  EXPECT_THAT(error("{block: 4096, vector: 2, unroll: 2, break_point: 0}"),
              HasSubstr("block"));
}

}  // namespace
}  // namespace schedlab::sweep
