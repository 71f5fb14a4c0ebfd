// schedlab/plugin_api/arith.hpp: the integer helpers every heuristic needs.
// Part of the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <cstdint>

namespace schedlab::plugin_api {

/// Integer helpers every heuristic needs (a >= 0, b > 0, x >= 1).
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
/// The smallest power of two >= x.
inline int64_t next_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}
/// The largest power of two <= x (1 for x < 2).
inline int64_t largest_pow2_at_most(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace schedlab::plugin_api
