// Deterministic input generation. tests/fixtures/gen_fixtures.py implements
// the same generator in NumPy: any change here must be made there too, or
// the fixtures stop matching.
#include <cmath>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/ref/inputs.h"

namespace schedlab::ref {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// SplitMix64 (Steele, Lea, Flood 2014), the variant in java.util.SplittableRandom.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  /// A uniform double in [0, 1) from the top 53 bits of the next draw.
  double next_unit() {
    state_ += kGolden;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

}  // namespace

HostTensor make_input(const ir::TensorView* in, const ir::SizeBindings& sizes, uint64_t seed,
                      int index, ValueRange range) {
  user_assert(std::isfinite(range.lo) && std::isfinite(range.hi) && range.lo <= range.hi)
      << "make_input: range [" << range.lo << ", " << range.hi << "] for input " << index << " ("
      << in->describe() << ") is invalid; expected finite bounds with lo <= hi";
  HostTensor t;
  t.dtype = in->dtype();
  t.shape = allocatable_shape(in, sizes, sizeof(double));
  t.data.resize(static_cast<size_t>(t.numel()));

  // Unsigned arithmetic wraps mod 2^64, as the generator's definition requires.
  SplitMix64 rng(seed * kGolden + static_cast<uint64_t>(index) + 1);
  for (double& v : t.data) {
    double u = rng.next_unit();
    if (t.dtype == ir::DataType::Bool)
      v = u < 0.5 ? 1.0 : 0.0;
    else if (ir::is_integral(t.dtype))
      v = std::floor(range.lo + (range.hi - range.lo + 1.0) * u);
    else
      v = ir::round_to_dtype(range.lo + (range.hi - range.lo) * u, t.dtype);
  }
  // An all-zero input hides most bugs (a kernel that writes nothing passes).
  bool all_zero = true;
  for (double v : t.data) all_zero = all_zero && v == 0.0;
  if (all_zero && !t.data.empty()) t.data[0] = 1.0;
  return t;
}

std::vector<HostTensor> make_inputs(const ir::Fusion& f, const ir::SizeBindings& sizes,
                                    uint64_t seed, const std::vector<ValueRange>& ranges) {
  const auto& ins = f.inputs();
  user_assert(ranges.empty() || ranges.size() == ins.size())
      << "make_inputs: fusion '" << f.name() << "' has " << ins.size() << " inputs but "
      << ranges.size() << " value ranges were given; expected one per input or none";
  std::vector<HostTensor> out;
  for (size_t i = 0; i < ins.size(); ++i) {
    ValueRange r = !ranges.empty()                    ? ranges[i]
                   : ir::is_integral(ins[i]->dtype()) ? ValueRange{-8.0, 8.0}
                                                      : ValueRange{-1.0, 1.0};
    out.push_back(make_input(ins[i], sizes, seed, static_cast<int>(i), r));
  }
  return out;
}

}  // namespace schedlab::ref
