// A hand-written tensor-core tile on the CPU backend: a 16x8x16 bf16 product
// staged by cp.async (16-byte .cg copies of A, 8-byte .ca copies of B, the
// tail past K zero-filled by src-size), completed by wait_group, read by
// ldmatrix (.x4 for A, .x2.trans for B) and multiplied by mma.sync. It equals
// the scalar product; traced under the sanitizer it is clean; with its
// wait_group removed the sanitizer reports the race between the copies and
// ldmatrix (and an untraced run stops with the emulation's error); a warp
// whose lanes meet at different collectives, or skip one, is reported; the
// group semantics of wait_group N are the PTX ISA's. Every unit here is also
// compiled by NVRTC for sm_80 and sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "mma_test_util.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/access_trace.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/sanitizer.h"
#include "test_support.h"

namespace schedlab::mma_testing {
namespace {

using ::testing::HasSubstr;
using runtime::MemorySpace;
using runtime::SanitizerFinding;
using runtime::TraceBuffer;
using runtime::TraceSite;
using runtime::testing::Buffer;
using runtime::testing::subst;
using runtime::testing::TempDir;

// T0: A (16x16), T1: B (16x8, k x n), T2: D (16x8), row-major; T3, T4: their
// shared tiles. Only the first KVALID columns of A and rows of B are copied,
// the rest of each tile is zero-filled. WAIT: the wait before the barrier.
constexpr std::string_view kTile = R"CUDA(
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

constexpr std::string_view kWait = "sl_cp_async_wait<0>();";

runtime::KernelSource tile(int kvalid, std::string_view wait, bool trace = false) {
  return mma_kernel(
      subst(subst(std::string(kTile), "KVALID", std::to_string(kvalid)), "WAIT", wait), trace);
}

// Where each access site of kTile is, by id: the text that names it.
constexpr const char* kSiteText[] = {"SL_SITE(0)", "SL_VLD(1,",  "SL_SITE(2)", "SL_VLD(3,",
                                     "SL_SYNC(4)", "SL_VLD(5,",  "SL_VLD(6,",  "SL_ST(7,"};

/// The line (1-based) of `source` that names site `id`.
int line_of(const std::string& source, size_t id) {
  const size_t at = source.find(kSiteText[id]);
  EXPECT_NE(at, std::string::npos) << kSiteText[id];
  return 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<long>(at), '\n'));
}

/// The launch's trace description (sites in the order of their ids above).
runtime::TraceKernel trace_of(const runtime::KernelSource& src, const runtime::LaunchDims& dims) {
  auto buf = [](const char* name, MemorySpace s, int bytes, int64_t n, bool init, int64_t at) {
    TraceBuffer b;
    b.name = name;
    b.label = name;
    b.space = s;
    b.elem_bytes = bytes;
    b.elements = n;
    b.initialized = init;
    b.shared_offset = at;
    return b;
  };
  runtime::TraceKernel t;
  t.name = "tile";
  t.source = src.source;
  t.buffers = {buf("T0", MemorySpace::Global, 2, 256, true, -1),
               buf("T1", MemorySpace::Global, 2, 128, true, -1),
               buf("T2", MemorySpace::Global, 4, 128, false, -1),
               buf("T3", MemorySpace::Shared, 2, 256, false, 0),
               buf("T4", MemorySpace::Shared, 2, 128, false, 512)};
  using K = TraceSite::Kind;
  t.sites = {{K::Write, 3, 8, 0}, {K::Read, 0, 8, 0}, {K::Write, 4, 4, 0}, {K::Read, 1, 4, 0},
             {K::Barrier, -1, 1, 0}, {K::Read, 3, 8, 0}, {K::Read, 4, 8, 0}, {K::Write, 2, 1, 0}};
  for (size_t s = 0; s < t.sites.size(); ++s) t.sites[s].line = line_of(src.source, s);
  t.dims = dims;
  return t;
}

class TileTest : public ::testing::Test {
 protected:
  /// Runs `src` on A and B of small integers; returns D. With `san`, traced.
  std::vector<float> run(const runtime::KernelSource& src, runtime::Sanitizer* san = nullptr) {
    Buffer<uint16_t> a(*be_, bits(a_)), b(*be_, bits(b_));
    Buffer<float> d(*be_, 128);
    auto k = be_->compile(src);
    const std::vector<runtime::TensorArg> args = {a.arg1(ir::DataType::BF16), b.arg1(ir::DataType::BF16),
                                                  d.arg1(ir::DataType::F32)};
    if (san != nullptr)
      be_->launch_traced(*k, dims_, args, trace_of(src, dims_), *san);
    else
      be_->launch(*k, dims_, args);
    return d.read();
  }
  /// D = A B over the first `kvalid` k, in f64 (exact here).
  std::vector<float> want(int kvalid) const {
    std::vector<float> d(128);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double s = 0;
        for (int k = 0; k < kvalid; ++k)
          s += static_cast<double>(a_[static_cast<size_t>(m * 16 + k)]) * b_[static_cast<size_t>(k * 8 + n)];
        d[static_cast<size_t>(m * 8 + n)] = static_cast<float>(s);
      }
    return d;
  }
  static std::vector<uint16_t> bits(const std::vector<float>& v) {
    std::vector<uint16_t> r;
    for (float x : v) r.push_back(bf16_bits(x));
    return r;
  }
  static std::vector<float> integers(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> v(-16, 16);
    std::vector<float> r(n);
    for (float& x : r) x = static_cast<float>(v(rng));
    return r;
  }

  TempDir dir_;
  std::unique_ptr<runtime::Backend> be_ =
      runtime::make_cpu_backend(model::model_device_properties(), dir_.path());
  runtime::LaunchDims dims_ = [] {
    runtime::LaunchDims d;
    d.block = {32, 1, 1};
    d.shared_bytes = 768;
    return d;
  }();
  std::vector<float> a_ = integers(256, 5), b_ = integers(128, 6);
};


TEST_F(TileTest, TileEqualsTheScalarProduct) { EXPECT_EQ(run(tile(16, kWait)), want(16)); }

// src-size below cp-size: the bytes past it are zeros in shared memory, so
// the product runs over the first 12 (then 5, then no) k only.
TEST_F(TileTest, ZeroFillCutsTheProductAtTheValidK) {
  for (int kvalid : {12, 5, 0}) EXPECT_EQ(run(tile(kvalid, kWait)), want(kvalid)) << kvalid;
}

TEST_F(TileTest, TracedTileIsCleanAndEqual) {
  runtime::Sanitizer san;
  EXPECT_EQ(run(tile(16, kWait, true), &san), want(16));
  EXPECT_EQ(san.report(), "");
}

// Without the wait the copies never land before ldmatrix reads: each read of
// a row another thread's copy has not landed is a race with that copy.
TEST_F(TileTest, MissingWaitGroupIsReportedByTheSanitizer) {
  runtime::Sanitizer san;
  const runtime::KernelSource src = tile(16, "", true);
  run(src, &san);
  bool race = false;
  for (const SanitizerFinding& f : san.findings()) {
    if (f.kind != SanitizerFinding::Kind::ThreadRace) continue;
    race = true;
    EXPECT_EQ(f.space, MemorySpace::Shared);
    // The copies of A (site 0) and of B (site 2), against the ldmatrix reads.
    const int a = line_of(src.source, 0), b = line_of(src.source, 2);
    EXPECT_TRUE(f.first.line == a || f.second.line == a || f.first.line == b || f.second.line == b)
        << f.message();
    EXPECT_THAT(f.message(), HasSubstr("sl_cp_async"));
    EXPECT_THAT(f.message(), HasSubstr("sl_ldmatrix"));
  }
  EXPECT_TRUE(race) << san.report();
}

TEST_F(TileTest, MissingWaitGroupStopsAnUntracedRun) {
  try {
    run(tile(16, ""));
    ADD_FAILURE() << "the run did not stop";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("ldmatrix.x4 reads shared memory that a cp.async of thread"));
    EXPECT_THAT(e.what(), HasSubstr("a cp.async.wait_group is missing before the read"));
  }
}

// Lanes 0-15 and 16-31 reach different ldmatrix instructions.
constexpr std::string_view kSplitWarp = R"CUDA(
typedef Tensor<uint32_t, 1, int32_t> TW;
extern "C" __global__ void schedlab_kernel(TW out) {
  SL_DYNAMIC_SMEM(sl_smem);
  const int lane = threadIdx.x;
  uint32_t r[1];
  BODY
  out.data[lane] = r[0];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TW*)p[0]); }
#endif
)CUDA";

constexpr std::string_view kTwoLdmatrix = R"(if (lane < 16) {
    sl_ldmatrix<false>(r, sl_smem + 16 * (lane % 8));
  } else {
    sl_ldmatrix<true>(r, sl_smem + 16 * (lane % 8));
  })";
constexpr std::string_view kHalfMma = R"(float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const uint32_t a[4] = {0u, 0u, 0u, 0u}, b[2] = {0u, 0u};
  r[0] = 0u;
  if (lane < 16) sl_mma_m16n8k16<sl_half>(d, a, b, d);)";

runtime::KernelSource split(std::string_view body) {
  return mma_kernel(subst(std::string(kSplitWarp), "BODY", body));
}

TEST_F(TileTest, LanesAtDifferentCollectivesAreADivergentWarp) {
  Buffer<uint32_t> out(*be_, 32);
  auto k = be_->compile(split(kTwoLdmatrix));
  runtime::LaunchDims dims;
  dims.block = {32, 1, 1};
  dims.shared_bytes = 128;
  try {
    be_->launch(*k, dims, {out.arg1(ir::DataType::I32)});
    ADD_FAILURE() << "the launch did not stop";
  } catch (const std::exception& e) {
    // Lane 31 completes the warp exchange, so it runs on first and sees lane 0.
    EXPECT_THAT(e.what(), HasSubstr("divergent warp: lane 31 executes ldmatrix.x1.trans at line"));
    EXPECT_THAT(e.what(), HasSubstr("while lane 0 executes ldmatrix.x1 at line"));
  }
}

TEST_F(TileTest, LanesThatSkipACollectiveAreReported) {
  Buffer<uint32_t> out(*be_, 32);
  auto k = be_->compile(split(kHalfMma));
  runtime::LaunchDims dims;
  dims.block = {32, 1, 1};
  EXPECT_EQ(test_support::user_error_of([&] { be_->launch(*k, dims, {out.arg1(ir::DataType::I32)}); }),
            "kernel deadlock: thread (16,0,0) of block (0,0,0) exited while 16 threads of its warp "
            "wait at __syncwarp (kernel schedlab_kernel)");
}

// wait_group 1 completes all but the newest committed group: one thread
// copies x then y in two groups and reads its own shared memory after each wait.
constexpr std::string_view kGroups = R"CUDA(
typedef Tensor<float, 1, int32_t> TF;
extern "C" __global__ void schedlab_kernel(TF in, TF out) {
  SL_DYNAMIC_SMEM(sl_smem);
  float* s = reinterpret_cast<float*>(sl_smem);
  s[0] = -1.0f;
  s[4] = -1.0f;
  s[8] = -1.0f;
  sl_cp_async<4, false>(SL_SITE(0), s, 0, in.data + 0, 4);
  sl_cp_async_commit();
  sl_cp_async<16, true>(SL_SITE(0), s, 4, in.data + 4, 16);
  sl_cp_async_commit();
  sl_cp_async<8, false>(SL_SITE(0), s, 8, in.data + 8, 4);  // not committed
  sl_cp_async_wait<1>();
  out.data[0] = s[0];
  out.data[1] = s[4];
  out.data[2] = s[8];
  sl_cp_async_wait<0>();
  out.data[3] = s[4];
  out.data[4] = s[8];
  sl_cp_async_wait_all();
  out.data[5] = s[8];
  out.data[6] = s[9];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TF*)p[0], *(TF*)p[1]); }
#endif
)CUDA";

TEST_F(TileTest, WaitGroupCompletesAllButTheNewestGroups) {
  std::vector<float> in(16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i + 1);
  Buffer<float> x(*be_, in), y(*be_, 7);
  auto k = be_->compile(mma_kernel(kGroups));
  runtime::LaunchDims dims;
  dims.shared_bytes = 64;
  be_->launch(*k, dims, {x.arg1(ir::DataType::F32), y.arg1(ir::DataType::F32)});
  // After wait_group 1: the first group landed, the second and the
  // uncommitted copy not; after wait_group 0 the second too (a copy outside
  // any group is not waited for); wait_all commits and completes it, its
  // bytes past src-size zero.
  EXPECT_EQ(y.read(), (std::vector<float>{1, -1, -1, 5, -1, 9, 0}));
}

TEST(MmaTileSource, TestKernelsCompileWithNvrtcForSm80AndSm90) {
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  TempDir cache;
  const std::vector<runtime::KernelSource> all = {tile(16, kWait), tile(12, kWait), tile(16, ""),
                                                  split(kTwoLdmatrix), split(kHalfMma),
                                                  mma_kernel(kGroups)};
  for (const auto& src : all)
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string log;
      EXPECT_NO_THROW(runtime::nvrtc_compile(src, arch, &log, cache.path())) << arch << ": " << log;
    }
}

}  // namespace
}  // namespace schedlab::mma_testing
