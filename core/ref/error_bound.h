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

/// How many ulps of the result a unary or binary op's kernel implementation
/// may add (1 for the basic operations, more for the math library's).
double op_ulps(const ir::Expr& e);

}  // namespace schedlab::ref::detail
