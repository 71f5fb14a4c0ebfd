// Unswitch: hoist a loop nest's predicates to one check before it.
#include "unswitch.h"

#include <set>
#include <unordered_set>

#include "schedlab/lower/kir_equality.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::lower {

namespace {

using kir::Expr;
using kir::ExprP;
using kir::IndexOp;
using kir::IndexOpType;
using kir::Stmt;
using kir::StmtP;

bool mentions(const ExprP& e, const std::set<std::string>& vars) {
  return kir::any_expr(e, [&](const Expr& x) {
    const auto* v = x.as<kir::Var>();
    return v && vars.count(v->name) > 0;
  });
}

/// Non-decreasing in every variable of `vars` (all of which are >= 0).
bool monotone(const ExprP& e, const std::set<std::string>& vars) {
  if (!mentions(e, vars) || e->as<kir::Var>()) return true;
  const auto* op = e->as<IndexOp>();
  if (!op) return false;
  switch (op->op) {
    case IndexOpType::Add:
    case IndexOpType::Mul: return monotone(op->a, vars) && monotone(op->b, vars);
    case IndexOpType::Div:
    case IndexOpType::CeilDiv: return monotone(op->a, vars) && !mentions(op->b, vars);
    default: return false;  // %, and the predicates
  }
}

/// The loop variables (with their last value) and predicates of a nest, and
/// whether it touches Shared memory or holds a block or grid reduction.
class Scan : public kir::IRVisitor {
 public:
  std::map<std::string, ExprP> last;
  std::vector<ExprP> conds;
  bool blocked = false;

 protected:
  using kir::IRVisitor::visit;
  void visit(const kir::For& s) override {
    last[s.var] = s.extent + Expr::integer(-1);
    kir::IRVisitor::visit(s);
  }
  void visit(const kir::If& s) override {
    conds.push_back(s.cond);
    kir::IRVisitor::visit(s);
  }
  // A block reduction synchronizes the block; in a grid reduction one thread
  // per group arrives once.
  void visit(const kir::BlockReduce&) override { blocked = true; }
  void visit(const kir::GridReduce&) override { blocked = true; }
  void visit(const kir::MmaTile&) override { blocked = true; }  // a warp collective
  void visit(const kir::Store& s) override {
    blocked |= s.buffer->memory == ir::MemoryType::Shared;
    kir::IRVisitor::visit(s);
  }
  void visit(const kir::Load& e) override {
    blocked |= e.buffer->memory == ir::MemoryType::Shared;
    kir::IRVisitor::visit(e);
  }
};

/// Removes every If of a nest, splicing its body in its place.
class StripPredicates : public kir::IRMutator {
 protected:
  void mutate_body(std::vector<StmtP>& body) override {
    std::vector<StmtP> out;
    for (auto& c : body) {
      mutate(*c);
      if (auto* i = c->as<kir::If>()) {
        for (auto& g : i->then_body) out.push_back(std::move(g));
      } else {
        out.push_back(std::move(c));
      }
    }
    body = std::move(out);
  }
};

/// The check that lets `loop` run without its predicates: the conjunction of
/// its predicates' atoms at the loop variables' last values, or null when
/// that would be wrong (an atom that is not `monotone < invariant`).
ExprP hoisted_check(const Scan& scan) {
  std::set<std::string> vars;
  for (const auto& [v, e] : scan.last) vars.insert(v);
  ExprP hoisted = Expr::boolean(true);
  // Every store of a nest carries the same bound checks: each once.
  std::unordered_set<ExprP, kir::ExprHash, kir::ExprEqual> seen;
  for (const ExprP& cond : scan.conds) {
    std::vector<ExprP> as;
    kir::conjuncts(cond, as);
    for (const ExprP& a : as) {
      const auto* lt = a->as<IndexOp>();
      if (!lt || lt->op != IndexOpType::Lt || !monotone(lt->a, vars) || mentions(lt->b, vars))
        return nullptr;
      if (seen.insert(a).second) hoisted = hoisted && kir::substitute(a, scan.last);
    }
  }
  return hoisted;
}

/// Replaces each unswitched loop nest by `if (check) nest-without-predicates
/// else nest`.
class Unswitch : public kir::IRMutator {
 protected:
  void mutate_body(std::vector<StmtP>& body) override {
    for (StmtP& c : body) {
      mutate(*c);
      auto* loop = c->as<kir::For>();
      if (!loop || !loop->unswitch) continue;
      Scan scan;
      scan.include(*loop);
      if (scan.blocked || scan.conds.empty()) continue;
      ExprP check = hoisted_check(scan);
      if (!check) continue;
      StmtP fast = loop->clone();
      StripPredicates().mutate(*fast);
      fast->as<kir::For>()->unswitch = false;
      loop->unswitch = false;
      auto branch = kir::If::make(check);
      branch->then_body.push_back(std::move(fast));
      branch->else_body.push_back(std::move(c));
      c = std::move(branch);
    }
  }
};

}  // namespace

void unswitch_loops(kir::Kernel& kernel) { Unswitch().mutate(*kernel.body); }

}  // namespace schedlab::lower
