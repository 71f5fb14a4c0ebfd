// schedlab/ref: deterministic inputs for validation and timing (see
// evaluator.h for the module's rules).
#pragma once

#include <cstdint>
#include <vector>

#include "schedlab/ir/fusion.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::ref {

/// The closed interval inputs are drawn from.
struct ValueRange {
  double lo = -1.0;  ///< smallest value
  double hi = 1.0;   ///< largest value
};

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

}  // namespace schedlab::ref
