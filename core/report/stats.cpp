#include "schedlab/report/stats.h"

#include <algorithm>
#include <cmath>
#include <set>
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

/// Number of subsets of the ranks {1..n} with each sum w in [0, n(n+1)/2]:
/// the null distribution of W+ times 2^n.
std::vector<double> signed_rank_counts(size_t n) {
  std::vector<double> f(n * (n + 1) / 2 + 1, 0.0);
  f[0] = 1;
  for (size_t k = 1; k <= n; ++k)
    for (size_t w = k * (k + 1) / 2; w >= k; --w) f[w] += f[w - k];
  return f;
}

/// The standard normal quantile at 1 - q/2 (two-sided critical value), by
/// bisection on erfc: erfc(z / sqrt 2) is the two-sided tail.
double normal_critical(double q) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// Smallest x with cdf(x) >= q, for a distribution given by its counts
/// (R's qsignrank/qwilcox); at least 1, since it indexes order statistics
/// from 1.
size_t lower_quantile(const std::vector<double>& counts, double q) {
  double total = 0;
  for (double c : counts) total += c;
  double cum = 0;
  for (size_t x = 0; x < counts.size(); ++x) {
    cum += counts[x];
    if (cum / total >= q * (1 - 1e-12)) return std::max<size_t>(x, 1);
  }
  return counts.size() - 1;
}

/// The bracket [sorted[k-1], sorted[M-k]] of order statistics of M values,
/// for the 1-based rank k from a critical value.
std::pair<double, double> bracket(const std::vector<double>& sorted, double k) {
  const size_t m = sorted.size();
  size_t i = static_cast<size_t>(std::clamp(k, 1.0, static_cast<double>((m + 1) / 2)));
  return {sorted[i - 1], sorted[m - i]};
}

/// Midranks of |d| (d non-zero); `ties` gets sum(t^3 - t) over tie groups.
std::vector<double> abs_midranks(const std::vector<double>& d, double& ties) {
  std::vector<size_t> order(d.size());
  for (size_t i = 0; i < d.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return std::abs(d[a]) < std::abs(d[b]); });
  std::vector<double> rank(d.size());
  ties = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && std::abs(d[order[j]]) == std::abs(d[order[i]])) ++j;
    double t = static_cast<double>(j - i);
    for (size_t k = i; k < j; ++k)
      rank[order[k]] = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    ties += t * t * t - t;
    i = j;
  }
  return rank;
}

double median_of_sorted(const std::vector<double>& s) {
  const size_t m = s.size();
  return m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
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

Wilcoxon wilcoxon_signed_rank(std::span<const double> d_in) {
  std::vector<double> d;
  for (double x : d_in)
    if (x != 0) d.push_back(x);
  Wilcoxon r;
  r.n = d.size();
  if (d.empty()) return r;
  double ties = 0;
  std::vector<double> rank = abs_midranks(d, ties);
  for (size_t i = 0; i < d.size(); ++i) (d[i] > 0 ? r.w_plus : r.w_minus) += rank[i];
  const double n = static_cast<double>(r.n);
  const double small = std::min(r.w_plus, r.w_minus);
  if (ties == 0 && r.n <= kWilcoxonExactMax) {
    // Without ties the ranks are 1..n and W+ is an integer.
    std::vector<double> f = signed_rank_counts(r.n);
    double total = std::ldexp(1.0, static_cast<int>(r.n)), lower = 0;
    for (size_t w = 0; w < f.size() && static_cast<double>(w) <= small + 1e-9; ++w) lower += f[w];
    r.exact = true;
    r.p = std::min(1.0, 2 * lower / total);
    return r;
  }
  const double mean = n * (n + 1) / 4;
  const double var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48;
  if (var <= 0) return r;
  r.p = std::min(1.0, std::erfc(std::abs(small - mean) / std::sqrt(var) / std::sqrt(2.0)));
  return r;
}

bool RatioEstimate::significant(double alpha, double min_effect) const {
  // The same slack as compare's threshold: an effect equal to the minimum is not beyond it.
  const double bound = (1 + min_effect) * (1 + 1e-9);
  return p < alpha && (ratio > bound || ratio * bound < 1);
}

Shift hodges_lehmann_one_sample(std::span<const double> d, double confidence) {
  internal_assert(!d.empty()) << "hodges_lehmann_one_sample: empty sample";
  std::vector<double> walsh;
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  // The interval's rank: from the exact W+ distribution of all n differences
  // when there are no ties or zeros, else from the normal approximation.
  const double alpha = 1 - confidence;
  double ties = 0;
  std::vector<double> nonzero;
  for (double x : d)
    if (x != 0) nonzero.push_back(x);
  abs_midranks(nonzero, ties);
  double k;
  if (nonzero.size() == d.size() && ties == 0 && d.size() <= kWilcoxonExactMax) {
    k = static_cast<double>(lower_quantile(signed_rank_counts(d.size()), alpha / 2));
  } else {
    const double n = static_cast<double>(d.size());
    const double var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48;
    k = std::floor(n * (n + 1) / 4 - normal_critical(alpha) * std::sqrt(std::max(var, 0.0)));
  }
  auto [lo, hi] = bracket(walsh, k);
  return {median_of_sorted(walsh), lo, hi};
}

Shift hodges_lehmann_two_sample(std::span<const double> x, std::span<const double> y,
                                double confidence) {
  internal_assert(!x.empty() && !y.empty()) << "hodges_lehmann_two_sample: empty sample";
  std::vector<double> diffs;
  for (double a : x)
    for (double b : y) diffs.push_back(a - b);
  std::sort(diffs.begin(), diffs.end());
  const double alpha = 1 - confidence;
  const double m = static_cast<double>(x.size()), n = static_cast<double>(y.size());
  std::set<double> distinct(x.begin(), x.end());
  distinct.insert(y.begin(), y.end());
  double k;
  if (distinct.size() == x.size() + y.size() && x.size() <= kMannWhitneyExactMax &&
      y.size() <= kMannWhitneyExactMax)
    k = static_cast<double>(lower_quantile(u_counts(x.size(), y.size()), alpha / 2));
  else
    k = std::floor(m * n / 2 - normal_critical(alpha) * std::sqrt(m * n * (m + n + 1) / 12));
  auto [lo, hi] = bracket(diffs, k);
  return {median_of_sorted(diffs), lo, hi};
}

namespace {

std::vector<double> logs(std::span<const double> xs) {
  std::vector<double> out;
  for (double x : xs) out.push_back(std::log(std::max(x, 1e-300)));
  return out;
}

RatioEstimate from_log_shift(const Shift& s, double p, size_t n, bool paired) {
  return {std::exp(s.estimate), std::exp(s.lo), std::exp(s.hi), p, n, paired};
}

}  // namespace

RatioEstimate paired_ratio(std::span<const double> num, std::span<const double> den,
                           double confidence) {
  internal_assert(!num.empty() && num.size() == den.size())
      << "paired_ratio: expected equal non-empty samples, found " << num.size() << " and "
      << den.size();
  std::vector<double> a = logs(num), b = logs(den), d;
  for (size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  return from_log_shift(hodges_lehmann_one_sample(d, confidence), wilcoxon_signed_rank(d).p,
                        d.size(), true);
}

RatioEstimate unpaired_ratio(std::span<const double> num, std::span<const double> den,
                             double confidence) {
  return from_log_shift(hodges_lehmann_two_sample(logs(num), logs(den), confidence),
                        mann_whitney_u(num, den).p, std::min(num.size(), den.size()), false);
}

}  // namespace schedlab::report
