#include "schedlab/ir/op_semantics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace schedlab::ir {

double apply_unary(UnaryOpType op, double x) {
  switch (op) {
    case UnaryOpType::Neg: return -x;
    case UnaryOpType::Abs: return std::fabs(x);
    case UnaryOpType::Exp: return std::exp(x);
    case UnaryOpType::Log: return std::log(x);
    case UnaryOpType::Sqrt: return std::sqrt(x);
    case UnaryOpType::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOpType::Tanh: return std::tanh(x);
    case UnaryOpType::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOpType::Relu: return std::isnan(x) ? x : (x > 0.0 ? x : 0.0);
    case UnaryOpType::Erf: return std::erf(x);
    case UnaryOpType::Reciprocal: return 1.0 / x;
    case UnaryOpType::Not: return x == 0.0 ? 1.0 : 0.0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double apply_binary(BinaryOpType op, double a, double b) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case BinaryOpType::Add: return a + b;
    case BinaryOpType::Sub: return a - b;
    case BinaryOpType::Mul: return a * b;
    case BinaryOpType::Div: return a / b;
    // torch.maximum/minimum: NaN if either operand is NaN.
    case BinaryOpType::Max: return (std::isnan(a) || std::isnan(b)) ? nan : (a > b ? a : b);
    case BinaryOpType::Min: return (std::isnan(a) || std::isnan(b)) ? nan : (a < b ? a : b);
    case BinaryOpType::Pow: return std::pow(a, b);
    case BinaryOpType::Lt: return a < b;
    case BinaryOpType::Le: return a <= b;
    case BinaryOpType::Gt: return a > b;
    case BinaryOpType::Ge: return a >= b;
    case BinaryOpType::Eq: return a == b;
    case BinaryOpType::Ne: return a != b;
    case BinaryOpType::And: return (a != 0.0) && (b != 0.0);
    case BinaryOpType::Or: return (a != 0.0) || (b != 0.0);
  }
  return nan;
}

double apply_reduction(ReductionOpType op, double acc, double x) {
  switch (op) {
    case ReductionOpType::Sum: return acc + x;
    case ReductionOpType::Prod: return acc * x;
    case ReductionOpType::Max: return apply_binary(BinaryOpType::Max, acc, x);
    case ReductionOpType::Min: return apply_binary(BinaryOpType::Min, acc, x);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// bf16 keeps the top 16 bits of an f32; round to nearest even on the rest.
double round_bf16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return v;
  uint32_t u = float_to_bits(f);
  u += 0x7fffu + ((u >> 16) & 1u);
  return bits_to_float(u & 0xffff0000u);
}

// IEEE binary16: 10 explicit mantissa bits, exponents -14..15, subnormals
// down to 2^-24. Round to nearest even through scaling by the ulp.
double round_f16(double v) {
  if (std::isnan(v) || std::isinf(v)) return v;
  double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), v);
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = std::max(e - 1, -14);
  double ulp = std::ldexp(1.0, exp - 10);
  return std::copysign(std::nearbyint(a / ulp) * ulp, v);
}

}  // namespace

double round_to_dtype(double v, DataType t) {
  switch (t) {
    case DataType::F64: return v;
    case DataType::F32: return static_cast<double>(static_cast<float>(v));
    case DataType::F16: return round_f16(v);
    case DataType::BF16: return round_bf16(v);
    case DataType::Bool: return v != 0.0 ? 1.0 : 0.0;
    case DataType::I32:
    case DataType::I64: {
      if (std::isnan(v)) return 0.0;
      double tr = std::trunc(v);
      // Out-of-range float to int is undefined in C++; saturate, as CUDA does.
      // i64: the largest double below 2^63, which i64 can hold.
      double hi = t == DataType::I32 ? 2147483647.0 : 9223372036854774784.0;
      double lo = t == DataType::I32 ? -2147483648.0 : -9223372036854775808.0;
      return std::clamp(tr, lo, hi);
    }
  }
  return v;
}

}  // namespace schedlab::ir
