// The fusion generator: random valid fusion text (schedlab/fuzz/fuzz.h).
//
// A fusion is of one of two kinds, drawn first. The general kind lives over a
// "full" shape of one to three named sizes (N, K, M); its inputs
// (inputs_gen.cpp) take the full shape, the full shape with size-1
// (Broadcast) axes, a lower rank, or no axes. The matmul kind (one case in
// eight or so, matmul_gen.cpp) starts with a contraction, matmul or linear,
// whose result shape is the full shape, then an epilogue: mostly pointwise
// steps reading a bias row, a column or a residual input, a GELU, and now and
// then any statement below. Statements are drawn one at a time from a menu of
// pointwise operations (unary, binary, where, cast), reductions (sum, max,
// min, prod, mean over one axis, several or all, with and without keepdim),
// explicit broadcasts that lift a lower-rank value back to the full rank, and
// two multi-line patterns (softmax and layernorm over a random axis). Each
// statement's operands are picked among the values whose shapes broadcast
// together (NumPy rules on names: equal, or "1" on one side), so the text
// always type-checks.
//
// Numerics. Validation compares f32 kernels with a double-precision
// reference at rtol 1e-5, so the generator keeps each value's magnitude
// bound (Value::bound) and wraps an operand in tanh() before an operation
// that would blow it up; log/sqrt/rsqrt/reciprocal read abs(v) + 1 (or
// abs(v)); comparisons read inputs only (a comparison of two computed values
// flips on rounding); narrowing casts appear only on outputs, where the
// output's own tolerance applies. None of this hides a lowering bug: the
// schedule decides every index and predicate whatever the values are.
// Half inputs (f16, bf16) make half chains: math on them stays in their type
// and rounds after every operation, as PyTorch's does (docs/fusion-text.md,
// "Data types"); the reference rounds the same way, and the campaign runs
// every third case with native half math (`--math native`). Value::half
// follows the type through unary, binary and where (feature half_math).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "fusion_gen.h"
#include "schedlab/base/error.h"

namespace schedlab::fuzz {

std::mt19937_64 case_rng(uint64_t seed, uint64_t index) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                    0x5c4ed1abu};
  return std::mt19937_64(seq);
}

std::string GenFusion::text() const {
  std::ostringstream os;
  os << "fusion: " << name << "\ninputs:\n";
  std::set<std::string> used;
  for (const GenInput& in : inputs) {
    os << "  " << in.name << ": {dtype: " << in.dtype << ", shape: [";
    for (size_t i = 0; i < in.shape.size(); ++i) {
      os << (i ? ", " : "") << in.shape[i];
      if (in.shape[i] != "1") used.insert(in.shape[i]);
    }
    os << "]}\n";
  }
  std::string sz;
  for (const auto& [k, v] : sizes)
    if (used.count(k)) sz += (sz.empty() ? "" : ", ") + k + ": " + std::to_string(v);
  if (!sz.empty()) os << "sizes: {" << sz << "}\n";
  os << "body: |\n";
  for (const GenStatement& s : body) os << "  " << s.name << " = " << s.expr << "\n";
  os << "outputs: [";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << outputs[i];
  os << "]\n";
  return os.str();
}

namespace gen {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape& lo = a.size() < b.size() ? a : b;
  Shape r = a.size() < b.size() ? b : a;
  const size_t off = r.size() - lo.size();
  for (size_t i = 0; i < lo.size(); ++i) {
    std::string& x = r[off + i];
    if (lo[i] == "1" || lo[i] == x) continue;
    if (x != "1") return std::nullopt;
    x = lo[i];
  }
  return r;
}

}  // namespace gen

namespace {

using gen::broadcast_shapes;
using gen::Shape;
using gen::Value;

class Generator : gen::Draws {
 public:
  Generator(std::mt19937_64& rng, const std::string& name) : Draws(rng) { f_.name = name; }

  GenFusion run() {
    // The kind is drawn on a stream of its own (seeded from a copy of rng_,
    // which it leaves untouched): a case that is not a matmul is the one it was.
    std::mt19937_64 kind_rng(std::mt19937_64(rng_)() ^ 0x6d61746d756cull);
    if (std::uniform_real_distribution<double>(0, 1)(kind_rng) < kMatmulChance) {
      contraction();
    } else {
      adopt(gen::draw_start(rng_));
      const int ops = 2 + pick(7);
      for (int i = 0; i < ops; ++i) step();
    }
    if (chance(0.25)) dead_statement();
    choose_outputs();
    reshape_tail();
    return std::move(f_);
  }

  /// Now and then (one case in six), a view of a computed value as an extra
  /// output: flatten of two adjacent axes, a reshape to one axis, or an
  /// unsqueeze, followed by a pointwise step on the view. Drawn on a stream
  /// of its own (seeded from a copy of rng_, which it leaves untouched), after
  /// everything else: the rest of a case is the one it was.
  void reshape_tail() {
    std::mt19937_64 vr(std::mt19937_64(rng_)() ^ 0x72657368617065ull);
    auto draw = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(vr); };
    if (draw(6) != 0) return;
    std::vector<size_t> c;
    for (size_t i = 0; i < values_.size(); ++i)
      if (!values_[i].is_input && !dead_.count(values_[i].name) && values_[i].usable &&
          values_[i].half.empty() && !values_[i].is_int && values_[i].shape.size() >= 1)
        c.push_back(i);
    if (c.empty()) return;
    const Value v = values_[c[static_cast<size_t>(draw(static_cast<int>(c.size())))]];
    const int rank = static_cast<int>(v.shape.size());
    std::string view;
    switch (rank >= 2 ? draw(3) : 1 + draw(2)) {
      case 0: {
        const int a = draw(rank - 1);
        view = "flatten(" + v.name + ", " + std::to_string(a) + ", " + std::to_string(a + 1) + ")";
        break;
      }
      case 1: view = "reshape(" + v.name + ", [-1])"; break;
      default: view = "unsqueeze(" + v.name + ", " + std::to_string(draw(rank + 1)) + ")"; break;
    }
    const std::string f = fresh(), g = fresh();
    f_.body.push_back({f, view, {v.name}});
    const std::string op = draw(2) ? "tanh(" + f + ") * 2" : f + " + 1";
    f_.body.push_back({g, op, {f}});
    f_.outputs.push_back(g);
    f_.features.insert("reshape");
  }

 private:
  /// Takes the sizes and inputs a kind's start drew.
  void adopt(gen::Start s) {
    full_ = std::move(s.full);
    f_.sizes = std::move(s.sizes);
    f_.inputs = std::move(s.inputs);
    values_ = std::move(s.values);
    f_.features.insert(s.features.begin(), s.features.end());
  }

  // ---- statements ----
  std::string fresh() { return "v" + std::to_string(++counter_); }

  /// Appends `name = expr` reading `uses`.
  Value& emit(const std::string& expr, std::vector<std::string> uses, Shape shape,
              std::vector<int> pos, double bound) {
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    Value v;
    v.name = fresh();
    v.shape = std::move(shape);
    v.pos = std::move(pos);
    v.bound = bound;
    f_.body.push_back({v.name, expr, uses});
    values_.push_back(v);
    return values_.back();
  }

  /// emit() of a value with `like`'s half type (Value::half): a pattern
  /// (reduction, softmax, layernorm) over a half value stays in its type.
  Value emit_as(const Value& like, const std::string& expr, std::vector<std::string> uses,
                Shape shape, std::vector<int> pos, double bound) {
    emit(expr, std::move(uses), std::move(shape), std::move(pos), bound);
    set_half(like.half);
    return values_.back();
  }

  /// An operand among the usable values that satisfy `ok`, recent values
  /// likelier (so chains form); nullopt if none does. A copy: emit() grows values_.
  std::optional<Value> try_pick(const std::function<bool(const Value&)>& ok = {}) {
    std::vector<size_t> c;
    for (size_t i = 0; i < values_.size(); ++i)
      if (values_[i].usable && (!ok || ok(values_[i]))) c.push_back(i);
    if (c.empty()) return std::nullopt;
    if (chance(0.5)) return values_[c.back()];
    return values_[one_of(c)];
  }
  /// try_pick for a predicate some value always satisfies.
  Value pick_value(const std::function<bool(const Value&)>& ok = {}) {
    std::optional<Value> v = try_pick(ok);
    internal_assert(v.has_value()) << "fuzz: no operand to pick";
    return *v;
  }

  /// The text that reads v as a float of magnitude at most `limit`.
  struct Operand {
    std::string text;
    double bound;
    std::string name;
  };
  Operand read(const Value& v, double limit = 1e30) {
    std::string t = v.name;
    double b = v.bound;
    if (v.is_int) {
      t = "cast(" + t + ", f32)";
      f_.features.insert("cast");
    }
    if (b > limit) {
      t = "tanh(" + t + ")";
      b = 1;
    }
    return {t, b, v.name};
  }

  void step() {
    const double u = uniform();
    if (u < 0.2) return unary();
    if (u < 0.45) return binary();
    if (u < 0.52) return where();
    if (u < 0.56) return cast_bool();
    if (u < 0.75) return reduction();
    if (u < 0.83) return softmax();
    if (u < 0.89) return layernorm();
    return lift();
  }

  void unary() {
    const Value v = pick_value();
    Operand a = read(v, 64);
    std::string e;
    double b = a.bound;
    switch (pick(11)) {
      case 0: e = "neg(" + a.text + ")"; break;
      case 1: e = "-" + paren(a.text); break;
      case 2: e = "abs(" + a.text + ")"; break;
      case 3: e = "relu(" + a.text + ")"; break;
      case 4: a = read(v, 1); e = "exp(" + a.text + ")"; b = std::exp(a.bound); break;
      case 5: e = "log(abs(" + a.text + ") + 1)"; b = std::log(a.bound + 1); break;
      case 6: e = "sqrt(abs(" + a.text + "))"; b = std::sqrt(a.bound); break;
      case 7: e = "rsqrt(abs(" + a.text + ") + 1)"; b = 1; break;
      case 8: e = "reciprocal(abs(" + a.text + ") + 1)"; b = 1; break;
      case 9: e = one_of<std::string>({"tanh", "sigmoid", "erf"}) + "(" + a.text + ")"; b = 1; break;
      default: e = "abs(" + a.text + ") * 0.5"; b = a.bound / 2; break;
    }
    f_.features.insert("unary");
    emit(e, {a.name}, v.shape, v.pos, b);
    set_half(v.half);
  }
  /// The last value's half type (Value::half): `half` ("" for f32).
  void set_half(const std::string& half) {
    values_.back().half = half;
    if (!half.empty()) f_.features.insert("half_math");
  }
  /// t as an operand of a binary operator: parenthesised unless it is one token.
  static std::string paren(const std::string& t) {
    return t.find(' ') == std::string::npos && t[0] != '-' ? t : "(" + t + ")";
  }

  /// Notes which kind of broadcast an operation between a and b performs.
  void note_broadcast(const Shape& a, const Shape& b) {
    if (a.size() != b.size()) f_.features.insert("broadcast_rank");
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 1; i <= n; ++i)
      if (a[a.size() - i] != b[b.size() - i]) f_.features.insert("broadcast_size1");
  }

  void binary() {
    // Operands of +, -, * are kept within 2 so that the f32 rounding of a
    // difference that cancels stays under the reference's absolute tolerance.
    const Value va = pick_value();
    std::optional<Value> vb;
    if (!chance(0.2))
      vb = pick_value([&](const Value& w) { return broadcast_shapes(va.shape, w.shape).has_value(); });
    const Value& a_copy = va;
    Operand a = read(a_copy, 2);
    Operand b = vb ? read(*vb, 2) : Operand{one_of<std::string>({"0.5", "2", "-1.5", "1.25"}), 2, ""};
    Shape shape = a_copy.shape;
    std::vector<int> pos = a_copy.pos;
    if (vb) {
      shape = *broadcast_shapes(a_copy.shape, vb->shape);
      if (vb->shape.size() > a_copy.shape.size()) pos = vb->pos;
      note_broadcast(a_copy.shape, vb->shape);
    }
    std::string e;
    double bound = 0;
    switch (pick(9)) {
      case 0: e = a.text + " + " + paren(b.text); bound = a.bound + b.bound; break;
      case 1: e = a.text + " - " + paren(b.text); bound = a.bound + b.bound; break;
      case 2: e = paren(a.text) + " * " + paren(b.text); bound = a.bound * b.bound; break;
      case 3: e = paren(a.text) + " / (abs(" + b.text + ") + 1)"; bound = a.bound; break;
      case 4: e = "maximum(" + a.text + ", " + b.text + ")"; bound = std::max(a.bound, b.bound); break;
      case 5: e = "min(" + a.text + ", " + b.text + ")"; bound = std::max(a.bound, b.bound); break;
      case 6: e = "add(" + a.text + ", " + b.text + ")"; bound = a.bound + b.bound; break;
      case 7: e = "mul(" + a.text + ", " + b.text + ")"; bound = a.bound * b.bound; break;
      default:
        a = read(a_copy, 2);
        e = paren(a.text) + " ** 2";
        bound = a.bound * a.bound;
        b.name.clear();
        shape = a_copy.shape;
        pos = a_copy.pos;
        break;
    }
    f_.features.insert("binary");
    emit(e, {a.name, b.name}, shape, pos, bound);
    set_half(!vb || vb->half == va.half ? va.half : "");
  }

  /// A comparison of inputs (exact on both sides), as a bool expression text.
  std::optional<std::pair<std::string, Value>> comparison() {
    std::vector<const Value*> ins;
    for (const Value& v : values_)
      if (v.is_input && v.usable && !v.is_int) ins.push_back(&v);
    if (ins.empty()) return std::nullopt;
    const Value& x = *one_of(ins);
    const std::string op = one_of<std::string>({"<", ">", "<=", ">=", "!="});
    return std::pair{x.name + " " + op + " " + one_of<std::string>({"0", "0.25", "-0.5"}), x};
  }

  void where() {
    auto cmp = comparison();
    if (!cmp) return unary();
    const Value c = cmp->second;
    const Value a =
        pick_value([&](const Value& w) { return broadcast_shapes(c.shape, w.shape).has_value(); });
    auto ca = *broadcast_shapes(c.shape, a.shape);
    std::optional<Value> b;
    if (chance(0.6)) {
      b = pick_value([&](const Value& w) { return broadcast_shapes(ca, w.shape).has_value(); });
      note_broadcast(ca, b->shape);
    }
    Operand oa = read(a, 4);
    Operand ob = b ? read(*b, 4) : Operand{"0", 0, ""};
    Shape shape = b ? *broadcast_shapes(ca, b->shape) : ca;
    std::vector<int> pos = c.pos;
    if (a.shape.size() > pos.size()) pos = a.pos;
    if (b && b->shape.size() > pos.size()) pos = b->pos;
    f_.features.insert("where");
    emit("where(" + cmp->first + ", " + oa.text + ", " + ob.text + ")", {c.name, oa.name, ob.name},
         shape, pos, std::max(oa.bound, ob.bound));
    set_half(!b || b->half == a.half ? a.half : "");
  }

  void cast_bool() {
    auto cmp = comparison();
    if (!cmp) return unary();
    f_.features.insert("cast");
    emit("cast(" + cmp->first + ", f32)", {cmp->second.name}, cmp->second.shape, cmp->second.pos, 1);
  }

  void reduction() {
    const Value v = pick_value([](const Value& w) { return !w.shape.empty(); });
    const int r = static_cast<int>(v.shape.size());
    std::vector<int> axes;
    std::string axis_text;
    const double u = uniform();
    if (u < 0.75 || r == 1) {
      const int a = pick(r);
      axes = {a};
      axis_text = ", axis=" + std::to_string(chance(0.2) ? a - r : a);
      f_.features.insert("reduce_axis_" + std::to_string(v.pos[static_cast<size_t>(a)]));
    } else if (u < 0.9) {
      const int a = pick(r - 1);
      axes = {a, a + 1 + pick(r - a - 1)};
      axis_text = ", axis=[" + std::to_string(axes[0]) + ", " + std::to_string(axes[1]) + "]";
      f_.features.insert("reduce_several_axes");
    } else {
      for (int i = 0; i < r; ++i) axes.push_back(i);
      f_.features.insert("reduce_all_axes");
    }
    const bool keepdim = chance(0.5);
    f_.features.insert(keepdim ? "reduce_keepdim" : "reduce_no_keepdim");
    int64_t count = 1;
    for (int a : axes) count *= extent(v.shape[static_cast<size_t>(a)]);
    const std::string op = one_of<std::string>({"sum", "max", "min", "prod", "mean", "sum", "max"});
    f_.features.insert("reduce_" + op);
    Operand in = read(v, 4);
    double bound = in.bound;
    if (op == "sum") bound = in.bound * static_cast<double>(count);
    if (op == "prod") {  // factors in (0.75, 1.25): the product neither explodes nor flips sign
      in.text = "tanh(" + in.text + ") * 0.25 + 1";
      bound = std::pow(1.25, static_cast<double>(count));
      if (bound > 1e4) bound = 1e4;  // typical products of many factors shrink toward 0
    }
    Shape shape;
    std::vector<int> pos;
    for (int i = 0; i < r; ++i) {
      const bool red = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (red && !keepdim) continue;
      shape.push_back(red ? "1" : v.shape[static_cast<size_t>(i)]);
      pos.push_back(v.pos[static_cast<size_t>(i)]);
    }
    // a reduction of a half gives the half type (f32 accumulation, one rounding)
    emit_as(v, op + "(" + in.text + axis_text + (keepdim ? ", keepdim=true" : "") + ")", {in.name},
            shape, pos, bound);
  }

  int64_t extent(const std::string& s) const { return s == "1" ? 1 : f_.sizes.at(s); }

  /// A full-rank (or any) float value of rank >= 1 and one of its axes.
  std::pair<Value, int> pattern_source() {
    const Value v = pick_value([](const Value& w) { return !w.shape.empty(); });
    return {v, pick(static_cast<int>(v.shape.size()))};
  }

  void softmax() {
    const auto [v, a] = pattern_source();
    Operand x = read(v, 8);
    const std::string ax = ", axis=" + std::to_string(a) + ", keepdim=true)";
    // every value of the pattern has v's type (half math rounds after each op)
    const Value m = emit_as(v, "max(" + x.text + ax, {x.name}, keep(v.shape, a), v.pos, x.bound);
    f_.features.insert("softmax");
    if (chance(0.3)) {  // one line: the exp appears twice
      const std::string e = "exp(" + x.text + " - " + m.name + ")";
      emit_as(v, e + " / sum(" + e + ax, {x.name, m.name}, v.shape, v.pos, 1);
      return;
    }
    const Value e =
        emit_as(v, "exp(" + x.text + " - " + m.name + ")", {x.name, m.name}, v.shape, v.pos, 1);
    const Value s = emit_as(v, "sum(" + e.name + ax, {e.name}, keep(v.shape, a), v.pos,
                            static_cast<double>(extent(v.shape[static_cast<size_t>(a)])));
    if (chance(0.25))  // log_softmax
      emit_as(v, paren(x.text) + " - " + m.name + " - log(" + s.name + ")",
              {x.name, m.name, s.name}, v.shape, v.pos, 2 * x.bound + std::log(s.bound) + 1);
    else
      emit_as(v, e.name + " / " + s.name, {e.name, s.name}, v.shape, v.pos, 1);
  }

  void layernorm() {
    const auto [v, a] = pattern_source();
    Operand x = read(v, 2);
    const std::string ax = ", axis=" + std::to_string(a) + ", keepdim=true)";
    const std::string& size = v.shape[static_cast<size_t>(a)];
    const Value mu = emit_as(v, "mean(" + x.text + ax, {x.name}, keep(v.shape, a), v.pos, x.bound);
    const Value d =
        emit_as(v, paren(x.text) + " - " + mu.name, {x.name, mu.name}, v.shape, v.pos, 2 * x.bound);
    // var / size (a named size as a value) or mean(); eps 0.1 bounds the
    // amplification of rounding in d by rsqrt to about 3.
    const Value var = size != "1" && chance(0.6)
                          ? emit_as(v, "sum(" + d.name + " * " + d.name + ax + " / " + size,
                                    {d.name}, keep(v.shape, a), v.pos, 4 * x.bound * x.bound)
                          : emit_as(v, "mean(" + d.name + " * " + d.name + ax, {d.name},
                                    keep(v.shape, a), v.pos, 4 * x.bound * x.bound);
    f_.features.insert("layernorm");
    emit_as(v, d.name + " * rsqrt(" + var.name + " + 0.1)", {d.name, var.name}, v.shape, v.pos,
            2 * x.bound * 3.2);
  }

  static Shape keep(Shape s, int a) {
    s[static_cast<size_t>(a)] = "1";
    return s;
  }

  /// broadcast(v, flags): a lower-rank value back at its full-shape positions.
  void lift() {
    const size_t r = full_.size();
    const std::optional<Value> lo = try_pick([&](const Value& w) { return w.shape.size() < r; });
    if (!lo) return binary();
    const Value& v = *lo;
    std::string flags;
    Shape shape;
    std::vector<int> pos;
    for (size_t p = 0; p < r; ++p) {
      auto it = std::find(v.pos.begin(), v.pos.end(), static_cast<int>(p));
      const bool b = it == v.pos.end();
      flags += std::string(p ? ", " : "") + (b ? "true" : "false");
      shape.push_back(b ? "1" : v.shape[static_cast<size_t>(it - v.pos.begin())]);
      pos.push_back(static_cast<int>(p));
    }
    f_.features.insert("broadcast_explicit");
    Operand x = read(v);
    emit("broadcast(" + x.text + ", [" + flags + "])", {x.name}, shape, pos, x.bound);
  }

  // ---- the matmul kind (matmul_gen.cpp) ----
  static constexpr double kMatmulChance = 0.12;

  /// A contraction over the sizes and inputs draw_matmul chose, then a
  /// pointwise epilogue of zero to four steps.
  void contraction() {
    gen::MatmulStart m = gen::draw_matmul(rng_);
    adopt(m);
    std::vector<int> pos;
    for (size_t p = 0; p < full_.size(); ++p) pos.push_back(static_cast<int>(p));
    emit(m.expr, m.uses, full_, pos, m.bound);
    for (int i = pick(5); i > 0; --i) epilogue_step();
  }

  void epilogue_step() {
    const double u = uniform();
    if (u < 0.3) return epilogue_input();
    if (u < 0.45) return gelu();
    if (u < 0.65) return unary();
    if (u < 0.75) return binary();
    if (u < 0.8) return where();
    if (u < 0.85) return widen();
    return step();  // anything: a reduction or a softmax after the matmul too
  }

  /// A computed value, the latest likelier.
  Value computed() { return pick_value([](const Value& w) { return !w.is_input; }); }

  /// A computed value plus, minus or times an epilogue input that
  /// broadcasts with it: a bias row, a column, a residual.
  void epilogue_input() {
    const Value h = computed();
    const std::optional<Value> in = try_pick(
        [&](const Value& w) { return w.is_input && broadcast_shapes(h.shape, w.shape).has_value(); });
    if (!in) return binary();
    const Operand a = read(h, 64), b = read(*in);
    const std::string op = one_of<std::string>({" + ", " - ", " * "});
    const double bound = op == " * " ? a.bound * b.bound : a.bound + b.bound;
    f_.features.insert("epilogue_" + in->name);
    note_broadcast(h.shape, in->shape);
    emit(paren(a.text) + op + b.text, {a.name, b.name}, *broadcast_shapes(h.shape, in->shape),
         in->shape.size() > h.shape.size() ? in->pos : h.pos, bound);
  }

  void gelu() {
    const Value v = computed();
    const Operand x = read(v, 256);  // x ** 3 of the tanh form stays far from overflow
    f_.features.insert("epilogue_gelu");
    emit(gen::gelu(paren(x.text), pick(3)), {x.name}, v.shape, v.pos, x.bound);
  }

  /// cast(v, f32): exact from bf16 or f16, a no-op from f32.
  void widen() {
    const Value v = computed();
    f_.features.insert("cast");
    emit("cast(" + v.name + ", f32)", {v.name}, v.shape, v.pos, v.bound);
  }

  /// A statement nothing reads (issue #11's reproducers 1 and 2).
  void dead_statement() {
    const std::optional<Value> v = try_pick([](const Value& w) { return !w.is_input; });
    if (!v) return;
    Operand x = read(*v, 64);
    Value& d = emit(one_of<std::string>({"abs(", "neg(", "tanh("}) + x.text + ")", {x.name}, v->shape,
                    v->pos, x.bound);
    d.usable = false;
    dead_.insert(d.name);
    f_.features.insert("dead_statement");
  }

  void choose_outputs() {
    // The last live statement is always an output.
    std::vector<const Value*> stmts;
    for (const Value& v : values_)
      if (!v.is_input && !dead_.count(v.name)) stmts.push_back(&v);
    internal_assert(!stmts.empty()) << "fuzz: a fusion without statements";
    std::vector<std::string> outs = {stmts.back()->name};
    if (chance(0.35)) {
      for (int k = 1 + pick(2); k > 0; --k) {
        const std::string& n = one_of(stmts)->name;
        if (std::find(outs.begin(), outs.end(), n) == outs.end()) outs.push_back(n);
      }
    }
    if (outs.size() > 1) f_.features.insert("multiple_outputs");
    // A narrow output: the cast's rounding is within the output's own tolerance.
    if (chance(0.08)) {
      const Value last = *stmts.back();
      Operand x = read(last, 64);
      const std::string t = chance(0.5) ? "f16" : "bf16";
      outs[0] = emit("cast(" + x.text + ", " + t + ")", {x.name}, last.shape, last.pos, x.bound).name;
      f_.features.insert("cast");
      f_.features.insert("output_" + t);
    }
    if (chance(0.04)) {  // a copy of an input as an output (an input itself cannot be one)
      const Value x = values_.front();
      outs.push_back(emit("set(" + x.name + ")", {x.name}, x.shape, x.pos, x.bound).name);
      f_.features.insert("copy");
    }
    // Statements not read by any output are dead too (not only dead_statement's).
    std::set<std::string> live(outs.begin(), outs.end());
    for (auto it = f_.body.rbegin(); it != f_.body.rend(); ++it)
      if (live.count(it->name)) live.insert(it->uses.begin(), it->uses.end());
    for (const GenStatement& s : f_.body)
      if (!live.count(s.name)) f_.features.insert("dead_statement");
    f_.outputs = outs;
  }

  GenFusion f_;
  Shape full_;
  std::vector<Value> values_;
  std::set<std::string> dead_;
  int counter_ = 0;
};

}  // namespace

GenFusion generate_fusion(std::mt19937_64& rng, const std::string& name) {
  return Generator(rng, name).run();
}

}  // namespace schedlab::fuzz
