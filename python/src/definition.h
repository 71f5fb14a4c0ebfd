// The Python module's handles (docs/python.md): a FusionDefinition's state,
// shared by every Python object that points into its fusion, and the
// handles of its tensors, axes and scalars.
//
// Owns: the fusion a Python FusionDefinition builds or loads, and the
// unscheduled copy of it taken before the first scheduling call (the
// reference evaluates it; `execute` schedules a fresh copy of it).
// May depend on: core's public headers (ir, sched, frontend, point).
// Invariants:
//   - every handle holds the Definition alive (a shared_ptr), so a
//     TensorView* it holds is valid for as long as the handle lives;
//   - `plain` is taken before any scheduling primitive runs (freeze()), and
//     no operation is added after it: the copy is the whole math.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::python {

/// One FusionDefinition's state.
struct Definition {
  /// The math, scheduled in place by the primitives; the file's definition
  /// for load_fusion (its path and input ranges), a bare one otherwise.
  frontend::FusionDefinition def;
  /// The unscheduled copy, taken by freeze().
  std::unique_ptr<ir::Fusion> plain;
  /// The next name for a symbolic (-1) extent: S0, S1, ...
  int next_symbol = 0;
  /// The names define_tensor gave -1 extents (extents.h unifies them).
  std::set<std::string> symbolic;

  ir::Fusion& fusion() const { return *def.fusion; }
  /// Whether `e` is an extent define_tensor made for a -1.
  bool is_symbolic(const ir::SizeExpr& e) const {
    return e.is_symbol() && symbolic.count(e.symbol_name()) > 0;
  }
  /// Raises DefinitionError, naming `what`, once the math is fixed (frozen).
  void require_open(const char* what) const;
  /// Takes `plain` if not yet taken: the first scheduling call, `with`'s
  /// end, or the first run. user_error if the fusion has no output.
  void freeze();
  bool frozen() const { return plain != nullptr; }
  /// A fresh unscheduled copy of the math (freezing first).
  std::unique_ptr<ir::Fusion> unscheduled_copy();
};

using DefinitionPtr = std::shared_ptr<Definition>;

/// A tensor of a definition (Python: schedlab.TensorView).
struct Tensor {
  DefinitionPtr owner;
  ir::TensorView* tv = nullptr;
};

/// A scalar of a definition: a constant folded from constants, or a size
/// (Python: schedlab.Scalar).
struct ScalarHandle {
  DefinitionPtr owner;
  ir::Val* val = nullptr;
};

/// One loop axis of a tensor (Python: schedlab.IterDomain, what tv.axis(i)
/// returns). It follows the axis, not the position: parallelize() finds the
/// axis in the tensor's current loop domain.
struct Axis {
  Tensor tensor;
  ir::IterDomain* id = nullptr;
};

/// The definition being written: the innermost `with FusionDefinition()`
/// block's, or null. schedule.inline_most() without tensors acts on it.
DefinitionPtr current_definition();
/// The definition of `tensors` (all of one definition), else the current
/// one; `what` names the caller in the error when there is neither.
DefinitionPtr definition_of(const std::vector<Tensor>& tensors, const char* what);

}  // namespace schedlab::python
