// Axis mappings: the exact map across one expression and its closure over a
// fusion (LoopMap).
#include "schedlab/sched/id_map.h"

#include <map>
#include <set>
#include <tuple>

#include "schedlab/base/error.h"

namespace schedlab::sched {

using ir::IterDomain;

std::vector<std::pair<IterDomain*, IterDomain*>> producer_consumer_pairs(
    const ir::Expr* e, const ir::TensorView* producer) {
  std::vector<std::pair<IterDomain*, IterDomain*>> pairs;
  auto pd = producer->logical_no_reductions();
  const auto& cd = e->out()->root();
  if (auto* b = e->as<ir::BroadcastOp>()) {
    size_t k = 0;
    for (size_t j = 0; j < cd.size(); ++j)
      if (!b->is_broadcast_dim()[j]) pairs.emplace_back(pd.at(k++), cd[j]);
    return pairs;
  }
  if (auto* p = e->as<ir::PermuteOp>()) {
    for (size_t k = 0; k < cd.size(); ++k)
      pairs.emplace_back(pd.at(static_cast<size_t>(p->new2old()[k])), cd[k]);
    return pairs;
  }
  if (e->is<ir::ViewOp>()) {
    // The view's root starts with one axis per producer axis; the axes after
    // them (unsqueezed, expanded) are new.
    internal_assert(cd.size() >= pd.size()) << e->op_name() << ": root of " << e->out()->str();
    for (size_t i = 0; i < pd.size(); ++i) pairs.emplace_back(pd[i], cd[i]);
    return pairs;
  }
  internal_assert(pd.size() == cd.size())
      << e->op_name() << ": producer " << producer->str() << " has rank " << pd.size()
      << ", consumer root has " << cd.size();
  for (size_t i = 0; i < pd.size(); ++i) pairs.emplace_back(pd[i], cd[i]);
  return pairs;
}

LoopMap::LoopMap(const ir::Fusion& f, Mode mode) {
  // Only statements the outputs need tie axes together: a dead statement
  // (never lowered) must not make two live axes look like one loop.
  std::vector<const IterDomain*> paired;
  for (const ir::Expr* e : f.exprs_for_outputs())
    for (ir::Val* in : e->inputs())
      if (auto* p = in->as<ir::TensorView>())
        for (auto [a, b] : producer_consumer_pairs(e, p)) {
          paired.push_back(a);
          paired.push_back(b);
          if (mode == Mode::Permissive || a->is_broadcast() == b->is_broadcast()) unite(a, b);
        }
  // An rfactor producer's logical axes derive from its root, and its consumer
  // maps to the logical ones; tie root to root through the original input
  // is already done above. Close over identical transforms until stable.
  auto id_exprs = f.id_exprs();
  // A merge with an axis of extent 1 iterates exactly what its other side
  // does: merge(b{1}, i{K}) is i{K} renamed (so is a merge with r{1}, the
  // reduction of a broadcast). Without this, a tensor that lacks the
  // broadcast (an input's cache, read through a broadcast) never maps to a
  // reference whose rows merged the broadcast in. Not when the axis is
  // widened somewhere (its class holds an axis of another extent, N): then
  // the merge's class also holds merge(N, K), which is not K.
  auto is_one = [](const IterDomain* id) {
    return id->extent().is_const() && id->extent().const_value() == 1;
  };
  std::set<const IterDomain*> wide;
  for (const IterDomain* id : paired)
    if (!is_one(id)) wide.insert(find(id));
  auto point = [&](const IterDomain* id) { return is_one(id) && !wide.count(find(id)); };
  std::vector<std::pair<const IterDomain*, const IterDomain*>> renamed;
  for (const ir::IterDomainExpr* e : id_exprs)
    if (auto* m = e->as<ir::Merge>()) {
      if (point(m->outer()) && !point(m->inner())) renamed.emplace_back(m->out(), m->inner());
      if (point(m->inner()) && !point(m->outer())) renamed.emplace_back(m->out(), m->outer());
    }
  for (auto [out, side] : renamed) unite(out, side);
  // Two splits with the same factor and side of mapped axes, or two merges
  // of mapped axes, make mapped axes. Each pass files every transform under
  // its (kind, factor, classes of its inputs) and ties it to the first one
  // filed there: O(transforms log) a pass where comparing every pair was
  // quadratic (a 4,000-statement chain has tens of thousands of
  // transforms). A pass that ties nothing saw every key with settled
  // classes, so the result is the same closure, with the same
  // representatives (the oldest axis of each class).
  using Key = std::tuple<bool, int64_t, bool, const IterDomain*, const IterDomain*>;
  for (bool changed = true; changed;) {
    changed = false;
    std::map<Key, const ir::IterDomainExpr*> first;
    for (const ir::IterDomainExpr* e : id_exprs) {
      if (auto* s = e->as<ir::Split>()) {
        Key k{false, s->factor(), s->inner_split(), find(s->in()), nullptr};
        auto [it, fresh] = first.emplace(k, e);
        if (fresh) continue;
        auto* f = it->second->as<ir::Split>();
        changed |= unite(f->outer(), s->outer());
        changed |= unite(f->inner(), s->inner());
      } else if (auto* m = e->as<ir::Merge>()) {
        Key k{true, 0, false, find(m->outer()), find(m->inner())};
        auto [it, fresh] = first.emplace(k, e);
        if (fresh) continue;
        changed |= unite(it->second->as<ir::Merge>()->out(), m->out());
      }
    }
  }
}

const IterDomain* LoopMap::find_mut(const IterDomain* a) const {
  auto it = parent_.find(a);
  if (it == parent_.end()) return a;
  const IterDomain* root = find_mut(it->second);
  it->second = root;  // path compression
  return root;
}

const IterDomain* LoopMap::find(const IterDomain* a) const {
  return find_mut(a);
}

bool LoopMap::mapped(const IterDomain* a, const IterDomain* b) const {
  return find_mut(a) == find_mut(b);
}

bool LoopMap::unite(const IterDomain* a, const IterDomain* b) {
  const IterDomain* ra = find_mut(a);
  const IterDomain* rb = find_mut(b);
  if (ra == rb) return false;
  // The older axis (smaller id) represents the class: deterministic.
  if (rb->id() < ra->id()) std::swap(ra, rb);
  parent_[rb] = ra;
  return true;
}

}  // namespace schedlab::sched
