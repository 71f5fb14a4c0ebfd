// schedlab/lower: walking and rewriting the kernel IR (Halide's IRVisitor and
// IRMutator are the model).
//
// IRVisitor walks expressions and statements read-only; IRMutator rebuilds
// expressions bottom-up and rewrites statements in place. Each has one
// virtual visit per node type whose default visits the node's children, so
// a pass overrides only the nodes it cares about.
#pragma once

#include <functional>
#include <vector>

#include "schedlab/lower/kir.h"

namespace schedlab::kir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  /// Dispatches on the node's kind (a null expression is skipped).
  void include(const ExprP& e);
  void include(const Stmt& s);
  void include(const std::vector<StmtP>& body);

 protected:
  virtual void visit(const IntImm&) {}
  virtual void visit(const FloatImm&) {}
  virtual void visit(const BoolImm&) {}
  virtual void visit(const Var&) {}
  virtual void visit(const Builtin&) {}
  virtual void visit(const TensorDim&) {}
  virtual void visit(const Unary& e);
  virtual void visit(const Binary& e);
  virtual void visit(const Select& e);
  virtual void visit(const Cast& e);
  virtual void visit(const Load& e);
  virtual void visit(const IndexOp& e);

  virtual void visit(const Block& s);
  virtual void visit(const For& s);
  virtual void visit(const If& s);
  virtual void visit(const Store& s);
  virtual void visit(const Allocate&) {}
  virtual void visit(const Sync&) {}
  virtual void visit(const AsyncGroup&) {}
  virtual void visit(const Comment&) {}
  virtual void visit(const BlockReduce& s);
  virtual void visit(const MmaTile& s);
  virtual void visit(const GridReduce& s);
};

/// Expressions: each visit returns its node's replacement; the defaults
/// rebuild a node only when a child changed (an IndexOp through
/// Expr::index_op, so it folds again), so an unchanged tree comes back as
/// the same pointer. Statements: rewritten in place, their expressions
/// through mutate(ExprP), their statement lists through mutate_body, which a
/// pass overrides to insert, drop or replace statements.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  /// Dispatches on the node's kind (null stays null). Virtual so that a
  /// mutator may replace whole subtrees before dispatch (kir::substitute).
  virtual ExprP mutate(const ExprP& e);
  void mutate(Stmt& s);
  /// Every statement of the list, in order.
  virtual void mutate_body(std::vector<StmtP>& body);

 protected:
  virtual ExprP visit(const IntImm&, const ExprP& self) { return self; }
  virtual ExprP visit(const FloatImm&, const ExprP& self) { return self; }
  virtual ExprP visit(const BoolImm&, const ExprP& self) { return self; }
  virtual ExprP visit(const Var&, const ExprP& self) { return self; }
  virtual ExprP visit(const Builtin&, const ExprP& self) { return self; }
  virtual ExprP visit(const TensorDim&, const ExprP& self) { return self; }
  virtual ExprP visit(const Unary& e, const ExprP& self);
  virtual ExprP visit(const Binary& e, const ExprP& self);
  virtual ExprP visit(const Select& e, const ExprP& self);
  virtual ExprP visit(const Cast& e, const ExprP& self);
  virtual ExprP visit(const Load& e, const ExprP& self);
  virtual ExprP visit(const IndexOp& e, const ExprP& self);

  virtual void visit(Block& s);
  virtual void visit(For& s);
  virtual void visit(If& s);
  virtual void visit(Store& s);
  virtual void visit(Allocate&) {}
  virtual void visit(Sync&) {}
  virtual void visit(AsyncGroup&) {}
  virtual void visit(Comment&) {}
  virtual void visit(BlockReduce& s);
  virtual void visit(MmaTile& s);
  virtual void visit(GridReduce& s);
};

/// Whether e reads the Var named `name`.
bool reads_var(const ExprP& e, const std::string& name);

/// Appends the atoms of the conjunction c (c split on &&) to out.
void conjuncts(const ExprP& c, std::vector<ExprP>& out);

/// Whether any node of e (or of s, expressions included) satisfies `pred`.
bool any_expr(const ExprP& e, const std::function<bool(const Expr&)>& pred);
bool any_expr(const Stmt& s, const std::function<bool(const Expr&)>& pred);
/// Whether s is or contains a statement satisfying `pred`.
bool any_stmt(const Stmt& s, const std::function<bool(const Stmt&)>& pred);

}  // namespace schedlab::kir
