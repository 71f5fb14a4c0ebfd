// Inlining (compute-at): a producer inlined at position p is computed inside
// the first p loops of each consumer, which it shares.
#pragma once

#include <optional>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Which loop of the kernel loop k of t is: (owner, pos) means loop `pos` of
/// tensor `owner`. A loop at or past t's inline position is t's own;
/// otherwise it is the one t's consumers use for their loop k (lowering
/// rejects consumers that disagree).
struct LoopKey {
  const ir::TensorView* owner = nullptr;
  int pos = 0;
  const ir::IterDomain* id() const { return owner->loop()[static_cast<size_t>(pos)]; }
  bool operator==(const LoopKey& o) const { return owner == o.owner && pos == o.pos; }
};
/// The loop k of t runs in; nullopt if t's consumers put it in different loops.
std::optional<LoopKey> loop_owner(const ir::TensorView* t, int k);

/// The largest position tv can be inlined at: its first loop axes must each
/// map (LoopMap) to the same position of every consumer's loop domain with
/// the same binding, none may be a Reduction of tv, none may be Vectorize or
/// Bulk on either side (a vector access is a tensor's own innermost loop),
/// consumers must run that loop as one shared loop (loop_owner), and fusion
/// inputs are never inlined (0).
int max_inline_position(const ir::TensorView* tv);
/// Inlines tv at pos (-1: its loop size). Past the legal maximum is an error
/// unless best_effort, which clamps. Bindings of shared axes must agree with
/// every consumer's.
void inline_at(ir::TensorView* tv, int pos, bool best_effort = false);
/// Inlines each selected tensor at the position that covers reference's
/// first pos loop axes (-1: all), clamped to what is legal.
void inline_selected_at(const std::vector<ir::TensorView*>& selected,
                        const ir::TensorView* reference, int pos);
/// Inlines every selected tensor of f (all when empty) at its largest legal
/// position, consumers before producers (a producer's limit depends on where
/// its consumers' loops are). Fusion inputs are skipped.
void inline_most(ir::Fusion& f, const std::vector<ir::TensorView*>& selected = {});
/// Checks that every inlined tensor's shared loop axes have the same bindings
/// as its consumers'. user_error naming both tensors and the axis otherwise.
void validate_bindings(const ir::Fusion& f);

}  // namespace schedlab::sched
