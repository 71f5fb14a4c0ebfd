#include "schedlab/ir/scalar_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace schedlab::ir {

std::string format_scalar(double v, DataType t) {
  if (t == DataType::Bool) return v != 0.0 ? "true" : "false";
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (is_integral(t)) return std::to_string(static_cast<long long>(v));
  // Shortest %g precision that round-trips.
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace schedlab::ir
