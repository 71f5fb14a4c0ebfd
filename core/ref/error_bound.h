// Forward error bounds for the reference evaluator (private to core/ref).
//
// The reference computes in double; a kernel computes in the tensors' own
// types, in an order the schedule picks. For every element the evaluator also
// carries a bound on how far a correct kernel's value may lie from the
// reference (HostTensor::error), so that validation tells an ill-conditioned
// result (a sum that cancels, then sqrt(sqrt(.)): fuzz seed 1 case 4196) from a
// wrong one. The rules:
//   * an elementwise result may lie anywhere f takes over its operands'
//     intervals [v - e, v + e] (a bool operand with e >= 0.5 may flip):
//     the bound is the largest change of f over their corners, plus the
//     result's own rounding (a few ulps for the math functions);
//   * a sum of n elements: the operands' bounds plus 2 sqrt(n) u sum|x|, the
//     probabilistic bound on summation error in any order (Higham and Mary,
//     2019); a product: first-order relative propagation plus n u |r|; max
//     and min: the largest operand bound;
//   * a cast rounds to the target type (float) or may move to the next
//     integer when the interval crosses one.
#pragma once

#include <cstddef>
#include <functional>

#include "schedlab/ir/fusion.h"

namespace schedlab::ref::detail {

/// The unit roundoff of the arithmetic a kernel does on values of type t:
/// f32 for the half types (they compute in float), 0 for integers and bool.
double compute_roundoff(ir::DataType t);
/// The unit roundoff of storing a value as t (0 for integers and bool).
double storage_roundoff(ir::DataType t);

/// The bound of r = f(v[0..n)) given each operand's bound e[k] and whether it
/// is a bool (`is_bool[k]`), plus `rounding` (absolute) for r's own rounding.
/// A bound that is not finite (a pole or NaN inside the interval) is returned
/// as infinity.
double elementwise_bound(const std::function<double(const double*)>& f, const double* v,
                         const double* e, const bool* is_bool, size_t n, double rounding);

/// The absolute error a kernel's implementation of the unary or binary op e
/// adds to its exact result r at operands v, computing with unit roundoff u:
/// an ulp for the basic operations, a few for the math library's functions.
/// With fast_math (f32 only: runtime::KernelOptions::fast_math), the hardware
/// approximations' bounds (CUDA Programming Guide, intrinsic functions):
/// __expf 2 + 1.173|x| ulps; __logf 2^-21.41 absolute on [0.5, 2], else 3
/// ulps; __fdividef 2 ulps, the whole result (it returns 0) for 2^126 < |b| <
/// 2^128, and unbounded for a subnormal divisor; rsqrtf 2 ulps; the sigmoid
/// (1 / (1 + __expf(-x))) the sum of its parts.
double op_rounding(const ir::Expr& e, bool fast_math, const double* v, double r, double u);

}  // namespace schedlab::ref::detail
