// The native half math of the runtime (codegen/half_math.cuh) against an
// exact scalar model: each operand decoded to an integer times a power of
// two, the exact result formed in 128-bit integers (a term too small to
// matter kept as a sticky sign), rounded once to nearest even by integer
// arithmetic. neg and abs over every f16 and bf16 bit pattern (NaN and
// infinities included); add, sub, mul and fma, in their scalar and half2
// forms, over random finite operands (uniform bit patterns, operands of close
// magnitude, fma addends that cancel the product), compared bit for bit (a
// NaN result matches any NaN). Runs on the CPU backend (the emulation), and
// as codegen_half_math_gpu_test on the CUDA backend (skipped without a
// device), where the hardware's PTX must agree; NVRTC compiles the unit for
// sm_80 and sm_90 without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "lower_test_util.h"
#include "schedlab/codegen/half_math_header.h"

namespace schedlab::codegen {
namespace {

using runtime::testing::Buffer;
using runtime::testing::subst;

// Thread p computes the pair (2p, 2p + 1) of every op: rows 0-5 the half2
// forms (add, sub, mul, fma, neg, abs), rows 6-11 the scalar forms.
constexpr std::string_view kKernel = R"CUDA(
typedef Tensor<uint16_t, 1, int32_t> TH;
extern "C" __global__ void schedlab_kernel(TH a, TH b, TH c, TH out) {
  const int n = a.size[0];
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * p + 1 >= n) return;
  const TYPE ax{a.data[2 * p]}, ay{a.data[2 * p + 1]}, bx{b.data[2 * p]}, by{b.data[2 * p + 1]};
  const TYPE cx{c.data[2 * p]}, cy{c.data[2 * p + 1]};
  const auto A = sl_pair(ax, ay), B = sl_pair(bx, by), C = sl_pair(cx, cy);
  const decltype(A) r[6] = {__hadd2(A, B), __hsub2(A, B), __hmul2(A, B),
                            __hfma2(A, B, C), __hneg2(A), __habs2(A)};
  for (int k = 0; k < 6; ++k) {
    out.data[k * n + 2 * p] = r[k].x.bits;
    out.data[k * n + 2 * p + 1] = r[k].y.bits;
  }
  const TYPE s[12] = {__hadd(ax, bx), __hadd(ay, by), __hsub(ax, bx), __hsub(ay, by),
                      __hmul(ax, bx), __hmul(ay, by), __hfma(ax, bx, cx), __hfma(ay, by, cy),
                      __hneg(ax), __hneg(ay), __habs(ax), __habs(ay)};
  for (int k = 0; k < 6; ++k) {
    out.data[(6 + k) * n + 2 * p] = s[2 * k].bits;
    out.data[(6 + k) * n + 2 * p + 1] = s[2 * k + 1].bits;
  }
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*(TH*)p[0], *(TH*)p[1], *(TH*)p[2], *(TH*)p[3]);
}
#endif
)CUDA";

runtime::KernelSource kernel(bool bf16) {
  runtime::KernelSource k;
  k.source = std::string(runtime_header()) + std::string(half_math_header()) +
             subst(std::string(kKernel), "TYPE", bf16 ? "sl_bfloat16" : "sl_half");
  return k;
}

// ---- the exact model ----------------------------------------------------------

/// A half format: p significand bits (with the implicit one), its smallest
/// quantum 2^qmin (the subnormals'), its largest finite quantum 2^qmax.
struct Format {
  int p, qmin, qmax, exp_bits;
};
constexpr Format kF16{11, -24, 5, 5};
constexpr Format kBF16{8, -133, 120, 8};

/// value = (neg ? -1 : 1) * m * 2^e, or inf / nan.
struct Decoded {
  bool neg = false, inf = false, nan = false;
  int64_t m = 0;
  int e = 0;
};

Decoded decode(uint16_t h, const Format& f) {
  const int mbits = f.p - 1;
  const int field = (h >> mbits) & ((1 << f.exp_bits) - 1);
  const int64_t frac = h & ((1 << mbits) - 1);
  Decoded d;
  d.neg = (h >> 15) != 0;
  if (field == (1 << f.exp_bits) - 1) {
    (frac ? d.nan : d.inf) = true;
    return d;
  }
  d.m = field == 0 ? frac : frac | (int64_t{1} << mbits);
  d.e = field == 0 ? f.qmin : f.qmin + field - 1;
  return d;
}

/// A signed exact value M 2^E plus `sticky` (-1, 0, +1) times a positive
/// amount below any quantum that matters.
struct Exact {
  __int128 m = 0;
  int e = 0;
  int sticky = 0;
};

using U128 = unsigned __int128;

int sign_of(__int128 v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

/// x + y, exactly when their exponents are within 100 of each other; else
/// the smaller is a sticky sign (it is below 2^-80 of the larger).
Exact add(Exact x, Exact y) {
  if (x.m == 0) return {y.m, y.e, y.sticky + x.sticky};
  if (y.m == 0) return {x.m, x.e, x.sticky + y.sticky};
  if (x.e < y.e) std::swap(x, y);
  const int d = x.e - y.e;
  if (d <= 100) return {(x.m << d) + y.m, y.e, 0};
  return {x.m << 8, x.e - 8, sign_of(y.m)};
}

/// The format's bits nearest to the exact value (ties to even), `zero_neg`
/// the sign of an exact zero.
uint16_t round(const Exact& v, const Format& f, bool zero_neg) {
  const bool neg = v.m < 0 || (v.m == 0 && (v.sticky < 0 || (v.sticky == 0 && zero_neg)));
  const uint16_t sign = neg ? 0x8000u : 0u;
  U128 mag = static_cast<U128>(v.m < 0 ? -v.m : v.m);
  // The sticky part points up (away from zero) when it has the value's sign.
  const int up = v.m == 0 ? 0 : (v.sticky == 0 ? 0 : (sign_of(v.m) == v.sticky ? 1 : -1));
  if (mag == 0) return sign;  // |sticky| alone is below the smallest subnormal's half
  int top = 127;
  while (((mag >> top) & 1) == 0) --top;
  int q = std::max(v.e + top - (f.p - 1), f.qmin);
  U128 kept = mag;
  if (q > v.e) {
    const int shift = q - v.e;
    if (shift >= 128) {
      kept = 0;  // far below half a quantum
    } else {
      kept = mag >> shift;
      const U128 rem = mag - (kept << shift), half = U128{1} << (shift - 1);
      const bool more = rem > half || (rem == half && (up > 0 || (up == 0 && (kept & 1))));
      if (more) ++kept;
    }
  } else {
    kept <<= (v.e - q);  // exact, and at most p bits
  }
  if (kept >> f.p) kept >>= 1, ++q;  // rounded up to the next binade
  const int mbits = f.p - 1;
  if (q > f.qmax) return sign | static_cast<uint16_t>(((1 << f.exp_bits) - 1) << mbits);  // inf
  if (kept < (U128{1} << mbits)) return sign | static_cast<uint16_t>(kept);
  const int field = q - f.qmin + 1;
  return sign | static_cast<uint16_t>(field << mbits) |
         static_cast<uint16_t>(kept & ((1u << mbits) - 1));
}

Exact exact(const Decoded& d) { return {d.neg ? -__int128{d.m} : __int128{d.m}, d.e, 0}; }

/// The model of op k (0 add, 1 sub, 2 mul, 3 fma) on finite operands.
uint16_t model(int k, uint16_t a, uint16_t b, uint16_t c, const Format& f) {
  const Decoded x = decode(a, f), y = decode(b, f), z = decode(c, f);
  Decoded ny = y;
  ny.neg = !y.neg;
  switch (k) {
    case 0: return round(add(exact(x), exact(y)), f, x.neg && y.neg);
    case 1: return round(add(exact(x), exact(ny)), f, x.neg && ny.neg);
    case 2: return round({exact(x).m * exact(y).m, x.e + y.e, 0}, f, x.neg != y.neg);
    default: {
      const Exact prod{exact(x).m * exact(y).m, x.e + y.e, 0};
      return round(add(prod, exact(z)), f, (x.neg != y.neg) && z.neg);
    }
  }
}

bool is_nan(uint16_t h, const Format& f) {
  const int mbits = f.p - 1;
  return ((h >> mbits) & ((1 << f.exp_bits) - 1)) == (1 << f.exp_bits) - 1 &&
         (h & ((1 << mbits) - 1)) != 0;
}

/// Random finite bit patterns: uniform, then of close magnitude, then fma
/// addends near -a b (cancellation and ties).
void draw(std::vector<uint16_t>& a, std::vector<uint16_t>& b, std::vector<uint16_t>& c,
          const Format& f, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint16_t exp_mask = static_cast<uint16_t>(((1 << f.exp_bits) - 1) << (f.p - 1));
  auto finite = [&] {
    for (;;) {
      const auto h = static_cast<uint16_t>(rng());
      if ((h & exp_mask) != exp_mask) return h;
    }
  };
  const size_t n = a.size();
  for (size_t i = 0; i < n; ++i) {
    a[i] = finite(), b[i] = finite(), c[i] = finite();
    if (i % 3 == 1) {  // one binade apart at most
      b[i] = static_cast<uint16_t>((b[i] & ~exp_mask) | (a[i] & exp_mask));
      c[i] = static_cast<uint16_t>((c[i] & ~exp_mask) | (a[i] & exp_mask));
    } else if (i % 3 == 2) {  // c near -(a b): the product's rounding, sign flipped
      c[i] = static_cast<uint16_t>(model(2, a[i], b[i], 0, f) ^ 0x8000u);
      if ((c[i] & exp_mask) == exp_mask) c[i] = finite();
      c[i] = static_cast<uint16_t>(c[i] + (rng() % 3) - 1);
      if ((c[i] & exp_mask) == exp_mask) c[i] = finite();
    }
  }
}

std::vector<uint16_t> run(bool bf16, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                          const std::vector<uint16_t>& c) {
  runtime::Backend& be = lower::testing::test_backend();
  Buffer<uint16_t> ba(be, a), bb(be, b), bc(be, c);
  Buffer<uint16_t> out(be, 12 * a.size());
  auto k = be.compile(kernel(bf16));
  runtime::LaunchDims dims;
  dims.block = {128, 1, 1};
  dims.grid = {static_cast<unsigned>((a.size() / 2 + 127) / 128), 1, 1};
  be.launch(*k, dims,
            {ba.arg1(ir::DataType::I32), bb.arg1(ir::DataType::I32), bc.arg1(ir::DataType::I32),
             out.arg1(ir::DataType::I32)});
  return out.read();
}

class HalfMath : public lower::testing::BackendTest, public ::testing::WithParamInterface<bool> {};

TEST_P(HalfMath, NegAndAbsOfEveryBitPatternFlipOrClearTheSign) {
  const bool bf16 = GetParam();
  std::vector<uint16_t> a(1 << 16);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i);
  const std::vector<uint16_t> got = run(bf16, a, a, a);
  const size_t n = a.size();
  int bad = 0;
  for (size_t i = 0; i < n && bad < 10; ++i)
    for (int form : {0, 6}) {
      const uint16_t neg = got[(form + 4) * n + i], abs = got[(form + 5) * n + i];
      if (neg != (a[i] ^ 0x8000u) || abs != (a[i] & 0x7fffu)) {
        ++bad;
        ADD_FAILURE() << (form ? "scalar" : "half2") << " neg/abs of 0x" << std::hex << a[i]
                      << ": 0x" << neg << " / 0x" << abs;
      }
    }
}

TEST_P(HalfMath, AddSubMulFmaRoundTheExactResultOnce) {
  const bool bf16 = GetParam();
  const Format& f = bf16 ? kBF16 : kF16;
  const size_t n = 1 << 16;
  std::vector<uint16_t> a(n), b(n), c(n);
  draw(a, b, c, f, bf16 ? 80u : 53u);
  const std::vector<uint16_t> got = run(bf16, a, b, c);
  const char* names[] = {"add", "sub", "mul", "fma"};
  int bad = 0;
  for (int k = 0; k < 4; ++k)
    for (int form : {0, 6})
      for (size_t i = 0; i < n && bad < 10; ++i) {
        const uint16_t want = model(k, a[i], b[i], c[i], f), g = got[(form + k) * n + i];
        if (g == want || (is_nan(g, f) && is_nan(want, f))) continue;
        ++bad;
        ADD_FAILURE() << (form ? "scalar " : "half2 ") << names[k] << " of 0x" << std::hex << a[i]
                      << ", 0x" << b[i] << ", 0x" << c[i] << ": got 0x" << g << ", exact 0x"
                      << want;
      }
}

INSTANTIATE_TEST_SUITE_P(F16AndBF16, HalfMath, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "bf16" : "f16");
                         });

// The same unit is the CUDA a GPU runs: NVRTC compiles it for sm_80 (bf16
// through fma.rn.bf16x2) and sm_90 (add/sub/mul.rn.bf16x2).
TEST(HalfMathSource, CompilesWithNvrtcForSm80AndSm90) {
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  for (bool bf16 : {false, true})
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string log;
      EXPECT_NO_THROW(
          runtime::nvrtc_compile(kernel(bf16), arch, &log, lower::testing::kernel_cache_dir()))
          << arch << ": " << log;
    }
}

}  // namespace
}  // namespace schedlab::codegen
