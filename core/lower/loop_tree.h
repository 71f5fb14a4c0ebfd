// Pass: the loop structure, from inline positions (nvFuser's compute-at map
// and expression sort in one).
//
// Needs: a lowerable fusion. Guarantees: every expression needed by the
// outputs sits in exactly one leaf, under the loops it iterates. Loop k of a
// tensor T is owned by T when k >= T's inline position, and otherwise by the
// owner of loop k of T's consumers (who must agree): so a producer inlined at
// p runs inside its consumers' first p loops. Siblings are ordered so that a
// writer precedes every reader; a reduction is initialised once, just
// before its first reduction loop (so outside all of them, even when they
// enclose iteration loops). A cycle, or consumers that do not share the loops
// a producer is inlined into, is a user_error.
#pragma once

#include <memory>
#include <vector>

#include "schedlab/ir/fusion.h"
#include "schedlab/sched/inline.h"

namespace schedlab::lower {

using sched::LoopKey;

struct LoopNode;

/// A child of a loop: a nested loop, an expression, or the initialisation of
/// a reduction (emitted just before its first reduction loop).
struct LoopItem {
  enum class Kind { Loop, Expr, Init };
  Kind kind;
  std::unique_ptr<LoopNode> loop;  ///< Loop
  const ir::Expr* expr = nullptr;  ///< Expr, Init (the ReductionOp)
};

struct LoopNode {
  LoopKey key;                  ///< unset (owner null) for the kernel root
  std::vector<LoopItem> items;  ///< in emission order
};

/// The owner of loop k of t; user_error if its consumers disagree.
LoopKey loop_owner(const ir::TensorView* t, int k);
/// Whether t is inlined into loops that iterate a broadcast-widened domain
/// (a shared loop's extent differs from t's own axis): t then has no thread
/// of its own per element, and its index comes from its consumer's.
bool inlined_into_widened_loops(const ir::TensorView* t);
/// Builds and orders the loop tree of the expressions the outputs need.
std::unique_ptr<LoopNode> build_loop_tree(const ir::Fusion& f);

}  // namespace schedlab::lower
