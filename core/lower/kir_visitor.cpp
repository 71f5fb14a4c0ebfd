#include "schedlab/lower/kir_visitor.h"

#include "schedlab/base/error.h"

namespace schedlab::kir {

// ---- IRVisitor ---------------------------------------------------------------

void IRVisitor::include(const ExprP& e) {
  if (!e) return;
  switch (e->kind) {
    case Expr::Kind::Int: return visit(static_cast<const IntImm&>(*e));
    case Expr::Kind::Float: return visit(static_cast<const FloatImm&>(*e));
    case Expr::Kind::Bool: return visit(static_cast<const BoolImm&>(*e));
    case Expr::Kind::Var: return visit(static_cast<const Var&>(*e));
    case Expr::Kind::Builtin: return visit(static_cast<const Builtin&>(*e));
    case Expr::Kind::TensorDim: return visit(static_cast<const TensorDim&>(*e));
    case Expr::Kind::Unary: return visit(static_cast<const Unary&>(*e));
    case Expr::Kind::Binary: return visit(static_cast<const Binary&>(*e));
    case Expr::Kind::Select: return visit(static_cast<const Select&>(*e));
    case Expr::Kind::Cast: return visit(static_cast<const Cast&>(*e));
    case Expr::Kind::Load: return visit(static_cast<const Load&>(*e));
    case Expr::Kind::Index: return visit(static_cast<const IndexOp&>(*e));
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(e->kind);
}

void IRVisitor::include(const Stmt& s) {
  switch (s.kind) {
    case Stmt::Kind::Block: return visit(static_cast<const Block&>(s));
    case Stmt::Kind::For: return visit(static_cast<const For&>(s));
    case Stmt::Kind::If: return visit(static_cast<const If&>(s));
    case Stmt::Kind::Store: return visit(static_cast<const Store&>(s));
    case Stmt::Kind::Allocate: return visit(static_cast<const Allocate&>(s));
    case Stmt::Kind::Sync: return visit(static_cast<const Sync&>(s));
    case Stmt::Kind::Comment: return visit(static_cast<const Comment&>(s));
    case Stmt::Kind::BlockReduce: return visit(static_cast<const BlockReduce&>(s));
    case Stmt::Kind::GridReduce: return visit(static_cast<const GridReduce&>(s));
    case Stmt::Kind::AsyncGroup: return visit(static_cast<const AsyncGroup&>(s));
    case Stmt::Kind::MmaTile: return visit(static_cast<const MmaTile&>(s));
  }
  internal_error << "kir: unknown statement kind " << static_cast<int>(s.kind);
}

void IRVisitor::include(const std::vector<StmtP>& body) {
  for (const StmtP& s : body) include(*s);
}

void IRVisitor::visit(const Unary& e) { include(e.a); }
void IRVisitor::visit(const Binary& e) {
  include(e.a);
  include(e.b);
}
void IRVisitor::visit(const Select& e) {
  include(e.cond);
  include(e.true_value);
  include(e.false_value);
}
void IRVisitor::visit(const Cast& e) { include(e.value); }
void IRVisitor::visit(const Load& e) { include(e.index); }
void IRVisitor::visit(const IndexOp& e) {
  include(e.a);
  include(e.b);
}
void IRVisitor::visit(const Block& s) { include(s.body); }
void IRVisitor::visit(const For& s) {
  include(s.extent);
  include(s.body);
}
void IRVisitor::visit(const If& s) {
  include(s.cond);
  include(s.then_body);
  include(s.else_body);
}
void IRVisitor::visit(const Store& s) {
  include(s.index);
  include(s.value);
  include(s.src_valid);
}
void IRVisitor::visit(const BlockReduce& s) {
  include(s.index);
  include(s.identity);
  include(s.participate);
}
void IRVisitor::visit(const MmaTile& s) {
  for (const ExprP& e : s.acc_index) include(e);
  for (const ExprP& e : s.acc_valid) include(e);
  for (const auto* xs : {&s.a, &s.a_valid})
    for (const ExprP& e : *xs) include(e);
  for (const auto* xs : {&s.b, &s.b_valid})
    for (const ExprP& e : *xs) include(e);
  for (const ExprP* e : {&s.a_row, &s.a_full, &s.b_row, &s.b_full})
    if (*e) include(*e);
}
void IRVisitor::visit(const GridReduce& s) {
  for (const ExprP* e : {&s.index, &s.out_index, &s.identity, &s.participate, &s.element,
                         &s.block, &s.blocks, &s.valid})
    include(*e);
}

// ---- IRMutator ---------------------------------------------------------------

ExprP IRMutator::mutate(const ExprP& e) {
  if (!e) return e;
  switch (e->kind) {
    case Expr::Kind::Int: return visit(static_cast<const IntImm&>(*e), e);
    case Expr::Kind::Float: return visit(static_cast<const FloatImm&>(*e), e);
    case Expr::Kind::Bool: return visit(static_cast<const BoolImm&>(*e), e);
    case Expr::Kind::Var: return visit(static_cast<const Var&>(*e), e);
    case Expr::Kind::Builtin: return visit(static_cast<const Builtin&>(*e), e);
    case Expr::Kind::TensorDim: return visit(static_cast<const TensorDim&>(*e), e);
    case Expr::Kind::Unary: return visit(static_cast<const Unary&>(*e), e);
    case Expr::Kind::Binary: return visit(static_cast<const Binary&>(*e), e);
    case Expr::Kind::Select: return visit(static_cast<const Select&>(*e), e);
    case Expr::Kind::Cast: return visit(static_cast<const Cast&>(*e), e);
    case Expr::Kind::Load: return visit(static_cast<const Load&>(*e), e);
    case Expr::Kind::Index: return visit(static_cast<const IndexOp&>(*e), e);
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(e->kind);
}

void IRMutator::mutate(Stmt& s) {
  switch (s.kind) {
    case Stmt::Kind::Block: return visit(static_cast<Block&>(s));
    case Stmt::Kind::For: return visit(static_cast<For&>(s));
    case Stmt::Kind::If: return visit(static_cast<If&>(s));
    case Stmt::Kind::Store: return visit(static_cast<Store&>(s));
    case Stmt::Kind::Allocate: return visit(static_cast<Allocate&>(s));
    case Stmt::Kind::Sync: return visit(static_cast<Sync&>(s));
    case Stmt::Kind::Comment: return visit(static_cast<Comment&>(s));
    case Stmt::Kind::BlockReduce: return visit(static_cast<BlockReduce&>(s));
    case Stmt::Kind::GridReduce: return visit(static_cast<GridReduce&>(s));
    case Stmt::Kind::AsyncGroup: return visit(static_cast<AsyncGroup&>(s));
    case Stmt::Kind::MmaTile: return visit(static_cast<MmaTile&>(s));
  }
  internal_error << "kir: unknown statement kind " << static_cast<int>(s.kind);
}

void IRMutator::mutate_body(std::vector<StmtP>& body) {
  for (StmtP& s : body) mutate(*s);
}

ExprP IRMutator::visit(const Unary& e, const ExprP& self) {
  ExprP a = mutate(e.a);
  return a == e.a ? self : Expr::unary(e.op, a, e.dtype);
}
ExprP IRMutator::visit(const Binary& e, const ExprP& self) {
  ExprP a = mutate(e.a), b = mutate(e.b);
  return a == e.a && b == e.b ? self : Expr::binary(e.op, a, b, e.dtype);
}
ExprP IRMutator::visit(const Select& e, const ExprP& self) {
  ExprP c = mutate(e.cond), t = mutate(e.true_value), f = mutate(e.false_value);
  return c == e.cond && t == e.true_value && f == e.false_value ? self
                                                                : Expr::select(c, t, f, e.dtype);
}
ExprP IRMutator::visit(const Cast& e, const ExprP& self) {
  ExprP v = mutate(e.value);
  return v == e.value ? self : Expr::cast(v, e.dtype);
}
ExprP IRMutator::visit(const Load& e, const ExprP& self) {
  ExprP i = mutate(e.index);
  return i == e.index ? self : Expr::load(e.buffer, i, e.cache);
}
ExprP IRMutator::visit(const IndexOp& e, const ExprP& self) {
  ExprP a = mutate(e.a), b = mutate(e.b);
  return a == e.a && b == e.b ? self : Expr::index_op(e.op, a, b);
}

void IRMutator::visit(Block& s) { mutate_body(s.body); }
void IRMutator::visit(For& s) {
  s.extent = mutate(s.extent);
  mutate_body(s.body);
}
void IRMutator::visit(If& s) {
  s.cond = mutate(s.cond);
  mutate_body(s.then_body);
  mutate_body(s.else_body);
}
void IRMutator::visit(Store& s) {
  s.index = mutate(s.index);
  s.value = mutate(s.value);
  s.src_valid = mutate(s.src_valid);
}
void IRMutator::visit(BlockReduce& s) {
  s.index = mutate(s.index);
  s.identity = mutate(s.identity);
  s.participate = mutate(s.participate);
}
void IRMutator::visit(MmaTile& s) {
  for (ExprP& e : s.acc_index) e = mutate(e);
  for (ExprP& e : s.acc_valid) e = mutate(e);
  for (auto* xs : {&s.a, &s.a_valid})
    for (ExprP& e : *xs) e = mutate(e);
  for (auto* xs : {&s.b, &s.b_valid})
    for (ExprP& e : *xs) e = mutate(e);
  for (ExprP* e : {&s.a_row, &s.a_full, &s.b_row, &s.b_full})
    if (*e) *e = mutate(*e);
}
void IRMutator::visit(GridReduce& s) {
  for (ExprP* e : {&s.index, &s.out_index, &s.identity, &s.participate, &s.element, &s.block,
                   &s.blocks, &s.valid})
    *e = mutate(*e);
}

bool reads_var(const ExprP& e, const std::string& name) {
  return any_expr(e, [&](const Expr& x) {
    const auto* v = x.as<Var>();
    return v && v->name == name;
  });
}

void conjuncts(const ExprP& c, std::vector<ExprP>& out) {
  const auto* op = c->as<IndexOp>();
  if (op && op->op == IndexOpType::And) {
    conjuncts(op->a, out);
    conjuncts(op->b, out);
  } else {
    out.push_back(c);
  }
}

// ---- queries -------------------------------------------------------------------

namespace {
/// Visits every expression node, stopping early once `pred` held.
class AnyExpr : public IRVisitor {
 public:
  explicit AnyExpr(const std::function<bool(const Expr&)>& pred) : pred_(pred) {}
  bool found = false;

 protected:
  using IRVisitor::visit;
  bool hit(const Expr& e) {
    found = found || pred_(e);
    return found;
  }
  void visit(const IntImm& e) override { hit(e); }
  void visit(const FloatImm& e) override { hit(e); }
  void visit(const BoolImm& e) override { hit(e); }
  void visit(const Var& e) override { hit(e); }
  void visit(const Builtin& e) override { hit(e); }
  void visit(const TensorDim& e) override { hit(e); }
  void visit(const Unary& e) override { if (!hit(e)) IRVisitor::visit(e); }
  void visit(const Binary& e) override { if (!hit(e)) IRVisitor::visit(e); }
  void visit(const Select& e) override { if (!hit(e)) IRVisitor::visit(e); }
  void visit(const Cast& e) override { if (!hit(e)) IRVisitor::visit(e); }
  void visit(const Load& e) override { if (!hit(e)) IRVisitor::visit(e); }
  void visit(const IndexOp& e) override { if (!hit(e)) IRVisitor::visit(e); }

 private:
  const std::function<bool(const Expr&)>& pred_;
};

class AnyStmt : public IRVisitor {
 public:
  explicit AnyStmt(const std::function<bool(const Stmt&)>& pred) : pred_(pred) {}
  bool found = false;

 protected:
  using IRVisitor::visit;
  // Expressions hold no statements.
  void visit(const Unary&) override {}
  void visit(const Binary&) override {}
  void visit(const Select&) override {}
  void visit(const Cast&) override {}
  void visit(const Load&) override {}
  void visit(const IndexOp&) override {}
  bool hit(const Stmt& s) {
    found = found || pred_(s);
    return found;
  }
  void visit(const Block& s) override { if (!hit(s)) IRVisitor::visit(s); }
  void visit(const For& s) override { if (!hit(s)) IRVisitor::visit(s); }
  void visit(const If& s) override { if (!hit(s)) IRVisitor::visit(s); }
  void visit(const Store& s) override { hit(s); }
  void visit(const Allocate& s) override { hit(s); }
  void visit(const Sync& s) override { hit(s); }
  void visit(const AsyncGroup& s) override { hit(s); }
  void visit(const MmaTile& s) override { hit(s); }
  void visit(const Comment& s) override { hit(s); }
  void visit(const BlockReduce& s) override { hit(s); }
  void visit(const GridReduce& s) override { hit(s); }

 private:
  const std::function<bool(const Stmt&)>& pred_;
};
}  // namespace

bool any_expr(const ExprP& e, const std::function<bool(const Expr&)>& pred) {
  AnyExpr v(pred);
  v.include(e);
  return v.found;
}

bool any_expr(const Stmt& s, const std::function<bool(const Expr&)>& pred) {
  AnyExpr v(pred);
  v.include(s);
  return v.found;
}

bool any_stmt(const Stmt& s, const std::function<bool(const Stmt&)>& pred) {
  AnyStmt v(pred);
  v.include(s);
  return v.found;
}

}  // namespace schedlab::kir
