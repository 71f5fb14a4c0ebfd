// The one home of a ratio's words: see schedlab/report/verdict.h.
#include "schedlab/report/verdict.h"

#include <fmt/format.h>

#include <cmath>

#include "schedlab/base/error.h"

namespace schedlab::report {

RatioEstimate time_ratio(const Record& x, const Record& ref) {
  internal_assert(!x.times_us.empty() && !ref.times_us.empty())
      << "time_ratio: " << x.scheduler << " or " << ref.scheduler << " has no times";
  return paired(x, ref) ? paired_ratio(x.times_us, ref.times_us)
                        : unpaired_ratio(x.times_us, ref.times_us);
}

const Record* best_by_ratio(const std::vector<const Record*>& candidates, const Record* ref) {
  if (candidates.empty()) return nullptr;
  auto median = [](const Record* r) { return r->summary().median; };
  if (!ref) {
    ref = candidates.front();
    for (const Record* r : candidates)
      if (median(r) < median(ref)) ref = r;
  }
  const Record* best = nullptr;
  double best_ratio = 0;
  for (const Record* r : candidates) {
    // The reference against itself, or its own kernel: exactly 1.
    const double ratio = r == ref || same_kernel(*r, *ref) ? 1.0 : time_ratio(*r, *ref).ratio;
    if (!best || ratio < best_ratio || (ratio == best_ratio && median(r) < median(best))) {
      best = r;
      best_ratio = ratio;
    }
  }
  return best;
}

namespace {

/// The factor as printed: two decimals.
std::string factor(double f) {
  return fmt::format("{:.2f}", f);
}

}  // namespace

Direction direction_of(double ratio) {
  const double f = ratio >= 1 ? ratio : 1 / ratio;
  if (ratio == 1 || factor(f) == "1.00") return Direction::Same;
  return ratio > 1 ? Direction::Slower : Direction::Faster;
}

std::string verdict_text(const RatioEstimate& r, bool significant) {
  const Direction d = direction_of(r.ratio);
  // Faster: the factor is 1/ratio, and the interval [lo, hi] of the ratio
  // becomes [1/hi, 1/lo] of the factor.
  const bool turn = d == Direction::Faster;
  const double f = turn ? 1 / r.ratio : r.ratio;
  const double lo = turn ? 1 / r.hi : r.lo, hi = turn ? 1 / r.lo : r.hi;
  std::string s = factor(f) + "x";
  if (d != Direction::Same) s += d == Direction::Slower ? " slower" : " faster";
  if (!(r.lo == r.ratio && r.hi == r.ratio)) s += fmt::format(" [{}, {}]", factor(lo), factor(hi));
  return s + (significant ? "*" : "");
}

std::string predicted_verdict_text(double ratio) {
  if (std::abs(ratio - 1) <= 1e-12) return "tie (predicted)";
  RatioEstimate r;
  r.ratio = r.lo = r.hi = ratio;
  return verdict_text(r, false) + " (predicted)";
}

}  // namespace schedlab::report
