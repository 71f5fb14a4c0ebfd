// The checks of the tensor-core runtime on the CPU backend, with the tile of
// mma_test_util.h (kTile; its plain runs against the scalar product, on either
// backend, are in fragment_test.cpp): traced under the sanitizer the tile is
// clean and equal to the product; with its wait_group removed the sanitizer
// reports the race between the copies and ldmatrix, and an untraced run stops
// with the emulation's error; a warp whose lanes meet at different
// collectives, or skip one, is reported; wait_group N keeps the newest N
// groups as the PTX ISA says. Every unit here is also compiled by NVRTC for
// sm_80 and sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
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
    Buffer<uint16_t> a(*be_, bf16_all(a_)), b(*be_, bf16_all(b_));
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
  std::vector<float> want(int kvalid) const { return tile_product(a_, b_, kvalid); }

  TempDir dir_;
  std::unique_ptr<runtime::Backend> be_ =
      runtime::make_cpu_backend(model::model_device_properties(), dir_.path());
  runtime::LaunchDims dims_ = tile_dims();
  std::vector<float> a_ = tile_integers(256, 5), b_ = tile_integers(128, 6);
};


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
