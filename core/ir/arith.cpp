#include "schedlab/ir/arith.h"

#include <algorithm>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/ir/printer.h"

namespace schedlab::ir {

namespace {

Fusion& fusion_of(std::initializer_list<Val*> vals) {
  for (Val* v : vals)
    if (v && v->is<TensorView>()) return *v->fusion();
  return *(*vals.begin())->fusion();
}

/// Normalizes a possibly negative axis into [0, rank).
int norm_axis(std::string_view op, const TensorView* t, int axis) {
  int rank = static_cast<int>(t->logical_no_reductions().size());
  user_assert(axis >= -rank && axis < rank)
      << op << ": axis " << axis << " is out of range for " << t->describe() << " of shape "
      << shape_str(t) << "; expected an axis in [" << -rank << ", " << rank - 1 << "]";
  return axis < 0 ? axis + rank : axis;
}

/// Prepends Broadcast axes so that t has `rank` axes.
TensorView* expand_rank(TensorView* t, size_t rank) {
  size_t have = t->logical_no_reductions().size();
  if (have >= rank) return t;
  std::vector<bool> flags(rank, false);
  std::fill(flags.begin(), flags.begin() + static_cast<long>(rank - have), true);
  return broadcast(t, flags);
}

/// NumPy-style broadcast of the tensor operands to one shape; returns the
/// output axes (fresh IterDomains) and rewrites `ops` in place.
std::vector<IterDomain*> broadcast_operands(std::string_view op, std::vector<Val*>& ops) {
  size_t rank = 0;
  for (Val* v : ops)
    if (auto* t = v->as<TensorView>()) rank = std::max(rank, t->logical_no_reductions().size());
  for (Val*& v : ops)
    if (auto* t = v->as<TensorView>()) v = expand_rank(t, rank);

  Fusion& f = fusion_of({ops[0], ops.size() > 1 ? ops[1] : ops[0]});
  std::vector<IterDomain*> out;
  for (size_t ax = 0; ax < rank; ++ax) {
    const TensorView* chosen = nullptr;
    IterDomain* chosen_id = nullptr;
    for (Val* v : ops) {
      auto* t = v->as<TensorView>();
      if (!t) continue;
      IterDomain* id = t->logical_no_reductions()[ax];
      if (id->is_broadcast()) continue;
      if (!chosen_id) {
        chosen = t;
        chosen_id = id;
        continue;
      }
      user_assert(chosen_id->extent().same_as(id->extent()))
          << op << ": cannot broadcast " << chosen->describe() << " of shape " << shape_str(chosen)
          << " with " << t->describe() << " of shape " << shape_str(t) << ": axis " << ax
          << " has extent " << chosen_id->extent().str() << " on one side and "
          << id->extent().str() << " on the other; expected equal extents or a broadcast (1)";
    }
    out.push_back(chosen_id ? f.make_iter_domain(chosen_id->extent(), IterType::Iteration)
                            : f.make_iter_domain(SizeExpr::constant(1), IterType::Broadcast));
  }
  return out;
}

bool any_tensor(const std::vector<Val*>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](Val* v) { return v->is<TensorView>(); });
}

/// The result type of arithmetic over ops: tensors decide; a float constant
/// makes an integer or bool tensor computation f32 (PyTorch's rule for Python
/// scalars).
DataType arith_dtype(const std::vector<Val*>& ops) {
  std::optional<DataType> t;
  bool float_scalar = false;
  for (Val* v : ops) {
    if (v->is<TensorView>())
      t = t ? promote(*t, v->dtype()) : v->dtype();
    else if (is_float(v->dtype()))
      float_scalar = true;
  }
  if (!t) t = promote(ops[0]->dtype(), ops.back()->dtype());
  if (float_scalar && !is_float(*t)) return DataType::F32;
  return *t;
}

bool is_transcendental(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::Neg:
    case UnaryOpType::Abs:
    case UnaryOpType::Relu:
    case UnaryOpType::Not: return false;
    default: return true;
  }
}

/// Both operands are tensors of dtype t.
bool tensors_of(const std::vector<Val*>& ops, DataType t) {
  return std::all_of(ops.begin(), ops.end(),
                     [t](Val* v) { return v->is<TensorView>() && v->dtype() == t; });
}

}  // namespace

bool half_op_is_native(UnaryOpType op) {
  return op == UnaryOpType::Neg || op == UnaryOpType::Abs;
}

bool half_op_is_native(BinaryOpType op) {
  return op == BinaryOpType::Add || op == BinaryOpType::Sub || op == BinaryOpType::Mul;
}

Scalar* constant(Fusion& f, double v, DataType t) {
  return f.make_scalar(round_to_dtype(v, t), t);
}

TensorView* tv(Val* v) {
  internal_assert(v && v->is<TensorView>()) << "expected a tensor";
  return v->as<TensorView>();
}

Val* unary(UnaryOpType op, Val* in) {
  auto name = unary_op_name(op);
  if (op == UnaryOpType::Not) {
    user_assert(in->dtype() == DataType::Bool)
        << name << ": expected a bool operand, found " << dtype_name(in->dtype()) << " ("
        << (in->is<TensorView>() ? in->as<TensorView>()->describe() : in->str()) << ")";
  } else {
    user_assert(in->dtype() != DataType::Bool)
        << name << ": expected a numeric operand, found bool ("
        << (in->is<TensorView>() ? in->as<TensorView>()->describe() : in->str()) << ")";
  }
  // A float keeps its dtype (PyTorch: exp of f16 is f16).
  DataType out_t = in->dtype();
  // Constants are Python-style scalars: math on them stays in double, so
  // `1 / sqrt(2)` folds exactly; tensors of integers compute in f32.
  if (is_transcendental(op) && !is_float(out_t))
    out_t = in->is<Scalar>() ? DataType::F64 : DataType::F32;
  Fusion& f = *in->fusion();
  if (auto* s = in->as<Scalar>()) {
    user_assert(!s->is_size()) << name << ": cannot fold " << name << "(" << s->str()
                               << "): the size " << s->str()
                               << " is known only at launch; expected a tensor operand";
    return f.make_scalar(round_to_dtype(apply_unary(op, s->value()), out_t), out_t);
  }
  // Half math other than neg/abs computes in f32 and rounds back.
  if (is_half(out_t) && !half_op_is_native(op))
    return cast(unary(op, cast(in, DataType::F32)), out_t);
  if (in->dtype() != out_t) in = cast(in, out_t);
  auto* t = in->as<TensorView>();
  std::vector<IterDomain*> dom;
  for (IterDomain* id : t->logical_no_reductions())
    dom.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  TensorView* out = f.make_tensor(out_t, dom);
  f.create<UnaryOp>(op, out, in);
  return out;
}

Val* binary(BinaryOpType op, Val* lhs, Val* rhs) {
  auto name = binary_op_name(op);
  std::vector<Val*> ops{lhs, rhs};
  for (Val* v : ops) {
    bool is_bool = v->dtype() == DataType::Bool;
    std::string who = v->is<TensorView>() ? v->as<TensorView>()->describe() : v->str();
    if (is_logical(op))
      user_assert(is_bool) << name << ": expected bool operands, found " << dtype_name(v->dtype())
                           << " (" << who << ")";
    else if (!is_comparison(op) || (op != BinaryOpType::Eq && op != BinaryOpType::Ne))
      user_assert(!is_bool) << name << ": expected numeric operands, found bool (" << who << ")";
  }
  DataType t = arith_dtype(ops);
  DataType compute_t = compute_dtype(t);
  // Division of integers is true division, as in PyTorch and NumPy.
  if ((op == BinaryOpType::Div || op == BinaryOpType::Pow) && !is_float(compute_t))
    compute_t = any_tensor(ops) ? DataType::F32 : DataType::F64;
  const bool boolean = is_comparison(op) || is_logical(op);
  // + - * of two tensors of one half type is a half op; any other half
  // arithmetic computes in f32 and its result rounds back to t below.
  const bool native_half = is_half(t) && !boolean && half_op_is_native(op) && tensors_of(ops, t);
  if (native_half) compute_t = t;
  DataType out_t = boolean ? DataType::Bool : compute_t;
  Fusion& f = fusion_of({lhs, rhs});
  if (!any_tensor(ops)) {
    for (Val* v : ops)
      user_assert(!v->as<Scalar>()->is_size())
          << name << ": cannot fold " << lhs->str() << " and " << rhs->str() << ": the size "
          << v->str() << " is known only at launch; expected a tensor operand (write x / (N * K) "
          << "as x / N / K)";
    double v = apply_binary(op, lhs->as<Scalar>()->value(), rhs->as<Scalar>()->value());
    return f.make_scalar(round_to_dtype(v, out_t), out_t);
  }
  for (Val*& v : ops)
    if (v->is<TensorView>() && !(is_comparison(op) && v->dtype() == DataType::Bool) &&
        !is_logical(op) && v->dtype() != compute_t)
      v = cast(v, compute_t);
  std::vector<IterDomain*> dom = broadcast_operands(name, ops);
  TensorView* out = f.make_tensor(out_t, dom);
  f.create<BinaryOp>(op, out, ops[0], ops[1]);
  return is_half(t) && !boolean && out_t != t ? cast(out, t) : out;
}

Val* where(Val* cond, Val* lhs, Val* rhs) {
  user_assert(cond->dtype() == DataType::Bool)
      << "where: expected a bool condition, found " << dtype_name(cond->dtype()) << " ("
      << (cond->is<TensorView>() ? cond->as<TensorView>()->describe() : cond->str()) << ")";
  const DataType result_t = arith_dtype({lhs, rhs});
  DataType t = compute_dtype(result_t);
  std::vector<Val*> ops{cond, lhs, rhs};
  Fusion& f = fusion_of({cond, lhs, rhs});
  if (!any_tensor(ops)) {
    for (Val* v : ops)
      user_assert(!v->as<Scalar>()->is_size())
          << "where: cannot fold with the size " << v->str()
          << ", which is known only at launch; expected a tensor operand";
    double v = cond->as<Scalar>()->value() != 0.0 ? lhs->as<Scalar>()->value()
                                                  : rhs->as<Scalar>()->value();
    return f.make_scalar(round_to_dtype(v, t), t);
  }
  for (size_t i = 1; i < 3; ++i)
    if (ops[i]->is<TensorView>() && ops[i]->dtype() != t) ops[i] = cast(ops[i], t);
  std::vector<IterDomain*> dom = broadcast_operands("where", ops);
  TensorView* out = f.make_tensor(t, dom);
  f.create<WhereOp>(out, ops[0], ops[1], ops[2]);
  return result_t != t ? cast(out, result_t) : out;
}

Val* cast(Val* in, DataType t) {
  Fusion& f = *in->fusion();
  if (auto* s = in->as<Scalar>()) {
    user_assert(!s->is_size()) << "cast: cannot fold cast(" << s->str() << ") : the size "
                               << s->str() << " is known only at launch; expected a tensor";
    return f.make_scalar(round_to_dtype(s->value(), t), t);
  }
  auto* src = in->as<TensorView>();
  std::vector<IterDomain*> dom;
  for (IterDomain* id : src->logical_no_reductions())
    dom.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  TensorView* out = f.make_tensor(t, dom);
  f.create<CastOp>(out, in);
  return out;
}

namespace {

/// The reduction itself, in compute_dtype(in) (f32 for a half input), without
/// keepdim's broadcast; `reduced` gets one flag per input axis.
TensorView* reduce_wide(ReductionOpType op, TensorView* in, std::vector<int> axes,
                        std::vector<bool>& reduced) {
  std::string name(reduction_op_name(op));
  auto in_dom = in->logical_no_reductions();
  int rank = static_cast<int>(in_dom.size());
  user_assert(rank > 0) << name << ": cannot reduce " << in->describe()
                        << ", which has no axes (rank 0)";
  if (axes.empty())
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  reduced.assign(static_cast<size_t>(rank), false);
  for (int a : axes) {
    int n = norm_axis(name, in, a);
    user_assert(!reduced[static_cast<size_t>(n)])
        << name << ": axis " << a << " of " << in->describe() << " is listed twice";
    reduced[static_cast<size_t>(n)] = true;
  }
  if (in->dtype() == DataType::Bool)
    user_assert(op == ReductionOpType::Max || op == ReductionOpType::Min)
        << name << ": expected a numeric operand, found bool (" << in->describe() << ")";
  DataType t = compute_dtype(in->dtype());
  if (t != in->dtype()) in = tv(cast(in, t));
  Fusion& f = *in->fusion();
  std::vector<IterDomain*> dom;
  for (int i = 0; i < rank; ++i) {
    IterDomain* id = in_dom[static_cast<size_t>(i)];
    dom.push_back(f.make_iter_domain(
        id->extent(), reduced[static_cast<size_t>(i)] ? IterType::Reduction : id->iter_type()));
  }
  TensorView* out = f.make_tensor(t, dom);
  f.create<ReductionOp>(op, out, in);
  return out;
}

}  // namespace

// A half input accumulates in f32 and its result is cast back once, at the
// end, as PyTorch's sum/amax/amin/prod/mean of an f16 (bf16) tensor.
TensorView* reduce(ReductionOpType op, TensorView* in, std::vector<int> axes, bool keepdim) {
  const DataType t = in->dtype();
  std::vector<bool> reduced;
  TensorView* out = reduce_wide(op, in, std::move(axes), reduced);
  if (out->dtype() != t) out = tv(cast(out, t));
  return keepdim ? broadcast(out, reduced) : out;
}

TensorView* mean(TensorView* in, std::vector<int> axes, bool keepdim) {
  const DataType t = in->dtype();
  std::vector<bool> reduced;
  TensorView* s = reduce_wide(ReductionOpType::Sum, in, std::move(axes), reduced);
  // The count is the product of the extents the reduction consumed.
  SizeExpr count = SizeExpr::constant(1);
  for (IterDomain* id : s->logical())
    if (id->is_reduction()) count = SizeExpr::mul(count, id->extent());
  Fusion& f = *in->fusion();
  Val* n = count.is_const() ? static_cast<Val*>(f.make_scalar(static_cast<double>(count.const_value()), DataType::I64))
                            : f.make_size_scalar(count);
  if (keepdim) s = broadcast(s, reduced);
  // Sum and division in f32, one rounding to a half input's type.
  TensorView* m = tv(binary(BinaryOpType::Div, s, n));
  return m->dtype() == t || !is_half(t) ? m : tv(cast(m, t));
}

TensorView* broadcast(TensorView* in, const std::vector<bool>& is_broadcast_dim) {
  auto in_dom = in->logical_no_reductions();
  size_t kept = static_cast<size_t>(std::count(is_broadcast_dim.begin(), is_broadcast_dim.end(), false));
  user_assert(kept == in_dom.size())
      << "broadcast: " << in->describe() << " has " << in_dom.size()
      << " axes but the broadcast pattern keeps " << kept << "; expected one false entry per axis";
  Fusion& f = *in->fusion();
  std::vector<IterDomain*> dom;
  size_t j = 0;
  for (bool b : is_broadcast_dim) {
    if (b) {
      dom.push_back(f.make_iter_domain(SizeExpr::constant(1), IterType::Broadcast));
    } else {
      IterDomain* id = in_dom[j++];
      dom.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
    }
  }
  TensorView* out = f.make_tensor(in->dtype(), dom);
  f.create<BroadcastOp>(out, in, is_broadcast_dim);
  return out;
}

TensorView* set(TensorView* in) {
  Fusion& f = *in->fusion();
  std::vector<IterDomain*> dom;
  for (IterDomain* id : in->logical_no_reductions())
    dom.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  TensorView* out = f.make_tensor(in->dtype(), dom);
  f.create<LoadStoreOp>(LoadStoreOpType::Set, out, in);
  return out;
}

TensorView* permute(TensorView* in, std::vector<int> new2old) {
  auto in_dom = in->logical_no_reductions();
  int rank = static_cast<int>(in_dom.size());
  user_assert(static_cast<int>(new2old.size()) == rank)
      << "permute: expected " << rank << " axes for " << in->describe() << " of shape "
      << shape_str(in) << ", found " << new2old.size();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int& a : new2old) {
    a = norm_axis("permute", in, a);
    user_assert(!seen[static_cast<size_t>(a)])
        << "permute: axis " << a << " of " << in->describe() << " appears twice";
    seen[static_cast<size_t>(a)] = true;
  }
  Fusion& f = *in->fusion();
  std::vector<IterDomain*> dom;
  for (int a : new2old) {
    IterDomain* id = in_dom[static_cast<size_t>(a)];
    dom.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  }
  TensorView* out = f.make_tensor(in->dtype(), dom);
  f.create<PermuteOp>(out, in, new2old);
  return out;
}

TensorView* transpose(TensorView* in, int a, int b) {
  int rank = static_cast<int>(in->logical_no_reductions().size());
  a = norm_axis("transpose", in, a);
  b = norm_axis("transpose", in, b);
  std::vector<int> p(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = i;
  std::swap(p[static_cast<size_t>(a)], p[static_cast<size_t>(b)]);
  return permute(in, p);
}

namespace {

/// The dtype shared by a contraction's operands (f32, f16 or bf16).
DataType contraction_dtype(std::string_view op, TensorView* a, TensorView* b) {
  for (TensorView* t : {a, b})
    user_assert(is_float(t->dtype()) && t->dtype() != DataType::F64)
        << op << ": expected a bf16, f16 or f32 operand, found " << t->describe() << " of dtype "
        << dtype_name(t->dtype());
  user_assert(a->dtype() == b->dtype())
      << op << ": expected operands of one dtype, found " << a->describe() << " of dtype "
      << dtype_name(a->dtype()) << " and " << b->describe() << " of dtype "
      << dtype_name(b->dtype());
  return a->dtype();
}

/// Checks that axis `ia` of a and `ib` of b (both normalised) are one K.
void check_contracted(std::string_view op, TensorView* a, int ia, TensorView* b, int ib) {
  IterDomain* ka = a->logical_no_reductions()[static_cast<size_t>(ia)];
  IterDomain* kb = b->logical_no_reductions()[static_cast<size_t>(ib)];
  user_assert(ka->extent().same_as(kb->extent()))
      << op << ": the contracted axes differ: axis " << ia << " of " << a->describe() << " (shape "
      << shape_str(a) << ") has extent " << ka->extent().str() << ", axis " << ib << " of "
      << b->describe() << " (shape " << shape_str(b) << ") has extent " << kb->extent().str()
      << "; expected equal extents";
}

/// The sum over axis `k` (counted from the end) of a * b, both already
/// broadcast to one rank; f32: half operands are cast first (exact), so
/// each product is exact and the sum accumulates in f32.
TensorView* contract(TensorView* a, TensorView* b, int k) {
  auto f32 = [](TensorView* t) { return is_half(t->dtype()) ? cast(t, DataType::F32) : t; };
  return sum(tv(mul(f32(a), f32(b))), {k});
}

/// t with a Broadcast axis at position `at` of the result, counted from its
/// end (-1: a new last axis).
TensorView* insert_broadcast(TensorView* t, int at) {
  std::vector<bool> flags(t->logical_no_reductions().size() + 1, false);
  flags[flags.size() - static_cast<size_t>(-at)] = true;
  return broadcast(t, flags);
}

/// The rank of an operand, which must be at least `least`.
size_t rank_at_least(std::string_view op, TensorView* t, size_t least, const char* shape) {
  size_t r = t->logical_no_reductions().size();
  user_assert(r >= least) << op << ": expected " << t->describe() << " to have shape " << shape
                          << " (rank >= " << least << "), found shape " << shape_str(t);
  return r;
}

}  // namespace

TensorView* matmul(TensorView* a, TensorView* b) {
  DataType t = contraction_dtype("matmul", a, b);
  rank_at_least("matmul", a, 2, "[..., M, K]");
  rank_at_least("matmul", b, 2, "[..., K, N]");
  check_contracted("matmul", a, norm_axis("matmul", a, -1), b, norm_axis("matmul", b, -2));
  // a [..., M, K, 1] * b [..., 1, K, N], summed over K: no operand is
  // permuted, so each keeps the layout it has in memory.
  TensorView* s = contract(insert_broadcast(a, -1), insert_broadcast(b, -3), -2);
  return s->dtype() == t ? s : tv(cast(s, t));
}

TensorView* linear(TensorView* x, TensorView* w, TensorView* bias) {
  DataType t = contraction_dtype("linear", x, w);
  rank_at_least("linear", x, 1, "[..., K]");
  user_assert(w->logical_no_reductions().size() == 2)
      << "linear: expected the weight " << w->describe() << " to have shape [N, K], found shape "
      << shape_str(w);
  check_contracted("linear", x, norm_axis("linear", x, -1), w, 1);
  // x [..., 1, K] * w [N, K] (w gains x's leading axes, NumPy-style), summed over K.
  TensorView* s = contract(insert_broadcast(x, -2), w, -1);
  if (bias) {
    user_assert(bias->dtype() == t)
        << "linear: expected the bias " << bias->describe() << " in " << dtype_name(t)
        << ", the input's dtype, found " << dtype_name(bias->dtype());
    auto bd = bias->logical_no_reductions();
    user_assert(bd.size() == 1 && bd[0]->extent().same_as(w->logical_no_reductions()[0]->extent()))
        << "linear: expected the bias " << bias->describe() << " to have shape ["
        << w->logical_no_reductions()[0]->extent().str() << "] (N of the weight), found shape "
        << shape_str(bias);
    s = tv(add(s, bias));
  }
  return s->dtype() == t ? s : tv(cast(s, t));
}

}  // namespace schedlab::ir
