// Readable numbers for the reports (schedlab/report/format.h).
#include "schedlab/report/format.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

namespace schedlab::report {

namespace {

/// v rounded to `significant` digits, and the number of decimals that shows
/// exactly those digits in fixed notation.
std::pair<double, int> round_sig(double v, int significant) {
  int exponent = static_cast<int>(std::floor(std::log10(std::abs(v))));
  double scale = std::pow(10.0, significant - 1 - exponent);
  double r = std::round(v * scale) / scale;
  // Rounding can carry into the next power of ten (9.9996 -> 10.00).
  exponent = static_cast<int>(std::floor(std::log10(std::abs(r))));
  return {r, std::max(0, significant - 1 - exponent)};
}

}  // namespace

std::string format_sig(double v, int significant, bool trim) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  auto [r, decimals] = round_sig(v, std::max(1, significant));
  std::string s = fmt::format("{:.{}f}", r, decimals);
  if (trim && s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string format_time_us(double us, int significant, bool trim) {
  if (!std::isfinite(us) || us <= 0) return format_sig(us, significant, trim) + " us";
  struct Unit {
    const char* name;
    double in_us;  ///< microseconds per unit
  };
  constexpr std::array<Unit, 4> kUnits = {{{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}}};
  size_t u = 0;
  while (u + 1 < kUnits.size() && us >= kUnits[u + 1].in_us) ++u;
  // 999.96 us rounds to 1000 us: show it as 1.000 ms.
  if (u + 1 < kUnits.size() && std::abs(round_sig(us / kUnits[u].in_us, significant).first) >= 1000)
    ++u;
  return format_sig(us / kUnits[u].in_us, significant, trim) + " " + kUnits[u].name;
}

std::string format_gbps(double gbps) {
  return format_sig(gbps, 4);
}

}  // namespace schedlab::report
