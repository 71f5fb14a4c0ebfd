// Forward error bounds for the reference evaluator (private to core/ref).
//
// The reference computes in double; a kernel computes in the tensors' own
// types, in an order the schedule picks. For every element the evaluator also
// carries a bound on how far a correct kernel's value may lie from the
// reference (HostTensor::error), so that validation tells an ill-conditioned
// result (a sum that cancels, then sqrt(sqrt(.)): fuzz seed 1 case 4196) from a
// wrong one. The rules:
//   * an elementwise result may lie anywhere f takes over its operands'
//     intervals [v - C e, v + C e] (C = kBoundFactor, the factor validation
//     multiplies the bound by; a bool operand with e > 0 may flip): the
//     bound is the largest change of f over their corners divided by C, plus
//     the result's own rounding (a few ulps for the math functions);
//   * a sum of n elements: the operands' bounds, plus
//       lambda u sqrt(Q) + A + u |s_n|
//     (docs/validation.md). The rounding error of a summation in any order
//     is sum_k delta_k v_k over the values v_k of its additions, |delta_k|
//     <= u; when the deltas are independent and mean zero the
//     Azuma-Hoeffding inequality bounds it by lambda u sqrt(sum_k v_k^2)
//     with probability at least 1 - 2 exp(-lambda^2 / 2) (Higham and Mary,
//     2019); lambda = kSumLambda. Q is the larger of sum_k s_k^2 over the
//     partial sums in index order (a serial loop's; data sorted or trending
//     along the row) and sum_partials_expected (a tree's, a strided
//     thread's: partial sums of other subsets, which cancel less when the
//     index order cancels: x0 ~ -x1). The model's mean-zero deltas fail
//     where a term is smaller than the accumulator's spacing g (u 2^e for an
//     accumulator in [2^(e-1), 2^e)): it is absorbed (error -x) or rounds a
//     whole spacing, a bias of one sign over a long serial sum of positive
//     terms (softmax's at K = 262144: -1.7e-4 relative, above the random
//     part's 1.4e-4). Those additions' errors are what they are, not random:
//       A = | sum over |x_k| < g_k of (-x_k if |x_k| < g_k / 2, else
//             sign(x_k) g_k - x_k) |,
//     g_k at the larger of |s_(k-1)|, |s_k| in index order (a serial loop's
//     accumulators are the largest: other orders absorb less);
//     A product: first-order relative propagation plus n u |r|; max and
//     min: the largest operand bound;
//   * every rounding is relative down to the compute type's smallest normal
//     and absolute below it (gradual underflow: u times the smallest
//     normal); with fast math an f32 result may be flushed to zero (the
//     whole smallest normal);
//   * an op other than a cast whose output is f16 or bf16 adds the storage
//     rounding u_half max(|r|, tiny): the kernel stores it in 16 bits, the
//     reference keeps the double (the IR's arithmetic computes half
//     operands in f32, so only casts and data movement produce half
//     tensors today);
//   * a cast rounds to the target type (float) or may move to the next
//     integer when the interval crosses one: the reference rounds the same
//     way, so the corners' jump is the whole bound (a bf16 output matches
//     exactly, or within one bf16 ulp where the interval straddles a
//     rounding boundary).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "schedlab/ir/fusion.h"

namespace schedlab::ref::detail {

/// The unit roundoff of the arithmetic a kernel does on values of type t:
/// f32 for the half types (they compute in float), 0 for integers and bool.
double compute_roundoff(ir::DataType t);
/// The unit roundoff of storing a value as t (0 for integers and bool).
double storage_roundoff(ir::DataType t);
/// The smallest normal of float type t (0 for integers and bool): below it
/// rounding is absolute, u * min_normal.
double min_normal(ir::DataType t);
/// The rounding of storing r as t: u_t * max(|r|, min_normal(t)).
double storage_rounding(ir::DataType t, double r);

/// lambda of the summation bound: 2 exp(-8^2 / 2) = 2.5e-14, the chance
/// that one sum's rounding error exceeds lambda u sqrt(sum_k s_k^2) under
/// the probabilistic model (docs/validation.md).
inline constexpr double kSumLambda = 8.0;

/// sum_{k=2}^{n} (k^2 mu^2 + k sigma^2), mu and sigma^2 the mean and
/// variance of the n terms (from their sum and sum of squares): for each
/// addition of a serial sum, the expected square of a partial sum over k of
/// the terms taken in a random order, an upper bound for every order whose
/// subsets are not correlated with the terms' signs (any binary tree's node
/// sizes sum to at most the serial one's).
double sum_partials_expected(int64_t n, double sum, double sum_of_squares);

/// The bound of r = f(v[0..n)) given each operand's bound e[k] and whether it
/// is a bool (`is_bool[k]`), plus `rounding` (absolute) for r's own rounding.
/// Bounds are in units of the criterion's factor C (kBoundFactor, compare.h):
/// f's change is taken over the operands' intervals widened to v +- C e, the
/// values a correct kernel's operands may take, and divided by C, so that
/// C x bound is the change itself where f jumps (a cast's rounding, a
/// comparison that flips) and the same as over v +- e where f is smooth.
/// A corner outside f's domain (where f is NaN: sqrt below 0) is pulled back
/// along the segment from v to the last point where f is a number: a kernel
/// whose operand leaves the domain computes NaN, which no bound admits, so
/// only the in-domain values bound a correct kernel's result. A bound that is
/// still not finite (f overflows, or a corner is a pole: 1/x with x's
/// interval reaching 0 exactly) is returned as infinity.
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
/// Every bound is absolute in u * min_normal of the compute type below it
/// (underflow), and with fast_math an f32 result may be flushed to zero.
double op_rounding(const ir::Expr& e, bool fast_math, const double* v, double r, double u);

}  // namespace schedlab::ref::detail
