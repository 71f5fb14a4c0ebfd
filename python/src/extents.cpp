// Unification of symbolic (-1) extents (extents.h).
#include "extents.h"

#include <algorithm>
#include <map>
#include <string>

#include "schedlab/ir/fusion.h"

namespace schedlab::python {

namespace {

bool mentions(const ir::SizeExpr& e, const std::string& symbol) {
  std::vector<std::string> syms;
  e.collect_symbols(syms);
  return std::find(syms.begin(), syms.end(), symbol) != syms.end();
}

/// `e` with the symbol `from` replaced by `to`.
ir::SizeExpr substitute(const ir::SizeExpr& e, const std::string& from, const ir::SizeExpr& to) {
  switch (e.kind()) {
    case ir::SizeExpr::Kind::Const:
      return e;
    case ir::SizeExpr::Kind::Symbol:
      return e.symbol_name() == from ? to : e;
    case ir::SizeExpr::Kind::Mul:
      return ir::SizeExpr::mul(substitute(e.lhs(), from, to), substitute(e.rhs(), from, to));
    case ir::SizeExpr::Kind::CeilDiv:
      return ir::SizeExpr::ceil_div(substitute(e.lhs(), from, to), substitute(e.rhs(), from, to));
  }
  return e;
}

/// Replaces the symbol `from` by `to` in every extent and size scalar of f.
void rename(ir::Fusion& f, const std::string& from, const ir::SizeExpr& to) {
  for (ir::TensorView* t : f.tensors()) {
    std::vector<ir::IterDomain*> logical = t->logical();
    bool changed = false;
    for (ir::IterDomain*& id : logical) {
      if (!mentions(id->extent(), from)) continue;
      id = f.make_iter_domain(substitute(id->extent(), from, to), id->iter_type());
      changed = true;
    }
    if (changed) t->set_domains({}, std::move(logical));
  }
  std::map<const ir::Scalar*, ir::Scalar*> fresh;
  for (ir::Expr* e : f.exprs()) {
    const std::vector<ir::Val*> inputs = e->inputs();
    for (ir::Val* v : inputs) {
      auto* s = v->as<ir::Scalar>();
      if (!s || !s->is_size() || !mentions(s->size(), from)) continue;
      auto [it, made] = fresh.emplace(s, nullptr);
      if (made) it->second = f.make_size_scalar(substitute(s->size(), from, to));
      f.replace_input(e, s, it->second);
    }
  }
}

/// The extent the axes `extents` share: a constant, else a size name the
/// user gave, else the first -1 extent.
ir::SizeExpr target(const Definition& d, const std::vector<ir::SizeExpr>& extents) {
  for (const ir::SizeExpr& e : extents)
    if (e.is_const()) return e;
  for (const ir::SizeExpr& e : extents)
    if (!d.is_symbolic(e)) return e;
  return extents.front();
}

/// One axis of an operand, counted from its end (1: the last).
struct AxisFromEnd {
  const ir::TensorView* tensor;
  size_t back;
};

/// Unifies the extents of `axes`, which an operation makes meet; Broadcast
/// axes, and positions past a tensor's rank, take no part.
void unify_axes(Definition& d, const std::vector<AxisFromEnd>& axes) {
  // Copies: renaming replaces the axes these extents come from.
  std::vector<ir::SizeExpr> extents;
  for (const AxisFromEnd& a : axes) {
    const std::vector<ir::IterDomain*> ids = a.tensor->logical_no_reductions();
    if (ids.size() < a.back) continue;
    const ir::IterDomain* id = ids[ids.size() - a.back];
    if (!id->is_broadcast()) extents.push_back(id->extent());
  }
  if (extents.size() < 2) return;
  const ir::SizeExpr to = target(d, extents);
  for (const ir::SizeExpr& e : extents)
    if (d.is_symbolic(e) && !e.same_as(to)) rename(d.fusion(), e.symbol_name(), to);
}

/// Unifies the operands' axes at each position from the end, from `first_back` on.
void unify_aligned(Definition& d, const std::vector<ir::TensorView*>& operands, size_t first_back) {
  size_t rank = 0;
  for (const ir::TensorView* t : operands) rank = std::max(rank, t->logical_no_reductions().size());
  for (size_t back = first_back; back <= rank; ++back) {
    std::vector<AxisFromEnd> axes;
    for (const ir::TensorView* t : operands) axes.push_back({t, back});
    unify_axes(d, axes);
  }
}

}  // namespace

void unify_extents(Definition& d, const std::vector<ir::TensorView*>& operands) {
  unify_aligned(d, operands, 1);
}

void unify_matmul_extents(Definition& d, const std::vector<ir::TensorView*>& operands) {
  const ir::TensorView* a = operands.at(0);
  const ir::TensorView* b = operands.at(1);
  unify_axes(d, {{a, 1}, {b, 2}});  // K: a [..., M, K], b [..., K, N]
  unify_aligned(d, operands, 3);    // the batch axes
}

void unify_linear_extents(Definition& d, const std::vector<ir::TensorView*>& operands) {
  const ir::TensorView* x = operands.at(0);
  const ir::TensorView* w = operands.at(1);
  unify_axes(d, {{x, 1}, {w, 1}});                                     // K: x [..., K], w [N, K]
  if (operands.size() > 2) unify_axes(d, {{operands[2], 1}, {w, 2}});  // N: bias [N]
}

}  // namespace schedlab::python
