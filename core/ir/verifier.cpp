#include "schedlab/ir/verifier.h"

#include <algorithm>
#include <map>
#include <set>

#include "schedlab/base/error.h"
#include "schedlab/ir/arith.h"

namespace schedlab::ir {

namespace {

std::string where_str(const Expr* e) {
  return e->out()->str() + " = " + e->op_name() + "(...)";
}

std::string ints_str(const std::vector<int>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

// Elementwise: each tensor operand has the output's rank; each axis either
// matches the output's extent or is a Broadcast on the operand side.
void check_elementwise(const Expr* e) {
  const TensorView* out = e->out();
  internal_assert(!out->has_reduction())
      << where_str(e) << ": elementwise output has a Reduction axis";
  auto od = out->root();
  std::vector<bool> covered(od.size(), false);
  for (Val* v : e->inputs()) {
    auto* t = v->as<TensorView>();
    if (!t) continue;
    auto id = t->logical_no_reductions();
    internal_assert(id.size() == od.size())
        << where_str(e) << ": operand " << t->str() << " has rank " << id.size() << ", expected "
        << od.size();
    for (size_t i = 0; i < od.size(); ++i) {
      if (id[i]->is_broadcast()) continue;
      internal_assert(!od[i]->is_broadcast() && od[i]->extent().same_as(id[i]->extent()))
          << where_str(e) << ": axis " << i << " of " << t->str() << " has extent "
          << id[i]->extent().str() << " but the output's is " << od[i]->str();
      covered[i] = true;
    }
  }
  for (size_t i = 0; i < od.size(); ++i)
    internal_assert(covered[i] || od[i]->is_broadcast())
        << where_str(e) << ": output axis " << od[i]->str()
        << " is not Broadcast but no operand iterates it";
}

void check_same_axes(const Expr* e, const std::vector<IterDomain*>& in,
                     const std::vector<IterDomain*>& out, bool allow_reduction) {
  internal_assert(in.size() == out.size())
      << where_str(e) << ": rank " << out.size() << " does not match operand rank " << in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    internal_assert(in[i]->extent().same_as(out[i]->extent()))
        << where_str(e) << ": axis " << i << " extent " << out[i]->extent().str()
        << " does not match operand's " << in[i]->extent().str();
    bool ok =
        out[i]->iter_type() == in[i]->iter_type() || (allow_reduction && out[i]->is_reduction());
    internal_assert(ok) << where_str(e) << ": axis " << i << " is "
                        << iter_type_name(out[i]->iter_type()) << " but the operand's is "
                        << iter_type_name(in[i]->iter_type());
  }
}

/// Tensor operands of math carry the result's type: the builder casts them
/// first, and code generation relies on it. Scalars (constants) may differ.
void check_operand_dtypes(const Expr* e, const std::vector<Val*>& operands, DataType want,
                          std::string_view why) {
  for (Val* v : operands)
    if (v->is<TensorView>())
      internal_assert(v->dtype() == want)
          << where_str(e) << ": operand " << v->str() << " is " << dtype_name(v->dtype())
          << ", expected " << dtype_name(want) << " (" << why << ")";
}

void check_dtypes(const Expr* e) {
  const TensorView* out = e->out();
  DataType t = out->dtype();
  if (auto* u = e->as<UnaryOp>()) {
    bool logical = u->op() == UnaryOpType::Not;
    internal_assert(logical == (t == DataType::Bool))
        << where_str(e) << ": " << u->op_name() << " produces " << dtype_name(t) << ", expected "
        << (logical ? "bool" : "a numeric type");
    check_operand_dtypes(e, e->inputs(), t, "operands of math are cast to the result type");
  } else if (auto* b = e->as<BinaryOp>()) {
    bool boolean = is_comparison(b->op()) || is_logical(b->op());
    internal_assert(boolean == (t == DataType::Bool))
        << where_str(e) << ": " << b->op_name() << " produces " << dtype_name(t) << ", expected "
        << (boolean ? "bool" : "a numeric type");
    if (is_logical(b->op()))
      check_operand_dtypes(e, e->inputs(), DataType::Bool, "logical operators take bool");
    else if (!is_comparison(b->op()))
      check_operand_dtypes(e, e->inputs(), t, "operands of math are cast to the result type");
  } else if (auto* w = e->as<WhereOp>()) {
    internal_assert(w->cond()->dtype() == DataType::Bool)
        << where_str(e) << ": condition " << w->cond()->str() << " is "
        << dtype_name(w->cond()->dtype()) << ", expected bool";
    check_operand_dtypes(e, {w->lhs(), w->rhs()}, t, "branches are cast to the result type");
  } else if (e->is<LoadStoreOp>() || e->is<BroadcastOp>() || e->is<PermuteOp>() ||
             e->is<ViewOp>()) {
    DataType in = e->inputs()[0]->dtype();
    internal_assert(t == in) << where_str(e) << ": " << e->op_name() << " changes dtype, "
                             << dtype_name(in) << " to " << dtype_name(t) << "; a copy keeps it";
  }
}

/// Every expression, not only those the outputs reach, must be acyclic. Runs
/// before anything calls Fusion::exprs(), whose sort would fail on a cycle
/// without naming it.
void check_acyclic(const Fusion& f) {
  enum class Mark { Visiting, Done };
  std::map<const Expr*, Mark> mark;
  struct Frame {
    const Expr* e;
    size_t next;
  };
  for (const TensorView* t : f.tensors()) {
    const Expr* root = t->definition();
    if (root == nullptr || mark.count(root)) continue;
    std::vector<Frame> stack{{root, 0}};
    mark[root] = Mark::Visiting;
    while (!stack.empty()) {
      Frame& fr = stack.back();
      if (fr.next == fr.e->inputs().size()) {
        mark[fr.e] = Mark::Done;
        stack.pop_back();
        continue;
      }
      const Val* in = fr.e->inputs()[fr.next++];
      const Expr* d = in->definition();
      if (d == nullptr) continue;
      auto it = mark.find(d);
      internal_assert(it == mark.end() || it->second == Mark::Done)
          << "cycle in the expression graph: " << where_str(fr.e) << " reads " << in->str()
          << ", which depends on " << fr.e->out()->str();
      if (it == mark.end()) {
        mark[d] = Mark::Visiting;
        stack.push_back({d, 0});
      }
    }
  }
}

void check_expr(const Fusion& f, const Expr* e) {
  for (Val* o : e->outputs()) {
    internal_assert(o->definition() == e)
        << where_str(e) << ": output " << o->str() << " is defined elsewhere";
    internal_assert(o->is<TensorView>()) << where_str(e) << ": output is not a tensor";
    internal_assert(!f.is_input(o))
        << where_str(e) << ": fusion input " << o->str() << " has a definition";
  }
  for (Val* i : e->inputs()) {
    const auto& u = i->uses();
    internal_assert(std::find(u.begin(), u.end(), e) != u.end())
        << where_str(e) << ": operand " << i->str() << " does not list it among its uses";
  }
  const TensorView* out = e->out();
  switch (e->kind()) {
    case Expr::Kind::Unary:
    case Expr::Kind::Binary:
    case Expr::Kind::Where:
    case Expr::Kind::Cast:
    case Expr::Kind::LoadStore:
      check_elementwise(e);
      break;
    case Expr::Kind::Reduction: {
      auto* r = e->as<ReductionOp>();
      internal_assert(out->has_reduction())
          << where_str(e) << ": reduction output has no Reduction axis";
      check_same_axes(e, r->in()->logical_no_reductions(), out->root(), true);
      internal_assert(out->dtype() == r->in()->dtype())
          << where_str(e) << ": dtype changes across a reduction, " << dtype_name(r->in()->dtype())
          << " to " << dtype_name(out->dtype());
      break;
    }
    case Expr::Kind::Mma: {
      auto* m = e->as<MmaOp>();
      internal_assert(out->has_reduction()) << where_str(e) << ": mma output has no Reduction axis";
      const auto& od = out->root();
      for (const TensorView* t : {m->a(), m->b()}) {
        auto id = t->logical_no_reductions();
        internal_assert(id.size() == od.size())
            << where_str(e) << ": operand " << t->str() << " has rank " << id.size()
            << ", expected " << od.size();
        for (size_t i = 0; i < od.size(); ++i)
          internal_assert(od[i]->is_reduction() ? !id[i]->is_broadcast() &&
                                                      od[i]->extent().same_as(id[i]->extent())
                                                : id[i]->is_broadcast() ||
                                                      od[i]->extent().same_as(id[i]->extent()))
              << where_str(e) << ": axis " << i << " of " << t->str() << " is " << id[i]->str()
              << " but the output's is " << od[i]->str()
              << "; expected the same extent, or Broadcast off the reduced axes";
      }
      internal_assert(m->a()->dtype() == m->b()->dtype() && out->dtype() == DataType::F32 &&
                      (is_half(m->a()->dtype()) || m->a()->dtype() == DataType::F32))
          << where_str(e) << ": mma of " << dtype_name(m->a()->dtype()) << " and "
          << dtype_name(m->b()->dtype()) << " into " << dtype_name(out->dtype())
          << "; expected two bf16, f16 or f32 operands of one dtype and an f32 result";
      break;
    }
    case Expr::Kind::Broadcast: {
      auto* b = e->as<BroadcastOp>();
      const auto& flags = b->is_broadcast_dim();
      internal_assert(flags.size() == out->logical().size())
          << where_str(e) << ": " << flags.size() << " broadcast flags for an output of rank "
          << out->logical().size() << "; expected one flag per output axis";
      std::vector<IterDomain*> kept;
      for (size_t i = 0; i < flags.size(); ++i) {
        if (flags[i])
          internal_assert(out->logical()[i]->is_broadcast())
              << where_str(e) << ": new axis " << i << " is not Broadcast";
        else
          kept.push_back(out->logical()[i]);
      }
      check_same_axes(e, b->in()->logical_no_reductions(), kept, false);
      break;
    }
    case Expr::Kind::Permute: {
      auto* p = e->as<PermuteOp>();
      auto in = p->in()->logical_no_reductions();
      std::vector<int> sorted = p->new2old();
      internal_assert(in.size() == sorted.size())
          << where_str(e) << ": new2old " << ints_str(p->new2old()) << " has " << sorted.size()
          << " entries but operand " << p->in()->str() << " has rank " << in.size();
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i)
        internal_assert(sorted[i] == static_cast<int>(i))
            << where_str(e) << ": new2old " << ints_str(p->new2old())
            << " is not a permutation of [0, " << sorted.size() << ")";
      std::vector<IterDomain*> permuted;
      for (int a : p->new2old()) permuted.push_back(in[static_cast<size_t>(a)]);
      check_same_axes(e, permuted, out->logical(), false);
      break;
    }
    case Expr::Kind::View: {
      auto* v = e->as<ViewOp>();
      auto in = v->in()->logical_no_reductions();
      const auto& root = out->root();
      internal_assert(out->has_root() && root.size() >= in.size())
          << where_str(e) << ": the output's root has " << root.size() << " axes for an operand of rank "
          << in.size() << "; expected one root axis per operand axis, then the new ones";
      for (size_t i = 0; i < in.size(); ++i)
        internal_assert(root[i]->iter_type() == in[i]->iter_type() &&
                        root[i]->extent().same_as(in[i]->extent()))
            << where_str(e) << ": root axis " << root[i]->str() << " does not copy operand axis "
            << in[i]->str();
      internal_assert(!out->has_reduction()) << where_str(e) << ": a view output has a Reduction axis";
      break;
    }
  }
  check_dtypes(e);
  // Half math is only the ops whose single rounding every backend
  // reproduces (half_op_is_native), on operands of the result's type.
  if (e->is<UnaryOp>() || e->is<BinaryOp>() || e->is<ReductionOp>()) {
    const bool native = (e->is<UnaryOp>() && half_op_is_native(e->as<UnaryOp>()->op())) ||
                        (e->is<BinaryOp>() && half_op_is_native(e->as<BinaryOp>()->op()));
    bool same = true;
    for (const Val* v : e->inputs()) same = same && v->dtype() == out->dtype();
    internal_assert(!is_half(out->dtype()) || (native && same))
        << where_str(e) << ": math produces " << dtype_name(out->dtype())
        << "; half types compute in f32 except neg, abs, +, - and * on operands of that type";
  }
}

}  // namespace

void verify(const Fusion& f) {
  // Ownership of IterDomains: exactly one tensor's logical domain each.
  std::map<const IterDomain*, const TensorView*> owner;
  for (const TensorView* t : f.tensors()) {
    for (IterDomain* id : t->logical()) {
      auto [it, fresh] = owner.emplace(id, t);
      internal_assert(fresh || it->second != t)
          << t->str() << ": " << id->str() << " appears twice in its logical domain";
      internal_assert(fresh) << id->str() << " is shared by " << it->second->str() << " and "
                             << t->str() << "; every IterDomain belongs to one tensor";
      if (id->is_broadcast())
        internal_assert(id->extent().is_const() && id->extent().const_value() == 1)
            << t->str() << ": Broadcast axis " << id->str() << " has extent other than 1";
    }
    // The loop domain derives from the logical domain (and the logical from
    // the root) through recorded splits and merges only.
    std::set<const IterDomain*> logical(t->logical().begin(), t->logical().end());
    std::set<const IterDomain*> root(t->root().begin(), t->root().end());
    std::set<const IterDomain*> loop(t->loop().begin(), t->loop().end());
    internal_assert(loop.size() == t->loop().size()) << t->str() << ": loop domain repeats an axis";
    auto derives_from = [](const IterDomain* id, const std::set<const IterDomain*>& base) {
      std::vector<const IterDomain*> stack{id};
      while (!stack.empty()) {
        const IterDomain* x = stack.back();
        stack.pop_back();
        if (base.count(x)) continue;
        if (x->definition() == nullptr) return false;
        for (const IterDomain* in : x->definition()->inputs()) stack.push_back(in);
      }
      return true;
    };
    for (const IterDomain* id : t->loop())
      internal_assert(derives_from(id, logical))
          << t->str() << ": loop axis " << id->str() << " does not derive from the logical domain";
    for (const IterDomain* id : t->logical())
      internal_assert(derives_from(id, root))
          << t->str() << ": logical axis " << id->str() << " does not derive from the root domain";
    internal_assert(t->compute_at_pos() >= 0 &&
                    t->compute_at_pos() <= static_cast<int>(t->loop().size()))
        << t->str() << ": compute-at position " << t->compute_at_pos() << " outside [0, "
        << t->loop().size() << "]";
    if (t->definition() == nullptr)
      internal_assert(f.is_input(t) || t->uses().empty())
          << t->str() << " is used but neither defined nor a fusion input";
  }
  for (const TensorView* t : f.inputs())
    internal_assert(t->memory_type() == MemoryType::Global)
        << "input " << t->str() << " is not Global";
  for (const TensorView* t : f.outputs()) {
    internal_assert(t->memory_type() == MemoryType::Global)
        << "output " << t->str() << " is not Global";
    internal_assert(t->definition() != nullptr || f.is_input(t))
        << "output " << t->str() << " is never computed";
  }
  check_acyclic(f);
  for (const Expr* e : f.exprs()) check_expr(f, e);
}

}  // namespace schedlab::ir
