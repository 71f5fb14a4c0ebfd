// rfactor, after nvFuser's TransformRFactor. For
//   T1[I0, R1] with loop [I0, R1o, R1i{128}] and rfactor({1}):
//   P  = T2[I0, R1o, I1i{128}]  root [I0, R1], logical [I0, R1o, I1i]: reduces R1o
//   T1 = T1[I0, R1i'{128}]       root = logical, maps to P's non-reduction axes
// Reduction axes can only merge with reduction axes, so every transform is on
// one side: the reduction-side ones become P's root -> logical transforms and
// the iteration-side ones are replayed on both tensors' loops.
#include "schedlab/sched/rfactor.h"

#include <algorithm>
#include <map>
#include <set>

#include "schedlab/base/error.h"

namespace schedlab::sched {

using ir::IterDomain;
using ir::TensorView;

namespace {

using IdMap = std::map<const IterDomain*, IterDomain*>;

/// Replays `history` on copies of `from` axes (mapped in `m`).
void replay(ir::Fusion& f, const std::vector<ir::IterDomainExpr*>& history, IdMap& m) {
  for (ir::IterDomainExpr* e : history) {
    if (auto* s = e->as<ir::Split>()) {
      auto [o, i] = f.split(m.at(s->in()), s->factor(), s->inner_split());
      m[s->outer()] = o;
      m[s->inner()] = i;
    } else if (auto* mg = e->as<ir::Merge>()) {
      m[mg->out()] = f.merge(m.at(mg->outer()), m.at(mg->inner()));
    }
  }
}

void copy_bindings(const IterDomain* from, IterDomain* to) {
  to->parallelize(from->parallel_type());
  to->set_loop_transform(from->loop_transform());
}

}  // namespace

TensorView* rfactor(TensorView* tv, std::vector<int> axes) {
  const std::optional<ir::ReductionOpType> red =
      tv->definition() ? ir::accumulation(tv->definition()) : std::nullopt;
  user_assert(red) << "rfactor: " << tv->describe()
                   << " is not defined by a reduction; expected the output of sum/max/min/prod "
                      "or of an mma";
  user_assert(!tv->has_root()) << "rfactor: " << tv->describe()
                               << " is itself an rfactor producer; rfactor its consumer instead";
  user_assert(tv->compute_at_pos() == 0)
      << "rfactor: " << tv->describe() << " is inlined at position " << tv->compute_at_pos()
      << "; expected rfactor before inlining";
  user_assert(!axes.empty()) << "rfactor: expected at least one axis of " << tv->describe();
  std::set<const IterDomain*> selected;
  for (int a : axes) {
    IterDomain* id = tv->axis(a);  // range-checked
    user_assert(id->is_reduction())
        << "rfactor: " << tv->describe() << " axis " << a << " (" << id->str()
        << ") is not a Reduction; expected reduction axes only";
    user_assert(selected.insert(id).second)
        << "rfactor: axis " << a << " of " << tv->describe() << " is listed twice";
  }
  int nred = static_cast<int>(std::count_if(tv->loop().begin(), tv->loop().end(),
                                            [](IterDomain* id) { return id->is_reduction(); }));
  user_assert(static_cast<int>(selected.size()) < nred)
      << "rfactor: all " << nred << " reduction axes of " << tv->describe()
      << " are selected; expected to leave at least one for the consumer to reduce";

  ir::Fusion& f = *tv->fusion();
  auto history = tv->loop_history();
  // Every transform must be on one side (see the top of this file); merge
  // lets a Broadcast axis join a reduction, which rfactor cannot split apart.
  for (ir::IterDomainExpr* e : history) {
    const auto& in = e->inputs();
    bool mixed = std::any_of(in.begin(), in.end(), [&](IterDomain* id) {
      return id->is_reduction() != in.front()->is_reduction();
    });
    user_assert(!mixed) << "rfactor: " << tv->describe() << " merges "
                        << in.front()->str() << " with " << in.back()->str()
                        << "; expected reduction axes merged only with reduction axes "
                           "(reorder the non-reduction axis out of the merge before rfactor)";
  }

  // Producer: a fresh root like tv's logical, every transform replayed.
  IdMap to_p;
  std::vector<IterDomain*> p_root;
  for (IterDomain* id : tv->logical()) {
    p_root.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
    to_p[id] = p_root.back();
  }
  replay(f, history, to_p);
  // P's logical: root with each reduction axis replaced by its loop leaves.
  std::vector<IterDomain*> p_logical;
  std::set<const IterDomain*> leaves_placed;
  for (IterDomain* id : tv->logical()) {
    if (!id->is_reduction()) {
      p_logical.push_back(to_p.at(id));
      continue;
    }
    for (IterDomain* leaf : tv->loop()) {
      if (!leaf->is_reduction() || leaves_placed.count(leaf)) continue;
      // Is `leaf` derived from `id`? Walk back through the definitions.
      std::vector<const IterDomain*> stack{leaf};
      bool derived = false;
      while (!stack.empty() && !derived) {
        const IterDomain* x = stack.back();
        stack.pop_back();
        derived = x == id;
        if (x->definition())
          for (IterDomain* in : x->definition()->inputs()) stack.push_back(in);
      }
      if (!derived) continue;
      leaves_placed.insert(leaf);
      p_logical.push_back(to_p.at(leaf));
    }
  }
  // Reduction leaves not rfactored become per-thread partials in P.
  // A kept leaf that is itself a logical axis reducing a Broadcast operand
  // axis stays Broadcast in P: P copies that axis, it does not iterate one.
  // (An mma's operands have the same rank and axes, Broadcast or not.)
  const auto operand =
      tv->definition()->inputs()[0]->as<ir::TensorView>()->logical_no_reductions();
  for (IterDomain* leaf : tv->loop()) {
    if (!leaf->is_reduction() || selected.count(leaf)) continue;
    auto at = std::find(tv->logical().begin(), tv->logical().end(), leaf);
    bool from_broadcast = at != tv->logical().end() &&
                          operand.at(static_cast<size_t>(at - tv->logical().begin()))->is_broadcast();
    f.set_iter_type(to_p.at(leaf),
                    from_broadcast ? ir::IterType::Broadcast : ir::IterType::Iteration);
  }
  TensorView* p = f.make_tensor(tv->dtype(), p_logical);
  p->set_domains(p_root, p_logical);
  std::vector<IterDomain*> p_loop;
  for (IterDomain* leaf : tv->loop()) {
    p_loop.push_back(to_p.at(leaf));
    copy_bindings(leaf, p_loop.back());
  }
  p->set_loop(p_loop);
  if (!tv->user_name().empty()) p->set_user_name(tv->user_name() + "_rf");

  // Consumer: fresh logical positionally matching P's non-reduction logical
  // axes; the non-rfactored reduction leaves stay reductions.
  IdMap to_c;
  std::vector<IterDomain*> c_logical;
  for (IterDomain* pid : p->logical_no_reductions()) {
    bool reduces = false;
    for (IterDomain* leaf : tv->loop())
      if (to_p.at(leaf) == pid && leaf->is_reduction()) reduces = true;
    c_logical.push_back(f.make_iter_domain(
        pid->extent(), reduces ? ir::IterType::Reduction : pid->iter_type()));
  }
  // Old tv axis -> new consumer axis: iteration root axes positionally, and
  // the kept reduction leaves through P.
  std::map<const IterDomain*, size_t> p_pos;
  auto pnr = p->logical_no_reductions();
  for (size_t i = 0; i < pnr.size(); ++i) p_pos[pnr[i]] = i;
  for (IterDomain* id : tv->logical())
    if (!id->is_reduction()) to_c[id] = c_logical[p_pos.at(to_p.at(id))];
  for (IterDomain* leaf : tv->loop())
    if (leaf->is_reduction() && !selected.count(leaf)) to_c[leaf] = c_logical[p_pos.at(to_p.at(leaf))];
  std::vector<ir::IterDomainExpr*> iteration_side;
  for (ir::IterDomainExpr* e : history)
    if (!e->inputs().front()->is_reduction()) iteration_side.push_back(e);
  replay(f, iteration_side, to_c);

  // Rewire: the original reduction now produces P; tv reduces P, keeping
  // its loop order (minus the rfactored axes) and bindings.
  const std::vector<IterDomain*> old_loop = tv->loop();
  f.replace_output(tv->definition(), tv, p);
  tv->set_domains({}, c_logical);
  std::vector<IterDomain*> c_loop;
  for (IterDomain* leaf : old_loop) {
    if (selected.count(leaf)) continue;
    IterDomain* c = to_c.at(leaf);
    copy_bindings(leaf, c);
    c_loop.push_back(c);
  }
  tv->set_loop(c_loop);
  f.create<ir::ReductionOp>(*red, tv, p);
  return p;
}

}  // namespace schedlab::sched
