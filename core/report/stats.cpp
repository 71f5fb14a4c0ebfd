#include "schedlab/report/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::report {

namespace {

/// Linear interpolation between order statistics at fraction p of the way
/// from the first to the last (NumPy's default percentile).
double quantile(const std::vector<double>& sorted, double p) {
  double pos = p * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

/// Number of orderings of m x's and n y's with U(x) == u, for every u in
/// [0, m*n]: f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1), depending on
/// whether the largest value is an x (it beats all n y's) or a y.
std::vector<double> u_counts(size_t m, size_t n) {
  // table[i][j] holds the counts for i x's and j y's.
  std::vector<std::vector<std::vector<double>>> table(m + 1,
                                                      std::vector<std::vector<double>>(n + 1));
  for (size_t i = 0; i <= m; ++i) {
    for (size_t j = 0; j <= n; ++j) {
      std::vector<double>& f = table[i][j];
      f.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        f[0] = 1;
        continue;
      }
      const std::vector<double>& x_last = table[i - 1][j];
      const std::vector<double>& y_last = table[i][j - 1];
      for (size_t u = 0; u < x_last.size(); ++u) f[u + j] += x_last[u];
      for (size_t u = 0; u < y_last.size(); ++u) f[u] += y_last[u];
    }
  }
  return table[m][n];
}

}  // namespace

Summary summarize(std::span<const double> xs) {
  internal_assert(!xs.empty()) << "summarize: empty sample";
  std::vector<double> s(xs.begin(), xs.end());
  std::sort(s.begin(), s.end());
  Summary r;
  r.n = s.size();
  r.median = quantile(s, 0.5);
  r.q1 = quantile(s, 0.25);
  r.q3 = quantile(s, 0.75);
  r.min = s.front();
  r.max = s.back();
  return r;
}

MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  internal_assert(!x.empty() && !y.empty()) << "mann_whitney_u: empty sample";
  const size_t m = x.size(), n = y.size();
  // Midranks of the pooled sample; tie groups feed the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, is_x
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i);
    double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_x += midrank;
    tie_term += t * t * t - t;
    ties |= j - i > 1;
    i = j;
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  MannWhitney r;
  r.u = rank_sum_x - dm * (dm + 1) / 2;
  // Both tails by symmetry: the upper tail at the larger of U(x) and U(y).
  const double u_big = std::max(r.u, dm * dn - r.u);
  if (!ties && m <= kMannWhitneyExactMax && n <= kMannWhitneyExactMax) {
    std::vector<double> f = u_counts(m, n);
    double total = 0, upper = 0;
    for (size_t u = 0; u < f.size(); ++u) {
      total += f[u];
      if (static_cast<double>(u) >= u_big) upper += f[u];
    }
    r.exact = true;
    r.p = std::min(1.0, 2 * upper / total);
    return r;
  }
  const double big_n = dm + dn;
  const double var = dm * dn / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)));
  if (var <= 0) return r;  // every value tied: no evidence of a difference
  const double z = (u_big - dm * dn / 2 - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2 * (upper tail of N(0, 1) at z)
  return r;
}

}  // namespace schedlab::report
