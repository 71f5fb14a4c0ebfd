// Extracting part of a fusion as a standalone fusion: the unit the segmenter
// (schedlab/segment) offers to schedulers and runs as one kernel.
//
// Needs: an unscheduled fusion (only logical domains are read; a tensor made
// by rfactor, whose root differs from its logical domain, is an internal
// error) and a set of its expressions.
// Guarantees, for the copy:
//  * the math is the same: node kinds, operators, flags, dtypes, constants,
//    and every extent is the same SizeExpr, so the original's SizeBindings
//    bind the copy. Tensor numbers and user names are kept (T5 of the
//    original is T5 of every copy that holds it, so messages about a copy
//    name the original's tensors). The copy is unscheduled (loop == logical,
//    intermediates Local, inputs and outputs Global) and verifies.
//  * inputs: each tensor a copied expression reads that no copied expression
//    produces: the original's inputs in the original's order, then tensors
//    of other groups by tensor number. A Reduction axis of such a tensor is
//    dropped (the data of a reduction's result has no such axis). Then, for
//    each named size the copied math uses as a value (mean's `/ K`) that no
//    input's shape provides, the first original input whose shape does: it
//    is unused, and only carries the size to the kernel (a kernel learns
//    sizes from its parameters' extents).
//  * outputs: each tensor a copied expression produces that the original
//    outputs, or that a live expression outside the set reads (live: one the
//    original's outputs depend on): original outputs first in the original's
//    order, then the others by tensor number.
// Tensors are created inputs first, then in the original's topological
// order; extracting every live expression of a fusion prints as the fusion.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

/// A standalone copy of part of a fusion, and the tensor correspondence.
struct Extraction {
  std::unique_ptr<Fusion> fusion;  ///< the copy; owns its nodes
  /// The original tensor of each copied one (inputs, outputs, intermediates).
  std::unordered_map<const TensorView*, const TensorView*> original;
  /// The copy of each original tensor that the copy holds.
  std::unordered_map<const TensorView*, TensorView*> copy;

  /// original.at(t), for a tensor of the copy.
  const TensorView* original_of(const TensorView* t) const;
  /// The original tensor behind each input of the copy, in input order.
  std::vector<const TensorView*> original_inputs() const;
  /// The original tensor behind each output of the copy, in output order.
  std::vector<const TensorView*> original_outputs() const;
};

/// Copies `exprs` (expressions of `f`, any order, no repeats) into a new
/// fusion named `name`; see the top of this header for what it holds.
Extraction extract(const Fusion& f, const std::vector<const Expr*>& exprs, const std::string& name);

}  // namespace schedlab::ir
