// Interleaved measurement (schedlab/sweep/run/measure.h) with a simulated clock:
// every round times every point once in a seeded shuffle, and a drift of the
// machine during the group hits every point alike, so that per-round ratios
// see through it where the unpaired view cannot.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "schedlab/report/stats.h"
#include "schedlab/sweep/run/measure.h"

namespace schedlab::sweep {
namespace {

TEST(RoundOrder, APermutationReproducibleFromTheSeed) {
  std::set<std::vector<size_t>> seen;
  for (uint64_t round = 0; round < 20; ++round) {
    std::vector<size_t> o = round_order(6, 42, 3, round);
    EXPECT_EQ(o, round_order(6, 42, 3, round));  // the recorded seed reproduces it
    std::vector<size_t> sorted = o;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    seen.insert(o);
  }
  EXPECT_GT(seen.size(), 10u);  // shuffled per round, not one fixed order
  EXPECT_NE(round_order(6, 42, 3, 0), round_order(6, 43, 3, 0));
  EXPECT_NE(round_order(6, 42, 3, 0), round_order(6, 42, 4, 0));
}

TEST(MeasureInterleaved, WarmsFirstThenTimesEachPointOncePerRound) {
  std::vector<std::string> log;
  auto times = measure_interleaved(
      3, 4, 7, 0, [&](size_t i) { log.push_back("warm " + std::to_string(i)); },
      [&](size_t i) {
        log.push_back("time " + std::to_string(i));
        return 1.0 + static_cast<double>(i);
      });
  ASSERT_EQ(log.size(), 3u + 12u);
  EXPECT_EQ(log[0], "warm 0");
  EXPECT_EQ(log[2], "warm 2");
  for (size_t r = 0; r < 4; ++r) {
    std::set<std::string> round(log.begin() + 3 + 3 * r, log.begin() + 6 + 3 * r);
    EXPECT_EQ(round, (std::set<std::string>{"time 0", "time 1", "time 2"})) << "round " << r;
  }
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[2], std::vector<double>(4, 3.0));
}

TEST(MeasureInterleaved, DriftHitsEveryPointAlike) {
  // Point 1 does 1.3x the work of point 0. The machine slows down steadily
  // (another process starts), tripling every launch's time over the group.
  double clock = 0;
  const double work[2] = {1.0, 1.3};
  auto times = measure_interleaved(
      2, 12, 1, 0, [](size_t) {},
      [&](size_t i) {
        clock += 1;
        return work[i] * (1 + clock / 12);
      });
  // Rounds pair the samples: the ratio is found, with a tight interval
  // around it (each round's two launches saw almost the same load).
  report::RatioEstimate paired = report::paired_ratio(times[1], times[0]);
  EXPECT_NEAR(paired.ratio, 1.3, 0.05);
  EXPECT_GT(paired.lo, 1.2);
  EXPECT_LT(paired.hi, 1.4);
  EXPECT_TRUE(paired.significant(0.05, 0.1));
  // As two independent samples the drift swamps the 1.3x.
  report::RatioEstimate unpaired = report::unpaired_ratio(times[1], times[0]);
  EXPECT_LT(unpaired.lo, 1.0);
}

TEST(BenchmarkFilter, GoogleBenchmarkSemantics) {
  const std::string name = "softmax/N=128,K=1024/heuristic/(defaults)";
  EXPECT_TRUE(passes_benchmark_filter({"schedlab"}, name));
  EXPECT_TRUE(passes_benchmark_filter({"schedlab", "--benchmark_filter=all"}, name));
  EXPECT_TRUE(passes_benchmark_filter({"schedlab", "--benchmark_filter=soft.*heur"}, name));
  EXPECT_FALSE(passes_benchmark_filter({"schedlab", "--benchmark_filter=row_sum"}, name));
  EXPECT_FALSE(passes_benchmark_filter({"schedlab", "--benchmark_filter=-heuristic"}, name));
  EXPECT_TRUE(passes_benchmark_filter({"schedlab", "--benchmark_filter=-row_sum"}, name));
}

}  // namespace
}  // namespace schedlab::sweep
