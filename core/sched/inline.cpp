// Inlining (compute-at). A producer inlined at position p shares its first p
// loops with every consumer, so those loops must iterate the same thing
// (LoopMap), must not reduce (a consumer may only read a finished
// reduction), and must carry the same bindings.
#include "schedlab/sched/inline.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/sched/id_map.h"
#include "schedlab/sched/loop_owner_cache.h"

namespace schedlab::sched {

using ir::TensorView;

namespace {

/// Consumers that some output needs: a dead statement is never lowered, so
/// it must not keep a live producer from being inlined.
std::vector<TensorView*> consumers_of(const TensorView* tv) {
  std::vector<TensorView*> r;
  for (ir::Expr* e : tv->fusion()->live_uses(tv))
    if (std::find(r.begin(), r.end(), e->out()) == r.end()) r.push_back(e->out());
  return r;
}

}  // namespace

std::optional<LoopKey> loop_owner(const TensorView* t, int k) {
  if (k >= t->compute_at_pos()) return LoopKey{t, k};
  LoopOwnerCache* cache = LoopOwnerCache::of(*t->fusion());
  if (cache)
    if (auto it = cache->memo_.find({t, k}); it != cache->memo_.end()) return it->second;
  std::optional<LoopKey> owner;
  for (const ir::Expr* use : t->fusion()->live_uses(t)) {
    auto o = loop_owner(use->out(), k);
    if (!o || (owner && !(*owner == *o))) {
      owner = std::nullopt;
      break;
    }
    owner = o;
  }
  if (cache) cache->memo_[{t, k}] = owner;
  return owner;
}

namespace {

/// The axes of `stop` (a tensor's logical or root domain) that loop axis `id`
/// is made from, through the tensor's splits and merges.
std::set<const ir::IterDomain*> sources(const ir::IterDomain* id,
                                        const std::vector<ir::IterDomain*>& stop) {
  std::set<const ir::IterDomain*> out;
  std::vector<const ir::IterDomain*> todo{id};
  while (!todo.empty()) {
    const ir::IterDomain* x = todo.back();
    todo.pop_back();
    if (std::find(stop.begin(), stop.end(), x) != stop.end()) {
      out.insert(x);
    } else if (const ir::IterDomainExpr* d = x->definition()) {
      for (const ir::IterDomain* in : d->inputs()) todo.push_back(in);
    }
  }
  return out;
}

/// Whether tv's loop axis `id` and consumer c's loop axis `cid` iterate the
/// same data through the expression that reads tv: every logical axis of tv
/// that id is made from pairs (producer_consumer_pairs) with a root axis of c
/// that cid is made from. The loop map can tie them through another path (a
/// broadcast read next to its source: fuzz seed 1 case 6202, where a split
/// hid the tie from the self-mapping check); then they are different loops.
bool same_data(const TensorView* tv, const ir::IterDomain* id, const TensorView* c,
               const ir::IterDomain* cid) {
  const ir::Expr* e = c->definition();
  if (!e) return true;
  const auto pairs = producer_consumer_pairs(e, tv);
  const auto theirs = sources(cid, c->root());
  for (const ir::IterDomain* p : sources(id, tv->logical())) {
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& pc) { return pc.first == p; });
    if (it != pairs.end() && !theirs.count(it->second)) return false;
  }
  return true;
}

/// Why position k + 1 is illegal, or "" if it is legal.
std::string blocker(const TensorView* tv, int k, const LoopMap& map) {
  const ir::IterDomain* id = tv->loop()[static_cast<size_t>(k)];
  std::ostringstream os;
  if (id->is_reduction()) {
    os << "its loop axis " << k << " (" << id->str()
       << ") is a Reduction, which must finish before any consumer reads it";
    return os.str();
  }
  // As nvFuser's MaxPosCalculator: a vector (or bulk) access is the
  // tensor's own innermost loop, never one shared with a consumer.
  auto own_access = [](const ir::IterDomain* a) {
    return a->loop_transform() == ir::LoopTransform::Vectorize ||
           a->loop_transform() == ir::LoopTransform::Bulk;
  };
  if (own_access(id)) {
    os << "its loop axis " << k << " (" << id->str() << ") is "
       << ir::loop_transform_name(id->loop_transform())
       << ", which is emitted as the tensor's own access and cannot be shared with a consumer";
    return os.str();
  }
  for (const TensorView* c : consumers_of(tv)) {
    if (k >= c->nloop()) {
      os << "consumer " << c->describe() << " has only " << c->nloop() << " loop axes";
      return os.str();
    }
    const ir::IterDomain* cid = c->loop()[static_cast<size_t>(k)];
    if (!map.mapped(id, cid)) {
      os << "its loop axis " << k << " (" << id->str() << ") does not map to axis " << k
         << " of consumer " << c->describe() << " (" << cid->str() << ")";
      return os.str();
    }
    // Broadcasting can tie two axes of one consumer into one class (x[N] read
    // as [1, N] next to y[N, 1]: out[i, j] = x[j] + y[i]), and then which of
    // them a producer's axis is cannot be told from the map (nvFuser calls it
    // self-mapping). Sharing the loop would index the producer by the wrong one.
    for (int j = 0; j < c->nloop(); ++j)
      if (j != k && map.mapped(id, c->loop()[static_cast<size_t>(j)])) {
        os << "its loop axis " << k << " (" << id->str() << ") maps to both axis " << k
           << " and axis " << j << " of consumer " << c->describe()
           << " (broadcasting ties them into one class), so the loop it would share is "
              "ambiguous";
        return os.str();
      }
    if (!same_data(tv, id, c, cid)) {
      os << "its loop axis " << k << " (" << id->str() << ") and axis " << k << " of consumer "
         << c->describe() << " (" << cid->str()
         << ") are tied by the loop map through another path (broadcasting), but the consumer "
            "reads it along a different axis, so the loop it would share is not its own";
      return os.str();
    }
    if (own_access(cid)) {
      os << "axis " << k << " of consumer " << c->describe() << " (" << cid->str() << ") is "
         << ir::loop_transform_name(cid->loop_transform())
         << ", which cannot be shared with a producer";
      return os.str();
    }
    if (auto a = loop_owner(c, k), b = loop_owner(consumers_of(tv).front(), k);
        !a || !b || !(*a == *b)) {
      os << "its consumers " << consumers_of(tv).front()->describe() << " and " << c->describe()
         << " run loop " << k << " in different loop nests, so it cannot be shared";
      return os.str();
    }
    if (id->parallel_type() != cid->parallel_type()) {
      os << "its loop axis " << k << " (" << id->str() << ") is bound to "
         << ir::parallel_type_name(id->parallel_type()) << " but axis " << k << " of consumer "
         << c->describe() << " (" << cid->str() << ") is bound to "
         << ir::parallel_type_name(cid->parallel_type())
         << "; inlined axes are shared loops, so their bindings must agree";
      return os.str();
    }
  }
  return "";
}

int max_position(const TensorView* tv, const LoopMap& map) {
  if (tv->fusion()->is_input(tv) || consumers_of(tv).empty()) return 0;
  int k = 0;
  while (k < tv->nloop() && blocker(tv, k, map).empty()) ++k;
  return k;
}

/// The largest position up to `pos` lowering accepts for tv as far as
/// broadcast-widened loops go (docs/lowering-rules.md, rule 4): a loop its
/// consumers run over a wider extent than tv's own axis (tv is broadcast
/// there) may be shared only when tv is inlined whole, and never by a Shared
/// tensor. A best-effort inline stops before the first such loop instead.
int widened_limit(const TensorView* tv, int pos) {
  if (pos == 0) return 0;
  const bool whole = pos == tv->nloop() && tv->memory_type() != ir::MemoryType::Shared;
  if (whole) return pos;
  const TensorView* c = consumers_of(tv).front();
  for (int k = 0; k < pos; ++k) {
    auto owner = loop_owner(c, k);
    if (!owner || !owner->id()->extent().same_as(tv->loop()[static_cast<size_t>(k)]->extent()))
      return k;
  }
  return pos;
}

void inline_with(TensorView* tv, int pos, bool best_effort, const LoopMap& map) {
  user_assert(!tv->fusion()->is_input(tv))
      << "inline_at: " << tv->describe()
      << " is a fusion input; inputs are read from global memory and have no loops to inline";
  user_assert(pos >= -1 && pos <= tv->nloop())
      << "inline_at: position " << pos << " is out of range for " << tv->describe() << " with "
      << tv->nloop() << " loop axes; expected -1 (all) or a position in [0, " << tv->nloop() << "]";
  if (pos == -1) pos = tv->nloop();
  int max = max_position(tv, map);
  if (pos > max) {
    user_assert(best_effort) << "inline_at: cannot inline " << tv->describe() << " at position "
                             << pos << ": "
                             << (tv->uses().empty()         ? "it has no consumers"
                                 : consumers_of(tv).empty() ? "no output depends on its consumers"
                                                            : blocker(tv, max, map))
                             << "; the largest legal position is " << max;
    pos = max;
  }
  if (best_effort) pos = std::min(pos, widened_limit(tv, pos));
  tv->set_compute_at_pos(pos);
}

}  // namespace

int max_inline_position(const TensorView* tv) {
  return max_position(tv, LoopMap(*tv->fusion()));
}

void inline_at(TensorView* tv, int pos, bool best_effort) {
  inline_with(tv, pos, best_effort, LoopMap(*tv->fusion()));
}

void inline_selected_at(const std::vector<TensorView*>& selected, const TensorView* reference,
                        int pos) {
  user_assert(pos >= -1 && pos <= reference->nloop())
      << "inline_selected_at: position " << pos << " is out of range for reference "
      << reference->describe() << " with " << reference->nloop()
      << " loop axes; expected -1 (all) or a position in [0, " << reference->nloop() << "]";
  if (pos == -1) pos = reference->nloop();
  LoopMap map(*reference->fusion());
  for (TensorView* tv : selected) {
    if (tv->fusion()->is_input(tv)) continue;
    // The leading loop axes of tv that iterate something among reference's
    // first pos loops.
    int p = 0;
    while (p < tv->nloop()) {
      const ir::IterDomain* id = tv->loop()[static_cast<size_t>(p)];
      bool covered = false;
      for (int j = 0; j < pos && !covered; ++j)
        covered = map.mapped(id, reference->loop()[static_cast<size_t>(j)]);
      if (!covered) break;
      ++p;
    }
    inline_with(tv, p, /*best_effort=*/true, map);
  }
}

void inline_most(ir::Fusion& f, const std::vector<TensorView*>& selected) {
  // Consumers are inlined before their producers, and only consumers' loops
  // are asked about, so their answers stay true (see the cache's invariant).
  const LoopOwnerCache cache(f);
  LoopMap map(f);
  std::set<const TensorView*> chosen(selected.begin(), selected.end());
  auto exprs = f.exprs();
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    TensorView* tv = (*it)->out();
    if (selected.empty() || chosen.count(tv)) inline_with(tv, max_position(tv, map), true, map);
  }
}

void validate_bindings(const ir::Fusion& f) {
  const LoopOwnerCache cache(f);  // nothing changes here
  LoopMap map(f);
  for (const TensorView* tv : f.tensors()) {
    for (int k = 0; k < tv->compute_at_pos(); ++k) {
      std::string why = blocker(tv, k, map);
      user_assert(why.empty()) << tv->describe() << " is inlined at position "
                               << tv->compute_at_pos() << " but " << why;
    }
  }
}

}  // namespace schedlab::sched
