// Fragment layouts of the tensor-core runtime (codegen/mma.cuh) against the
// PTX ISA's tables (mma_test_util.h): ldmatrix .x1/.x2/.x4 with and without
// .trans hands each lane exactly the elements the table names, from rows
// whose addresses the lanes give (scattered, padded, in a permuted order);
// mma.sync.m16n8k16 with bf16 and f16 operands, fed fragments built from the
// tables, returns C + A B at the places the C/D table names (exact: small
// integers); on the CPU the f32 accumulation follows the documented order bit
// for bit; the cp.async/ldmatrix/mma.sync tile equals the scalar product,
// with src-size zero fill. Runs on the CPU backend, and as mma_fragment_gpu_test on the CUDA
// backend (skipped without a device), where the hardware must agree with the
// layouts; the order test is the emulation's own and runs on the CPU only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "lower_test_util.h"
#include "mma_test_util.h"

namespace schedlab::mma_testing {
namespace {

using runtime::testing::Buffer;
using runtime::testing::subst;

// Each lane stages 16 halves of the shared image, then every lane names row
// r = lane % (8 NM) (lanes past the matrices repeat the first rows, whose
// addresses ldmatrix does not read): row r of the 32 (matrix r / 8, row r % 8)
// lies in slot (13 r + 5) % 32 of 16 halves, at half 8 of the slot.
constexpr std::string_view kLdmatrix = R"CUDA(
typedef Tensor<uint16_t, 1, int32_t> TH;
typedef Tensor<uint32_t, 1, int32_t> TW;
extern "C" __global__ void schedlab_kernel(TH img, TW out) {
  SL_DYNAMIC_SMEM(sl_smem);
  uint16_t* sm = reinterpret_cast<uint16_t*>(sl_smem);
  const int lane = threadIdx.x;
  for (int j = 0; j < 16; ++j) sm[lane * 16 + j] = img.data[lane * 16 + j];
  __syncthreads();
  const int r = lane % (8 * NM);
  uint32_t reg[NM];
  sl_ldmatrix<TRANS>(reg, sm + ((r * 13 + 5) % 32) * 16 + 8);
  for (int i = 0; i < NM; ++i) out.data[lane * NM + i] = reg[i];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TH*)p[0], *(TW*)p[1]); }
#endif
)CUDA";

// Each lane loads its fragments, then D = A B + C in place of C.
constexpr std::string_view kMma = R"CUDA(
typedef Tensor<uint32_t, 1, int32_t> TW;
typedef Tensor<float, 1, int32_t> TF;
extern "C" __global__ void schedlab_kernel(TW fa, TW fb, TF fc, TF out) {
  const int lane = threadIdx.x;
  uint32_t a[4], b[2];
  float c[4];
  for (int i = 0; i < 4; ++i) a[i] = fa.data[lane * 4 + i];
  for (int i = 0; i < 2; ++i) b[i] = fb.data[lane * 2 + i];
  for (int i = 0; i < 4; ++i) c[i] = fc.data[lane * 4 + i];
  sl_mma_m16n8k16<TYPE>(c, a, b, c);
  for (int i = 0; i < 4; ++i) out.data[lane * 4 + i] = c[i];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*(TW*)p[0], *(TW*)p[1], *(TF*)p[2], *(TF*)p[3]);
}
#endif
)CUDA";

runtime::KernelSource ldmatrix_kernel(int matrices, bool trans) {
  return mma_kernel(subst(subst(std::string(kLdmatrix), "NM", std::to_string(matrices)), "TRANS",
                          trans ? "true" : "false"));
}
runtime::KernelSource mma_kernel_of(bool bf16) {
  return mma_kernel(subst(std::string(kMma), "TYPE", bf16 ? "sl_bfloat16" : "sl_half"));
}

// The value ldmatrix moves for (matrix row r = 8 i + row, col): distinct, nonzero.
uint16_t code(int r, int col) { return static_cast<uint16_t>(r * 8 + col + 1); }

class LdmatrixLayout : public lower::testing::BackendTestWithParam<std::tuple<int, bool>> {};

TEST_P(LdmatrixLayout, EachLaneHoldsTheElementsOfThePtxTable) {
  const auto [matrices, trans] = GetParam();
  std::vector<uint16_t> img(32 * 16, 0xdeadu);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 8; ++c) img[static_cast<size_t>(((r * 13 + 5) % 32) * 16 + 8 + c)] = code(r, c);
  runtime::Backend& be = lower::testing::test_backend();
  Buffer<uint16_t> in(be, img);
  Buffer<uint32_t> out(be, static_cast<size_t>(32 * matrices));
  auto k = be.compile(ldmatrix_kernel(matrices, trans));
  runtime::LaunchDims dims;
  dims.block = {32, 1, 1};
  dims.shared_bytes = 32 * 16 * 2;
  be.launch(*k, dims, {in.arg1(ir::DataType::I32), out.arg1(ir::DataType::I32)});
  const std::vector<uint32_t> got = out.read();
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < matrices; ++i)
      for (int h = 0; h < 2; ++h) {
        const RowCol e = ldmatrix_element(lane, h, trans);
        const uint32_t word = got[static_cast<size_t>(lane * matrices + i)];
        EXPECT_EQ((word >> (16 * h)) & 0xffffu, code(8 * i + e.row, e.col))
            << "lane " << lane << " register " << i << " half " << h;
      }
}

INSTANTIATE_TEST_SUITE_P(AllForms, LdmatrixLayout,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Bool()),
                         [](const auto& info) {
                           return "x" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_trans" : "");
                         });

// A (16x16), B (16x8, k x n) and C (16x8), row-major, as values.
struct Operands {
  std::vector<float> a = std::vector<float>(256), b = std::vector<float>(128),
                     c = std::vector<float>(128);
};

/// Runs the mma kernel on fragments built from `op` by the PTX tables; returns
/// D per lane (out[4 lane + i] = d_i).
std::vector<float> run_mma(const Operands& op, bool bf16) {
  auto bits = [&](float v) { return bf16 ? bf16_bits(v) : f16_bits(v); };
  std::vector<uint32_t> fa(128), fb(64);
  std::vector<float> fc(128);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const RowCol e = a_element(lane, i);
      fa[static_cast<size_t>(lane * 4 + i / 2)] |=
          static_cast<uint32_t>(bits(op.a[static_cast<size_t>(e.row * 16 + e.col)])) << (16 * (i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol e = b_element(lane, i);
      fb[static_cast<size_t>(lane * 2 + i / 2)] |=
          static_cast<uint32_t>(bits(op.b[static_cast<size_t>(e.row * 8 + e.col)])) << (16 * (i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol e = c_element(lane, i);
      fc[static_cast<size_t>(lane * 4 + i)] = op.c[static_cast<size_t>(e.row * 8 + e.col)];
    }
  }
  runtime::Backend& be = lower::testing::test_backend();
  Buffer<uint32_t> ba(be, fa), bb(be, fb);
  Buffer<float> bc(be, fc), out(be, 128);
  auto k = be.compile(mma_kernel_of(bf16));
  runtime::LaunchDims dims;
  dims.block = {32, 1, 1};
  be.launch(*k, dims,
            {ba.arg1(ir::DataType::I32), bb.arg1(ir::DataType::I32), bc.arg1(ir::DataType::F32),
             out.arg1(ir::DataType::F32)});
  return out.read();
}

/// C + A B at (m, n), in f64.
double product(const Operands& op, int m, int n) {
  double s = op.c[static_cast<size_t>(m * 8 + n)];
  for (int k = 0; k < 16; ++k)
    s += static_cast<double>(op.a[static_cast<size_t>(m * 16 + k)]) * op.b[static_cast<size_t>(k * 8 + n)];
  return s;
}

Operands small_integers(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(-8, 8), w(-100, 100);
  Operands op;
  for (float& x : op.a) x = static_cast<float>(v(rng));
  for (float& x : op.b) x = static_cast<float>(v(rng));
  for (float& x : op.c) x = static_cast<float>(w(rng));
  return op;
}

class MmaLayout : public lower::testing::BackendTestWithParam<bool> {};

// Small integers: every product and partial sum is exact in f32, so any
// element taken from the wrong place shows as a wrong value.
TEST_P(MmaLayout, EachLaneGetsCPlusABAtThePtxTablePlaces) {
  const bool bf16 = GetParam();
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Operands op = small_integers(seed);
    const std::vector<float> d = run_mma(op, bf16);
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        const RowCol e = c_element(lane, i);
        EXPECT_EQ(d[static_cast<size_t>(lane * 4 + i)], product(op, e.row, e.col))
            << "seed " << seed << " lane " << lane << " d" << i << " = D(" << e.row << ","
            << e.col << ")";
      }
  }
}

// One-hot A: D(m, n) = B(k0, n) for the single row m = m0 whose column k0 is
// 1, else C: each lane's result names the one element of B it was given.
TEST_P(MmaLayout, OneHotRowsSelectSingleElementsOfB) {
  const bool bf16 = GetParam();
  for (int m0 : {0, 7, 8, 15})
    for (int k0 : {0, 1, 7, 8, 9, 15}) {
      Operands op;
      op.a[static_cast<size_t>(m0 * 16 + k0)] = 1.0f;
      for (int k = 0; k < 16; ++k)
        for (int n = 0; n < 8; ++n) op.b[static_cast<size_t>(k * 8 + n)] = static_cast<float>(k * 8 + n + 1);
      const std::vector<float> d = run_mma(op, bf16);
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          const RowCol e = c_element(lane, i);
          const float want = e.row == m0 ? static_cast<float>(k0 * 8 + e.col + 1) : 0.0f;
          EXPECT_EQ(d[static_cast<size_t>(lane * 4 + i)], want)
              << "A(" << m0 << "," << k0 << ") = 1, lane " << lane << " d" << i;
        }
    }
}

// Values of many magnitudes, where rounding happens: within the f32 bound of
// the f64 result on any backend, and on the CPU bit for bit the documented
// order (k ascending from C, fmaf per step).
TEST_P(MmaLayout, RoundedResultsFollowTheDocumentedOrderOnTheCpu) {
  const bool bf16 = GetParam();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> mant(-255, 255), ex(-6, 6);
  auto value = [&] {
    const float v = std::ldexp(static_cast<float>(mant(rng)), ex(rng) - 8);
    return bf16 ? bf16_value(bf16_bits(v)) : f16_value(f16_bits(v));  // 8 bits: exact in both
  };
  Operands op;
  for (float& x : op.a) x = value();
  for (float& x : op.b) x = value();
  for (float& x : op.c) x = std::ldexp(static_cast<float>(mant(rng)), ex(rng));
  const std::vector<float> d = run_mma(op, bf16);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const RowCol e = c_element(lane, i);
      double mag = std::fabs(op.c[static_cast<size_t>(e.row * 8 + e.col)]);
      float chain = op.c[static_cast<size_t>(e.row * 8 + e.col)];
      for (int k = 0; k < 16; ++k) {
        const float x = op.a[static_cast<size_t>(e.row * 16 + k)], y = op.b[static_cast<size_t>(k * 8 + e.col)];
        mag += std::fabs(static_cast<double>(x) * y);
        chain = std::fma(x, y, chain);
      }
      const float got = d[static_cast<size_t>(lane * 4 + i)];
      EXPECT_NEAR(got, product(op, e.row, e.col), 17 * std::ldexp(mag, -23)) << "lane " << lane;
      if (!lower::testing::kCudaTestBackend) {
        EXPECT_EQ(got, chain) << "lane " << lane << " d" << i << ": not the documented order";
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Bf16AndF16, MmaLayout, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "bf16" : "f16"; });

// The tile of mma_test_util.h: cp.async (.cg 16 bytes for A, .ca 8 for B),
// wait_group, ldmatrix (.x4 for A, .x2.trans for B), mma.sync: equal to the
// scalar product, also where src-size zero-fills the tiles past K = kvalid.
class TileLayout : public lower::testing::BackendTestWithParam<int> {};

TEST_P(TileLayout, TileEqualsTheScalarProductOverTheValidK) {
  const int kvalid = GetParam();
  const std::vector<float> a = tile_integers(256, 5), b = tile_integers(128, 6);
  runtime::Backend& be = lower::testing::test_backend();
  Buffer<uint16_t> ba(be, bf16_all(a)), bb(be, bf16_all(b));
  Buffer<float> d(be, 128);
  auto k = be.compile(tile(kvalid, kWait));
  be.launch(*k, tile_dims(),
            {ba.arg1(ir::DataType::BF16), bb.arg1(ir::DataType::BF16), d.arg1(ir::DataType::F32)});
  EXPECT_EQ(d.read(), tile_product(a, b, kvalid));
}

INSTANTIATE_TEST_SUITE_P(ValidK, TileLayout, ::testing::Values(16, 12, 5, 0),
                         [](const auto& info) { return "k" + std::to_string(info.param); });

// The same units are the CUDA a GPU runs: NVRTC (no device needed) compiles
// each for sm_80 and sm_90, the first architectures of mma.sync.m16n8k16 with
// bf16 and of the Hopper device models.
TEST(MmaFragmentSource, TestKernelsCompileWithNvrtcForSm80AndSm90) {
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  std::vector<runtime::KernelSource> all = {mma_kernel_of(true), mma_kernel_of(false)};
  for (int n : {1, 2, 4})
    for (bool t : {false, true}) all.push_back(ldmatrix_kernel(n, t));
  for (const auto& src : all)
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string log;
      EXPECT_NO_THROW(runtime::nvrtc_compile(src, arch, &log, lower::testing::kernel_cache_dir()))
          << arch << ": " << log;
    }
}

}  // namespace
}  // namespace schedlab::mma_testing
