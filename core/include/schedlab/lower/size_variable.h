// schedlab/lower: the variables a lowered kernel reads its sizes by.
//
// Owns: the expression of each size a kernel reads at run time, shared by
// lowering (which writes it), simplify (which folds over it) and the
// runtime's work estimate (which binds it). May depend on: lower/kir.h.
#pragma once

#include <string>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// The variable lowering reads a size from: its parameter's size
/// (kir::TensorDim T0.size[1]), or, for a size the kernel assumes a
/// multiple of d (kir::Kernel::divisible), the opaque quotient T0.size[1] / d
/// (a TensorDim with divisor d) that lowering multiplies by d. simplify
/// prints a term x * q at a coefficient that d divides as x * (q * d), so
/// the loop-invariant q * d is computed once, as the size itself would be.
/// `size` must be one of kernel.size_sources.
kir::ExprP size_variable(const kir::Kernel& kernel, const std::string& size);

}  // namespace schedlab::lower
