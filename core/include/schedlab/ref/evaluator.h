// schedlab/ref: the reference evaluator, the oracle for every validation.
//
// Owns: HostTensor (a dense row-major tensor of doubles), deterministic input
// generation, and evaluation of an *unscheduled* fusion in double precision.
// May depend on: schedlab/base and schedlab/ir only. It must share no code
// with lowering, code generation or the backends, so that a bug there cannot
// hide by being reproduced here. It ignores every scheduling decision (loop
// domains, memory types, parallel types): it reads only the math.
// Rounding: values are held in double; a CastOp rounds to its target dtype
// (ir::round_to_dtype), and generated inputs are rounded to their dtype, so
// f16/bf16/f32 inputs carry exactly the values a kernel would load.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ref {

/// A dense, row-major tensor of concrete values. Values are doubles whatever
/// the dtype; the dtype says what a kernel would store.
struct HostTensor {
  ir::DataType dtype = ir::DataType::F64;  ///< the storage type it stands for
  std::vector<int64_t> shape;              ///< concrete extents, outermost first
  std::vector<double> data;                ///< numel() values, row-major

  int64_t numel() const;
  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;
};

/// The closed interval inputs are drawn from.
struct ValueRange {
  double lo = -1.0;  ///< smallest value
  double hi = 1.0;   ///< largest value
};

/// The concrete shape of t under `sizes` (non-reduction logical axes).
/// user_error if a size symbol is unbound.
std::vector<int64_t> concrete_shape(const ir::TensorView* t, const ir::SizeBindings& sizes);

/// Deterministic input number `index` of a fusion: the generator is
/// SplitMix64, seeded with seed * 0x9E3779B97F4A7C15 + (index + 1), one draw
/// per element in row-major order, u = (draw >> 11) * 2^-53 in [0, 1).
///  * float dtypes: lo + (hi - lo) * u, then rounded to the dtype;
///  * i32/i64:      floor(lo + (hi - lo + 1) * u): integer lo, hi both occur;
///  * bool:         1 if u < 0.5 else 0 (range ignored).
/// `range` is used as given for every dtype; the integer default [-8, 8] is
/// make_inputs' choice. The state arithmetic wraps mod 2^64. If every element
/// came out zero (and there is one), element 0 is set to 1 (never all zeros).
/// tests/fixtures/gen_fixtures.py implements the same generator in NumPy.
HostTensor make_input(const ir::TensorView* in, const ir::SizeBindings& sizes, uint64_t seed,
                      int index, ValueRange range);

/// All inputs of f. `ranges` has one entry per input or is empty (defaults:
/// [-1, 1] for floats, [-8, 8] for integers).
std::vector<HostTensor> make_inputs(const ir::Fusion& f, const ir::SizeBindings& sizes,
                                    uint64_t seed, const std::vector<ValueRange>& ranges = {});

/// Evaluates f's outputs, in order, from `inputs` (one per fusion input, in
/// order). user_error if an input's shape or dtype does not match.
std::vector<HostTensor> evaluate(const ir::Fusion& f, const std::vector<HostTensor>& inputs,
                                 const ir::SizeBindings& sizes);

}  // namespace schedlab::ref
