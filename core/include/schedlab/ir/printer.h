// Deterministic text form of the math IR, in nvFuser's spelling:
//
//   T2_l_f32[iS4{N}, rS5{K}]   # m
//      = reduction(T0_g_f32[iS0{N}, iS1{K}], op = max, init = -inf)
//
// Names come from creation order, so equal fusions print equal text.
#pragma once

#include <string>

#include <cstdint>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

/// "T2_l_f32[iS4{N}, rS5{K}]".
std::string tensor_str(const TensorView* t);
/// One expression, two lines, no trailing newline.
std::string expr_str(const Expr* e);
/// The whole fusion: inputs, outputs, then %kernel_math in topological order.
std::string print_math(const Fusion& f);
/// "[N, K]": the symbolic shape of t's data (its logical axes without
/// Reduction axes), for messages.
std::string shape_str(const TensorView* t);
/// "[4, 8]": concrete extents, for messages.
std::string shape_str(const std::vector<int64_t>& extents);

}  // namespace schedlab::ir
