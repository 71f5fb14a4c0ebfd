// Index simplification; see simplify.h for the rules and why they hold.
#include "simplify.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_equality.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::lower {

namespace {

using kir::Expr;
using kir::ExprP;
using kir::IndexOp;
using kir::IndexOpType;
using kir::StmtP;

/// Beyond any index value: bounds saturate here, so no arithmetic overflows.
constexpr int64_t kInf = int64_t{1} << 62;

int64_t clamp(__int128 v) {
  return v > kInf ? kInf : v < -kInf ? -kInf : static_cast<int64_t>(v);
}

/// [lo, hi], inclusive; ±kInf where unknown.
struct Interval {
  int64_t lo = -kInf, hi = kInf;
  bool nonneg() const { return lo >= 0; }
  bool below(int64_t c) const { return lo >= 0 && hi < c; }  ///< within [0, c)
  static Interval point(int64_t v) { return {v, v}; }
};

Interval add(Interval a, Interval b) {
  return {clamp(__int128(a.lo) + b.lo), clamp(__int128(a.hi) + b.hi)};
}

Interval mul(Interval a, Interval b) {
  const __int128 c[] = {__int128(a.lo) * b.lo, __int128(a.lo) * b.hi, __int128(a.hi) * b.lo,
                        __int128(a.hi) * b.hi};
  return {clamp(*std::min_element(std::begin(c), std::end(c))),
          clamp(*std::max_element(std::begin(c), std::end(c)))};
}

/// a / b and a % b for a >= 0, b >= 1 (C's truncation is then floor).
Interval div(Interval a, Interval b) { return {a.lo / std::max<int64_t>(b.hi, 1), a.hi / std::max<int64_t>(b.lo, 1)}; }
Interval mod(Interval a, Interval b) {
  if (a.below(b.lo)) return a;
  return {0, std::min(a.hi, b.hi - 1)};
}

/// a ^ b for a, b >= 0: below the next power of two past both (the XOR sets
/// no higher bit than either operand has); unknown for a negative operand.
Interval xor_bounds(Interval a, Interval b) {
  if (!a.nonneg() || !b.nonneg()) return {};
  const int64_t hi = std::max(a.hi, b.hi);
  if (hi >= kInf) return {0, kInf};
  int64_t p = 1;
  while (p <= hi) p *= 2;
  return {0, p - 1};
}

/// A sum of terms times constant coefficients plus a constant; terms are
/// keyed by their structure (kir_equality.h), so equal terms collect, in
/// kir::compare's canonical order.
struct Linear {
  struct Term {
    ExprP e;
    int64_t coeff;
  };
  kir::OrderedExprMap<Term> terms;
  int64_t constant = 0;

  void add_term(const ExprP& e, int64_t c) {
    if (c == 0) return;
    auto [it, fresh] = terms.try_emplace(e, Term{e, c});
    if (!fresh && (it->second.coeff += c) == 0) terms.erase(it);
  }
};

/// A variable to the simplifier: a loop variable, a built-in or a tensor
/// size (or its quotient); each has an interval (Simplifier::bound_of).
bool is_atom(const ExprP& e) {
  return e->as<kir::Var>() || e->as<kir::Builtin>() || e->as<kir::TensorDim>();
}

/// The value of a variable with one possible value, or of a constant.
std::optional<int64_t> constant_of(const ExprP& e) {
  if (const auto* i = e->as<kir::IntImm>()) return i->value;
  return std::nullopt;
}

class Simplifier : public kir::IRMutator {
 public:
  Simplifier(const kir::Kernel& k, const std::array<int64_t, 3>& grid) {
    using P = ir::ParallelType;
    static constexpr P kThreads[] = {P::TIDx, P::TIDy, P::TIDz};
    static constexpr P kBlocks[] = {P::BIDx, P::BIDy, P::BIDz};
    for (size_t d = 0; d < 3; ++d) {
      const int64_t b = k.static_block[d], g = grid[d];
      bounds_[Expr::launch_index(kThreads[d])] = b > 0 ? Interval{0, b - 1} : Interval{0, 1023};
      bounds_[Expr::launch_extent(kThreads[d])] = b > 0 ? Interval::point(b) : Interval{1, 1024};
      bounds_[Expr::launch_index(kBlocks[d])] =
          g > 0 ? Interval{0, g - 1} : Interval{0, (int64_t{1} << 31) - 1};
      bounds_[Expr::launch_extent(kBlocks[d])] =
          g > 0 ? Interval::point(g) : Interval{1, (int64_t{1} << 31) - 1};
    }
  }

 protected:
  using kir::IRMutator::visit;

  ExprP visit(const kir::Var&, const ExprP& self) override { return known(self); }
  ExprP visit(const kir::Builtin&, const ExprP& self) override { return known(self); }
  ExprP visit(const kir::TensorDim&, const ExprP& self) override { return known(self); }

  ExprP visit(const kir::Cast& e, const ExprP& self) override {
    ExprP v = mutate(e.value);
    if (auto c = constant_of(v); c && ir::is_float(e.dtype))
      return Expr::floating(static_cast<double>(*c), e.dtype);
    return v == e.value ? self : Expr::cast(v, e.dtype);
  }

  ExprP visit(const kir::Select& e, const ExprP& self) override {
    ExprP c = mutate(e.cond);
    if (const auto* b = c->as<kir::BoolImm>()) return mutate(b->value ? e.true_value : e.false_value);
    ExprP t = mutate(e.true_value), f = mutate(e.false_value);
    if (c == e.cond && t == e.true_value && f == e.false_value) return self;
    return Expr::select(c, t, f, e.dtype);
  }

  ExprP visit(const IndexOp& e, const ExprP& self) override {
    ExprP a = mutate(e.a), b = mutate(e.b);
    switch (e.op) {
      case IndexOpType::Add:
      case IndexOpType::Mul: return rebuild(linear(Expr::index_op(e.op, a, b)));
      case IndexOpType::Div:
      case IndexOpType::Mod: return divide(e.op, a, b);
      case IndexOpType::Lt: {
        Linear d = linear(a);
        Linear nb = linear(b);
        for (auto& [k, t] : nb.terms) d.add_term(t.e, -t.coeff);
        d.constant -= nb.constant;
        Interval r = bounds(d);
        if (r.hi < 0) return Expr::boolean(true);
        if (r.lo >= 0) return Expr::boolean(false);
        if (ExprP n = reduce_comparison(d)) return n;
        return a == e.a && b == e.b ? self : Expr::index_op(e.op, a, b);
      }
      case IndexOpType::And: {
        // Flattened, each atom once.
        std::vector<ExprP> atoms;
        kir::conjuncts(a, atoms);
        kir::conjuncts(b, atoms);
        ExprP r = Expr::boolean(true);
        std::vector<ExprP> seen;
        for (const ExprP& x : atoms) {
          if (const auto* bi = x->as<kir::BoolImm>()) {
            if (!bi->value) return x;
            continue;
          }
          if (std::any_of(seen.begin(), seen.end(),
                          [&](const ExprP& y) { return kir::equal(x, y); }))
            continue;
          seen.push_back(x);
          r = r && x;
        }
        return r;
      }
      case IndexOpType::CeilDiv: {
        auto ca = constant_of(a), cb = constant_of(b);
        if (ca && cb && *cb > 0) return Expr::integer((*ca + *cb - 1) / *cb);
        if (ExprP q = exact_ceil_div(a, cb)) return q;
        return a == e.a && b == e.b ? self : Expr::index_op(e.op, a, b);
      }
      case IndexOpType::Xor:  // folded by index_op (constants, ^ 0); nothing else
        return a == e.a && b == e.b ? self : Expr::index_op(e.op, a, b);
    }
    internal_error << "simplify: unknown index operator " << static_cast<int>(e.op);
  }

  void visit(kir::For& s) override {
    s.extent = mutate(s.extent);
    Interval ext = bounds(s.extent);
    const ExprP var = Expr::var(s.var);
    Interval saved = scope(var, {0, std::max<int64_t>(ext.hi - 1, 0)});
    mutate_body(s.body);
    restore(var, saved);
  }

  void visit(kir::If& s) override {
    s.cond = mutate(s.cond);
    // Inside the branch, `v < e` bounds v by e.
    std::vector<ExprP> atoms;
    kir::conjuncts(s.cond, atoms);
    std::vector<std::pair<ExprP, Interval>> saved;
    const size_t facts = below_.size();
    for (const ExprP& x : atoms) {
      const auto* lt = x->as<IndexOp>();
      if (!lt || lt->op != IndexOpType::Lt || !is_atom(lt->a)) continue;
      const ExprP& v = lt->a;
      below_.emplace_back(v, lt->b);
      Interval cur = bound_of(v);
      Interval lim = bounds(linear(lt->b));
      if (lim.hi - 1 >= cur.hi) continue;
      saved.emplace_back(v, scope(v, {cur.lo, lim.hi - 1}));
    }
    mutate_body(s.then_body);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) restore(it->first, it->second);
    below_.resize(facts);
    mutate_body(s.else_body);
  }

  void mutate_body(std::vector<StmtP>& body) override {
    std::vector<StmtP> out;
    for (StmtP& c : body) {
      mutate(*c);
      if (auto* i = c->as<kir::If>()) {
        if (const auto* b = i->cond->as<kir::BoolImm>()) {
          for (StmtP& x : b->value ? i->then_body : i->else_body) out.push_back(std::move(x));
          continue;
        }
      } else if (auto* f = c->as<kir::For>()) {
        if (auto n = constant_of(f->extent); n && *n <= 1) {
          // The body was simplified with the variable at its one value, 0.
          if (*n == 1)
            for (StmtP& x : f->body) out.push_back(std::move(x));
          continue;
        }
      }
      out.push_back(std::move(c));
    }
    body = std::move(out);
  }

 private:
  /// An atom's interval.
  Interval bound_of(const ExprP& atom) const {
    auto it = bounds_.find(atom);
    if (it != bounds_.end()) return it->second;
    // Sizes and strides and every other variable are indices: >= 0.
    return {0, kInf};
  }

  /// An atom with one possible value becomes it.
  ExprP known(const ExprP& atom) const {
    const Interval b = bound_of(atom);
    return b.lo == b.hi ? Expr::integer(b.lo) : atom;
  }

  Interval scope(const ExprP& atom, Interval v) {
    Interval old = bound_of(atom);
    bounds_[atom] = v;
    return old;
  }
  void restore(const ExprP& atom, Interval old) { bounds_[atom] = old; }

  /// The interval of an already simplified expression.
  Interval bounds(const ExprP& e) const {
    if (auto c = constant_of(e)) return Interval::point(*c);
    if (is_atom(e)) return bound_of(e);
    const auto* op = e->as<IndexOp>();
    if (!op) return {};
    Interval a = bounds(op->a), b = bounds(op->b);
    switch (op->op) {
      case IndexOpType::Add: return add(a, b);
      case IndexOpType::Mul: return mul(a, b);
      case IndexOpType::Div:
        return a.nonneg() && b.lo >= 1 ? div(a, b) : Interval{};
      case IndexOpType::Mod:
        return a.nonneg() && b.lo >= 1 ? mod(a, b) : Interval{};
      case IndexOpType::CeilDiv:
        return a.nonneg() && b.lo >= 1
                   ? Interval{(a.lo + b.hi - 1) / b.hi,
                              clamp((__int128(a.hi) + b.lo - 1) / b.lo)}
                   : Interval{};
      case IndexOpType::Lt:
      case IndexOpType::And: return {0, 1};
      case IndexOpType::Xor: return xor_bounds(a, b);
    }
    return {};
  }

  Interval bounds(const Linear& l) const {
    Interval r = Interval::point(l.constant);
    for (const auto& [k, t] : l.terms) r = add(r, mul(bounds(t.e), Interval::point(t.coeff)));
    return r;
  }

  /// e (simplified) as a linear form over its non-linear terms.
  static Linear linear(const ExprP& e) {
    Linear l;
    collect(e, 1, l);
    while (recombine(l)) {
    }
    return l;
  }

  /// k (a % b) + k b (a / b) = k a (C's truncating division keeps a = (a /
  /// b) b + a % b for any a and b != 0): a contiguous tensor's offset
  /// (x % K) * 1 + (x / K) * K, from the replay of a merge, is x again. With
  /// a constant b the second term is (a / b) at coefficient k b; with a
  /// symbolic one, ((a / b) * b) at k. One pair per call; true if it found one.
  static bool recombine(Linear& l) {
    for (const auto& [key, t] : l.terms) {
      const auto* mod = t.e->as<IndexOp>();
      if (!mod || mod->op != IndexOpType::Mod) continue;
      // k c1 ((a / c1) % c2) + k (a % c1) = k (a % (c1 c2)) (a three-axis
      // merge's middle index and its inner one; truncation is odd in a, so
      // this holds for a < 0 too).
      const auto* inner_div = mod->a->as<IndexOp>();
      auto c1 = inner_div && inner_div->op == IndexOpType::Div ? constant_of(inner_div->b)
                                                                : std::nullopt;
      auto c2 = constant_of(mod->b);
      if (c1 && c2 && *c1 > 0 && *c2 > 0 && t.coeff % *c1 == 0 && *c1 <= kInf / *c2) {
        auto it = l.terms.find(Expr::index_op(IndexOpType::Mod, inner_div->a, inner_div->b));
        if (it != l.terms.end() && it->second.coeff == t.coeff / *c1) {
          const ExprP merged =
              Expr::index_op(IndexOpType::Mod, inner_div->a, Expr::integer(*c1 * *c2));
          const int64_t k = it->second.coeff;
          const ExprP mine = key;
          l.terms.erase(it);
          l.terms.erase(mine);
          l.add_term(merged, k);
          return true;
        }
      }
      const ExprP quotient = Expr::index_op(IndexOpType::Div, mod->a, mod->b);
      int64_t want = t.coeff;
      std::vector<ExprP> partners;
      if (auto c = constant_of(mod->b)) {
        partners.push_back(quotient);
        want = t.coeff * *c;
      } else {
        partners.push_back(quotient * mod->b);
        partners.push_back(mod->b * quotient);
        // b = s * cb (a size that is a multiple of 16: q * 16): the product
        // collected as the term (a / b) * s at coefficient k cb.
        Linear lb = linear(mod->b);
        if (lb.constant == 0 && lb.terms.size() == 1 && lb.terms.begin()->second.coeff != 1) {
          const Linear::Term& sb = lb.terms.begin()->second;
          partners.push_back(quotient * sb.e);
          partners.push_back(sb.e * quotient);
          want = t.coeff * sb.coeff;
        }
      }
      auto it = l.terms.end();
      for (const ExprP& p : partners)
        if (it == l.terms.end()) it = l.terms.find(p);
      if (it == l.terms.end() || it->second.coeff != want) continue;
      const ExprP a = mod->a;
      const int64_t k = t.coeff;
      const ExprP mine = key;
      l.terms.erase(it);
      l.terms.erase(mine);
      collect(a, k, l);
      return true;
    }
    return false;
  }
  static void collect(const ExprP& e, int64_t c, Linear& l) {
    if (auto v = constant_of(e)) {
      l.constant += c * *v;
      return;
    }
    if (const auto* op = e->as<IndexOp>()) {
      if (op->op == IndexOpType::Add) {
        collect(op->a, c, l);
        collect(op->b, c, l);
        return;
      }
      if (op->op == IndexOpType::Mul) {
        if (auto k = constant_of(op->b)) return collect(op->a, c * *k, l);
        if (auto k = constant_of(op->a)) return collect(op->b, c * *k, l);
        // x * (y * k) = (x * y) * k: a coefficient inside a product of
        // variables (i * (q * 16), with a size that is a multiple of 16)
        // collects with the others.
        for (const auto& [x, y] : {std::pair{op->a, op->b}, std::pair{op->b, op->a}}) {
          const auto* inner = y->as<IndexOp>();
          if (!inner || inner->op != IndexOpType::Mul) continue;
          if (auto k = constant_of(inner->b)) return collect(x * inner->a, c * *k, l);
          if (auto k = constant_of(inner->a)) return collect(x * inner->b, c * *k, l);
        }
      }
    }
    l.add_term(e, c);
  }

  /// Terms in canonical order (kir::compare), each times its coefficient,
  /// then the constant. A term x * q (q a size's quotient, size_variable)
  /// at a coefficient its divisor d divides prints as x * (q * d)
  /// (size_variable's reason).
  ExprP rebuild(const Linear& l) const {
    ExprP r = Expr::integer(0);
    for (const auto& [k, t] : l.terms) {
      ExprP e = t.e;
      int64_t coeff = t.coeff;
      const auto* m = e->as<IndexOp>();
      for (const auto& [x, q] : m && m->op == IndexOpType::Mul
                                    ? std::vector{std::pair{m->a, m->b}, std::pair{m->b, m->a}}
                                    : std::vector<std::pair<ExprP, ExprP>>{}) {
        const auto* v = q->as<kir::TensorDim>();
        if (!v || v->divisor == 1 || coeff % v->divisor != 0) continue;
        e = x * (q * Expr::integer(v->divisor));
        coeff /= v->divisor;
        break;
      }
      r = r + e * Expr::integer(coeff);
    }
    return r + Expr::integer(l.constant);
  }

  /// ceilDiv(a, c) for a >= 0 and a constant c > 0 that divides every
  /// coefficient of a's terms: a = c * q + k gives q + ceil(k / c) exactly
  /// (a dynamic kernel's K = 16 q: ceilDiv(K, 4) = 4 q); a factor common to
  /// c and a divides out of both. Null when neither applies.
  ExprP exact_ceil_div(const ExprP& a, std::optional<int64_t> c) const {
    if (!c || *c <= 0 || !bounds(a).nonneg()) return nullptr;
    Linear l = linear(a), q;
    int64_t g = *c;  // the common factor of c and every coefficient
    for (const auto& [k, t] : l.terms) g = std::gcd(g, t.coeff);
    if (g == *c) {
      for (const auto& [k, t] : l.terms) q.add_term(t.e, t.coeff / *c);
      // ceil(k / c) = -floor(-k / c).
      q.constant = -floor_div(-l.constant, *c);
      return rebuild(q);
    }
    // ceilDiv(g t + k, c) = ceilDiv(t + k / g, c / g) when g divides k:
    // ceilDiv(16 q, 32) = ceilDiv(q, 2).
    if (g == 1 || l.constant % g != 0) return nullptr;
    for (const auto& [k, t] : l.terms) q.add_term(t.e, t.coeff / g);
    q.constant = l.constant / g;
    return Expr::index_op(IndexOpType::CeilDiv, rebuild(q), Expr::integer(*c / g));
  }

  /// `d < 0` reduced by a common factor, or null. With d = g * t + r, where
  /// g divides the coefficient of every term in t and r (the other terms
  /// and the constant) lies in [g m, g m + g): d < 0 exactly when t + m < 0.
  /// g is the largest divisor of the unbounded terms' coefficients (sizes
  /// that are multiples of 16, in a dynamic kernel) that admits such an m:
  /// a vector's `16 q * i + 4 tx + 3 < 16 q` and each of its elements'
  /// `16 q * i + 4 tx + j < 16 q` (j < 4) both become `4 q * i + tx < 4 q`,
  /// which the conjunction then holds once.
  ExprP reduce_comparison(const Linear& d) const {
    int64_t g = 0;
    for (const auto& [k, t] : d.terms) {
      Interval b = mul(bounds(t.e), Interval::point(t.coeff));
      if (b.lo <= -kInf || b.hi >= kInf) g = std::gcd(g, t.coeff < 0 ? -t.coeff : t.coeff);
    }
    for (int64_t div = g; div > 1; --div) {
      if (g % div != 0) continue;
      Linear t, r;
      for (const auto& [k, term] : d.terms) {
        if (term.coeff % div == 0) t.add_term(term.e, term.coeff / div);
        else r.add_term(term.e, term.coeff);
      }
      r.constant = d.constant;
      Interval rb = bounds(r);
      if (rb.lo <= -kInf || rb.hi >= kInf) continue;
      const int64_t m = floor_div(rb.lo, div);
      if (floor_div(rb.hi, div) != m) continue;
      // t + m < 0 as `positive terms < negated negative terms`, the
      // constant on the side that keeps it positive.
      Linear lhs, rhs;
      for (const auto& [k, term] : t.terms)
        (term.coeff > 0 ? lhs : rhs).add_term(term.e, term.coeff > 0 ? term.coeff : -term.coeff);
      (m > 0 ? lhs : rhs).constant = m > 0 ? m : -m;
      return Expr::index_op(IndexOpType::Lt, rebuild(lhs), rebuild(rhs));
    }
    return nullptr;
  }

  static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0)) --q;
    return q;
  }

  /// a / b or a % b for a >= 0 and b not a constant: a = b * q + r with r a
  /// variable an enclosing branch bounds by `r < b` (so b >= 1 wherever this
  /// runs) gives q or r, as for a constant divisor; otherwise unchanged.
  ExprP divide_symbolic(IndexOpType op, const ExprP& a, const ExprP& b) {
    // b = s * cb: a size that is a multiple of 16 is the term q, 16 times,
    // and a * b collects as the term a * q at 16 times a's coefficient.
    ExprP sk = b;
    int64_t cb = 1;
    if (Linear lb = linear(b); lb.constant == 0 && lb.terms.size() == 1 &&
                               lb.terms.begin()->second.coeff > 1) {
      sk = lb.terms.begin()->first;
      cb = lb.terms.begin()->second.coeff;
    }
    Linear l = linear(a), q, r;
    for (const auto& [k, t] : l.terms) {
      const auto* m = t.e->as<IndexOp>();
      const bool whole = t.coeff % cb == 0;
      if (whole && m && m->op == IndexOpType::Mul && kir::equal(m->b, sk))
        q.add_term(m->a, t.coeff / cb);
      else if (whole && m && m->op == IndexOpType::Mul && kir::equal(m->a, sk))
        q.add_term(m->b, t.coeff / cb);
      else if (whole && kir::equal(k, sk))
        q.constant += t.coeff / cb;
      else
        r.add_term(t.e, t.coeff);
    }
    r.constant = l.constant;
    bool below = r.terms.empty() && r.constant == 0;
    if (r.terms.size() == 1 && r.constant == 0) {
      const Linear::Term& t = r.terms.begin()->second;
      below = is_atom(t.e) && t.coeff == 1 && bound_of(t.e).nonneg() &&
              std::any_of(below_.begin(), below_.end(), [&](const auto& fact) {
                return kir::equal(fact.first, t.e) && kir::equal(fact.second, b);
              });
    }
    if ((q.terms.empty() && q.constant == 0) || !below) return Expr::index_op(op, a, b);
    return op == IndexOpType::Div ? rebuild(q) : rebuild(r);
  }

  /// a / b or a % b (op), a and b simplified.
  ExprP divide(IndexOpType op, const ExprP& a, const ExprP& b) {
    const bool is_div = op == IndexOpType::Div;
    Interval ra = bounds(a), rb = bounds(b);
    auto c = constant_of(b);
    if (ra.nonneg() && rb.lo >= 1 && ra.hi < rb.lo) return is_div ? Expr::integer(0) : a;
    if (!c && ra.nonneg()) return divide_symbolic(op, a, b);
    if (!c || *c <= 0 || !ra.nonneg()) return Expr::index_op(op, a, b);
    // Nested constant divisions: (x / c1) / c2 = x / (c1 * c2); (x % c1) % c2
    // = x % c2 and (x % c1) / c2 = (x / c2) % (c1 / c2) when c2 divides c1
    // (x >= 0; x = c1 k + r with r < c1 gives x / c2 = (c1 / c2) k + r / c2
    // and r / c2 < c1 / c2). The last turns a Local cache's forward replay
    // through a flattened extent, ((i * 512 + tx * 4) % 4096 / 512) % 4, into i.
    if (const auto* in = a->as<IndexOp>()) {
      auto c1 = constant_of(in->b);
      if (c1 && *c1 > 0 && bounds(in->a).nonneg()) {
        if (is_div && in->op == IndexOpType::Div && *c1 <= kInf / *c)
          return divide(op, in->a, Expr::integer(*c1 * *c));
        if (in->op == IndexOpType::Mod && *c1 % *c == 0)
          return is_div ? divide(IndexOpType::Mod, divide(IndexOpType::Div, in->a, b),
                                 Expr::integer(*c1 / *c))
                        : divide(op, in->a, b);
      }
    }
    // a = c * q + r with the multiples of c in q (and the constant split by
    // floor division, so that 0 <= its remainder < c).
    Linear l = linear(a), q, r;
    for (const auto& [k, t] : l.terms) {
      if (t.coeff % *c == 0) q.add_term(t.e, t.coeff / *c);
      else r.add_term(t.e, t.coeff);
    }
    int64_t k = l.constant / *c, m = l.constant % *c;
    if (m < 0) m += *c, --k;
    q.constant = k;
    r.constant = m;
    Interval rr = bounds(r);
    if (!rr.nonneg()) return Expr::index_op(op, a, b);
    if (q.terms.empty() && q.constant == 0) return Expr::index_op(op, rebuild(r), b);
    ExprP rest = rr.hi < *c ? (is_div ? Expr::integer(0) : rebuild(r))
                            : divide(op, rebuild(r), b);
    return is_div ? rebuild(linear(rebuild(q) + rest)) : rest;
  }

  /// The atoms' intervals where known (loop variables, built-ins, and
  /// those an enclosing branch bounds).
  kir::ExprMap<Interval> bounds_;
  /// (v, e) for each `v < e` of the enclosing branches (v an atom): symbolic
  /// bounds, for divisions by a size that is not a constant.
  std::vector<std::pair<ExprP, ExprP>> below_;
};

}  // namespace

void simplify(kir::Kernel& kernel, const std::array<int64_t, 3>& grid) {
  Simplifier(kernel, grid).mutate(*kernel.body);
}

}  // namespace schedlab::lower
