// schedlab/sched/loop_owner_cache.h: memoized loop_owner() for passes that
// ask it for every tensor and loop.
//
// loop_owner(t, k) follows t's consumers down to the tensor that owns the
// loop, so in a chain of n inlined statements one answer costs O(n) and a
// pass that asks for every tensor O(n^2) (lowering asks in several passes,
// inline_most once per position). While a LoopOwnerCache of f lives on a
// thread, loop_owner on f's tensors, from that thread, remembers each
// answer, and the graph is frozen too (ir::FrozenGraph).
//
// Owns: the memo. May depend on: schedlab/ir, schedlab/sched/inline.h.
// Invariant: once loop_owner(t, k) was answered, neither t's inline
// position nor that of anything downstream of t changes while the cache
// lives (lowering: nothing changes; inline_most: positions are set
// consumers first, and only consumers are asked about).
#pragma once

#include <map>
#include <optional>
#include <utility>

#include "schedlab/ir/frozen.h"
#include "schedlab/sched/inline.h"

namespace schedlab::sched {

class LoopOwnerCache {
 public:
  explicit LoopOwnerCache(const ir::Fusion& f);
  ~LoopOwnerCache();
  LoopOwnerCache(const LoopOwnerCache&) = delete;
  LoopOwnerCache& operator=(const LoopOwnerCache&) = delete;

  /// The cache of f in force on this thread, or nullptr.
  static LoopOwnerCache* of(const ir::Fusion& f);

 private:
  friend std::optional<LoopKey> loop_owner(const ir::TensorView* t, int k);
  ir::FrozenGraph graph_;
  const ir::Fusion* fusion_ = nullptr;  ///< null: an inner scope of a cached fusion
  LoopOwnerCache* outer_ = nullptr;
  std::map<std::pair<const ir::TensorView*, int>, std::optional<LoopKey>> memo_;
};

}  // namespace schedlab::sched
