// schedlab/report: statistics over benchmark repetitions.
//
// Owns: order statistics (median, quartiles, min/max) and the two-sided
// Mann-Whitney U test that the side-by-side table and `compare` use to say
// whether two sets of repetitions differ. Depends on the standard library
// only. Quartiles interpolate linearly between order statistics (NumPy's
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

}  // namespace schedlab::report
