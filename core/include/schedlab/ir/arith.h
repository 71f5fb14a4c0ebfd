// The builder API: free functions that create math expressions, as nvFuser's
// ops/arith.h. The fusion-text frontend and tests both build IR through it.
//
// Semantics shared by every function here:
//  * Axes count over a tensor's non-reduction logical axes; negative axes count
//    from the end.
//  * Elementwise operands broadcast NumPy-style: the lower-rank operand gains
//    leading Broadcast axes (a BroadcastOp), then each axis must have equal
//    extents or be Broadcast on all but one side.
//  * Result dtypes follow PyTorch's type promotion (torch.result_type):
//    tensors promote among themselves, a Python-style scalar constant does not
//    widen a float tensor (f16 * 0.5 is f16) but makes an integer or bool
//    tensor's arithmetic f32, f16 with bf16 is f32, comparisons are bool,
//    integer true division and integer transcendental math are f32.
//  * Half results (f16/bf16) round after every operation, as eager PyTorch
//    and nvFuser's frontend do: +, -, * of two tensors of the same half type,
//    and neg/abs of one, are half ops (exact result rounded once:
//    half_op_is_native); every other half operation casts its operands to
//    f32, computes there and casts the result back. Reductions accumulate in
//    f32 and return f32 (cast explicitly for a half result).
//  * Constant-only operations fold to a Scalar.
// Every rule violation is a user_error naming the op, the tensor and the axis.
#pragma once

#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

/// Whether a UnaryOp / BinaryOp may have half (f16/bf16) operands and result:
/// its exact result rounded once to the half type equals computing it in f32
/// and rounding (f32 holds 2p + 2 bits of a half's p), so every backend and
/// the reference agree bit for bit, and CUDA has an intrinsic for it
/// (__hneg, __habs, __hadd, __hsub, __hmul and their half2 forms).
bool half_op_is_native(UnaryOpType op);
bool half_op_is_native(BinaryOpType op);

/// A constant in f's scalar pool.
Scalar* constant(Fusion& f, double v, DataType t = DataType::F64);

Val* unary(UnaryOpType op, Val* in);
Val* binary(BinaryOpType op, Val* lhs, Val* rhs);
Val* where(Val* cond, Val* lhs, Val* rhs);
Val* cast(Val* in, DataType t);

/// Reduces over `axes` (all axes when empty). keepdim leaves Broadcast axes
/// where the reduced axes were. A half input (f16, bf16) is reduced in f32
/// and the result cast back to its type once, as PyTorch does.
TensorView* reduce(ReductionOpType op, TensorView* in, std::vector<int> axes, bool keepdim = false);
/// sum(in, axes) / (the product of the reduced extents), as nvFuser's mean;
/// of a half input, summed and divided in f32 and rounded once.
TensorView* mean(TensorView* in, std::vector<int> axes, bool keepdim = false);
/// Inserts Broadcast axes: one entry per output axis, true where it is new.
TensorView* broadcast(TensorView* in, const std::vector<bool>& is_broadcast_dim);
/// A copy.
TensorView* set(TensorView* in);
/// Output axis k is input axis new2old[k].
TensorView* permute(TensorView* in, std::vector<int> new2old);
/// Swaps two axes.
TensorView* transpose(TensorView* in, int a, int b);
/// PyTorch's matmul for operands of rank >= 2: a [..., M, K] times
/// b [..., K, N] is [..., M, N], batch axes broadcast NumPy-style. A composite,
/// as nvFuser defined contractions before MatmulOp: the operands broadcast to
/// [..., M, N, K], multiply (bf16/f16 in f32, exactly, as the tensor cores
/// do), sum over K in f32, and the sum is cast back to the operands' dtype.
/// The matmul scheduler finds that pattern and turns the multiply and the sum
/// into one MmaOp; any other scheduler runs it on CUDA cores.
TensorView* matmul(TensorView* a, TensorView* b);
/// PyTorch's linear: x [..., K] times w [N, K] transposed, plus bias [N]
/// (nullptr: none) in f32, cast back to x's dtype.
TensorView* linear(TensorView* x, TensorView* w, TensorView* bias = nullptr);

// Named shorthands.
inline Val* neg(Val* x) { return unary(UnaryOpType::Neg, x); }
inline Val* exp(Val* x) { return unary(UnaryOpType::Exp, x); }
inline Val* log(Val* x) { return unary(UnaryOpType::Log, x); }
inline Val* sqrt(Val* x) { return unary(UnaryOpType::Sqrt, x); }
inline Val* rsqrt(Val* x) { return unary(UnaryOpType::Rsqrt, x); }
inline Val* tanh(Val* x) { return unary(UnaryOpType::Tanh, x); }
inline Val* relu(Val* x) { return unary(UnaryOpType::Relu, x); }
inline Val* erf(Val* x) { return unary(UnaryOpType::Erf, x); }
inline Val* add(Val* a, Val* b) { return binary(BinaryOpType::Add, a, b); }
inline Val* sub(Val* a, Val* b) { return binary(BinaryOpType::Sub, a, b); }
inline Val* mul(Val* a, Val* b) { return binary(BinaryOpType::Mul, a, b); }
inline Val* div(Val* a, Val* b) { return binary(BinaryOpType::Div, a, b); }
inline TensorView* sum(TensorView* x, std::vector<int> axes, bool keepdim = false) {
  return reduce(ReductionOpType::Sum, x, std::move(axes), keepdim);
}
inline TensorView* max(TensorView* x, std::vector<int> axes, bool keepdim = false) {
  return reduce(ReductionOpType::Max, x, std::move(axes), keepdim);
}
/// The tensor v holds; internal error if it is a scalar (for tests' brevity).
TensorView* tv(Val* v);

}  // namespace schedlab::ir
