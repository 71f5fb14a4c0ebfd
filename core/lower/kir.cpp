#include "schedlab/lower/kir.h"

#include "schedlab/base/error.h"

namespace schedlab::kir {

namespace {
ExprP make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }
Expr node(Expr::Kind k, ir::DataType t, int64_t i = 0) {
  Expr e;
  e.kind = k;
  e.dtype = t;
  e.i = i;
  return e;
}
StmtP stmt(Stmt::Kind k) {
  StmtP s(new Stmt);
  s->kind = k;
  return s;
}
}  // namespace

ExprP Expr::integer(int64_t v) { return make(node(Kind::Int, ir::DataType::I64, v)); }
ExprP Expr::boolean(bool v) { return make(node(Kind::Bool, ir::DataType::Bool, v ? 1 : 0)); }
ExprP Expr::floating(double v, ir::DataType t) {
  Expr e = node(Kind::Float, t);
  e.f = v;
  return make(std::move(e));
}
ExprP Expr::var(std::string name, ir::DataType t) {
  Expr e = node(Kind::Var, t);
  e.name = std::move(name);
  return make(std::move(e));
}
ExprP Expr::unary(ir::UnaryOpType op, ExprP a, ir::DataType t) {
  Expr e = node(Kind::Unary, t);
  e.op = static_cast<int>(op);
  e.args = {std::move(a)};
  return make(std::move(e));
}
ExprP Expr::binary(ir::BinaryOpType op, ExprP a, ExprP b, ir::DataType t) {
  Expr e = node(Kind::Binary, t);
  e.op = static_cast<int>(op);
  e.args = {std::move(a), std::move(b)};
  return make(std::move(e));
}
ExprP Expr::select(ExprP c, ExprP a, ExprP b, ir::DataType t) {
  Expr e = node(Kind::Select, t);
  e.args = {std::move(c), std::move(a), std::move(b)};
  return make(std::move(e));
}
ExprP Expr::cast(ExprP a, ir::DataType t) {
  Expr e = node(Kind::Cast, t);
  e.args = {std::move(a)};
  return make(std::move(e));
}
ExprP Expr::load(const Buffer* b, ExprP index) {
  Expr e = node(Kind::Load, b->dtype);
  e.buffer = b;
  e.args = {std::move(index)};
  return make(std::move(e));
}

ExprP Expr::int_op(const std::string& op, ExprP a, ExprP b) {
  const bool ai = a->kind == Kind::Int, bi = b->kind == Kind::Int;
  if (op == "+") {
    if (ai && bi) return integer(a->i + b->i);
    if (a->is_int(0)) return b;
    if (b->is_int(0)) return a;
  } else if (op == "*") {
    if (ai && bi) return integer(a->i * b->i);
    if (a->is_int(0) || b->is_int(0)) return integer(0);
    if (a->is_int(1)) return b;
    if (b->is_int(1)) return a;
  } else if (op == "/") {
    if (ai && bi) return integer(a->i / b->i);
    if (b->is_int(1) || a->is_int(0)) return a;
  } else if (op == "%") {
    if (ai && bi) return integer(a->i % b->i);
    if (b->is_int(1) || a->is_int(0)) return integer(0);
  } else if (op == "<") {
    if (ai && bi) return boolean(a->i < b->i);
  } else if (op == "&&") {
    if (a->kind == Kind::Bool) return a->i ? b : a;
    if (b->kind == Kind::Bool) return b->i ? a : b;
  } else if (op == "ceilDiv") {
    if (ai && bi) return integer((a->i + b->i - 1) / b->i);
    if (b->is_int(1)) return a;
  } else {
    internal_error << "unknown index operator " << op;
  }
  Expr e = node(Kind::IntOp, (op == "<" || op == "&&") ? ir::DataType::Bool : ir::DataType::I64);
  e.name = op;
  e.args = {std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprP operator+(ExprP a, ExprP b) { return Expr::int_op("+", std::move(a), std::move(b)); }
ExprP operator*(ExprP a, ExprP b) { return Expr::int_op("*", std::move(a), std::move(b)); }
ExprP operator/(ExprP a, ExprP b) { return Expr::int_op("/", std::move(a), std::move(b)); }
ExprP operator%(ExprP a, ExprP b) { return Expr::int_op("%", std::move(a), std::move(b)); }
ExprP operator<(ExprP a, ExprP b) { return Expr::int_op("<", std::move(a), std::move(b)); }
ExprP operator&&(ExprP a, ExprP b) { return Expr::int_op("&&", std::move(a), std::move(b)); }

StmtP Stmt::block() { return stmt(Kind::Block); }
StmtP Stmt::for_loop(std::string var, ExprP extent, bool unroll) {
  StmtP s = stmt(Kind::For);
  s->var = std::move(var);
  s->extent = std::move(extent);
  s->unroll = unroll;
  return s;
}
StmtP Stmt::if_then(ExprP cond) {
  StmtP s = stmt(Kind::If);
  s->cond = std::move(cond);
  return s;
}
StmtP Stmt::store(const Buffer* b, ExprP index, ExprP value) {
  StmtP s = stmt(Kind::Store);
  s->buffer = b;
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}
StmtP Stmt::allocate(const Buffer* b) {
  StmtP s = stmt(Kind::Allocate);
  s->buffer = b;
  return s;
}
StmtP Stmt::sync() { return stmt(Kind::Sync); }
StmtP Stmt::comment(std::string text) {
  StmtP s = stmt(Kind::Comment);
  s->text = std::move(text);
  return s;
}

StmtP Stmt::block_reduce(const Buffer* b, ExprP index, ir::ReductionOpType op, ExprP identity,
                         ExprP participate, std::array<bool, 3> dims, int64_t workspace) {
  internal_assert(b->memory == ir::MemoryType::Local && !b->is_param)
      << "a block reduction works on a register buffer, not " << b->name;
  StmtP s = stmt(Kind::BlockReduce);
  s->buffer = b;
  s->index = std::move(index);
  s->value = std::move(identity);
  s->cond = std::move(participate);
  s->reduce_op = static_cast<int>(op);
  s->reduce_dims = dims;
  s->workspace = workspace;
  return s;
}

StmtP Stmt::grid_reduce(const Buffer* b, ExprP index, const Buffer* out, ExprP out_index,
                        ir::ReductionOpType op, ExprP identity, ExprP participate,
                        const Buffer* partials, const Buffer* semaphores, std::vector<ExprP> grid) {
  internal_assert(b->memory == ir::MemoryType::Local && !b->is_param && out->is_param &&
                  grid.size() == 3)
      << "a grid reduction combines a register partial into a parameter, not " << b->name;
  StmtP s = stmt(Kind::GridReduce);
  s->buffer = b;
  s->index = std::move(index);
  s->out = out;
  s->out_index = std::move(out_index);
  s->value = std::move(identity);
  s->cond = std::move(participate);
  s->reduce_op = static_cast<int>(op);
  s->workspaces = {partials, semaphores};
  s->grid = std::move(grid);
  return s;
}

StmtP Stmt::clone() const {
  StmtP s = stmt(kind);
  s->var = var;
  s->extent = extent;
  s->unroll = unroll;
  s->unswitch = unswitch;
  s->cond = cond;
  s->buffer = buffer;
  s->index = index;
  s->value = value;
  s->vector = vector;
  s->text = text;
  s->reduce_op = reduce_op;
  s->reduce_dims = reduce_dims;
  s->workspace = workspace;
  s->out = out;
  s->out_index = out_index;
  s->workspaces = workspaces;
  s->grid = grid;
  for (const auto& c : body) s->body.push_back(c->clone());
  for (const auto& c : else_body) s->else_body.push_back(c->clone());
  return s;
}

ExprP substitute(const ExprP& e, const std::map<std::string, ExprP>& values) {
  if (!e) return e;
  if (e->kind == Expr::Kind::Var) {
    auto it = values.find(e->name);
    return it == values.end() ? e : it->second;
  }
  if (e->args.empty()) return e;
  std::vector<ExprP> args;
  bool changed = false;
  for (const auto& a : e->args) {
    args.push_back(substitute(a, values));
    changed |= args.back() != a;
  }
  if (!changed) return e;
  if (e->kind == Expr::Kind::IntOp) return Expr::int_op(e->name, args[0], args[1]);
  Expr copy = *e;
  copy.args = std::move(args);
  return make(std::move(copy));
}

}  // namespace schedlab::kir
