// schedlab/lower: the kernel IR as text, for people (`show --stage kir`,
// `show --print-after PASS`). Not C: the CUDA printer (codegen) writes the
// source; this one shows what lowering built, every field of every node,
// in the manner of Halide's IRPrinter.
#pragma once

#include <string>

#include "schedlab/lower/kir.h"

namespace schedlab::kir {

/// One expression: literals with their dtype (0.5:f32), loads as T3[i],
/// index arithmetic infix, math as calls (exp(a), add(a, b)).
std::string print_expr(const ExprP& e);

/// The whole kernel: parameters, buffers, named sizes, launch extents, then
/// the body, one statement per line, nested by two spaces.
std::string print_kir(const Kernel& k);

}  // namespace schedlab::kir
