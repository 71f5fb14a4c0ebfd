#include "error_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace schedlab::ref::detail {

double compute_roundoff(ir::DataType t) {
  switch (t) {
    case ir::DataType::F64: return 0x1p-53;
    case ir::DataType::F32:
    case ir::DataType::F16:
    case ir::DataType::BF16: return 0x1p-24;
    default: return 0.0;
  }
}

double storage_roundoff(ir::DataType t) {
  switch (t) {
    case ir::DataType::F64: return 0x1p-53;
    case ir::DataType::F32: return 0x1p-24;
    case ir::DataType::F16: return 0x1p-11;
    case ir::DataType::BF16: return 0x1p-8;
    default: return 0.0;
  }
}

double elementwise_bound(const std::function<double(const double*)>& f, const double* v,
                         const double* e, const bool* is_bool, size_t n, double rounding) {
  const double r = f(v);
  if (!std::isfinite(r)) return 0.0;  // NaN and inf match exactly or not at all
  bool exact = true;
  for (size_t k = 0; k < n; ++k) exact &= e[k] == 0.0;
  if (exact) return rounding;
  // Every corner of the operands' box: 3 choices per real operand (v - e, v,
  // v + e), 2 per bool that may flip.
  std::vector<double> at(v, v + n);
  double worst = 0.0;
  std::function<void(size_t)> corners = [&](size_t k) {
    if (k == n) {
      const double c = f(at.data());
      worst = std::isfinite(c) ? std::max(worst, std::fabs(c - r))
                               : std::numeric_limits<double>::infinity();
      return;
    }
    if (e[k] == 0.0) return corners(k + 1);
    if (is_bool[k]) {
      for (double x : {v[k], v[k] != 0.0 ? 0.0 : 1.0}) {
        at[k] = x;
        corners(k + 1);
      }
    } else {
      for (double x : {v[k] - e[k], v[k], v[k] + e[k]}) {
        at[k] = x;
        corners(k + 1);
      }
    }
    at[k] = v[k];
  };
  corners(0);
  return worst + rounding;
}

double op_ulps(const ir::Expr& e) {
  if (const auto* u = e.as<ir::UnaryOp>()) {
    switch (u->op()) {
      case ir::UnaryOpType::Neg:
      case ir::UnaryOpType::Abs:
      case ir::UnaryOpType::Relu:
      case ir::UnaryOpType::Not: return 0;
      case ir::UnaryOpType::Sqrt:
      case ir::UnaryOpType::Reciprocal: return 1;
      default: return 4;  // expf, logf, tanhf, erff, and the runtime's rsqrt/sigmoid
    }
  }
  if (const auto* b = e.as<ir::BinaryOp>()) {
    switch (b->op()) {
      case ir::BinaryOpType::Pow: return 8;
      case ir::BinaryOpType::Add:
      case ir::BinaryOpType::Sub:
      case ir::BinaryOpType::Mul:
      case ir::BinaryOpType::Div: return 1;
      default: return 0;  // max, min, comparisons and logic are exact
    }
  }
  return 0;
}

}  // namespace schedlab::ref::detail
