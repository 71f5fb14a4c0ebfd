// Unswitch: hoist a loop nest's predicates to one check before it.
#include "unswitch.h"

#include <set>

namespace schedlab::lower {

namespace {

using kir::Expr;
using kir::ExprP;
using kir::Stmt;
using kir::StmtP;

bool mentions(const ExprP& e, const std::set<std::string>& vars) {
  if (!e) return false;
  if (e->kind == Expr::Kind::Var) return vars.count(e->name) > 0;
  for (const auto& a : e->args)
    if (mentions(a, vars)) return true;
  return false;
}

/// Non-decreasing in every variable of `vars` (all of which are >= 0).
bool monotone(const ExprP& e, const std::set<std::string>& vars) {
  if (!mentions(e, vars)) return true;
  if (e->kind == Expr::Kind::Var) return true;
  if (e->kind != Expr::Kind::IntOp) return false;
  const std::string& op = e->name;
  if (op == "+" || op == "*") return monotone(e->args[0], vars) && monotone(e->args[1], vars);
  if (op == "/" || op == "ceilDiv")
    return monotone(e->args[0], vars) && !mentions(e->args[1], vars);
  return false;  // %, and anything else
}

/// Collects the loop variables (with their last value) and predicates of a
/// nest; true if the nest touches Shared memory or has a block reduction.
bool scan(const Stmt& s, std::map<std::string, ExprP>& last, std::vector<ExprP>& conds) {
  bool shared = false;
  auto touches_shared = [](const ExprP& e) {
    std::vector<ExprP> stack{e};
    while (!stack.empty()) {
      ExprP x = stack.back();
      stack.pop_back();
      if (!x) continue;
      if (x->kind == Expr::Kind::Load && x->buffer->memory == ir::MemoryType::Shared) return true;
      for (const auto& a : x->args) stack.push_back(a);
    }
    return false;
  };
  if (s.kind == Stmt::Kind::For) last[s.var] = s.extent + Expr::integer(-1);
  if (s.kind == Stmt::Kind::If) conds.push_back(s.cond);
  if (s.kind == Stmt::Kind::BlockReduce) return true;  // synchronizes the block
  if (s.kind == Stmt::Kind::GridReduce) return true;   // one thread per group arrives once
  if (s.kind == Stmt::Kind::Store)
    shared |= s.buffer->memory == ir::MemoryType::Shared || touches_shared(s.value) ||
              touches_shared(s.index);
  for (const auto& c : s.body) shared |= scan(*c, last, conds);
  return shared;
}

/// Removes every If, splicing its body in its place.
void strip_predicates(Stmt& s) {
  std::vector<StmtP> out;
  for (auto& c : s.body) {
    strip_predicates(*c);
    if (c->kind == Stmt::Kind::If) {
      for (auto& g : c->body) out.push_back(std::move(g));
    } else {
      out.push_back(std::move(c));
    }
  }
  s.body = std::move(out);
}

/// The conjunction of the atoms of `c` (split on &&).
void atoms(const ExprP& c, std::vector<ExprP>& out) {
  if (c->kind == Expr::Kind::IntOp && c->name == "&&") {
    atoms(c->args[0], out);
    atoms(c->args[1], out);
  } else {
    out.push_back(c);
  }
}

/// A structural key, to drop repeated atoms (every store of a nest carries
/// the same bound checks).
std::string key(const ExprP& e) {
  std::string k = std::to_string(static_cast<int>(e->kind)) + ":" + e->name + ":" +
                  std::to_string(e->i) + ":" + std::to_string(e->op) + "(";
  for (const auto& a : e->args) k += key(a) + ",";
  return k + ")";
}

void visit(Stmt& s) {
  for (auto& c : s.body) {
    visit(*c);
    if (c->kind != Stmt::Kind::For || !c->unswitch) continue;
    std::map<std::string, ExprP> last;
    std::vector<ExprP> conds;
    if (scan(*c, last, conds) || conds.empty()) continue;
    std::set<std::string> vars;
    for (const auto& [v, e] : last) vars.insert(v);
    ExprP hoisted = Expr::boolean(true);
    std::set<std::string> seen;
    bool ok = true;
    for (const ExprP& cond : conds) {
      std::vector<ExprP> as;
      atoms(cond, as);
      for (const ExprP& a : as) {
        bool lt = a->kind == Expr::Kind::IntOp && a->name == "<";
        if (!lt || !monotone(a->args[0], vars) || mentions(a->args[1], vars)) {
          ok = false;
          break;
        }
        if (seen.insert(key(a)).second) hoisted = hoisted && kir::substitute(a, last);
      }
      if (!ok) break;
    }
    if (!ok) continue;
    StmtP fast = c->clone();
    strip_predicates(*fast);
    fast->unswitch = false;
    c->unswitch = false;
    StmtP branch = Stmt::if_then(hoisted);
    branch->body.push_back(std::move(fast));
    branch->else_body.push_back(std::move(c));
    c = std::move(branch);
  }
}

}  // namespace

void unswitch_loops(kir::Kernel& kernel) { visit(*kernel.body); }

}  // namespace schedlab::lower
