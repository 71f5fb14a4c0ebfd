// The reference evaluator: interprets an unscheduled fusion's math in double.
//
// Every tensor is a HostTensor of its non-reduction logical shape. Elementwise
// operands have the output's rank (the builder inserted BroadcastOps); an
// operand axis of extent 1 stretches to the output's extent, and a Scalar
// operand is a constant. Only CastOp and half ops (rounded once to their
// f16/bf16 result) round; everything else stays in double,
// and each element's forward error bound (error_bound.h) says how far a
// kernel computing in the tensors' own types may lie from it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/ref/evaluator.h"

#include "schedlab/ir/reshape.h"

#include "error_bound.h"

namespace schedlab::ref {

namespace {

using Env = std::unordered_map<const ir::TensorView*, HostTensor>;
using Index = std::vector<int64_t>;

std::string shape_str(const Index& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

/// Calls fn(index, linear) for every element of `shape`, in row-major order.
template <typename Fn>
void for_each_index(const Index& shape, Fn fn) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  Index idx(shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    fn(idx, lin);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t offset(const Index& idx, const Index& strides) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
  return off;
}

const HostTensor& lookup(const Env& env, const ir::TensorView* t) {
  auto it = env.find(t);
  if (it == env.end()) {
    user_assert(t->definition() != nullptr)
        << "evaluate: " << t->describe()
        << " is read but is neither a fusion input nor computed by an expression";
    internal_error << "evaluate: " << t->describe() << " is read before it is computed";
  }
  return it->second;
}

HostTensor alloc(const ir::TensorView* t, const ir::SizeBindings& sizes) {
  // The value and its error bound, both double.
  HostTensor h{t->dtype(), allocatable_shape(t, sizes, 2 * sizeof(double)), {}, {}};
  h.data.resize(static_cast<size_t>(h.numel()));
  h.error.resize(h.data.size());
  return h;
}

double error_of(const HostTensor& t, size_t i) { return t.error.empty() ? 0.0 : t.error[i]; }

/// An elementwise operand read at output indices.
class Operand {
 public:
  Operand(const ir::Val* v, const Index& out_shape, const Env& env, const ir::SizeBindings& sizes) {
    if (const auto* s = v->as<ir::Scalar>()) {
      auto value = s->evaluate(sizes);
      user_assert(value.has_value()) << "evaluate: size " << s->str() << " is unbound";
      scalar_ = *value;
      return;
    }
    const auto* t = v->as<ir::TensorView>();
    tensor_ = &lookup(env, t);
    internal_assert(tensor_->shape.size() == out_shape.size())
        << "evaluate: operand " << t->describe() << " has shape " << shape_str(tensor_->shape)
        << ", not the rank of the output shape " << shape_str(out_shape);
    strides_ = tensor_->strides();
    for (size_t i = 0; i < out_shape.size(); ++i) {
      int64_t e = tensor_->shape[i];
      internal_assert(e == out_shape[i] || e == 1)
          << "evaluate: operand " << t->describe() << " of shape " << shape_str(tensor_->shape)
          << " does not broadcast to " << shape_str(out_shape);
      if (e != out_shape[i]) strides_[i] = 0;
    }
  }
  double at(const Index& idx) const {
    return tensor_ ? tensor_->data[static_cast<size_t>(offset(idx, strides_))] : scalar_;
  }
  double error_at(const Index& idx) const {
    return tensor_ ? error_of(*tensor_, static_cast<size_t>(offset(idx, strides_))) : 0.0;
  }
  bool is_bool() const { return tensor_ && tensor_->dtype == ir::DataType::Bool; }

 private:
  const HostTensor* tensor_ = nullptr;
  double scalar_ = 0.0;
  Index strides_;
};

/// fn(operands at i) for the elements of an elementwise expression's output,
/// and each one's error bound: fn's largest change over the operands' bounds,
/// plus the absolute rounding(operands, result) of computing it
/// (error_bound.h).
class Elementwise {
 public:
  using Fn = std::function<double(const double*)>;
  using Rounding = std::function<double(const double*, double)>;
  Elementwise(const ir::Expr& e, const Index& shape, const Env& env, const ir::SizeBindings& sizes,
              Fn fn, Rounding rounding)
      : fn_(std::move(fn)), rounding_(std::move(rounding)) {
    for (const ir::Val* v : e.inputs()) ops_.emplace_back(v, shape, env, sizes);
    vals_.resize(ops_.size());
    errs_.resize(ops_.size());
    bools_.reset(new bool[ops_.size()]);
    for (size_t k = 0; k < ops_.size(); ++k) bools_[k] = ops_[k].is_bool();
  }
  /// The element at idx: its value, and its error bound in `error`.
  double at(const Index& idx, double& error) {
    for (size_t k = 0; k < ops_.size(); ++k) {
      vals_[k] = ops_[k].at(idx);
      errs_[k] = ops_[k].error_at(idx);
    }
    const double r = fn_(vals_.data());
    error = detail::elementwise_bound(fn_, vals_.data(), errs_.data(), bools_.get(), ops_.size(),
                                      rounding_(vals_.data(), r));
    return r;
  }

 private:
  Fn fn_;
  Rounding rounding_;
  std::vector<Operand> ops_;
  std::vector<double> vals_, errs_;
  std::unique_ptr<bool[]> bools_;
};

/// Where a reduction reads its input's elements: a computed tensor, or one
/// computed element by element as the reduction visits it (a product read
/// only by its sum, never held: a matmul's [M, K, N] would not fit).
using Source = std::function<double(const Index& idx, int64_t lin, double& error)>;

Source tensor_source(const HostTensor& in) {
  return [&in](const Index&, int64_t lin, double& error) {
    error = error_of(in, static_cast<size_t>(lin));
    return in.data[static_cast<size_t>(lin)];
  };
}

/// `op` of `in` over the Reduction axes of `t`, the tensor it defines.
HostTensor reduce(ir::ReductionOpType op, const ir::TensorView* t, const Index& in_shape,
                  const Source& in, const ir::SizeBindings& sizes) {
  HostTensor out = alloc(t, sizes);
  std::fill(out.data.begin(), out.data.end(), ir::reduction_init(op));
  // Input axis i lands on output stride out_strides[i]; reduced axes on 0.
  const auto& logical = t->logical();
  internal_assert(logical.size() == in_shape.size())
      << "evaluate: reduction " << t->describe() << " has " << logical.size()
      << " logical axes for an input of shape " << shape_str(in_shape);
  Index kept_strides = out.strides(), out_strides;
  size_t k = 0;
  for (const ir::IterDomain* id : logical)
    out_strides.push_back(id->is_reduction() ? 0 : kept_strides[k++]);
  // Error bounds (error_bound.h): the operands' bounds combined; a sum adds
  // lambda u sqrt(Q) + A + u |s_n|, Q the larger of the squared partial sums
  // in index order (the order this loop visits each output's elements in)
  // and their expectation over the other orders
  // (detail::sum_partials_expected), A the terms absorbed in index order.
  const double u = detail::compute_roundoff(t->dtype());
  const bool sum = op == ir::ReductionOpType::Sum;
  std::vector<double> squares(sum ? out.data.size() : 0, 0.0);
  std::vector<double> x_squares(sum ? out.data.size() : 0, 0.0);
  std::vector<double> absorbed(sum ? out.data.size() : 0, 0.0);
  std::vector<int64_t> count(sum ? out.data.size() : 0, 0);
  for_each_index(in_shape, [&](const Index& idx, int64_t lin) {
    const size_t o = static_cast<size_t>(offset(idx, out_strides));
    double ex = 0.0;
    const double x = in(idx, lin, ex);
    double& acc = out.data[o];
    double& err = out.error[o];
    switch (op) {
      case ir::ReductionOpType::Sum: {
        err += ex;
        const double before = acc;
        acc += x;
        x_squares[o] += x * x;
        // The first element enters exactly (0 + x); every later one rounds.
        if (count[o]++ == 0) return;
        squares[o] += acc * acc;
        // A term below the accumulator's spacing is absorbed or rounds a
        // whole spacing: errors of one sign over a long serial sum of like
        // terms, counted with their signs (error_bound.h).
        const double big = std::max(std::fabs(before), std::fabs(acc));
        if (big > 0 && u > 0) {
          int e2;
          std::frexp(big, &e2);  // big = f 2^e2, f in [0.5, 1): spacing u 2^e2
          const double spacing = std::ldexp(u, e2);
          // Absorbed (-x) or rounded to a whole spacing (sign(x) g - x).
          if (std::fabs(x) < spacing)
            absorbed[o] += std::fabs(x) < spacing / 2 ? -x : std::copysign(spacing, x) - x;
        }
        return;
      }
      case ir::ReductionOpType::Prod:
        err = std::fabs(acc) * ex + std::fabs(x) * err + err * ex + u * std::fabs(acc * x);
        break;
      case ir::ReductionOpType::Max:
      case ir::ReductionOpType::Min: err = std::max(err, ex); break;
    }
    acc = ir::apply_reduction(op, acc, x);
  });
  // A result stored in a half type rounds to it (arith reduces half inputs
  // in f32, so this guards a fusion built otherwise).
  if (detail::storage_roundoff(t->dtype()) > u)
    for (size_t o = 0; o < out.data.size(); ++o)
      out.error[o] += detail::storage_rounding(t->dtype(), out.data[o]);
  if (sum) {
    // Below the smallest normal a rounding is absolute: at most u * tiny per addition.
    const double tiny = u == 0x1p-53 ? 0x1p-1022 : 0x1p-126;
    for (size_t o = 0; o < out.data.size(); ++o) {
      const double q = std::max(
          squares[o], detail::sum_partials_expected(count[o], out.data[o], x_squares[o]));
      out.error[o] += detail::kSumLambda * u * std::sqrt(q) + std::fabs(absorbed[o]) +
                      u * std::fabs(out.data[o]) + static_cast<double>(count[o]) * u * tiny;
    }
  }
  for (size_t o = 0; o < out.data.size(); ++o)
    if (!std::isfinite(out.data[o])) out.error[o] = 0.0;
  return out;
}

/// An MmaOp: the products of its operands over its output's whole logical
/// shape (exact for half operands, one f32 rounding for f32 ones), then
/// their sum, as a reduction of them; each product computed as the sum
/// visits it.
HostTensor mma(const ir::MmaOp& m, const Env& env, const ir::SizeBindings& sizes) {
  const HostTensor& a = lookup(env, m.a());
  const HostTensor& b = lookup(env, m.b());
  Index shape;
  for (size_t i = 0; i < a.shape.size(); ++i) shape.push_back(std::max(a.shape[i], b.shape.at(i)));
  const Operand oa(m.a(), shape, env, sizes), ob(m.b(), shape, env, sizes);
  const double u = ir::is_half(m.a()->dtype()) ? 0.0 : detail::compute_roundoff(ir::DataType::F32);
  const Source products = [&](const Index& idx, int64_t, double& error) {
    const double x = oa.at(idx), y = ob.at(idx), ex = oa.error_at(idx), ey = ob.error_at(idx);
    error = std::fabs(x) * ey + std::fabs(y) * ex + ex * ey + u * std::fabs(x * y);
    return x * y;
  };
  return reduce(ir::ReductionOpType::Sum, m.out(), shape, products, sizes);
}

HostTensor permute(const ir::PermuteOp& p, const Env& env, const ir::SizeBindings& sizes) {
  const HostTensor& in = lookup(env, p.in());
  HostTensor out = alloc(p.out(), sizes);
  // Output axis k walks input axis new2old[k].
  Index in_strides = in.strides(), strides;
  for (size_t k = 0; k < p.new2old().size(); ++k) {
    auto a = static_cast<size_t>(p.new2old()[k]);
    internal_assert(in.shape.at(a) == out.shape.at(k))
        << "evaluate: permute " << p.out()->describe() << " axis " << k << " has extent "
        << out.shape[k] << " but reads input axis " << a << " of extent " << in.shape[a];
    strides.push_back(in_strides[a]);
  }
  for_each_index(out.shape, [&](const Index& idx, int64_t lin) {
    const auto from = static_cast<size_t>(offset(idx, strides));
    out.data[static_cast<size_t>(lin)] = in.data[from];
    out.error[static_cast<size_t>(lin)] = error_of(in, from);
  });
  return out;
}

/// A reshape keeps the row-major order of the elements (its Broadcast axes,
/// old or new, have extent 1); an expand reads index 0 of each widened axis.
HostTensor view(const ir::ViewOp& v, const Env& env, const ir::SizeBindings& sizes) {
  const HostTensor& in = lookup(env, v.in());
  HostTensor out = alloc(v.out(), sizes);
  if (!v.is_expand()) {
    user_assert(in.data.size() == out.data.size())
        << "evaluate: " << v.fn() << " of " << v.in()->describe() << " of shape "
        << shape_str(in.shape) << " into " << v.out()->describe() << " of shape "
        << shape_str(out.shape) << " changes the element count; expected sizes that keep it";
    out.data = in.data;
    out.error.assign(out.data.size(), 0.0);
    if (!in.error.empty()) out.error = in.error;
    return out;
  }
  internal_assert(in.shape.size() == out.shape.size())
      << "evaluate: expand " << v.out()->describe() << " changes the rank";
  Index strides = in.strides();
  for (size_t k = 0; k < strides.size(); ++k)
    if (in.shape[k] != out.shape[k]) strides[k] = 0;
  for_each_index(out.shape, [&](const Index& idx, int64_t lin) {
    const auto from = static_cast<size_t>(offset(idx, strides));
    out.data[static_cast<size_t>(lin)] = in.data[from];
    out.error[static_cast<size_t>(lin)] = error_of(in, from);
  });
  return out;
}

/// The per-element evaluator of an elementwise expression (unary, binary,
/// where, cast, copy) over `shape`, its output's; null for other kinds.
std::unique_ptr<Elementwise> elementwise_of(const ir::Expr& e, const Index& shape, const Env& env,
                                            const ir::SizeBindings& sizes,
                                            const EvalOptions& options) {
  // The arithmetic's unit roundoff: that of the operands' type (a comparison
  // of floats is exact, its bool result has none).
  double u = detail::compute_roundoff(e.out()->dtype());
  for (const ir::Val* v : e.inputs())
    if (v->is<ir::TensorView>()) u = std::max(u, detail::compute_roundoff(v->dtype()));
  // A result stored in a half type rounds to it (the kernel's tensor holds
  // f16/bf16; the reference keeps the double): the IR's arithmetic casts half
  // operands to f32, so this guards a fusion built otherwise.
  const ir::DataType out_t = e.out()->dtype();
  const bool half_store = detail::storage_roundoff(out_t) > u;
  const auto op_rounding = [&e, u, fast = options.fast_math, out_t, half_store](const double* v,
                                                                               double r) {
    return detail::op_rounding(e, fast, v, r, u) +
           (half_store ? detail::storage_rounding(out_t, r) : 0.0);
  };
  const auto exact = [out_t, half_store](const double*, double r) {
    return half_store ? detail::storage_rounding(out_t, r) : 0.0;
  };
  const auto make = [&](Elementwise::Fn fn, Elementwise::Rounding rounding) {
    return std::make_unique<Elementwise>(e, shape, env, sizes, std::move(fn), std::move(rounding));
  };
  // A half op (ir::half_op_is_native: neg, abs, +, -, * of one half type)
  // is its exact result rounded once to the half type, which every kernel
  // computes bit for bit (through f32, or a native __hmul/__hmul2): the
  // reference rounds as a cast does.
  const auto no_rounding = [](const double*, double) { return 0.0; };
  switch (e.kind()) {
    case ir::Expr::Kind::Unary: {
      ir::UnaryOpType op = e.as<ir::UnaryOp>()->op();
      if (ir::is_half(out_t))
        return make([op, out_t](const double* v) {
          return ir::round_to_dtype(ir::apply_unary(op, v[0]), out_t);
        }, no_rounding);
      return make([op](const double* v) { return ir::apply_unary(op, v[0]); }, op_rounding);
    }
    case ir::Expr::Kind::Binary: {
      ir::BinaryOpType op = e.as<ir::BinaryOp>()->op();
      if (ir::is_half(out_t))
        return make([op, out_t](const double* v) {
          return ir::round_to_dtype(ir::apply_binary(op, v[0], v[1]), out_t);
        }, no_rounding);
      return make([op](const double* v) { return ir::apply_binary(op, v[0], v[1]); },
                  op_rounding);
    }
    case ir::Expr::Kind::Where:
      return make([](const double* v) { return v[0] != 0.0 ? v[1] : v[2]; }, exact);
    case ir::Expr::Kind::Cast: {
      // The reference rounds as the kernel does: the interval's corners
      // see where it may round otherwise (or cross an integer).
      ir::DataType t = e.out()->dtype();
      return make([t](const double* v) { return ir::round_to_dtype(v[0], t); },
                  [](const double*, double) { return 0.0; });
    }
    case ir::Expr::Kind::LoadStore:  // a copy: same dtype, exact
      return make([](const double* v) { return v[0]; },
                  [](const double*, double) { return 0.0; });
    default:
      return nullptr;
  }
}

HostTensor run(const ir::Expr& e, const Env& env, const ir::SizeBindings& sizes,
               const EvalOptions& options) {
  if (e.kind() != ir::Expr::Kind::Broadcast && e.kind() != ir::Expr::Kind::Reduction &&
      e.kind() != ir::Expr::Kind::Mma && e.kind() != ir::Expr::Kind::Permute &&
      e.kind() != ir::Expr::Kind::View) {
    HostTensor out = alloc(e.out(), sizes);
    std::unique_ptr<Elementwise> ew = elementwise_of(e, out.shape, env, sizes, options);
    internal_assert(ew != nullptr) << "evaluate: unknown expression " << e.op_name();
    for_each_index(out.shape, [&](const Index& idx, int64_t lin) {
      out.data[static_cast<size_t>(lin)] = ew->at(idx, out.error[static_cast<size_t>(lin)]);
    });
    return out;
  }
  switch (e.kind()) {
    case ir::Expr::Kind::Broadcast: {
      // New extent-1 axes do not move any element in row-major order.
      HostTensor out = alloc(e.out(), sizes);
      const HostTensor& in = lookup(env, e.as<ir::BroadcastOp>()->in());
      internal_assert(in.data.size() == out.data.size())
          << "evaluate: broadcast " << e.out()->describe() << " of shape " << shape_str(out.shape)
          << " from input of shape " << shape_str(in.shape);
      out.data = in.data;
      if (!in.error.empty()) out.error = in.error;
      return out;
    }
    case ir::Expr::Kind::Reduction: {
      const auto* r = e.as<ir::ReductionOp>();
      const ir::TensorView* in = r->in();
      if (env.count(in)) {
        const HostTensor& t = lookup(env, in);
        return reduce(r->op(), r->out(), t.shape, tensor_source(t), sizes);
      }
      // Streamed (see streamed()): its elements computed as the reduction
      // visits them, in the same order and with the same bounds.
      const Index shape = concrete_shape(in, sizes);
      std::unique_ptr<Elementwise> ew = elementwise_of(*in->definition(), shape, env, sizes, options);
      internal_assert(ew != nullptr) << "evaluate: " << in->describe() << " is not computed";
      const Source source = [&ew](const Index& idx, int64_t, double& error) {
        return ew->at(idx, error);
      };
      return reduce(r->op(), r->out(), shape, source, sizes);
    }
    case ir::Expr::Kind::Mma:
      return mma(*e.as<ir::MmaOp>(), env, sizes);
    case ir::Expr::Kind::Permute:
      return permute(*e.as<ir::PermuteOp>(), env, sizes);
    case ir::Expr::Kind::View:
      return view(*e.as<ir::ViewOp>(), env, sizes);
    default:
      break;
  }
  internal_error << "evaluate: unknown expression " << e.op_name();
}

/// The tensors a reduction reads element by element instead of from a
/// computed tensor: computed elementwise, read by that one reduction alone,
/// not a fusion output (a matmul's product: [M, K, N] values, read once).
std::unordered_set<const ir::TensorView*> streamed(const ir::Fusion& f,
                                                   const std::vector<ir::Expr*>& exprs) {
  std::unordered_map<const ir::TensorView*, int> reads;
  for (const ir::Expr* e : exprs)
    for (const ir::Val* v : e->inputs())
      if (const auto* t = v->as<ir::TensorView>()) ++reads[t];
  std::unordered_set<const ir::TensorView*> outputs(f.outputs().begin(), f.outputs().end());
  std::unordered_set<const ir::TensorView*> out;
  for (const ir::Expr* e : exprs) {
    if (e->kind() != ir::Expr::Kind::Reduction) continue;
    const ir::TensorView* in = e->as<ir::ReductionOp>()->in();
    const ir::Expr* def = in->definition();
    if (def == nullptr || reads[in] != 1 || outputs.count(in)) continue;
    const ir::Expr::Kind k = def->kind();
    if (k == ir::Expr::Kind::Unary || k == ir::Expr::Kind::Binary || k == ir::Expr::Kind::Where ||
        k == ir::Expr::Kind::Cast || k == ir::Expr::Kind::LoadStore)
      out.insert(in);
  }
  return out;
}

}  // namespace

std::vector<HostTensor> evaluate(const ir::Fusion& f, const std::vector<HostTensor>& inputs,
                                 const ir::SizeBindings& sizes, const EvalOptions& options) {
  user_assert(inputs.size() == f.inputs().size())
      << "evaluate: fusion '" << f.name() << "' has " << f.inputs().size() << " inputs, but "
      << inputs.size() << " tensors were given";
  const std::string why = ir::check_view_sizes(f, sizes);
  user_assert(why.empty()) << "evaluate: " << why;
  Env env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorView* tv = f.inputs()[i];
    const HostTensor& in = inputs[i];
    Index expected = concrete_shape(tv, sizes);
    user_assert(in.shape == expected)
        << "evaluate: input " << i << " (" << tv->describe() << ") has shape "
        << shape_str(in.shape) << ", expected " << shape_str(expected);
    user_assert(in.dtype == tv->dtype())
        << "evaluate: input " << i << " (" << tv->describe() << ") has dtype "
        << ir::dtype_name(in.dtype) << ", expected " << ir::dtype_name(tv->dtype());
    user_assert(static_cast<int64_t>(in.data.size()) == in.numel())
        << "evaluate: input " << i << " (" << tv->describe() << ") holds " << in.data.size()
        << " values, expected " << in.numel() << " for shape " << shape_str(in.shape);
    env[tv] = in;
  }
  const std::vector<ir::Expr*> exprs = f.exprs_for_outputs();
  const std::unordered_set<const ir::TensorView*> skip = streamed(f, exprs);
  for (const ir::Expr* e : exprs)
    if (!skip.count(e->out())) env[e->out()] = run(*e, env, sizes, options);
  std::vector<HostTensor> outs;
  for (const ir::TensorView* o : f.outputs()) outs.push_back(lookup(env, o));
  return outs;
}

}  // namespace schedlab::ref
