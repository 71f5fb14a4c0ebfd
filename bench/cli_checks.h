// Strict numeric option values. CLI11's own checks let through what its
// conversion accepts: nan and inf pass CLI::PositiveNumber, an integer past
// 64 bits becomes the largest one, "-1" becomes 2^64 - 1 for an unsigned
// option, and "010" is octal. These validators read the text before any
// conversion, accept plain decimal numbers in the option's range only, and
// hand the conversion the canonical decimal text. A rejected value is a
// usage error (exit 2) that names the option, the range and the value:
//   --timeout: expected a finite number >= 0, found 'nan'
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace schedlab::cli {

/// A finite decimal number >= lo (> lo when !inclusive).
inline CLI::Validator finite_number(double lo, bool inclusive) {
  std::ostringstream bound;
  bound << lo;
  const std::string range = (inclusive ? ">= " : "> ") + bound.str();
  return CLI::Validator(
      [lo, inclusive, range](std::string& text) -> std::string {
        const char* b = text.data() + (text.starts_with('+') ? 1 : 0);
        const char* e = text.data() + text.size();
        double v = 0;
        auto [end, ec] = std::from_chars(b, e, v, std::chars_format::general);
        if (b == e || ec != std::errc() || end != e || !std::isfinite(v) ||
            (inclusive ? v < lo : v <= lo))
          return "expected a finite number " + range + ", found '" + text + "'";
        return "";
      },
      "NUMBER " + range);
}

/// A decimal integer in [lo, hi] (T: the option's type).
template <typename T>
CLI::Validator integer_in(T lo, T hi = std::numeric_limits<T>::max()) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const char* b = text.data() + (text.starts_with('+') ? 1 : 0);
        const char* e = text.data() + text.size();
        T v{};
        auto [end, ec] = std::from_chars(b, e, v, 10);
        if (b == e || ec != std::errc() || end != e || v < lo || v > hi)
          return "expected an integer in " + range + ", found '" + text + "'";
        text = std::to_string(v);  // CLI11 would read "010" as octal
        return "";
      },
      "INT in " + range);
}

}  // namespace schedlab::cli
