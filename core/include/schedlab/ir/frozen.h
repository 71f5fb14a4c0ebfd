// schedlab/ir/frozen.h: a snapshot of a fusion's expression graph, for the
// passes that query it once per tensor without changing it.
//
// Fusion keeps no caches (nothing to invalidate), so Fusion::exprs(),
// exprs_for_outputs() and is_live() walk the whole graph on every call. A
// pass that asks once per tensor (inlining checks, the lowering passes,
// the segmenter's offers) is then quadratic in the fusion's length: a 4,000-
// statement chain took minutes. While a FrozenGraph of f lives on a thread,
// those three queries on f, from that thread, answer from its snapshot in
// O(1) (exprs() and exprs_for_outputs() still copy the list).
//
// Owns: nothing but the snapshot. May depend on: schedlab/ir/fusion.h.
// Invariant: while it lives, f's statements, their operands and results,
// and its output list do not change (Fusion's graph mutators check this).
// Loop transforms, inlining, parallelization and memory types may change.
#pragma once

#include <unordered_map>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

class FrozenGraph {
 public:
  /// Snapshots f's graph for this thread until destroyed; scopes nest (an
  /// inner scope of a fusion already frozen costs nothing and answers from
  /// the outer one).
  explicit FrozenGraph(const Fusion& f);
  ~FrozenGraph();
  FrozenGraph(const FrozenGraph&) = delete;
  FrozenGraph& operator=(const FrozenGraph&) = delete;

  /// The snapshot of f in force on this thread, or nullptr.
  static const FrozenGraph* of(const Fusion& f);

  /// As Fusion::exprs() at construction.
  const std::vector<Expr*>& exprs() const { return exprs_; }
  /// As Fusion::exprs_for_outputs() at construction.
  const std::vector<Expr*>& exprs_for_outputs() const { return live_; }
  /// As Fusion::is_live().
  bool is_live(const Expr* e) const;
  /// e's index in exprs(); -1 if e is not a statement of the fusion.
  int position(const Expr* e) const;

 private:
  const Fusion* fusion_ = nullptr;  ///< null: an inner scope of a frozen fusion
  const FrozenGraph* outer_ = nullptr;
  std::vector<Expr*> exprs_, live_;
  /// Per statement: its index in exprs_, and whether it is live.
  std::unordered_map<const Expr*, std::pair<int, bool>> info_;
};

}  // namespace schedlab::ir
