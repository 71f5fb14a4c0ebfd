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

/// Makes the innermost loop axes [m 16, n 8, k 16] of an MmaOp output (k a
/// Reduction, all three of constant extent) one warp's mma.sync m16n8k16:
/// m = 8 mh + ml and n = 2 nh + nl become [lane = 4 ml + nh (bound to TIDx,
/// 32), fragment = 2 mh + nl (serial, 4), k], the PTX ISA's C fragment
/// layout (lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) and
/// 2 (l % 4) + 1), so that a register accumulator holds 4 elements per
/// thread and a consumer that propagate_transformation gives the same axes
/// reads each from the lane that computed it. Errors (naming tv): not an
/// MmaOp output, bf16/f16 operands missing, the three axes missing or of
/// other extents, tv inlined.
void mma_tile(ir::TensorView* tv);

}  // namespace schedlab::sched
