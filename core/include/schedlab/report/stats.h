// schedlab/report: statistics over benchmark repetitions.
//
// Owns: order statistics (median, quartiles, min/max), the two-sided
// Mann-Whitney U test (two independent samples), the Wilcoxon signed-rank
// test (paired samples), and ratio estimates with confidence intervals built
// on each (Hodges-Lehmann). The side-by-side table and `compare` use them to
// say whether, and by how much, two sets of timings differ; docs/reports.md
// explains the method and gives the references. Depends on the standard
// library only. Quartiles interpolate linearly between order statistics (NumPy's
// default, "type 7"), so they match numpy.percentile.
#pragma once

#include <cstddef>
#include <span>

namespace schedlab::report {

/// Order statistics of a non-empty sample.
struct Summary {
  size_t n = 0;       ///< sample size
  double median = 0;  ///< 50th percentile
  double q1 = 0;      ///< 25th percentile
  double q3 = 0;      ///< 75th percentile
  double min = 0;     ///< smallest value
  double max = 0;     ///< largest value

  /// Interquartile range, q3 - q1.
  double iqr() const { return q3 - q1; }
};

/// The summary of `xs` (any order). `xs` must not be empty.
Summary summarize(std::span<const double> xs);

/// Result of the two-sided Mann-Whitney U test of x against y.
struct MannWhitney {
  double u = 0;        ///< U statistic of x (pairs (xi, yj) with xi > yj, ties counting 1/2)
  double p = 1;        ///< two-sided p-value
  bool exact = false;  ///< exact null distribution (true) or normal approximation
};

/// Two-sided Mann-Whitney U test (scipy.stats.mannwhitneyu's conventions).
/// Method: the exact distribution of U when both samples have at most
/// kMannWhitneyExactMax values and there are no ties (the exact
/// distribution assumes none); otherwise the normal approximation with the
/// tie correction of the variance and a continuity correction of 0.5.
/// When every value is tied, p is 1. Neither sample may be empty.
MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y);
/// The largest sample size for the exact method.
inline constexpr size_t kMannWhitneyExactMax = 10;

/// Result of the two-sided Wilcoxon signed-rank test of differences d.
struct Wilcoxon {
  double w_plus = 0;   ///< sum of the ranks of |d| over the positive differences
  double w_minus = 0;  ///< the same over the negative ones
  size_t n = 0;        ///< differences used (zeros are dropped)
  double p = 1;        ///< two-sided p-value
  bool exact = false;  ///< exact null distribution (true) or normal approximation
};

/// Two-sided Wilcoxon signed-rank test that the differences `d` are
/// symmetric about 0 (scipy.stats.wilcoxon's defaults: zero differences are
/// dropped, "wilcox"). Method: the exact distribution of W+ when at most
/// kWilcoxonExactMax differences remain and no |d| are tied; otherwise the
/// normal approximation with the tie correction of the variance and no
/// continuity correction. No differences left (all zero): p is 1.
Wilcoxon wilcoxon_signed_rank(std::span<const double> d);
/// The largest sample size for the exact method.
inline constexpr size_t kWilcoxonExactMax = 50;

/// A location shift with its confidence interval.
struct Shift {
  double estimate = 0;  ///< the Hodges-Lehmann estimate
  double lo = 0;        ///< lower bound of the confidence interval
  double hi = 0;        ///< upper bound
};

/// The centre of symmetry of `d`: the median of its n(n+1)/2 Walsh averages
/// (d_i + d_j) / 2, i <= j, and the Wilcoxon-based interval of level
/// `confidence` between two of them (Hollander & Wolfe, sections 3.2-3.3;
/// R's wilcox.test(conf.int = TRUE)): exact ranks when n <= kWilcoxonExactMax
/// without ties or zeros, the normal approximation otherwise. Not empty.
Shift hodges_lehmann_one_sample(std::span<const double> d, double confidence = 0.95);
/// The shift of x over y: the median of the m*n differences x_i - y_j and
/// the Mann-Whitney-based interval (Hollander & Wolfe, sections 4.2-4.3),
/// exact when both sizes are at most kMannWhitneyExactMax without ties.
Shift hodges_lehmann_two_sample(std::span<const double> x, std::span<const double> y,
                                double confidence = 0.95);

/// A ratio of two timings with its confidence interval and test.
struct RatioEstimate {
  double ratio = 1;    ///< the point estimate (Hodges-Lehmann on the log scale)
  double lo = 1;       ///< lower bound of the confidence interval
  double hi = 1;       ///< upper bound
  double p = 1;        ///< two-sided p-value of the matching rank test
  size_t n = 0;        ///< pairs (paired) or the smaller sample (unpaired)
  bool paired = false; ///< from per-round ratios (Wilcoxon) or two samples (Mann-Whitney)

  /// Significant at `alpha` and beyond `min_effect` (0.1 = 10 %) either way:
  /// ratio > 1 + min_effect or ratio < 1 / (1 + min_effect).
  bool significant(double alpha, double min_effect) const;
};

/// The ratio num/den of paired timings: round i gave num[i] and den[i]
/// (interleaved rounds, so both saw the same machine state). Estimate: the
/// Hodges-Lehmann estimator of the per-round log ratios (the median of their
/// Walsh averages), back-transformed; interval: the Wilcoxon-based
/// (Tukey/Bauer) interval of level `confidence`, exact where the test is;
/// p: wilcoxon_signed_rank of the log ratios. Equal, non-empty sizes.
RatioEstimate paired_ratio(std::span<const double> num, std::span<const double> den,
                           double confidence = 0.95);

/// The ratio of two independent samples' timings, num over den: the
/// Hodges-Lehmann shift of the logs (the median of all pairwise log
/// differences), the Mann-Whitney-based interval (exact where the test is)
/// and mann_whitney_u's p. Neither sample may be empty.
RatioEstimate unpaired_ratio(std::span<const double> num, std::span<const double> den,
                             double confidence = 0.95);

}  // namespace schedlab::report
