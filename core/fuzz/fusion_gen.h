// The fusion generator's parts (schedlab/fuzz/fuzz.h): what fusion_gen.cpp
// (the generator: its kinds, statements and outputs) shares with the start
// of each kind, inputs_gen.cpp (the general kind's sizes and inputs) and
// matmul_gen.cpp (the matmul kind's sizes, operands and contraction).
//
// A value the body may read is named, has a shape of size names ("1" for a
// Broadcast axis) and a magnitude bound; `pos` places each of its axes in the
// fusion's full shape, so a lower-rank value can be lifted back to it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "schedlab/fuzz/fuzz.h"

namespace schedlab::fuzz::gen {

using Shape = std::vector<std::string>;

/// A value the body can read: an input or a statement's result.
struct Value {
  std::string name;
  Shape shape;
  std::vector<int> pos;  ///< the full-shape position of each axis (increasing)
  double bound = 1.0;    ///< |value| <= bound
  bool is_input = false;
  bool usable = true;    ///< false for dead statements and a matmul's operands: nothing may read them
  bool is_int = false;   ///< an i32 input: read through cast(x, f32) first
  /// "f16" or "bf16": a value of that half type, whose math rounds after
  /// every operation (PyTorch's rule); "" for f32.
  std::string half;
};

/// NumPy broadcasting on names: right-aligned, equal or "1" on one side.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// The random draws every part of the generator makes, all from one stream.
class Draws {
 public:
  explicit Draws(std::mt19937_64& rng) : rng_(rng) {}

 protected:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  bool chance(double p) { return uniform() < p; }
  template <typename T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }

  std::mt19937_64& rng_;
};

/// How a fusion begins: its full shape, sizes and inputs.
struct Start {
  Shape full;                             ///< the shape most values take
  std::map<std::string, int64_t> sizes;   ///< a value for every size name
  std::vector<GenInput> inputs;           ///< in order
  std::vector<Value> values;              ///< one per input, in order
  std::set<std::string> features;
};

/// The general kind (inputs_gen.cpp): one to three sizes (N, K, M) of 1, small
/// primes, powers of two and others up to 1023, at most 2^14 elements; one to
/// three inputs x0.. of the full shape, with size-1 axes, a lower rank or 0-d.
Start draw_start(std::mt19937_64& rng);

/// The start of a fusion of the matmul kind (matmul_gen.cpp), and the
/// contraction, `matmul(a, b)` or `linear(x, w[, bias])`, whose result the
/// epilogue then reads (docs/fuzz.md, "Matmuls"). The operands' values are
/// not usable (their K axis is not in `full`); a bias and the epilogue's
/// row, column and residual inputs are.
struct MatmulStart : Start {
  std::string expr;                       ///< the contraction's text
  std::vector<std::string> uses;          ///< the inputs it reads
  double bound = 1.0;                     ///< |result| <= bound (K for inputs in [-1, 1])
};

/// Draws a contraction: dtype bf16, f16 or f32; matmul (with or without batch
/// axes, which may broadcast, and sometimes a transposed operand) or linear
/// (rank 1 to 3, with or without bias); M, N, K and B with 1, odd sizes and
/// multiples of 8 and 16, at most 2^14 multiply-adds.
MatmulStart draw_matmul(std::mt19937_64& rng);

/// A GELU-like expression of `x` (one token or parenthesised), |result| <=
/// |x|: the erf form, the tanh approximation or x * sigmoid(1.702 x),
/// by `form` mod 3.
std::string gelu(const std::string& x, int form);

}  // namespace schedlab::fuzz::gen
