// The sanitizer's tensor-core findings on hand-written units (the runtime of
// core/codegen/mma.cuh on the CPU backend, traced): lanes of one warp at
// different warp-collective instructions are a divergent-warp finding that
// names each group of lanes with its instruction and line, and the launch
// goes on (untraced, the emulation stops with SlCpuKernelError:
// tests/mma/tile_test.cpp); a read of shared memory whose cp.async has not
// landed is a pending-copy-read; a cp.async issued into bytes another thread
// reads in the same barrier interval is a stage-overwrite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cpu_test_util.h"
#include "mma_test_util.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/access_trace.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/sanitizer.h"

namespace schedlab::mma_testing {
namespace {

using ::testing::HasSubstr;
using runtime::MemorySpace;
using runtime::SanitizerFinding;
using runtime::testing::Buffer;
using runtime::testing::subst;
using runtime::testing::TempDir;

constexpr std::string_view kUnit = R"CUDA(
typedef Tensor<uint32_t, 1, int32_t> TW;
extern "C" __global__ void schedlab_kernel(TW out) {
  SL_DYNAMIC_SMEM(sl_smem);
  const int lane = threadIdx.x;
  uint32_t r[1] = {7u};
  BODY
  out.data[lane] = r[0];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TW*)p[0]); }
#endif
)CUDA";

/// The 1-based line of `unit` that contains `text`.
int line_of(const std::string& unit, const std::string& text) {
  const size_t at = unit.find(text);
  EXPECT_NE(at, std::string::npos) << text;
  return 1 + static_cast<int>(std::count(unit.begin(), unit.begin() + static_cast<long>(at), '\n'));
}

class MmaSanitizer : public ::testing::Test {
 protected:
  /// Runs one warp of `body` traced; returns the sanitizer's findings.
  std::vector<SanitizerFinding> run(std::string_view body, runtime::KernelSource* src_out) {
    runtime::KernelSource src = mma_kernel(subst(std::string(kUnit), "BODY", body), true);
    Buffer<uint32_t> out(*be_, 32);
    auto k = be_->compile(src);
    runtime::LaunchDims dims;
    dims.block = {32, 1, 1};
    dims.shared_bytes = 256;
    runtime::TraceKernel t;
    t.name = "warp";
    t.source = src.source;
    t.dims = dims;
    runtime::Sanitizer san;
    be_->launch_traced(*k, dims, {out.arg1(ir::DataType::I32)}, t, san);
    if (src_out) *src_out = src;
    return san.findings();
  }
  TempDir dir_;
  std::unique_ptr<runtime::Backend> be_ =
      runtime::make_cpu_backend(model::model_device_properties(), dir_.path());
};

TEST_F(MmaSanitizer, LanesAtDifferentCollectivesAreADivergentWarpFinding) {
  runtime::KernelSource src;
  auto findings = run(R"(if (lane < 16) {
    sl_ldmatrix<false>(r, sl_smem + 16 * (lane % 8));  // low
  } else {
    sl_ldmatrix<true>(r, sl_smem + 16 * (lane % 8));  // high
  })", &src);
  ASSERT_EQ(findings.size(), 1u);
  const SanitizerFinding& f = findings[0];
  EXPECT_EQ(f.kind, SanitizerFinding::Kind::DivergentWarp);
  EXPECT_STREQ(runtime::finding_kind_name(f.kind), "divergent-warp");
  const int low = line_of(src.source, "// low"), high = line_of(src.source, "// high");
  EXPECT_EQ(f.lanes, "lanes 0-15 at ldmatrix.x1 (line " + std::to_string(low) +
                         "), lanes 16-31 at ldmatrix.x1.trans (line " + std::to_string(high) + ")");
  EXPECT_EQ(f.first.line, low);
  EXPECT_THAT(f.first.text, HasSubstr("sl_ldmatrix<false>"));
  EXPECT_EQ(f.second.line, high);
  EXPECT_THAT(f.message(), HasSubstr("divergent warp in kernel warp: in block (0,0,0), warp of "
                                     "thread (0,0,0): lanes 0-15 at ldmatrix.x1"));
}

TEST_F(MmaSanitizer, AnMmaBesideAnLdmatrixIsADivergentWarpFinding) {
  runtime::KernelSource src;
  auto findings = run(R"(float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const uint32_t a[4] = {0u, 0u, 0u, 0u}, b[2] = {0u, 0u};
  if (lane % 2 == 0) sl_mma_m16n8k16<sl_half>(d, a, b, d);  // even
  else sl_ldmatrix<false>(r, sl_smem + 16 * (lane % 8));  // odd)", &src);
  ASSERT_EQ(findings.size(), 1u);
  const int even = line_of(src.source, "// even"), odd = line_of(src.source, "// odd");
  EXPECT_EQ(findings[0].kind, SanitizerFinding::Kind::DivergentWarp);
  EXPECT_THAT(findings[0].lanes,
              HasSubstr("lane 0 at mma.sync.m16n8k16 (line " + std::to_string(even) +
                        "), lane 1 at ldmatrix.x1 (line " + std::to_string(odd) + "), lane 2"));
}

// Lanes 16-31 skip the mma and exit: the fiber scheduler reports the warp
// (lanes 0-15 wait at the collective's warp exchange), the emulation the
// collective's line, and the launch completes (untraced it stops with
// "kernel deadlock: ...": tests/mma/tile_test.cpp).
TEST_F(MmaSanitizer, LanesThatExitAtACollectiveAreADivergentWarpFinding) {
  runtime::KernelSource src;
  auto findings = run(R"(float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const uint32_t a[4] = {0u, 0u, 0u, 0u}, b[2] = {0u, 0u};
  if (lane >= 16) return;
  sl_mma_m16n8k16<sl_half>(d, a, b, d);  // half)", &src);
  ASSERT_FALSE(findings.empty());
  std::string all;
  for (const SanitizerFinding& f : findings) {
    EXPECT_EQ(f.kind, SanitizerFinding::Kind::DivergentWarp) << f.message();
    all += f.lanes + "\n";
  }
  EXPECT_THAT(all, HasSubstr("lanes 0-15 at __syncwarp, lanes 16-31 at exit"));
  EXPECT_THAT(all, HasSubstr("lanes 0-15 at mma.sync.m16n8k16 (line " +
                             std::to_string(line_of(src.source, "// half")) +
                             "), lanes 16-31 at no collective (exited, or elsewhere)"));
}

TEST_F(MmaSanitizer, AWarpAtOneCollectiveIsClean) {
  EXPECT_TRUE(run("sl_ldmatrix<false>(r, sl_smem + 16 * (lane % 8));", nullptr).empty());
}

}  // namespace
}  // namespace schedlab::mma_testing
