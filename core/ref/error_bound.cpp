#include "error_bound.h"

#include "schedlab/base/error.h"
#include "schedlab/ref/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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

double min_normal(ir::DataType t) {
  switch (t) {
    case ir::DataType::F64: return 0x1p-1022;
    case ir::DataType::F32:
    case ir::DataType::BF16: return 0x1p-126;
    case ir::DataType::F16: return 0x1p-14;
    default: return 0.0;
  }
}

double storage_rounding(ir::DataType t, double r) {
  return storage_roundoff(t) * std::max(std::fabs(r), min_normal(t));
}

double sum_partials_expected(int64_t n, double sum, double sum_of_squares) {
  if (n < 2) return 0.0;
  const double m = static_cast<double>(n);
  const double mean = sum / m;
  const double variance = std::max(0.0, sum_of_squares / m - mean * mean);
  // sum_{k=2}^n k^2 and sum_{k=2}^n k.
  const double k2 = m * (m + 1) * (2 * m + 1) / 6 - 1, k1 = m * (m + 1) / 2 - 1;
  return mean * mean * k2 + variance * k1;
}

namespace {

/// Elementwise ops have at most this many operands (where: 3).
constexpr size_t kMax = 4;

/// f at the last point of the segment from v (where f is r, not NaN) to the
/// corner `at` that f still takes a number at: where the corner leaves f's
/// domain (sqrt of a value whose bound reaches below 0), the values a correct
/// kernel may take are those in the domain, since a kernel whose operand did
/// leave it computes NaN. Bisection to the resolution of a double.
double last_in_domain(const std::function<double(const double*)>& f, const double* v,
                      const double* at, size_t n, double r) {
  std::array<double, kMax> p{};
  double inside = 0.0, outside = 1.0, value = r;
  for (int step = 0; step < 64 && outside - inside > 0x1p-52; ++step) {
    const double t = 0.5 * (inside + outside);
    for (size_t k = 0; k < n; ++k) p[k] = v[k] + t * (at[k] - v[k]);
    const double c = f(p.data());
    if (std::isnan(c)) {
      outside = t;
    } else {
      inside = t, value = c;
    }
  }
  return value;
}

}  // namespace

double elementwise_bound(const std::function<double(const double*)>& f, const double* v,
                         const double* e, const bool* is_bool, size_t n, double rounding) {
  const double r = f(v);
  if (!std::isfinite(r)) return 0.0;  // NaN and inf match exactly or not at all
  bool exact = true;
  for (size_t k = 0; k < n; ++k) exact &= e[k] == 0.0;
  if (exact) return rounding;
  // Every corner of the operands' box: 3 choices per real operand (v - e, v,
  // v + e), 2 per bool that may flip, 1 per exact operand; counted like an
  // odometer. Elementwise ops have at most 3 operands: no allocation per
  // element on the evaluator's hot path.
  internal_assert(n <= kMax) << "error bound of an op with " << n << " operands";
  std::array<double, kMax * 3> choice{};
  std::array<size_t, kMax> count{}, pick{};
  for (size_t k = 0; k < n; ++k) {
    double* c = &choice[k * 3];
    if (e[k] == 0.0) {
      c[0] = v[k], count[k] = 1;
    } else if (is_bool[k]) {
      c[0] = v[k], c[1] = v[k] != 0.0 ? 0.0 : 1.0, count[k] = 2;
    } else {
      const double w = kBoundFactor * e[k];
      c[0] = v[k] - w, c[1] = v[k], c[2] = v[k] + w, count[k] = 3;
    }
  }
  std::array<double, kMax> at{};
  double worst = 0.0;
  for (;;) {
    for (size_t k = 0; k < n; ++k) at[k] = choice[k * 3 + pick[k]];
    double c = f(at.data());
    if (std::isnan(c)) c = last_in_domain(f, v, at.data(), n, r);
    if (!std::isfinite(c)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(c - r));
    size_t k = 0;
    while (k < n && ++pick[k] == count[k]) pick[k++] = 0;
    if (k == n) break;
  }
  return worst / kBoundFactor + rounding;
}

namespace {

/// How many ulps of the result the accurate implementation of e may add (1
/// for the basic operations, more for the math library's functions).
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

/// __fdividef(a, b)'s error on the exact quotient r (op_rounding).
double fast_division(double b, double r, double u) {
  const double m = std::fabs(b);
  if (m > 0x1p126) return std::fabs(r) * (1.0 + 2.0 * u);  // returns 0 (or overflows)
  if (m != 0.0 && m < 0x1p-126) return std::numeric_limits<double>::infinity();
  return 2.0 * u * std::fabs(r);
}

/// __expf(x)'s error on the exact r = e^x, in ulps of r.
double fast_exp_ulps(double x) { return 2.0 + std::floor(std::fabs(1.173 * x)); }

/// The fast-math error of e, or a negative value when fast math leaves e as
/// it is (f64, the exact operations, tanh, erf, sqrt, pow).
double fast_rounding(const ir::Expr& e, const double* v, double r, double u) {
  if (e.out()->dtype() != ir::DataType::F32) return -1.0;
  if (const auto* un = e.as<ir::UnaryOp>()) {
    switch (un->op()) {
      case ir::UnaryOpType::Exp: return fast_exp_ulps(v[0]) * u * std::fabs(r);
      case ir::UnaryOpType::Log:
        return v[0] >= 0.5 && v[0] <= 2.0 ? std::exp2(-21.41) : 3.0 * u * std::fabs(r);
      case ir::UnaryOpType::Rsqrt: return 2.0 * u * std::fabs(r);
      case ir::UnaryOpType::Reciprocal: return fast_division(v[0], r, u);
      case ir::UnaryOpType::Sigmoid: {
        // exp(-x)'s relative error moves r by at most that much relatively;
        // then 1 + e rounds once and the division adds its own.
        const double e_x = std::exp(-v[0]);
        return (fast_exp_ulps(-v[0]) + 1.0) * u * std::fabs(r) + fast_division(1.0 + e_x, r, u);
      }
      default: return -1.0;
    }
  }
  if (const auto* b = e.as<ir::BinaryOp>())
    if (b->op() == ir::BinaryOpType::Div) return fast_division(v[1], r, u);
  return -1.0;
}

}  // namespace

double op_rounding(const ir::Expr& e, bool fast_math, const double* v, double r, double u) {
  // The compute type's smallest normal: f64's for f64 arithmetic, else f32's.
  const double tiny = u == 0x1p-53 ? 0x1p-1022 : u > 0 ? 0x1p-126 : 0.0;
  if (fast_math && e.out()->dtype() == ir::DataType::F32) {
    // -ftz: any f32 result below the smallest normal may become 0.
    const double fast = fast_rounding(e, v, r, u);
    return (fast >= 0.0 ? fast : op_ulps(e) * u * std::fabs(r)) + tiny;
  }
  return op_ulps(e) * u * std::max(std::fabs(r), tiny);
}

}  // namespace schedlab::ref::detail
