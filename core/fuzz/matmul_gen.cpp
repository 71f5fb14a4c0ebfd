// The matmul kind of the fusion generator (fusion_gen.h): a contraction,
// `matmul(a, b)` or `linear(x, w[, bias])`, and the inputs its epilogue reads.
//
// ir::matmul and ir::linear are composites (broadcast, f32 multiply, a sum
// over K, a cast back to the operands' dtype), so what the fuzzer exercises
// is a reduction over a middle axis ([..., M, rK, N], matmul) or the last one
// ([..., M, N, rK], linear) whose operands both broadcast, followed by a
// pointwise epilogue in one segment. Sizes are 1, odd, and multiples of 8 and
// 16 (a tensor-core tile's), at most 2^14 multiply-adds so that an emulated
// kernel, even one that keeps the broadcast product in memory, runs in well
// under a second.
#include <algorithm>

#include "fusion_gen.h"

namespace schedlab::fuzz::gen {

namespace {

class MatmulDraw : Draws {
 public:
  using Draws::Draws;

  MatmulStart run() {
    // Mostly half operands: the ones tensor cores take (schedule_gen.cpp's
    // tensor-core draw, the matmul plugin's mma schedule).
    dtype_ = one_of<std::string>({"bf16", "bf16", "f16", "f16", "f32"});
    s_.features.insert("matmul_" + dtype_);
    draw_sizes();
    if (chance(0.6))
      matmul();
    else
      linear();
    epilogue_inputs();
    return std::move(s_);
  }

 private:
  void draw_sizes() {
    auto& z = s_.sizes;
    const std::vector<int64_t> mn = {1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 24, 31, 32, 33, 48, 64, 100, 128};
    const std::vector<int64_t> ks = {1, 2, 3, 5, 8, 13, 16, 17, 24, 32, 33, 48, 64};
    // One in five a whole number of m16n8k16 tiles (the halving below keeps
    // these multiples of 16).
    const std::vector<int64_t> tiles = {16, 32, 64};
    const bool aligned = chance(0.2);
    z["M"] = one_of(aligned ? tiles : mn);
    z["N"] = one_of(aligned ? tiles : mn);
    z["K"] = one_of(aligned ? tiles : ks);
    z["B"] = one_of<int64_t>({1, 2, 3, 4});
    // At most 2^14 multiply-adds: halve the largest of M, N, K (rounding up,
    // so a multiple of 16 stays one of 8 and an odd size may stay odd).
    while (z["B"] * z["M"] * z["N"] * z["K"] > (1 << 14)) {
      int64_t* big = &z["M"];
      for (int64_t* e : {&z["N"], &z["K"]})
        if (*e > *big) big = e;
      *big = (*big + 1) / 2;
    }
    const int64_t m = z["M"], n = z["N"], k = z["K"];
    if (m % 16 == 0 && n % 16 == 0 && k % 16 == 0) s_.features.insert("matmul_aligned_16");
    if (m % 8 != 0 || n % 8 != 0 || k % 8 != 0) s_.features.insert("matmul_unaligned");
    if (m == 1 || n == 1 || k == 1) s_.features.insert("matmul_extent_1");
  }

  /// Adds an input of the contraction's dtype; `pos` empty: an operand
  /// (not usable by the epilogue).
  void input(const std::string& name, Shape shape, std::vector<int> pos = {},
             const std::string& dtype = "") {
    s_.inputs.push_back({name, dtype.empty() ? dtype_ : dtype, shape});
    Value v;
    v.name = name;
    v.is_input = true;
    v.usable = !pos.empty();
    v.shape = std::move(shape);
    v.pos = std::move(pos);
    s_.values.push_back(std::move(v));
  }

  /// The text of operand `name` of shape `shape`: the input itself, or
  /// (sometimes) `transpose(namet, r-2, r-1)` of an input holding it with
  /// its last two axes swapped, a transposed layout.
  std::string operand(const std::string& name, Shape shape) {
    if (!chance(0.15)) {
      input(name, shape);
      return name;
    }
    const size_t r = shape.size();
    std::swap(shape[r - 2], shape[r - 1]);
    input(name + "t", shape);
    s_.features.insert("matmul_transposed");
    return "transpose(" + name + "t, " + std::to_string(r - 2) + ", " + std::to_string(r - 1) + ")";
  }

  void matmul() {
    s_.features.insert("matmul");
    // Batch axes: none, on both operands, on one (the other broadcasts), or
    // a size-1 batch axis against B.
    static const std::vector<std::pair<Shape, Shape>> kBatches = {
        {{}, {}}, {{}, {}}, {{"B"}, {"B"}}, {{"B"}, {"B"}}, {{"B"}, {}}, {{}, {"B"}}, {{"1"}, {"B"}}};
    const auto& [ba, bb] = one_of(kBatches);
    if (!ba.empty() || !bb.empty()) s_.features.insert("matmul_batch");
    if (ba != bb) s_.features.insert("matmul_batch_broadcast");
    Shape sa = ba, sb = bb;
    sa.insert(sa.end(), {"M", "K"});
    sb.insert(sb.end(), {"K", "N"});
    const std::string a = operand("a", sa), b = operand("b", sb);
    s_.full = ba.size() >= bb.size() ? ba : bb;
    if (!s_.full.empty()) s_.full[0] = "B";
    s_.full.insert(s_.full.end(), {"M", "N"});
    contraction("matmul(" + a + ", " + b + ")");
  }

  void linear() {
    s_.features.insert("linear");
    const double u = uniform();
    Shape sx = u < 0.15 ? Shape{} : u < 0.75 ? Shape{"M"} : Shape{"B", "M"};
    if (sx.empty()) s_.features.insert("linear_rank1");
    if (sx.size() == 2) s_.features.insert("matmul_batch");
    s_.full = sx;
    s_.full.push_back("N");
    sx.push_back("K");
    input("x", sx);
    const std::string w = operand("w", {"N", "K"});
    std::string e = "linear(x, " + w;
    const bool bias = chance(0.5);
    if (bias) {
      input("bias", {"N"}, {static_cast<int>(s_.full.size()) - 1});
      e += ", bias";
      s_.features.insert("linear_bias");
    }
    contraction(e + ")", bias ? 1 : 0);
  }

  /// The contraction reads every input drawn so far: K products of values
  /// in [-1, 1], plus a bias.
  void contraction(const std::string& e, int64_t bias_bound = 0) {
    s_.expr = e;
    for (const GenInput& in : s_.inputs) s_.uses.push_back(in.name);
    s_.bound = static_cast<double>(s_.sizes.at("K") + bias_bound);
  }

  /// The epilogue's own inputs: a row [N], a column [M, 1], a residual of the
  /// result's shape (f32, or the contraction's dtype).
  void epilogue_inputs() {
    const Shape& f = s_.full;
    std::vector<int> all;
    for (size_t p = 0; p < f.size(); ++p) all.push_back(static_cast<int>(p));
    const int last = static_cast<int>(f.size()) - 1;
    auto dtype = [&] { return chance(0.7) ? std::string("f32") : dtype_; };
    if (chance(0.5)) input("row", {"N"}, {last}, dtype());
    if (f.size() >= 2 && chance(0.35)) input("col", {"M", "1"}, {last - 1, last}, dtype());
    if (chance(0.25)) input("res", f, all, dtype());
  }

  MatmulStart s_;
  std::string dtype_;
};

}  // namespace

MatmulStart draw_matmul(std::mt19937_64& rng) { return MatmulDraw(rng).run(); }

std::string gelu(const std::string& x, int form) {
  switch (form % 3) {
    case 0: return "0.5 * " + x + " * (1 + erf(" + x + " * 0.7071067811865476))";
    case 1:
      return "0.5 * " + x + " * (1 + tanh(0.7978845608028654 * (" + x + " + 0.044715 * " + x +
             " ** 3)))";
    default: return x + " * sigmoid(1.702 * " + x + ")";
  }
}

}  // namespace schedlab::fuzz::gen
