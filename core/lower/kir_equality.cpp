// Structural equality, order and hashing of kernel-IR expressions; see
// kir_equality.h.
#include "schedlab/lower/kir_equality.h"

#include <bit>
#include <functional>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::kir {

namespace {

/// Where a node sorts among nodes of other kinds (compare's canonical
/// order): size quotients and compound index math first (both print in
/// parentheses), then constants, tensor sizes and loads, the block-uniform
/// built-ins, loop variables, thread indices, and the value math that index
/// sums never hold.
int rank(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::TensorDim:
      return e.as<TensorDim>()->divisor > 1 ? 0 : 3;
    case Expr::Kind::Index:
      return 1;
    case Expr::Kind::Int:
    case Expr::Kind::Float:
      return 2;
    case Expr::Kind::Load:
      return 3;
    case Expr::Kind::Builtin: {
      const auto* b = e.as<Builtin>();
      if (b->of == Builtin::Of::Index) return ir::is_thread_dim(b->parallel) ? 9 : 5;
      return ir::is_thread_dim(b->parallel) ? 4 : 6;
    }
    case Expr::Kind::Var:
      return 7;
    case Expr::Kind::Cast:
      return 8;
    case Expr::Kind::Select:
      return 10;
    case Expr::Kind::Bool:
      return 11;
    case Expr::Kind::Unary:
      return 12;
    case Expr::Kind::Binary:
      return 13;
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(e.kind);
}

/// x, y, z: 0, 1, 2.
int axis(ir::ParallelType p) {
  return ir::is_thread_dim(p) ? static_cast<int>(p) - static_cast<int>(ir::ParallelType::TIDx)
                              : static_cast<int>(p) - static_cast<int>(ir::ParallelType::BIDx);
}

/// Index operators in the order of their symbols (%, &&, *, +, /, <, ^),
/// ceilDiv last.
int op_rank(IndexOpType op) {
  switch (op) {
    case IndexOpType::Mod:
      return 0;
    case IndexOpType::And:
      return 1;
    case IndexOpType::Mul:
      return 2;
    case IndexOpType::Add:
      return 3;
    case IndexOpType::Div:
      return 4;
    case IndexOpType::Lt:
      return 5;
    case IndexOpType::Xor:
      return 6;
    case IndexOpType::CeilDiv:
      return 7;
  }
  internal_error << "kir: unknown index operator " << static_cast<int>(op);
}

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}

int compare_double(double a, double b) {
  if (int c = three_way(a, b)) return c;
  // Equal values (or a NaN): the bits decide, so -0.0 and 0.0 differ and
  // a NaN equals only itself.
  return three_way(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b));
}

int compare_exprs(const ExprP& a, const ExprP& b) {
  return a == b ? 0 : compare(*a, *b);
}

/// Two nodes of the same kind, field by field, then their children.
int compare_same_kind(const Expr& x, const Expr& y) {
  switch (x.kind) {
    case Expr::Kind::Int:
      return three_way(x.as<IntImm>()->value, y.as<IntImm>()->value);
    case Expr::Kind::Float:
      return compare_double(x.as<FloatImm>()->value, y.as<FloatImm>()->value);
    case Expr::Kind::Bool:
      return three_way(x.as<BoolImm>()->value, y.as<BoolImm>()->value);
    case Expr::Kind::Var:
      return x.as<Var>()->name.compare(y.as<Var>()->name);
    case Expr::Kind::Builtin: {
      const auto *a = x.as<Builtin>(), *b = y.as<Builtin>();
      if (int c = three_way(a->of, b->of)) return c;
      if (int c = three_way(ir::is_thread_dim(a->parallel), ir::is_thread_dim(b->parallel)))
        return c;
      return three_way(axis(a->parallel), axis(b->parallel));
    }
    case Expr::Kind::TensorDim: {
      const auto *a = x.as<TensorDim>(), *b = y.as<TensorDim>();
      if (a->buffer != b->buffer) {
        if (int c = a->buffer->name.compare(b->buffer->name)) return c;
        return three_way(a->buffer, b->buffer);  // same name: by identity (stable within a kernel)
      }
      if (int c = three_way(a->field, b->field)) return c;
      if (int c = three_way(a->axis, b->axis)) return c;
      return three_way(a->divisor, b->divisor);
    }
    case Expr::Kind::Unary: {
      const auto *a = x.as<Unary>(), *b = y.as<Unary>();
      if (int c = three_way(a->op, b->op)) return c;
      return compare_exprs(a->a, b->a);
    }
    case Expr::Kind::Binary: {
      const auto *a = x.as<Binary>(), *b = y.as<Binary>();
      if (int c = three_way(a->op, b->op)) return c;
      if (int c = compare_exprs(a->a, b->a)) return c;
      return compare_exprs(a->b, b->b);
    }
    case Expr::Kind::Select: {
      const auto *a = x.as<Select>(), *b = y.as<Select>();
      if (int c = compare_exprs(a->cond, b->cond)) return c;
      if (int c = compare_exprs(a->true_value, b->true_value)) return c;
      return compare_exprs(a->false_value, b->false_value);
    }
    case Expr::Kind::Cast:
      return compare_exprs(x.as<Cast>()->value, y.as<Cast>()->value);
    case Expr::Kind::Load: {
      const auto *a = x.as<Load>(), *b = y.as<Load>();
      if (a->buffer != b->buffer) {
        if (int c = a->buffer->name.compare(b->buffer->name)) return c;
        return three_way(a->buffer, b->buffer);
      }
      if (a->cache != b->cache) return three_way(a->cache, b->cache);
      return compare_exprs(a->index, b->index);
    }
    case Expr::Kind::Index: {
      const auto *a = x.as<IndexOp>(), *b = y.as<IndexOp>();
      // ceilDiv(a, b) after every infix operator; infix ones by their left
      // operand first, then the operator, then the right operand.
      const bool ca = a->op == IndexOpType::CeilDiv, cb = b->op == IndexOpType::CeilDiv;
      if (ca != cb) return ca ? 1 : -1;
      if (int c = compare_exprs(a->a, b->a)) return c;
      if (int c = three_way(op_rank(a->op), op_rank(b->op))) return c;
      return compare_exprs(a->b, b->b);
    }
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(x.kind);
}

size_t mix(size_t seed, size_t v) {
  // boost::hash_combine's mixing step.
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

/// Replaces the subtrees found in a map.
class Substitute : public IRMutator {
 public:
  explicit Substitute(const ExprMap<ExprP>& values) : values_(values) {}
  using IRMutator::mutate;
  ExprP mutate(const ExprP& e) override {
    if (!e) return e;
    auto it = values_.find(e);
    return it == values_.end() ? IRMutator::mutate(e) : it->second;
  }

 private:
  const ExprMap<ExprP>& values_;
};

}  // namespace

int compare(const Expr& a, const Expr& b) {
  if (&a == &b) return 0;
  if (int c = three_way(rank(a), rank(b))) return c;
  if (int c = three_way(a.kind, b.kind)) return c;  // kinds that share a rank
  if (int c = compare_same_kind(a, b)) return c;
  return three_way(a.dtype, b.dtype);
}

bool equal(const Expr& a, const Expr& b) {
  return &a == &b || compare(a, b) == 0;
}

size_t hash(const Expr& e) {
  size_t h = mix(static_cast<size_t>(e.kind), static_cast<size_t>(e.dtype));
  auto child = [&](const ExprP& c) { h = mix(h, hash(*c)); };
  switch (e.kind) {
    case Expr::Kind::Int:
      return mix(h, std::hash<int64_t>()(e.as<IntImm>()->value));
    case Expr::Kind::Float:
      return mix(h, std::hash<uint64_t>()(std::bit_cast<uint64_t>(e.as<FloatImm>()->value)));
    case Expr::Kind::Bool:
      return mix(h, e.as<BoolImm>()->value);
    case Expr::Kind::Var:
      return mix(h, std::hash<std::string>()(e.as<Var>()->name));
    case Expr::Kind::Builtin: {
      const auto* b = e.as<Builtin>();
      return mix(mix(h, static_cast<size_t>(b->parallel)), static_cast<size_t>(b->of));
    }
    case Expr::Kind::TensorDim: {
      const auto* t = e.as<TensorDim>();
      h = mix(h, std::hash<const Buffer*>()(t->buffer));
      h = mix(h, static_cast<size_t>(t->axis));
      h = mix(h, static_cast<size_t>(t->field));
      return mix(h, static_cast<size_t>(t->divisor));
    }
    case Expr::Kind::Unary:
      h = mix(h, static_cast<size_t>(e.as<Unary>()->op));
      child(e.as<Unary>()->a);
      return h;
    case Expr::Kind::Binary: {
      const auto* b = e.as<Binary>();
      h = mix(h, static_cast<size_t>(b->op));
      child(b->a);
      child(b->b);
      return h;
    }
    case Expr::Kind::Select: {
      const auto* s = e.as<Select>();
      child(s->cond);
      child(s->true_value);
      child(s->false_value);
      return h;
    }
    case Expr::Kind::Cast:
      child(e.as<Cast>()->value);
      return h;
    case Expr::Kind::Load:
      h = mix(h, std::hash<const Buffer*>()(e.as<Load>()->buffer));
      h = mix(h, static_cast<size_t>(e.as<Load>()->cache));
      child(e.as<Load>()->index);
      return h;
    case Expr::Kind::Index: {
      const auto* op = e.as<IndexOp>();
      h = mix(h, static_cast<size_t>(op->op));
      child(op->a);
      child(op->b);
      return h;
    }
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(e.kind);
}

ExprP substitute(const ExprP& e, const ExprMap<ExprP>& values) {
  return Substitute(values).mutate(e);
}

}  // namespace schedlab::kir
