// Propagation of a reference's schedule, after nvFuser's TransformPropagator
// (with a max-information spanning tree) and parallelizeAllLike.
#include "schedlab/sched/propagate.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "schedlab/base/error.h"
#include "schedlab/sched/id_map.h"

namespace schedlab::sched {

using ir::IterDomain;
using ir::TensorView;

namespace {

/// Reference logical axis -> the axis of one tensor's logical domain that
/// iterates the same data.
using AxisMap = std::map<const IterDomain*, IterDomain*>;

struct Reached {
  TensorView* tv;
  AxisMap map;
};

bool contains(const std::vector<IterDomain*>& v, const IterDomain* id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

/// Carries `m` (over `from`'s logical axes) across one expression to `to`.
/// Axes that do not cross (a reduced axis going downstream, a root axis an
/// rfactor transformed) are dropped: that is the information a path loses.
AxisMap cross(const AxisMap& m, const ir::Expr* e, const TensorView* from, const TensorView* to) {
  std::map<const IterDomain*, IterDomain*> step;
  if (e->out() == to) {  // from is a producer of to
    for (auto [p, c] : producer_consumer_pairs(e, from))
      if (contains(to->logical(), c)) step[p] = c;
  } else {  // from is the consumer, to a producer
    // Only the reference's map holds root axes that are not logical (an
    // rfactor producer used as the reference), and those cross.
    for (auto [p, c] : producer_consumer_pairs(e, to))
      if (contains(from->root(), c)) step[c] = p;
  }
  AxisMap out;
  for (auto [r, x] : m)
    if (auto it = step.find(x); it != step.end()) out[r] = it->second;
  return out;
}

/// One path keeps the most reference axes, but a tensor can need two: in
/// y = tanh(sum(x, 1, keepdim)) * b[K] the row axis reaches y only through
/// the reduction's result and the column axis only through the broadcast of
/// b. Adds to each tensor's map the reference axes a reached neighbour maps
/// and it lacks (never a second reference axis onto one of its axes), until
/// nothing changes.
void complete(std::vector<Reached>& reached) {
  std::map<const TensorView*, size_t> at;
  for (size_t i = 0; i < reached.size(); ++i) at[reached[i].tv] = i;
  auto absorb = [&](Reached& to, const Reached& from, const ir::Expr* e) {
    bool changed = false;
    for (auto [r, x] : cross(from.map, e, from.tv, to.tv)) {
      if (to.map.count(r)) continue;
      bool taken =
          std::any_of(to.map.begin(), to.map.end(), [&](const auto& kv) { return kv.second == x; });
      if (taken) continue;
      to.map[r] = x;
      changed = true;
    }
    return changed;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Reached& r : reached) {
      for (ir::Expr* e : r.tv->uses())
        if (auto it = at.find(e->out()); it != at.end() && it->second != at[r.tv])
          changed |= absorb(r, reached[it->second], e);
      if (ir::Expr* d = r.tv->definition())
        for (ir::Val* in : d->inputs())
          if (auto* p = in->as<TensorView>())
            if (auto it = at.find(p); it != at.end()) changed |= absorb(r, reached[it->second], d);
    }
  }
}

/// Every tensor reachable from `ref` through `allowed` tensors, each with the
/// axis map along the path that keeps the most reference axes.
std::vector<Reached> spanning_tree(TensorView* ref, const std::set<TensorView*>& allowed) {
  AxisMap identity;
  for (IterDomain* id : ref->logical()) identity[id] = id;
  // An rfactor producer is reached from its producers through its root.
  for (IterDomain* id : ref->root()) identity[id] = id;
  // Max-heap on preserved axes; ties go to the earlier discovery so the
  // result is deterministic.
  struct Item {
    size_t info;
    int order;
    TensorView* tv;
    AxisMap map;
    bool operator<(const Item& o) const { return info != o.info ? info < o.info : order > o.order; }
  };
  std::priority_queue<Item> pq;
  int order = 0;
  pq.push({identity.size(), order++, ref, identity});
  std::set<TensorView*> done;
  std::vector<Reached> result;
  auto offer = [&](const Item& from, const ir::Expr* e, TensorView* to) {
    if (done.count(to) || !allowed.count(to)) return;
    AxisMap m = cross(from.map, e, from.tv, to);
    pq.push({m.size(), order++, to, std::move(m)});
  };
  while (!pq.empty()) {
    Item it = pq.top();
    pq.pop();
    if (!done.insert(it.tv).second) continue;
    result.push_back({it.tv, it.map});
    for (ir::Expr* e : it.tv->uses()) offer(it, e, e->out());
    if (ir::Expr* d = it.tv->definition())
      for (ir::Val* in : d->inputs())
        if (auto* p = in->as<TensorView>()) offer(it, d, p);
  }
  complete(result);
  return result;
}

void check_not_inlined(const TensorView* tv) {
  user_assert(tv->compute_at_pos() == 0)
      << "propagate_transformation: " << tv->describe() << " is inlined at position "
      << tv->compute_at_pos() << "; expected a tensor not yet inlined (propagate, then inline)";
  if (ir::Expr* d = tv->definition())
    for (ir::Val* in : d->inputs())
      if (auto* p = in->as<TensorView>())
        user_assert(p->compute_at_pos() == 0)
            << "propagate_transformation: producer " << p->describe() << " is inlined into "
            << tv->describe() << "; expected no inlining yet (propagate, then inline)";
}

/// Replays ref's loop transforms on tv, starting from tv's logical domain.
void replay(const TensorView* ref, TensorView* tv, const AxisMap& logical_map) {
  ir::Fusion& f = *tv->fusion();
  std::vector<IterDomain*> loop = tv->logical();
  std::map<const IterDomain*, IterDomain*> to_tv(logical_map.begin(), logical_map.end());
  auto position = [&](const IterDomain* r) -> long {
    auto it = to_tv.find(r);
    if (it == to_tv.end()) return -1;
    auto p = std::find(loop.begin(), loop.end(), it->second);
    return p == loop.end() ? -1 : p - loop.begin();
  };
  for (ir::IterDomainExpr* e : ref->root_history()) {
    if (auto* s = e->as<ir::Split>()) {
      long p = position(s->in());
      if (p < 0) continue;
      auto [o, i] = f.split(loop[static_cast<size_t>(p)], s->factor(), s->inner_split());
      loop[static_cast<size_t>(p)] = o;
      loop.insert(loop.begin() + p + 1, i);
      to_tv[s->outer()] = o;
      to_tv[s->inner()] = i;
    } else if (auto* m = e->as<ir::Merge>()) {
      long po = position(m->outer()), pi = position(m->inner());
      if (po >= 0 && pi >= 0) {
        IterDomain* a = loop[static_cast<size_t>(po)];
        IterDomain* b = loop[static_cast<size_t>(pi)];
        // tv may reduce an axis the reference keeps: such a merge cannot be
        // replayed, and the axes stay apart.
        bool mixed = (a->is_reduction() && b->iter_type() == ir::IterType::Iteration) ||
                     (b->is_reduction() && a->iter_type() == ir::IterType::Iteration);
        if (mixed) continue;
        loop[static_cast<size_t>(po)] = f.merge(a, b);
        loop.erase(loop.begin() + pi);
        to_tv[m->out()] = loop[static_cast<size_t>(pi < po ? po - 1 : po)];
      } else if (po >= 0 || pi >= 0) {
        // tv lacks one side (a broadcast the reference has): the merge is
        // the identity on the side it has.
        to_tv[m->out()] = loop[static_cast<size_t>(po >= 0 ? po : pi)];
      }
    }
  }
  std::vector<IterDomain*> ordered;
  for (IterDomain* r : ref->loop()) {
    long p = position(r);
    if (p >= 0 && !contains(ordered, loop[static_cast<size_t>(p)]))
      ordered.push_back(loop[static_cast<size_t>(p)]);
  }
  for (IterDomain* id : loop)
    if (!contains(ordered, id)) ordered.push_back(id);
  tv->set_loop(std::move(ordered));
}

}  // namespace

void propagate_transformation(TensorView* reference, const std::vector<TensorView*>& selected) {
  ir::Fusion& f = *reference->fusion();
  std::set<TensorView*> allowed;
  if (selected.empty()) {
    for (TensorView* t : f.tensors()) allowed.insert(t);
  } else {
    allowed.insert(selected.begin(), selected.end());
    allowed.insert(reference);
  }
  for (const Reached& r : spanning_tree(reference, allowed)) {
    if (r.tv == reference) continue;
    check_not_inlined(r.tv);
    replay(reference, r.tv, r.map);
  }
}

void parallelize_all_like(TensorView* reference, int pos, const std::vector<TensorView*>& selected,
                          const std::set<ir::ParallelType>& types,
                          const std::set<ir::LoopTransform>& transforms) {
  user_assert(pos >= -1 && pos <= reference->nloop())
      << "parallelize_all_like: position " << pos << " is out of range for reference "
      << reference->describe() << " with " << reference->nloop()
      << " loop axes; expected -1 (all) or a position in [0, " << reference->nloop() << "]";
  if (pos == -1) pos = reference->nloop();
  ir::Fusion& f = *reference->fusion();
  LoopMap map(f);
  for (TensorView* tv : selected.empty() ? f.tensors() : selected) {
    if (tv == reference || f.is_input(tv)) continue;
    // The reference axis each loop axis of tv maps to (the first), or -1.
    std::vector<int> ref_axis(static_cast<size_t>(tv->nloop()), -1);
    for (int j = 0; j < tv->nloop(); ++j)
      for (int k = 0; k < pos && ref_axis[static_cast<size_t>(j)] < 0; ++k)
        if (map.mapped(tv->loop()[static_cast<size_t>(j)],
                       reference->loop()[static_cast<size_t>(k)]))
          ref_axis[static_cast<size_t>(j)] = k;
    // A parallel type binds one axis of a tensor, so a reference axis's
    // binding goes to one of tv's axes: two of them map to the same
    // reference axis only through Broadcast ties, as in t3 + t2r of
    // [1, K] rows (t3 = max(w, 1, keepdim) is [b{1}, b{1}], and both axes
    // tie to w's row b{1}, the second through t2r's row broadcast to t3's
    // keepdim axis). Such axes iterate one element each; the binding goes to
    // the first that is not a Broadcast (it iterates the reference's
    // extent), else to the first.
    std::map<int, int> bound;  // reference axis -> the axis of tv that takes its binding
    for (int j = 0; j < tv->nloop(); ++j) {
      int k = ref_axis[static_cast<size_t>(j)];
      if (k < 0) continue;
      auto [it, fresh] = bound.emplace(k, j);
      if (!fresh && tv->loop()[static_cast<size_t>(it->second)]->is_broadcast() &&
          !tv->loop()[static_cast<size_t>(j)]->is_broadcast())
        it->second = j;
    }
    for (int j = 0; j < tv->nloop(); ++j) {
      int k = ref_axis[static_cast<size_t>(j)];
      if (k < 0) continue;
      IterDomain* id = tv->loop()[static_cast<size_t>(j)];
      const IterDomain* r = reference->loop()[static_cast<size_t>(k)];
      ir::ParallelType p = r->parallel_type();
      if (p != ir::ParallelType::Serial && (types.empty() || types.count(p)) &&
          id->parallel_type() != p && bound.at(k) == j)
        tv->parallelize(j, p);
      ir::LoopTransform t = r->loop_transform();
      if (t != ir::LoopTransform::Serial && transforms.count(t) && id->loop_transform() != t)
        tv->parallelize(j, t);
    }
  }
}

}  // namespace schedlab::sched
