// extract: part of a fusion as a standalone fusion. See schedlab/ir/extract.h.
#include "schedlab/ir/extract.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "schedlab/base/error.h"
#include "schedlab/ir/frozen.h"
#include "schedlab/ir/reshape.h"

namespace schedlab::ir {

const TensorView* Extraction::original_of(const TensorView* t) const {
  auto it = original.find(t);
  internal_assert(it != original.end()) << t->str() << " is not a tensor of the extraction";
  return it->second;
}

std::vector<const TensorView*> Extraction::original_inputs() const {
  std::vector<const TensorView*> r;
  for (const TensorView* t : fusion->inputs()) r.push_back(original_of(t));
  return r;
}

std::vector<const TensorView*> Extraction::original_outputs() const {
  std::vector<const TensorView*> r;
  for (const TensorView* t : fusion->outputs()) r.push_back(original_of(t));
  return r;
}

namespace {

class Copier {
 public:
  explicit Copier(Extraction& x) : x_(x), dst_(*x.fusion) {}

  /// A fresh tensor over fresh axes with t's extents and IterTypes; Reduction
  /// axes are kept only for a tensor an expression defines.
  TensorView* make_tensor(const TensorView* t, bool keep_reductions) {
    // A view's output has a root too; as a segment input only its logical
    // domain (its shape) is copied.
    internal_assert(!t->has_root() || (t->definition() && t->definition()->is<ViewOp>()))
        << "extract: " << t->describe() << " was made by rfactor; extract an unscheduled fusion";
    std::vector<IterDomain*> dom;
    for (const IterDomain* id : t->logical())
      if (keep_reductions || !id->is_reduction())
        dom.push_back(dst_.make_iter_domain(id->extent(), id->iter_type()));
    TensorView* c = dst_.make_tensor_numbered(t->dtype(), std::move(dom), t->number());
    c->set_user_name(t->user_name());
    x_.copy[t] = c;
    x_.original[c] = t;
    return c;
  }

  Val* operand(const Val* v) {
    if (auto* t = v->as<TensorView>()) {
      auto it = x_.copy.find(t);
      internal_assert(it != x_.copy.end()) << "extract: operand " << t->str() << " has no copy";
      return it->second;
    }
    const auto* s = v->as<Scalar>();
    return s->is_size() ? dst_.make_size_scalar(s->size())
                        : dst_.make_scalar(s->value(), s->dtype());
  }

  /// Copies e; its operands must have copies already.
  void copy_expr(const Expr* e) {
    std::vector<Val*> in;
    for (const Val* v : e->inputs()) in.push_back(operand(v));
    if (const auto* v = e->as<ViewOp>()) {
      copy_view(v, in[0]->as<TensorView>());
      return;
    }
    TensorView* out = make_tensor(e->out(), /*keep_reductions=*/true);
    auto tv_in = [&](size_t i) { return in[i]->as<TensorView>(); };
    switch (e->kind()) {
      case Expr::Kind::Unary:
        dst_.create<UnaryOp>(e->as<UnaryOp>()->op(), out, in[0]);
        break;
      case Expr::Kind::Binary:
        dst_.create<BinaryOp>(e->as<BinaryOp>()->op(), out, in[0], in[1]);
        break;
      case Expr::Kind::Where:
        dst_.create<WhereOp>(out, in[0], in[1], in[2]);
        break;
      case Expr::Kind::Cast:
        dst_.create<CastOp>(out, in[0]);
        break;
      case Expr::Kind::Reduction:
        dst_.create<ReductionOp>(e->as<ReductionOp>()->op(), out, tv_in(0));
        break;
      case Expr::Kind::Broadcast:
        dst_.create<BroadcastOp>(out, tv_in(0), e->as<BroadcastOp>()->is_broadcast_dim());
        break;
      case Expr::Kind::LoadStore: {
        const auto* ls = e->as<LoadStoreOp>();
        dst_.create<LoadStoreOp>(ls->op(), out, tv_in(0), ls->cache_op());
        break;
      }
      case Expr::Kind::Permute:
        dst_.create<PermuteOp>(out, tv_in(0), e->as<PermuteOp>()->new2old());
        break;
      case Expr::Kind::Mma:
        dst_.create<MmaOp>(out, tv_in(0), tv_in(1));
        break;
      case Expr::Kind::View:
        break;  // copy_view
    }
  }

  /// Copies a view: its root axes, then its root -> logical splits and
  /// merges replayed on the copies (the loop domain is not copied).
  void copy_view(const ViewOp* v, TensorView* in) {
    const TensorView* t = v->out();
    internal_assert(t->loop() == t->logical())
        << "extract: " << t->describe() << " is scheduled; extract an unscheduled fusion";
    auto [root, logical] = copy_view_domains(dst_, t);
    TensorView* c = dst_.make_tensor_numbered(t->dtype(), logical, t->number());
    c->set_domains(root, logical);
    c->set_user_name(t->user_name());
    x_.copy[t] = c;
    x_.original[c] = t;
    dst_.create<ViewOp>(c, in, v->fn(), v->is_expand());
  }

 private:
  Extraction& x_;
  Fusion& dst_;
};

/// Orders tensors: the fusion's own list (inputs or outputs) first, in its
/// order, then the rest by tensor number.
std::vector<const TensorView*> order_like(const std::vector<TensorView*>& first,
                                          std::set<const TensorView*> rest_set) {
  std::vector<const TensorView*> r;
  for (const TensorView* t : first)
    if (rest_set.erase(t)) r.push_back(t);
  std::vector<const TensorView*> rest(rest_set.begin(), rest_set.end());
  std::sort(rest.begin(), rest.end(),
            [](const TensorView* a, const TensorView* b) { return a->number() < b->number(); });
  r.insert(r.end(), rest.begin(), rest.end());
  return r;
}

}  // namespace

Extraction extract(const Fusion& f, const std::vector<const Expr*>& exprs,
                   const std::string& name) {
  const std::unordered_set<const Expr*> group(exprs.begin(), exprs.end());
  internal_assert(group.size() == exprs.size()) << "extract: an expression is listed twice";
  // The group in f's topological order. With f frozen (the segmenter's many
  // offers) that costs O(group), not O(f).
  std::vector<const Expr*> ordered;
  const FrozenGraph* frozen = FrozenGraph::of(f);
  if (frozen) {
    std::vector<std::pair<int, const Expr*>> at;
    for (const Expr* e : exprs) {
      at.emplace_back(frozen->position(e), e);
      internal_assert(at.back().first >= 0)
          << "extract: an expression is not in fusion " << f.name();
    }
    std::sort(at.begin(), at.end());
    for (const auto& [i, e] : at) ordered.push_back(e);
  } else {
    for (const Expr* e : f.exprs())
      if (group.count(e)) ordered.push_back(e);
  }
  internal_assert(ordered.size() == group.size())
      << "extract: an expression is not in fusion " << f.name();
  const FrozenGraph live(f);  // is_live, once per escaping use

  // Boundary tensors.
  std::set<const TensorView*> produced, inputs, outputs;
  for (const Expr* e : ordered) produced.insert(e->out());
  for (const Expr* e : ordered)
    for (const Val* v : e->inputs())
      if (auto* t = v->as<TensorView>(); t && !produced.count(t)) inputs.insert(t);
  for (const TensorView* t : produced) {
    bool escapes = f.is_output(t);
    for (const Expr* use : t->uses()) escapes |= !group.count(use) && f.is_live(use);
    if (escapes) outputs.insert(t);
  }

  Extraction x;
  x.fusion = std::make_unique<Fusion>(name);
  Copier copier(x);
  std::vector<const TensorView*> in_order = order_like(f.inputs(), inputs);

  // Sizes the math uses as values must reach the kernel through some
  // input's shape (see the header).
  std::vector<std::string> provided, needed;
  for (const TensorView* t : in_order)
    for (const IterDomain* id : t->logical_no_reductions()) id->extent().collect_symbols(provided);
  for (const Expr* e : ordered)
    for (const Val* v : e->inputs())
      if (auto* s = v->as<Scalar>(); s && s->is_size()) s->size().collect_symbols(needed);
  for (const std::string& sym : needed) {
    if (std::find(provided.begin(), provided.end(), sym) != provided.end()) continue;
    const TensorView* carrier = nullptr;
    for (const TensorView* in : f.inputs()) {
      std::vector<std::string> syms;
      for (const IterDomain* id : in->logical()) id->extent().collect_symbols(syms);
      if (std::find(syms.begin(), syms.end(), sym) != syms.end()) {
        carrier = in;
        break;
      }
    }
    internal_assert(carrier) << "extract: no input of fusion " << f.name() << " has size " << sym;
    in_order.push_back(carrier);
    for (const IterDomain* id : carrier->logical()) id->extent().collect_symbols(provided);
  }

  for (const TensorView* t : in_order) {
    if (x.copy.count(t)) continue;  // a carrier that is already an input
    x.fusion->add_input(copier.make_tensor(t, /*keep_reductions=*/false));
  }
  for (const Expr* e : ordered) copier.copy_expr(e);
  for (const TensorView* t : order_like(f.outputs(), outputs)) x.fusion->add_output(x.copy.at(t));
  return x;
}

}  // namespace schedlab::ir
