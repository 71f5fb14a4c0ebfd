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

/// A view between a tensor and the reference (propagation crossed it from
/// the view's output to its producer): replaying the view's root -> logical
/// splits and merges on the tensor makes the axes the reference's map
/// names. `root_to` maps the view output's root axes to axes of the
/// tensor's world: its logical axes, or axes an earlier stage made.
struct Stage {
  const TensorView* view;
  std::map<const IterDomain*, const IterDomain*> root_to;
};

/// A tensor's map may name axes the tensor lacks ("virtual": a view
/// output's logical axes, downstream of it); its stages, replayed in order
/// on its logical domain, make them.
struct Reached {
  TensorView* tv;
  AxisMap map;
  std::vector<Stage> pre;
};

bool contains(const std::vector<IterDomain*>& v, const IterDomain* id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

/// The splits and merges from a view output's root to its logical domain.
std::vector<ir::IterDomainExpr*> view_transforms(const TensorView* v) {
  std::vector<ir::IterDomainExpr*> r;
  const auto loops = v->loop_history();
  for (ir::IterDomainExpr* e : v->root_history())
    if (std::find(loops.begin(), loops.end(), e) == loops.end()) r.push_back(e);
  return r;
}

/// Carries `from`'s map and stages across one expression to `to`. Axes that
/// do not cross (a reduced axis going downstream, a root axis an rfactor
/// transformed) are dropped: that is the information a path loses. Going
/// from a view's output to its producer, the output's logical axes the view
/// made stay in the map as virtual axes, and the view becomes a stage.
Reached cross(const Reached& from, const ir::Expr* e, TensorView* to) {
  std::map<const IterDomain*, IterDomain*> step;
  const bool upstream = e->out() != to;
  if (!upstream) {  // from is a producer of to
    for (auto [p, c] : producer_consumer_pairs(e, from.tv))
      if (contains(to->logical(), c)) step[p] = c;
  } else {  // from is the consumer, to a producer
    // Only the reference's map holds root axes that are not logical (an
    // rfactor producer used as the reference), and those cross.
    for (auto [p, c] : producer_consumer_pairs(e, to))
      if (contains(from.tv->root(), c)) step[c] = p;
  }
  // from's own axes (logical, root) and its virtual ones.
  auto own = [&](const IterDomain* x) {
    return contains(from.tv->logical(), x) || contains(from.tv->root(), x);
  };
  Reached out{to, {}, {}};
  bool virtual_axes = false;
  for (auto [r, x] : from.map) {
    if (auto it = step.find(x); it != step.end()) {
      out.map[r] = it->second;
    } else if (upstream && (!own(x) || e->is<ir::ViewOp>())) {
      // Virtual in `to`: a view of from's (from's logical axes made by its
      // view), or one already virtual in from.
      if (own(x) && !contains(from.tv->logical(), x)) continue;
      out.map[r] = x;
      virtual_axes = true;
    }
  }
  if (!virtual_axes) return out;
  auto translate = [&](const IterDomain* w) -> const IterDomain* {
    if (auto it = step.find(w); it != step.end()) return it->second;
    return own(w) ? nullptr : w;  // an axis of from that does not cross is lost
  };
  if (e->is<ir::ViewOp>()) {
    Stage st{from.tv, {}};
    for (auto [p, c] : producer_consumer_pairs(e, to)) st.root_to[c] = p;
    out.pre.push_back(std::move(st));
  }
  for (const Stage& st : from.pre) {
    Stage t{st.view, {}};
    for (auto [r, w] : st.root_to)
      if (const IterDomain* v = translate(w)) t.root_to[r] = v;
    out.pre.push_back(std::move(t));
  }
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
    for (auto [r, x] : cross(from, e, to.tv).map) {
      if (to.map.count(r)) continue;
      // Only to's own axes: a virtual axis needs the stages of its path.
      if (!contains(to.tv->logical(), x)) continue;
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
    std::vector<Stage> pre;
    bool operator<(const Item& o) const { return info != o.info ? info < o.info : order > o.order; }
  };
  std::priority_queue<Item> pq;
  int order = 0;
  pq.push({identity.size(), order++, ref, identity, {}});
  std::set<TensorView*> done;
  std::vector<Reached> result;
  auto offer = [&](const Item& from, const ir::Expr* e, TensorView* to) {
    if (done.count(to) || !allowed.count(to)) return;
    Reached m = cross({from.tv, from.map, from.pre}, e, to);
    pq.push({m.map.size(), order++, to, std::move(m.map), std::move(m.pre)});
  };
  while (!pq.empty()) {
    Item it = pq.top();
    pq.pop();
    if (!done.insert(it.tv).second) continue;
    result.push_back({it.tv, it.map, it.pre});
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

using IdMap = std::map<const IterDomain*, IterDomain*>;

/// Where `map` sends x in `loop`, or -1 when it sends x nowhere in it.
long position_in(const IdMap& map, const std::vector<IterDomain*>& loop, const IterDomain* x) {
  auto it = map.find(x);
  if (it == map.end()) return -1;
  auto p = std::find(loop.begin(), loop.end(), it->second);
  return p == loop.end() ? -1 : p - loop.begin();
}

/// Replays one split or merge `e` on `loop`, whose axes `map` names `e`'s
/// inputs by; maps `e`'s outputs to the new axes. `from_reference`: e is
/// the reference's, and tv may differ from it: a merge of a reduction with an
/// iteration axis (tv reduces an axis the reference keeps) is not replayed,
/// and a merge with one side missing (a broadcast the reference has) is the
/// identity on the side tv has. Otherwise such merges are skipped.
void replay_step(ir::Fusion& f, ir::IterDomainExpr* e, std::vector<IterDomain*>& loop,
                 IdMap& map, bool from_reference) {
  if (auto* s = e->as<ir::Split>()) {
    long p = position_in(map, loop, s->in());
    if (p < 0) return;
    auto [o, i] = f.split(loop[static_cast<size_t>(p)], s->factor(), s->inner_split());
    loop[static_cast<size_t>(p)] = o;
    loop.insert(loop.begin() + p + 1, i);
    map[s->outer()] = o;
    map[s->inner()] = i;
  } else if (auto* m = e->as<ir::Merge>()) {
    long po = position_in(map, loop, m->outer()), pi = position_in(map, loop, m->inner());
    if (po >= 0 && pi >= 0) {
      IterDomain* a = loop[static_cast<size_t>(po)];
      IterDomain* b = loop[static_cast<size_t>(pi)];
      bool mixed = (a->is_reduction() && b->iter_type() == ir::IterType::Iteration) ||
                   (b->is_reduction() && a->iter_type() == ir::IterType::Iteration);
      if (from_reference && mixed) return;
      loop[static_cast<size_t>(po)] = f.merge(a, b);
      loop.erase(loop.begin() + pi);
      map[m->out()] = loop[static_cast<size_t>(pi < po ? po - 1 : po)];
    } else if (from_reference && (po >= 0 || pi >= 0)) {
      map[m->out()] = loop[static_cast<size_t>(po >= 0 ? po : pi)];
    }
  }
}

/// Replays the views between tv and the reference (r.pre) on `loop`, tv's
/// logical domain: returns the axis of the new loop each virtual axis is.
IdMap replay_stages(const Reached& r, std::vector<IterDomain*>& loop) {
  ir::Fusion& f = *r.tv->fusion();
  IdMap local;
  for (IterDomain* id : loop) local[id] = id;
  for (const Stage& st : r.pre) {
    for (auto [root, w] : st.root_to)
      if (auto it = local.find(w); it != local.end()) local[root] = it->second;
    for (ir::IterDomainExpr* e : view_transforms(st.view))
      replay_step(f, e, loop, local, /*from_reference=*/false);
  }
  return local;
}

/// Replays ref's loop transforms on tv, starting from tv's logical domain
/// (and the views between them, r.pre).
void replay(const TensorView* ref, const Reached& r) {
  TensorView* tv = r.tv;
  ir::Fusion& f = *tv->fusion();
  std::vector<IterDomain*> loop = tv->logical();
  IdMap to_tv;
  if (r.pre.empty()) {
    to_tv.insert(r.map.begin(), r.map.end());
  } else {
    const auto local = replay_stages(r, loop);
    for (auto [ref_id, x] : r.map)
      if (auto it = local.find(x); it != local.end()) to_tv[ref_id] = it->second;
  }
  for (ir::IterDomainExpr* e : ref->root_history())
    replay_step(f, e, loop, to_tv, /*from_reference=*/true);
  std::vector<IterDomain*> ordered;
  for (IterDomain* r : ref->loop()) {
    long p = position_in(to_tv, loop, r);
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
    replay(reference, r);
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
