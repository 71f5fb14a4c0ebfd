// fuse_mma: a matmul's multiply and sum become one MmaOp (issue 36), as
// nvFuser's matmul scheduler translates a MatmulOp or a multiply-sum pattern
// into its MmaOp before it schedules.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// tv = sum(a' * b') over its Reduction axes, where a' and b' are a and b,
/// or f32 casts of bf16/f16 tensors a and b (the shape ir::matmul and
/// ir::linear build), becomes tv = MmaOp(a, b): the half operands are read as
/// they are and multiplied exactly in f32, so the result is the same sum.
/// The product and the casts are left to any other reader (dead otherwise).
/// Returns tv. Errors (naming tv): tv not a sum, its operand not a product of
/// two tensors, the product read by another expression, operands of two
/// dtypes or not bf16/f16/f32, tv already scheduled (split, bound or inlined).
ir::TensorView* fuse_mma(ir::TensorView* tv);

}  // namespace schedlab::sched
