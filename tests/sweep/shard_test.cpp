// Sharding a sweep (sweep/run/shard.h): the parts are disjoint, together hold
// every point once, differ in size by at most one, depend only on the sweep,
// and keep an A/B twin with its original. The end-to-end check (two shards
// run and merged equal one whole run) is tests/cluster/shard_merge.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/sweep/run/shard.h"
#include "schedlab/sweep/search/strategy.h"
#include "sweep_test_util.h"

namespace schedlab::sweep {
namespace {

using testing_util::load_text;

const char* kSweep = R"(
fusions:
  - fusion: softmax
    sizes: {N: [4, 8, 16], K: [64, 128]}
schedulers:
  - name: heuristic
    plugin: pointwise
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128, 256]
      unroll: [1, 2, 4]
)";

TEST(Shard, PartsAreDisjointBalancedAndCoverTheSweep) {
  const SweepSpec spec = load_text(kSweep);
  const std::vector<Point> all = expand(spec);
  ASSERT_EQ(all.size(), 6u * 13u);
  for (size_t n : {1u, 2u, 3u, 5u, 8u, 100u}) {
    std::map<std::string, size_t> owner;
    std::vector<size_t> sizes(n);
    for (size_t i = 0; i < n; ++i) {
      ShardPlan plan(spec, {i, n});
      EXPECT_FALSE(plan.by_group());
      for (const Point& p : all)
        if (plan.has_group(spec, p.fusion, p.sizes) && plan.has_point(spec, p)) {
          const std::string id = point_identity(spec, p);
          EXPECT_FALSE(owner.count(id)) << describe(spec, p) << " is in two shards of " << n;
          owner[id] = i;
          ++sizes[i];
        }
      EXPECT_EQ(plan.units(), sizes[i]);
      EXPECT_EQ(plan.total_units(), all.size());
    }
    EXPECT_EQ(owner.size(), all.size()) << n << " shards";
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    EXPECT_LE(*hi - *lo, 1u) << n << " shards";
  }
}

TEST(Shard, DependsOnlyOnTheSweepNotItsOrder) {
  // The same points listed in another order (sizes, schedulers, parameters,
  // values): the same cut.
  const SweepSpec a = load_text(kSweep);
  const SweepSpec b = load_text(R"(
fusions:
  - fusion: softmax
    sizes: {N: [16, 8, 4], K: [128, 64]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      unroll: [4, 2, 1]
      block: [256, 128, 64, 32]
  - name: heuristic
    plugin: pointwise
)");
  auto cut = [](const SweepSpec& s) {
    std::set<std::string> mine;
    ShardPlan plan(s, {1, 3});
    for (const Point& p : expand(s))
      if (plan.has_point(s, p)) mine.insert(point_identity(s, p));
    return mine;
  };
  EXPECT_EQ(cut(a), cut(b));
}

TEST(Shard, AnAbTwinGoesWithItsOriginal) {
  SweepSpec spec = load_text(kSweep);
  SchedulerSpec twin = spec.schedulers[1];
  twin.name += "@old";
  spec.schedulers.push_back(twin);
  for (size_t i = 0; i < 3; ++i) {
    ShardPlan plan(spec, {i, 3});
    for (const Point& p : expand(spec))
      if (p.scheduler == 2) {
        Point original = p;
        original.scheduler = 1;
        EXPECT_EQ(plan.has_point(spec, p), plan.has_point(spec, original)) << describe(spec, p);
      }
  }
}

TEST(Shard, ParseShard) {
  EXPECT_EQ(parse_shard("0/1").count, 1u);
  EXPECT_EQ(parse_shard("3/4").index, 3u);
  for (const char* bad : {"4/4", "1", "/2", "1/0", "-1/2", "a/b", "1/2/3", " 1/2", ""}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UserError& e) {
      EXPECT_EQ(e.message(), std::string("--shard: expected I/N, the I-th of N parts with 0 <= "
                                         "I < N (e.g. 0/4), found '") +
                                 bad + "'");
    }
  }
}

TEST(Shard, OnlyGridAndRandomShardByPoint) {
  StrategySpec s;
  s.kind = StrategySpec::Kind::Grid;
  EXPECT_FALSE(shards_by_group(s));
  s.kind = StrategySpec::Kind::Random;
  EXPECT_FALSE(shards_by_group(s));
  for (auto k : {StrategySpec::Kind::Halving, StrategySpec::Kind::Evolution,
                 StrategySpec::Kind::Model}) {
    s.kind = k;
    EXPECT_TRUE(shards_by_group(s));
  }
}

TEST(Shard, AnAdaptiveSearchStaysWholeOnOneShard) {
  // evolution: each (fusion, sizes) group's search goes to exactly one shard,
  // whole (its proposals depend on what it observed), and the groups are
  // balanced over the shards.
  const SweepSpec spec = load_text(std::string(kSweep) +
                                   "strategy: {method: evolution, budget: 4, seed: 1}\n");
  ASSERT_EQ(spec.strategy.kind, StrategySpec::Kind::Evolution);
  for (size_t n : {1u, 2u, 4u, 7u}) {
    std::map<std::pair<size_t, size_t>, size_t> owner;
    std::vector<size_t> groups(n);
    for (size_t i = 0; i < n; ++i) {
      ShardPlan plan(spec, {i, n});
      EXPECT_TRUE(plan.by_group());
      EXPECT_EQ(plan.total_units(), 6u);
      for (size_t z = 0; z < spec.fusions[0].sizes.size(); ++z) {
        if (!plan.has_group(spec, 0, z)) continue;
        EXPECT_FALSE(owner.count({0, z})) << "group " << z << " is in two shards of " << n;
        owner[{0, z}] = i;
        ++groups[i];
      }
      EXPECT_EQ(plan.units(), groups[i]);
    }
    EXPECT_EQ(owner.size(), 6u) << n << " shards";
    const auto [lo, hi] = std::minmax_element(groups.begin(), groups.end());
    EXPECT_LE(*hi - *lo, 1u) << n << " shards";
  }
}

}  // namespace
}  // namespace schedlab::sweep
