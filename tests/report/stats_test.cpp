// Order statistics and the Mann-Whitney U test. Expected values come from
// NumPy and SciPy 1.17.1 (computed offline; SciPy is not a dependency). The
// call that produced each is in the comment next to it.
#include <gtest/gtest.h>

#include <cmath>
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

// ---- paired statistics -------------------------------------------------------

TEST(Wilcoxon, ScipyDocumentationExample) {
  // scipy.stats.wilcoxon docs (Cureton's example of 15 differences):
  // wilcoxon(d) -> statistic=24.0, pvalue=0.041259765625 (exact).
  std::vector<double> d = {6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75};
  Wilcoxon w = wilcoxon_signed_rank(d);
  EXPECT_TRUE(w.exact);
  EXPECT_EQ(w.n, 15u);
  EXPECT_DOUBLE_EQ(w.w_minus, 24);
  EXPECT_DOUBLE_EQ(w.w_plus, 96);
  EXPECT_DOUBLE_EQ(w.p, 0.041259765625);
}

TEST(Wilcoxon, HollanderWolfeExample31) {
  // Hollander & Wolfe, Nonparametric Statistical Methods (2nd ed.), Example
  // 3.1: Hamilton depression scale before (x) and after (y) tranquilizer.
  // d = y - x; T+ = 5, exact two-sided P = 2 * 10/512 = 0.0390625.
  std::vector<double> x = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
  std::vector<double> y = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
  std::vector<double> d;
  for (size_t i = 0; i < x.size(); ++i) d.push_back(y[i] - x[i]);
  Wilcoxon w = wilcoxon_signed_rank(d);
  EXPECT_DOUBLE_EQ(w.w_plus, 5);
  EXPECT_DOUBLE_EQ(w.p, 0.0390625);
  // Examples 3.2 and 3.3: the estimate -0.46, and the interval between the
  // 6th smallest and 6th largest Walsh averages (qsignrank(0.025, 9) = 6).
  Shift s = hodges_lehmann_one_sample(d);
  EXPECT_NEAR(s.estimate, -0.46, 1e-12);
  EXPECT_NEAR(s.lo, -0.786, 1e-12);
  EXPECT_NEAR(s.hi, -0.010, 1e-12);
}

TEST(Wilcoxon, ZerosAreDroppedAndTiesUseTheNormalApproximation) {
  std::vector<double> zeros = {0, 0, 0};
  EXPECT_EQ(wilcoxon_signed_rank(zeros).p, 1);
  EXPECT_EQ(wilcoxon_signed_rank(zeros).n, 0u);
  // scipy.stats.wilcoxon([1, 1, 1, 1, 1, 1, 1, 1, 1, 1]) -> p=0.001565...
  // (ties: normal approximation; W+ = 55, var = 96.25 - 990/48).
  std::vector<double> ones(10, 1.0);
  Wilcoxon w = wilcoxon_signed_rank(ones);
  EXPECT_FALSE(w.exact);
  EXPECT_DOUBLE_EQ(w.w_plus, 55);
  EXPECT_NEAR(w.p, std::erfc(27.5 / std::sqrt(96.25 - 990.0 / 48) / std::sqrt(2.0)), 1e-15);
  EXPECT_NEAR(w.p, 0.001565, 1e-6);
}

TEST(HodgesLehmann, TwoSampleShift) {
  // x - y over all 9 pairs: {-1.5, -0.5, -0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 2.5}:
  // median 0.5; R's interval rank max(qwilcox(0.025, 3, 3), 1) = 1 (P(U = 0)
  // is already 1/20): the smallest and largest differences.
  std::vector<double> x = {3, 4, 5}, y = {2.5, 3.5, 4.5};
  Shift s = hodges_lehmann_two_sample(x, y);
  EXPECT_DOUBLE_EQ(s.estimate, 0.5);
  EXPECT_DOUBLE_EQ(s.lo, -1.5);
  EXPECT_DOUBLE_EQ(s.hi, 2.5);
}

TEST(Ratio, PairedRoundsGiveTheRatioWithItsInterval) {
  // Every round twice as slow, whatever the machine did: ratio 2 exactly,
  // and a tight interval, although the samples overlap as sets.
  std::vector<double> den = {10, 30, 12, 25, 11, 40, 13, 20, 15, 35};
  std::vector<double> num;
  for (double t : den) num.push_back(2 * t);
  RatioEstimate r = paired_ratio(num, den);
  EXPECT_TRUE(r.paired);
  EXPECT_EQ(r.n, 10u);
  EXPECT_NEAR(r.ratio, 2, 1e-12);
  EXPECT_NEAR(r.lo, 2, 1e-12);
  EXPECT_NEAR(r.hi, 2, 1e-12);
  EXPECT_LT(r.p, 0.01);
  EXPECT_TRUE(r.significant(0.05, 0.1));
  EXPECT_FALSE(r.significant(0.05, 1.5));  // 2x is not beyond a 150 % minimum
  // The unpaired view of the same samples sees the drift and cannot tell.
  RatioEstimate u = unpaired_ratio(num, den);
  EXPECT_FALSE(u.paired);
  EXPECT_GT(u.p, 0.01);
  EXPECT_LT(u.lo, 1.5);
}

TEST(Ratio, IdenticalTimingsAreNotSignificant) {
  std::vector<double> a = {5, 6, 7, 5, 6}, b = {5, 6, 7, 5, 6};
  RatioEstimate r = paired_ratio(a, b);
  EXPECT_DOUBLE_EQ(r.ratio, 1);
  EXPECT_EQ(r.p, 1);
  EXPECT_FALSE(r.significant(0.05, 0));
}

TEST(Ratio, MinimumEffectIsSymmetricOnTheLogScale) {
  RatioEstimate faster{1 / 1.15, 0.8, 0.9, 0.001, 10, true};
  RatioEstimate slower{1.15, 1.1, 1.2, 0.001, 10, true};
  EXPECT_TRUE(faster.significant(0.05, 0.1));
  EXPECT_TRUE(slower.significant(0.05, 0.1));
  EXPECT_FALSE(faster.significant(0.05, 0.2));
  EXPECT_FALSE(slower.significant(0.0001, 0.1));
  RatioEstimate boundary{1.1, 1.05, 1.15, 0.001, 10, true};
  EXPECT_FALSE(boundary.significant(0.05, 0.1));
}

}  // namespace
}  // namespace schedlab::report
