// The double-precision meaning of every elementwise and reduction operator.
//
// This is the definition the reference evaluator computes and the builder uses
// to fold constant operands. Code generation never calls it: it prints CUDA
// functions of its own, and the reference checks those against this.
#pragma once

#include "schedlab/ir/dtype.h"
#include "schedlab/ir/ir.h"

namespace schedlab::ir {

double apply_unary(UnaryOpType op, double x);
double apply_binary(BinaryOpType op, double a, double b);
/// One step of a reduction. Max and min propagate NaN, as PyTorch does.
double apply_reduction(ReductionOpType op, double acc, double x);
/// Rounds v to what dtype t can store: f32/f16/bf16 round to nearest even,
/// integers truncate toward zero and saturate (as CUDA conversions do), bool is v != 0.
double round_to_dtype(double v, DataType t);

}  // namespace schedlab::ir
