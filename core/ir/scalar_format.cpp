#include "schedlab/ir/scalar_format.h"

#include "schedlab/ir/op_semantics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace schedlab::ir {

std::string format_scalar(double v, DataType t) {
  if (t == DataType::Bool) return v != 0.0 ? "true" : "false";
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (is_integral(t)) return std::to_string(static_cast<long long>(v));
  // Shortest %g precision that reads back to the same value of dtype t (an
  // f32 constant 1e-5 prints as 1e-05, not 9.999999747378752e-06).
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (round_to_dtype(std::strtod(buf, nullptr), t) == v) break;
  }
  return buf;
}

}  // namespace schedlab::ir
