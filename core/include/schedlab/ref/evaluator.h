// schedlab/ref: the reference evaluator, the oracle for every validation.
//
// Owns: HostTensor (tensor.h: a dense row-major tensor of doubles), deterministic
// input generation (inputs.h), and evaluation of an *unscheduled* fusion in double precision.
// May depend on: schedlab/base and schedlab/ir only. It must share no code
// with lowering, code generation or the backends, so that a bug there cannot
// hide by being reproduced here. It ignores every scheduling decision (loop
// domains, memory types, parallel types): it reads only the math.
// Rounding: values are held in double; a CastOp rounds to its target dtype
// (ir::round_to_dtype), and generated inputs are rounded to their dtype, so
// f16/bf16/f32 inputs carry exactly the values a kernel would load.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/ir/fusion.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::ref {

/// What the kernel being validated computes with (it changes only the error
/// bounds, HostTensor::error, never the values).
struct EvalOptions {
  /// The kernel was compiled with runtime::KernelOptions::fast_math: its f32
  /// exp, log, division, reciprocal, rsqrt and sigmoid carry the hardware
  /// approximations' error bounds.
  bool fast_math = false;
};

/// Evaluates f's outputs, in order, from `inputs` (one per fusion input, in
/// order). user_error if an input's shape or dtype does not match.
std::vector<HostTensor> evaluate(const ir::Fusion& f, const std::vector<HostTensor>& inputs,
                                 const ir::SizeBindings& sizes, const EvalOptions& options = {});

}  // namespace schedlab::ref
