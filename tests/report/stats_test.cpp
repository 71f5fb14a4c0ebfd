// Order statistics and the Mann-Whitney U test. Expected values come from
// NumPy and SciPy 1.17.1 (computed offline; SciPy is not a dependency). The
// call that produced each is in the comment next to it.
#include <gtest/gtest.h>

#include <vector>

#include "schedlab/report/stats.h"

namespace schedlab::report {
namespace {

TEST(Summary, QuartilesInterpolateLikeNumpy) {
  // numpy.percentile([5, 1, 4, 2, 3, 10], [25, 50, 75]) == [2.25, 3.5, 4.75]
  std::vector<double> xs = {5, 1, 4, 2, 3, 10};
  Summary s = summarize(xs);
  EXPECT_EQ(s.n, 6u);
  EXPECT_DOUBLE_EQ(s.q1, 2.25);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.q3, 4.75);
  EXPECT_DOUBLE_EQ(s.iqr(), 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]
  std::vector<double> four = {4, 3, 2, 1};
  Summary f = summarize(four);
  EXPECT_DOUBLE_EQ(f.q1, 1.75);
  EXPECT_DOUBLE_EQ(f.median, 2.5);
  EXPECT_DOUBLE_EQ(f.q3, 3.25);
}

TEST(Summary, SingleValue) {
  std::vector<double> one = {7};
  Summary s = summarize(one);
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.iqr(), 0);
  EXPECT_DOUBLE_EQ(s.min, 7);
  EXPECT_DOUBLE_EQ(s.max, 7);
}

struct MwCase {
  const char* name;
  std::vector<double> x, y;
  double u, p;
  bool exact;
};

class MannWhitneyKnown : public testing::TestWithParam<MwCase> {};

TEST_P(MannWhitneyKnown, MatchesScipy) {
  const MwCase& c = GetParam();
  MannWhitney r = mann_whitney_u(c.x, c.y);
  EXPECT_DOUBLE_EQ(r.u, c.u);
  EXPECT_NEAR(r.p, c.p, 1e-12 + 1e-9 * c.p);
  EXPECT_EQ(r.exact, c.exact);
  // Swapping the samples gives the complementary U and the same p.
  MannWhitney s = mann_whitney_u(c.y, c.x);
  EXPECT_DOUBLE_EQ(s.u, static_cast<double>(c.x.size() * c.y.size()) - c.u);
  EXPECT_NEAR(s.p, c.p, 1e-12 + 1e-9 * c.p);
}

INSTANTIATE_TEST_SUITE_P(
    Scipy, MannWhitneyKnown,
    testing::Values(
        // mannwhitneyu([1,2,3,4,5], [6,7,8,9,10], alternative='two-sided', method='exact')
        MwCase{
            "exact_separated", {1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0.0, 0.007936507936507936, true},
        // mannwhitneyu([1.1,2.3,3.0,4.8,5.2,6.9], [1.5,2.0,3.9,4.1,7.5,8.0,9.1],
        //              alternative='two-sided', method='exact')
        MwCase{"exact_interleaved",
               {1.1, 2.3, 3.0, 4.8, 5.2, 6.9},
               {1.5, 2.0, 3.9, 4.1, 7.5, 8.0, 9.1},
               16.0,
               0.5337995337995338,
               true},
        // mannwhitneyu([101,99.5,100.2,98.7,100.9,101.4,99.1,100.0,100.6,99.8],
        //              [102.1,101.9,103.5,100.7,102.8,104.0,101.2,103.1,102.4,100.3],
        //              alternative='two-sided', method='exact')
        MwCase{"exact_10x10",
               {101, 99.5, 100.2, 98.7, 100.9, 101.4, 99.1, 100.0, 100.6, 99.8},
               {102.1, 101.9, 103.5, 100.7, 102.8, 104.0, 101.2, 103.1, 102.4, 100.3},
               8.0,
               0.0007252809110394249,
               true},
        // Ties: the normal approximation with tie and continuity corrections.
        // mannwhitneyu([1,2,2,3,3,3,4,5], [2,3,4,4,5,5,6,7,8],
        //              alternative='two-sided', method='asymptotic')
        MwCase{"asymptotic_ties",
               {1, 2, 2, 3, 3, 3, 4, 5},
               {2, 3, 4, 4, 5, 5, 6, 7, 8},
               13.5,
               0.03186670542703166,
               false},
        // More than kMannWhitneyExactMax values (and one tie, at 20).
        // mannwhitneyu(np.linspace(10, 20, 15), np.linspace(12, 23, 12),
        //              alternative='two-sided', method='asymptotic')
        MwCase{
            "asymptotic_large",
            {10.0, 10.714285714285714, 11.428571428571429, 12.142857142857142, 12.857142857142858,
             13.571428571428571, 14.285714285714285, 15.0, 15.714285714285715, 16.42857142857143,
             17.142857142857142, 17.857142857142858, 18.57142857142857, 19.285714285714285, 20.0},
            {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23},
            55.0,
            0.09219293092337442,
            false}),
    [](const testing::TestParamInfo<MwCase>& info) { return std::string(info.param.name); });

TEST(MannWhitney, AllTiedIsNoEvidence) {
  // mannwhitneyu([1,1,1], [1,1], method='asymptotic') -> statistic 3.0, pvalue 1.0
  std::vector<double> x = {1, 1, 1}, y = {1, 1};
  MannWhitney r = mann_whitney_u(x, y);
  EXPECT_DOUBLE_EQ(r.u, 3.0);
  EXPECT_DOUBLE_EQ(r.p, 1.0);
}

}  // namespace
}  // namespace schedlab::report
