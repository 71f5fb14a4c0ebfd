// Symbolic (-1) extents (docs/python.md, "Symbolic extents"): a -1 in
// define_tensor's shape is an extent of its own (S0, S1, ...) until an
// operation makes it meet another axis; then the two are one extent, as
// nvFuser's symbolic extents are unified by its exact map, and a run checks
// that the inputs agree on it.
//
// Needs: the definition still open (no scheduling yet: every tensor has
// only its logical domain). Guarantees: the tensors keep their identity
// (handles stay valid); axes whose extent changes are replaced by fresh
// IterDomains of the new extent, and size scalars (mean's count) by fresh
// ones, in every expression that reads them.
#pragma once

#include <vector>

#include "definition.h"

namespace schedlab::python {

/// Unifies the extents of `operands`' axes that an operation broadcasts
/// together (aligned from the right, Broadcast axes skipped): a -1 extent
/// becomes the other side's (a constant or a size name first, else the
/// first operand's -1 extent), throughout d's fusion. Extents neither side
/// made with -1 are left as they are, for the operation to check (then it
/// refuses the operands, naming that axis; the renames stay, as the -1
/// extents did meet). An IterDomain handle (tv.axis(i)) taken before a
/// rename still names the old axis.
void unify_extents(Definition& d, const std::vector<ir::TensorView*>& operands);

/// The same for matmul(a, b) (operands {a, b}): the axes a contraction
/// pairs, not the ones aligned from the right: a's last against b's
/// second-to-last (K), and the batch axes before the last two, aligned from
/// the right.
void unify_matmul_extents(Definition& d, const std::vector<ir::TensorView*>& operands);

/// The same for linear(x, w, bias?) (operands {x, w} or {x, w, bias}): x's
/// last axis against w's last (K), and the bias's only axis against w's
/// first (N). x's leading axes meet nothing.
void unify_linear_extents(Definition& d, const std::vector<ir::TensorView*>& operands);

}  // namespace schedlab::python
