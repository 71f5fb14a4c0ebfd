// Axis mappings between tensors: which IterDomains index the same data.
//
// producer_consumer_pairs gives the exact positional map across one
// expression; LoopMap closes it over the whole fusion and through identical
// splits and merges, so two loop axes are in one class when they iterate the
// same thing (nvFuser's permissive compute-at map: a Broadcast axis maps to
// the axis it is broadcast to).
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// For expression `e` reading `producer`: pairs (producer axis, consumer root
/// axis) over producer's non-reduction logical axes. A BroadcastOp's new axes
/// have no pair; a PermuteOp pairs by its permutation; a ViewOp pairs the
/// producer's axes with the first root axes of its output (its new axes have
/// no pair); every other node pairs by position.
std::vector<std::pair<ir::IterDomain*, ir::IterDomain*>> producer_consumer_pairs(
    const ir::Expr* e, const ir::TensorView* producer);

/// Union-find over every IterDomain of a fusion. Built once; rebuild it after
/// the fusion changes.
class LoopMap {
 public:
  /// How producer and consumer axes are tied together.
  enum class Mode {
    Permissive,  ///< a Broadcast axis maps to the axis it is broadcast to (inlining)
    Exact,       ///< only axes that index the same data: no Broadcast-to-Iteration ties
  };
  explicit LoopMap(const ir::Fusion& f, Mode mode = Mode::Permissive);
  /// True if a and b iterate the same thing.
  bool mapped(const ir::IterDomain* a, const ir::IterDomain* b) const;
  /// A representative of a's class.
  const ir::IterDomain* find(const ir::IterDomain* a) const;

 private:
  const ir::IterDomain* find_mut(const ir::IterDomain* a) const;
  bool unite(const ir::IterDomain* a, const ir::IterDomain* b);
  mutable std::unordered_map<const ir::IterDomain*, const ir::IterDomain*> parent_;
};

}  // namespace schedlab::sched
