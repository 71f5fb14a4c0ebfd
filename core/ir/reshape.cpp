// Reshape and view ops: the output's logical domain is its root split and
// merged, as nvFuser's analyzeView decomposes a reshape.
#include "schedlab/ir/reshape.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "schedlab/base/error.h"

namespace schedlab::ir {

namespace {

/// The symbolic content of an extent: a rational constant times a product of
/// named sizes (named sizes are distinct, as everywhere in fusion text).
/// ceilDiv(a, b) is taken as a / b: the views that build one check at launch
/// that it divides (check_view_sizes).
struct Content {
  int64_t num = 1, den = 1;
  std::map<std::string, int> syms;  ///< name -> power (negative: divides)

  static Content of(const SizeExpr& e) {
    Content c;
    switch (e.kind()) {
      case SizeExpr::Kind::Const:
        c.num = e.const_value();
        break;
      case SizeExpr::Kind::Symbol:
        c.syms[e.symbol_name()] = 1;
        break;
      case SizeExpr::Kind::Mul:
        c = of(e.lhs()) * of(e.rhs());
        break;
      case SizeExpr::Kind::CeilDiv:
        c = of(e.lhs()) / of(e.rhs());
        break;
    }
    return c.normal();
  }
  Content normal() const {
    Content c = *this;
    if (c.den < 0) c.num = -c.num, c.den = -c.den;
    int64_t g = std::gcd(c.num, c.den);
    if (g > 1) c.num /= g, c.den /= g;
    for (auto it = c.syms.begin(); it != c.syms.end();) it = it->second == 0 ? c.syms.erase(it) : std::next(it);
    return c;
  }
  Content operator*(const Content& o) const {
    Content c = *this;
    c.num *= o.num;
    c.den *= o.den;
    for (auto [s, p] : o.syms) c.syms[s] += p;
    return c.normal();
  }
  Content operator/(const Content& o) const {
    Content inv;
    inv.num = o.den;
    inv.den = o.num;
    for (auto [s, p] : o.syms) inv.syms[s] = -p;
    return (*this * inv).normal();
  }
  bool is_one() const { return num == 1 && den == 1 && syms.empty(); }
  bool is_zero() const { return num == 0; }
  bool is_const() const { return syms.empty(); }
  bool is_int() const { return syms.empty() && den == 1; }
  bool symbols_nonnegative() const {
    for (auto [s, p] : syms)
      if (p < 0) return false;
    return true;
  }
  /// The extent as a SizeExpr: ceilDiv(num * syms, den).
  SizeExpr expr() const {
    SizeExpr e = SizeExpr::constant(num);
    for (auto [s, p] : syms)
      for (int k = 0; k < p; ++k) e = SizeExpr::mul(e, SizeExpr::symbol(s));
    return den == 1 ? e : SizeExpr::ceil_div(e, SizeExpr::constant(den));
  }
};

std::string shape_str(const std::vector<IterDomain*>& dom) {
  std::string s = "[";
  for (size_t i = 0; i < dom.size(); ++i) s += (i ? ", " : "") + dom[i]->extent().str();
  return s + "]";
}

std::string shape_str(const std::vector<ShapeEntry>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] ? shape[i]->str() : std::string("-1"));
  return s + "]";
}

std::string count_str(const Content& c) {
  if (c.is_int()) return std::to_string(c.num);
  return c.expr().str();
}

Content product(const std::vector<IterDomain*>& dom) {
  Content c;
  for (const IterDomain* id : dom) c = c * Content::of(id->extent());
  return c;
}

/// One output axis of a view: a Broadcast (new), an Iteration axis of the
/// reshaped sequence with this content, or (expand) a widened axis.
struct OutAxis {
  enum class Kind { Broadcast, Reshaped, Expanded } kind;
  Content content;
  SizeExpr extent;  ///< Expanded: the new extent
};

/// Builds the ViewOp. `in_keep[k]`: whether in's Broadcast axis k stays in
/// the output (expand keeps those it does not widen).
TensorView* build(TensorView* x, const std::vector<OutAxis>& outs, const std::string& fn,
                  bool is_expand, const std::string& what) {
  Fusion& f = *x->fusion();
  const auto in = x->logical_no_reductions();
  std::vector<IterDomain*> root;
  for (IterDomain* id : in) root.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  std::vector<IterDomain*> logical;
  if (is_expand) {
    internal_assert(outs.size() == in.size()) << fn << ": rank";
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].kind == OutAxis::Kind::Expanded) {
        IterDomain* w = f.make_iter_domain(outs[k].extent, IterType::Iteration);
        root.push_back(w);
        logical.push_back(w);
      } else {
        logical.push_back(root[k]);
      }
    }
  } else {
    // The Iteration axes of the root, in order, against the reshaped outputs.
    std::vector<IterDomain*> a;
    for (IterDomain* id : root)
      if (!id->is_broadcast()) a.push_back(id);
    std::vector<IterDomain*> reshaped;
    size_t i = 0;
    IterDomain* cur = nullptr;
    for (const OutAxis& o : outs) {
      if (o.kind != OutAxis::Kind::Reshaped) continue;
      if (!cur) {
        user_assert(i < a.size()) << what << ": ran out of axes of " << x->describe()
                                  << " before the shape's extent " << count_str(o.content);
        cur = a[i++];
      }
      for (;;) {
        Content rem = Content::of(cur->extent()) / o.content;
        if (rem.is_one()) {
          reshaped.push_back(cur);
          cur = nullptr;
          break;
        }
        bool smaller = !rem.symbols_nonnegative() || (rem.is_const() && (rem.den != 1 || rem.num < 1));
        if (smaller) {
          user_assert(i < a.size()) << what << ": the shape's extent " << count_str(o.content)
                                    << " does not match the remaining axes of " << x->describe();
          cur = f.merge(cur, a[i++]);
          continue;
        }
        if (o.content.is_int()) {
          auto [outer, inner] = f.split(cur, o.content.num, /*inner_split=*/false);
          reshaped.push_back(outer);
          cur = inner;
        } else if (rem.is_int()) {
          auto [outer, inner] = f.split(cur, rem.num, /*inner_split=*/true);
          reshaped.push_back(outer);
          cur = inner;
        } else {
          user_error << what << ": splitting the axis of extent " << cur->extent().str() << " of "
                     << x->describe() << " into " << count_str(o.content) << " and "
                     << count_str(rem)
                     << " needs a constant on one side (split factors are compile-time "
                        "constants); expected a constant extent or -1 there";
        }
        break;
      }
    }
    user_assert(cur == nullptr && i == a.size())
        << what << ": the shape leaves axes of " << x->describe() << " unused";
    size_t r = 0;
    for (const OutAxis& o : outs) {
      if (o.kind == OutAxis::Kind::Reshaped) {
        logical.push_back(reshaped[r++]);
      } else {
        IterDomain* b = f.make_iter_domain(SizeExpr(), IterType::Broadcast);
        root.push_back(b);
        logical.push_back(b);
      }
    }
  }
  TensorView* out = f.make_tensor(x->dtype(), logical);
  out->set_domains(root, logical);
  f.create<ViewOp>(out, x, fn, is_expand);
  return out;
}

int norm_dim(const std::string& fn, const TensorView* x, int dim, int rank, const char* what) {
  user_assert(dim >= -rank && dim < rank)
      << fn << ": " << what << " " << dim << " is out of range for " << x->describe()
      << " of shape " << shape_str(x->logical_no_reductions()) << "; expected a dim in [" << -rank
      << ", " << rank - 1 << "]";
  return dim < 0 ? dim + rank : dim;
}

}  // namespace

TensorView* reshape(TensorView* x, const std::vector<ShapeEntry>& shape, const std::string& fn) {
  const auto in = x->logical_no_reductions();
  const std::string what = fn + ": " + x->describe() + " " + shape_str(in);
  const Content total = product(in);
  int inferred = -1;
  Content known;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (!shape[k]) {
      user_assert(inferred < 0) << fn << ": the shape " << shape_str(shape)
                                << " has two -1 entries (" << inferred << " and " << k
                                << "); expected at most one";
      inferred = static_cast<int>(k);
      continue;
    }
    if (shape[k]->is_const())
      user_assert(shape[k]->const_value() >= 0)
          << fn << ": the shape " << shape_str(shape) << " has the extent "
          << shape[k]->const_value() << " at " << k << "; expected -1 or an extent >= 0";
    known = known * Content::of(*shape[k]);
  }
  std::vector<ShapeEntry> resolved = shape;
  if (inferred >= 0) {
    user_assert(!known.is_zero())
        << fn << ": the shape " << shape_str(shape)
        << " has a -1 beside entries whose product is 0; the -1 could be any extent";
    Content rest = total / known;
    user_assert(rest.symbols_nonnegative() && (!rest.is_const() || rest.is_int()))
        << what << " has " << count_str(total) << " elements, not a multiple of "
        << count_str(known) << " (the shape " << shape_str(shape) << ")";
    resolved[static_cast<size_t>(inferred)] = rest.expr();
    known = known * rest;
  }
  Content want;
  for (const ShapeEntry& e : resolved) want = want * Content::of(*e);
  // The counts as the user wrote them: products of the extents, in order.
  auto written = [](const Content& c, auto begin, auto end, auto extent) {
    if (c.is_int()) return std::to_string(c.num);
    SizeExpr p = SizeExpr::constant(1);
    for (auto it = begin; it != end; ++it) p = SizeExpr::mul(p, extent(*it));
    return p.str();
  };
  user_assert(!want.is_zero() && (total / want).is_one())
      << what << " has "
      << written(total, in.begin(), in.end(), [](const IterDomain* id) { return id->extent(); })
      << " elements, the shape " << shape_str(shape) << " has "
      << written(want, resolved.begin(), resolved.end(), [](const ShapeEntry& e) { return *e; });
  std::vector<OutAxis> outs;
  for (const ShapeEntry& e : resolved) {
    bool one = e->is_const() && e->const_value() == 1;
    outs.push_back({one ? OutAxis::Kind::Broadcast : OutAxis::Kind::Reshaped, Content::of(*e), *e});
  }
  return build(x, outs, fn, false, what);
}

TensorView* flatten(TensorView* x, int start, int end) {
  const auto in = x->logical_no_reductions();
  int rank = static_cast<int>(in.size());
  if (rank == 0) return reshape(x, {}, "flatten");
  start = norm_dim("flatten", x, start, rank, "start dim");
  end = norm_dim("flatten", x, end, rank, "end dim");
  user_assert(start <= end) << "flatten: start dim " << start << " is after end dim " << end
                            << " for " << x->describe() << "; expected start <= end";
  std::vector<ShapeEntry> shape;
  SizeExpr merged = SizeExpr::constant(1);
  for (int k = 0; k < rank; ++k) {
    const SizeExpr& e = in[static_cast<size_t>(k)]->extent();
    if (k < start || k > end) shape.emplace_back(e);
    else merged = SizeExpr::mul(merged, e);
    if (k == end) shape.emplace_back(merged);
  }
  return reshape(x, shape, "flatten");
}

TensorView* squeeze(TensorView* x, const std::vector<int>& dims) {
  const auto in = x->logical_no_reductions();
  int rank = static_cast<int>(in.size());
  std::vector<bool> drop(in.size(), dims.empty());
  for (int d : dims) {
    int k = norm_dim("squeeze", x, d, rank, "dim");
    user_assert(in[static_cast<size_t>(k)]->is_broadcast())
        << "squeeze: dim " << d << " of " << x->describe() << " " << shape_str(in) << " is "
        << in[static_cast<size_t>(k)]->str() << "; expected a Broadcast axis (extent 1)";
    drop[static_cast<size_t>(k)] = true;
  }
  std::vector<ShapeEntry> shape;
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k] || !in[k]->is_broadcast()) shape.emplace_back(in[k]->extent());
  return reshape(x, shape, "squeeze");
}

TensorView* unsqueeze(TensorView* x, int dim) {
  const auto in = x->logical_no_reductions();
  int rank = static_cast<int>(in.size());
  int k = norm_dim("unsqueeze", x, dim, rank + 1, "dim");
  std::vector<ShapeEntry> shape;
  for (const IterDomain* id : in) shape.emplace_back(id->extent());
  shape.insert(shape.begin() + k, SizeExpr::constant(1));
  return reshape(x, shape, "unsqueeze");
}

TensorView* expand(TensorView* x, const std::vector<ShapeEntry>& shape) {
  const auto in = x->logical_no_reductions();
  user_assert(shape.size() == in.size())
      << "expand: the shape " << shape_str(shape) << " has " << shape.size() << " entries but "
      << x->describe() << " " << shape_str(in) << " has rank " << in.size()
      << "; expected one entry per axis";
  std::vector<OutAxis> outs;
  for (size_t k = 0; k < in.size(); ++k) {
    const ShapeEntry& e = shape[k];
    if (!e || e->same_as(in[k]->extent())) {
      outs.push_back({OutAxis::Kind::Reshaped, {}, in[k]->extent()});
      continue;
    }
    user_assert(in[k]->is_broadcast())
        << "expand: axis " << k << " of " << x->describe() << " " << shape_str(in) << " is "
        << in[k]->str() << "; expected a Broadcast axis to widen to " << e->str()
        << ", or -1 or its own extent to keep it";
    user_assert(!e->is_const() || e->const_value() >= 1)
        << "expand: extent " << e->str() << " at " << k << "; expected a positive extent";
    outs.push_back({OutAxis::Kind::Expanded, Content::of(*e), *e});
  }
  return build(x, outs, "expand", true, "expand: " + x->describe());
}

ViewDomains copy_view_domains(Fusion& dst, const TensorView* view_out) {
  internal_assert(view_out->loop() == view_out->logical())
      << "copy_view_domains: " << view_out->describe() << " is scheduled";
  std::map<const IterDomain*, IterDomain*> to;
  ViewDomains d;
  for (const IterDomain* id : view_out->root()) {
    d.root.push_back(dst.make_iter_domain(id->extent(), id->iter_type()));
    to[id] = d.root.back();
  }
  for (const IterDomainExpr* e : view_out->root_history()) {
    if (const auto* s = e->as<Split>()) {
      auto [o, i] = dst.split(to.at(s->in()), s->factor(), s->inner_split());
      to[s->outer()] = o;
      to[s->inner()] = i;
    } else if (const auto* m = e->as<Merge>()) {
      to[m->out()] = dst.merge(to.at(m->outer()), to.at(m->inner()));
    }
  }
  for (const IterDomain* id : view_out->logical()) d.logical.push_back(to.at(id));
  return d;
}

std::string check_view_sizes(const Fusion& f, const SizeBindings& sizes) {
  for (const ViewOp* v : view_ops(f)) {
    if (v->is_expand()) continue;
    const TensorView* out = v->out();
    auto eval = [&](const IterDomain* id) { return id->extent().evaluate(sizes); };
    for (IterDomainExpr* e : out->root_history()) {
      const auto* s = e->as<Split>();
      if (!s) continue;
      // Only the root -> logical part: loop splits may leave a remainder.
      const auto loops = out->loop_history();
      if (std::find(loops.begin(), loops.end(), e) != loops.end()) continue;
      auto ext = eval(s->in());
      if (!ext) continue;
      if (*ext % s->factor() != 0) {
        std::ostringstream os;
        os << v->fn() << " of " << v->in()->describe() << " into " << out->describe()
           << ": the axis of extent " << s->in()->extent().str() << " = " << *ext
           << " is split into " << (s->inner_split() ? "pieces of " : "") << s->factor()
           << (s->inner_split() ? "" : " pieces") << ", which does not divide it; expected sizes "
           << "that make it a multiple of " << s->factor();
        return os.str();
      }
    }
  }
  return "";
}

std::vector<const ViewOp*> view_ops(const Fusion& f) {
  std::vector<const ViewOp*> r;
  for (const Expr* e : f.exprs_for_outputs())
    if (const auto* v = e->as<ViewOp>()) r.push_back(v);
  return r;
}

}  // namespace schedlab::ir
