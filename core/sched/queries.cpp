// Queries a heuristic asks of a fusion, after nvFuser's scheduler_utils.
// Read-only: nothing here changes the fusion.
#include "schedlab/sched/queries.h"

#include <algorithm>
#include <unordered_set>

#include "schedlab/sched/id_map.h"

namespace schedlab::sched {

namespace {

using ir::TensorView;

int count_axes(const TensorView* tv, bool with_reductions) {
  int n = 0;
  for (const ir::IterDomain* id : tv->logical())
    if (!id->is_broadcast() && (with_reductions || !id->is_reduction())) ++n;
  return n;
}

/// The first tensor of `tvs` with the most counted axes; null when empty.
TensorView* widest(const std::vector<TensorView*>& tvs, bool with_reductions) {
  TensorView* best = nullptr;
  for (TensorView* tv : tvs)
    if (best == nullptr || count_axes(tv, with_reductions) > count_axes(best, with_reductions))
      best = tv;
  return best;
}

/// Every value reachable from `seeds` by following `next` (both ends included).
template <typename Next>
std::unordered_set<const ir::Val*> reach(const std::vector<TensorView*>& seeds, Next next) {
  std::unordered_set<const ir::Val*> seen(seeds.begin(), seeds.end());
  std::vector<const ir::Val*> stack(seeds.begin(), seeds.end());
  while (!stack.empty()) {
    const ir::Val* v = stack.back();
    stack.pop_back();
    next(v, [&](const ir::Val* w) {
      if (seen.insert(w).second) stack.push_back(w);
    });
  }
  return seen;
}

}  // namespace

std::vector<TensorView*> get_reduction_tvs(const ir::Fusion& f) {
  std::vector<TensorView*> r;
  // What the outputs need, as nvFuser's allTvs: fuse_mma leaves the sum it
  // replaced dead.
  for (const ir::Expr* e : f.exprs_for_outputs())
    if (ir::accumulation(e)) r.push_back(e->out());
  return r;
}

std::vector<TensorView*> all_tvs_except(const ir::Fusion& f,
                                        const std::vector<TensorView*>& except) {
  std::vector<TensorView*> r;
  for (TensorView* tv : f.tensors())
    if (std::find(except.begin(), except.end(), tv) == except.end()) r.push_back(tv);
  return r;
}

TensorView* find_reference_for(const ir::Fusion& f) {
  // A reduction's loop nest covers its input's whole iteration space, reduced
  // axes included; scheduling an output instead would leave those axes to be
  // replayed from nothing.
  std::vector<TensorView*> reductions = get_reduction_tvs(f);
  if (!reductions.empty()) return widest(reductions, /*with_reductions=*/true);
  return widest(f.outputs(), /*with_reductions=*/false);
}

std::vector<std::vector<TensorView*>> group_inputs_outputs_by_inner_dim(const ir::Fusion& f) {
  LoopMap map(f);
  std::vector<std::vector<TensorView*>> groups;
  std::vector<const ir::IterDomain*> group_inner;  // innermost axis of each group's first member
  std::unordered_set<const TensorView*> placed;
  std::vector<TensorView*> candidates = f.inputs();
  candidates.insert(candidates.end(), f.outputs().begin(), f.outputs().end());
  for (TensorView* tv : candidates) {
    std::vector<ir::IterDomain*> dom = tv->logical_no_reductions();
    if (dom.empty() || !placed.insert(tv).second) continue;
    const ir::IterDomain* inner = dom.back();
    size_t g = 0;
    while (g < groups.size() && !map.mapped(group_inner[g], inner)) ++g;
    if (g == groups.size()) {
      groups.emplace_back();
      group_inner.push_back(inner);
    }
    groups[g].push_back(tv);
  }
  return groups;
}

bool is_dependency_of(const ir::Val* v, const ir::Val* of) {
  if (v == of) return true;
  std::unordered_set<const ir::Expr*> seen;
  std::vector<const ir::Expr*> stack;
  if (of->definition()) stack.push_back(of->definition());
  while (!stack.empty()) {
    const ir::Expr* e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    for (const ir::Val* in : e->inputs()) {
      if (in == v) return true;
      if (in->definition()) stack.push_back(in->definition());
    }
  }
  return false;
}

std::vector<TensorView*> vals_between(const std::vector<TensorView*>& from,
                                      const std::vector<TensorView*>& to) {
  if (from.empty() || to.empty()) return {};
  auto downstream = reach(from, [](const ir::Val* v, auto visit) {
    for (const ir::Expr* e : v->uses())
      for (const ir::Val* o : e->outputs()) visit(o);
  });
  auto upstream = reach(to, [](const ir::Val* v, auto visit) {
    if (v->definition())
      for (const ir::Val* i : v->definition()->inputs()) visit(i);
  });
  // Topological order: tensors without a definition first (in creation
  // order), then each expression's outputs in f.exprs() order.
  const ir::Fusion& f = *from.front()->fusion();
  std::vector<TensorView*> r;
  auto keep = [&](TensorView* tv) {
    if (downstream.count(tv) && upstream.count(tv)) r.push_back(tv);
  };
  for (TensorView* tv : f.tensors())
    if (tv->definition() == nullptr) keep(tv);
  for (const ir::Expr* e : f.exprs())
    for (ir::Val* o : e->outputs())
      if (auto* tv = o->as<TensorView>()) keep(tv);
  return r;
}

}  // namespace schedlab::sched
