// Helpers of the tensor-core tests: units built on the runtime header and the
// tensor-core runtime (codegen/mma.cuh), exact bf16/f16 encodings of small
// values, and the PTX ISA's fragment tables as a scalar model: which element
// of A, B or C/D each lane holds in which register half; and the tile kernel
// of the tests (cp.async, ldmatrix, mma.sync) with its scalar model.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cpu_test_util.h"
#include "schedlab/codegen/mma_header.h"
#include "schedlab/codegen/runtime_header.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::mma_testing {

/// The runtime header, the tensor-core runtime, then `body`.
inline std::string mma_unit(std::string_view body) {
  return std::string(codegen::runtime_header()) + std::string(codegen::mma_header()) +
         std::string(body);
}

/// A unit with barriers (the collectives are warp exchanges on the CPU).
inline runtime::KernelSource mma_kernel(std::string_view body, bool trace = false) {
  runtime::KernelSource k;
  k.source = mma_unit(body);
  k.has_barrier = true;
  k.trace = trace;
  return k;
}

/// The bf16 bits of `f`, which must be exactly representable (its low 16
/// bits zero).
inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_value(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
/// The f16 bits of a normal or zero `f` exactly representable in f16.
inline uint16_t f16_bits(float f) {
  if (f == 0.0f) return std::signbit(f) ? 0x8000u : 0u;
  int e = 0;
  const float m = std::frexp(std::fabs(f), &e);  // f = m 2^e, m in [0.5, 1)
  const auto mant = static_cast<uint32_t>(std::ldexp(m, 11)) & 0x3ffu;
  const auto exp = static_cast<uint32_t>(e - 1 + 15);
  return static_cast<uint16_t>((f < 0 ? 0x8000u : 0u) | exp << 10 | mant);
}
inline float f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
                         : std::ldexp(static_cast<float>(m | 0x400), e - 25);
  return (h & 0x8000u) ? -v : v;
}

// The fragment tables of mma.m16n8k16 with .f16/.bf16 operands (PTX ISA,
// "Matrix Fragments for mma.m16n8k16 with floating point type"), with
// groupID = lane >> 2 and threadID_in_group = lane % 4.
struct RowCol {
  int row, col;
};
/// Element a_i (i in 0..7; register i / 2, half i % 2) of A (16x16) in `lane`.
inline RowCol a_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
/// Element b_i (i in 0..3; register i / 2, half i % 2) of B (16x8, k x n).
inline RowCol b_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
/// Element c_i (i in 0..3) of C/D (16x8).
inline RowCol c_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

// ldmatrix .m8n8 .b16 (PTX ISA, "Warp-level matrix load instruction:
// ldmatrix"): lane l receives in register i the elements (l / 4, 2 (l % 4))
// and (l / 4, 2 (l % 4) + 1) of matrix i, low half first; with .trans the
// element (2 (l % 4) + h, l / 4) in half h.
inline RowCol ldmatrix_element(int lane, int half, bool trans) {
  const RowCol rc{lane / 4, 2 * (lane % 4) + half};
  return trans ? RowCol{rc.col, rc.row} : rc;
}

// T0: A (16x16), T1: B (16x8, k x n), T2: D (16x8), row-major; T3, T4: their
// shared tiles. Only the first KVALID columns of A and rows of B are copied,
// the rest of each tile is zero-filled. WAIT: the wait before the barrier.
inline constexpr std::string_view kTile = R"CUDA(
typedef Tensor<sl_bfloat16, 1, int32_t> TH;
typedef Tensor<float, 1, int32_t> TF;
extern "C" __global__ void schedlab_kernel(TH T0, TH T1, TF T2) {
  SL_DYNAMIC_SMEM(sl_smem);
  sl_bfloat16* T3 = reinterpret_cast<sl_bfloat16*>(sl_smem + 0);
  sl_bfloat16* T4 = reinterpret_cast<sl_bfloat16*>(sl_smem + 512);
  const int lane = threadIdx.x;
  const int ar = lane / 2, ac = 8 * (lane % 2);
  const int abytes = 2 * sl_min(8, sl_max(0, KVALID - ac));
  sl_cp_async<16, true>(SL_SITE(0), T3, ar * 16 + ac, SL_VLD(1, T0.data, ar * 16 + ac, 8), abytes);
  const int bk = lane / 2, bn = 4 * (lane % 2);
  sl_cp_async<8, false>(SL_SITE(2), T4, bk * 8 + bn, SL_VLD(3, T1.data, bk * 8 + bn, 4),
                        bk < KVALID ? 8 : 0);
  sl_cp_async_commit();
  WAIT
  SL_SYNC(4);
  uint32_t a[4], b[2];
  const int m = lane / 8, j = lane % 8;
  sl_ldmatrix<false>(a, SL_VLD(5, T3, (j + 8 * (m % 2)) * 16 + 8 * (m / 2), 8));
  sl_ldmatrix<true>(b, SL_VLD(6, T4, (lane % 16) * 8, 8));
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  sl_mma_m16n8k16<sl_bfloat16>(d, a, b, d);
  const int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) SL_ST(7, T2.data, (g + 8 * (i / 2)) * 8 + 2 * t + (i % 2), d[i]);
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TH*)p[0], *(TH*)p[1], *(TF*)p[2]); }
#endif
)CUDA";

inline constexpr std::string_view kWait = "sl_cp_async_wait<0>();";

/// kTile with its KVALID and WAIT.
inline runtime::KernelSource tile(int kvalid, std::string_view wait, bool trace = false) {
  using runtime::testing::subst;
  return mma_kernel(
      subst(subst(std::string(kTile), "KVALID", std::to_string(kvalid)), "WAIT", wait), trace);
}

/// kTile's launch: one warp, the two shared tiles.
inline runtime::LaunchDims tile_dims() {
  runtime::LaunchDims d;
  d.block = {32, 1, 1};
  d.shared_bytes = 768;
  return d;
}

/// n small integers in [-16, 16]: bf16-exact, and so are their 16-term dot products.
inline std::vector<float> tile_integers(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(-16, 16);
  std::vector<float> r(n);
  for (float& x : r) x = static_cast<float>(v(rng));
  return r;
}

/// D = A B over the first kvalid k (A 16x16, B 16x8, row-major), in f64: exact here.
inline std::vector<float> tile_product(const std::vector<float>& a, const std::vector<float>& b,
                                       int kvalid) {
  std::vector<float> d(128);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double s = 0;
      for (int k = 0; k < kvalid; ++k)
        s += static_cast<double>(a[static_cast<size_t>(m * 16 + k)]) * b[static_cast<size_t>(k * 8 + n)];
      d[static_cast<size_t>(m * 8 + n)] = static_cast<float>(s);
    }
  return d;
}

/// The bf16 bits of bf16-exact values.
inline std::vector<uint16_t> bf16_all(const std::vector<float>& v) {
  std::vector<uint16_t> r;
  for (float x : v) r.push_back(bf16_bits(x));
  return r;
}

}  // namespace schedlab::mma_testing
