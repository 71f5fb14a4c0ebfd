// The emulation sanitizer (runtime/sanitizer.h) on hand-written kernels with
// one planted bug each: a missing barrier (shared-memory race), two blocks
// writing one element, out-of-bounds global, shared and local accesses,
// uninitialised Local and Global reads, and divergent barriers. Each test
// asserts the report: kind, tensor, element, the two threads or blocks, and
// the lines of the generated unit. The same kernels with the bug fixed run
// clean. Generated kernels are covered by sanitizer_fusion_test.cpp and the
// lowering matrix (tests/lower/matrix_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "schedlab/base/error.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/access_trace.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/sanitizer.h"

namespace schedlab::runtime::testing {
namespace {

using ::testing::HasSubstr;
using Kind = SanitizerFinding::Kind;

/// The line (1-based) of `source` where site `id` appears as `SL_XX(id,` or
/// `SL_XX(id)`.
int line_of_site(const std::string& source, int id) {
  const std::string pat = "(" + std::to_string(id);
  for (size_t at = source.find("SL_"); at != std::string::npos; at = source.find("SL_", at + 1)) {
    const size_t paren = source.find('(', at);
    if (paren == std::string::npos || source.compare(paren, pat.size(), pat) != 0) continue;
    const char next = source[paren + pat.size()];
    if (next == ',' || next == ')')
      return 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<long>(at), '\n'));
  }
  return 0;
}

/// A hand-written kernel: its unit, buffers and sites, run traced.
struct HandKernel {
  std::string body;                  ///< the kernel function (after the runtime header)
  std::vector<TraceBuffer> buffers;  ///< by buffer id; Global ones bound to args in order
  std::vector<TraceSite> sites;      ///< by site id (lines filled in)
  LaunchDims dims;
  bool has_barrier = false;
};

constexpr const char* kEntry2 = R"(
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*static_cast<Tensor<float, 1, int32_t>*>(p[0]),
                  *static_cast<Tensor<float, 1, int32_t>*>(p[1]));
}
)";

TraceBuffer global(const char* name, int64_t n, bool input) {
  TraceBuffer b;
  b.name = name;
  b.label = std::string(name) + (input ? " (x)" : " (y)");
  b.space = MemorySpace::Global;
  b.elements = n;
  b.initialized = input;
  return b;
}
TraceBuffer onchip(const char* name, MemorySpace s, int64_t n) {
  TraceBuffer b;
  b.name = name;
  b.label = std::string(name) + (s == MemorySpace::Shared ? " (x_smem)" : " (x_local)");
  b.space = s;
  b.elements = n;
  return b;
}
TraceSite rd(int buffer) { return {TraceSite::Kind::Read, buffer, 1, 0}; }
TraceSite wr(int buffer) { return {TraceSite::Kind::Write, buffer, 1, 0}; }
TraceSite decl(int buffer, int n) { return {TraceSite::Kind::Declare, buffer, n, 0}; }
TraceSite bar() { return {TraceSite::Kind::Barrier, -1, 1, 0}; }

class SanitizerTest : public ::testing::Test {
 protected:
  /// Runs `k` (two Global f32 buffers of `n` elements: T0 input, T1 output)
  /// traced under a Sanitizer; returns the findings. `out` gets T1.
  std::vector<SanitizerFinding> run(HandKernel k, int64_t n, std::vector<float>* out = nullptr) {
    KernelSource src;
    src.source = unit("typedef int32_t sl_index_t;\n" + k.body + kEntry2);
    src.has_barrier = k.has_barrier;
    src.trace = true;
    std::vector<float> in(static_cast<size_t>(n));
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    Buffer<float> x(*backend_, in), y(*backend_, static_cast<size_t>(n));
    TraceKernel t;
    t.name = "hand";
    t.source = src.source;
    t.buffers = k.buffers;
    t.sites = k.sites;
    for (size_t i = 0; i < t.sites.size(); ++i) {
      t.sites[i].line = line_of_site(t.source, static_cast<int>(i));
      EXPECT_GT(t.sites[i].line, 0) << "site " << i << " is not in the kernel";
    }
    t.dims = k.dims;
    auto compiled = backend_->compile(src);
    Sanitizer san;
    backend_->launch_traced(*compiled, k.dims, {x.arg1(ir::DataType::F32), y.arg1(ir::DataType::F32)},
                            t, san);
    if (out) *out = y.read();
    source_ = t.source;
    return san.findings();
  }
  int line(int site) const { return line_of_site(source_, site); }

  TempDir dir_;
  std::unique_ptr<Backend> backend_ =
      make_cpu_backend(model::model_device_properties(), dir_.path());
  std::string source_;
};

std::string all(const std::vector<SanitizerFinding>& fs) {
  std::string r;
  for (const auto& f : fs) r += f.message() + "\n";
  return r;
}

// Each thread stages its element in shared memory and reads its neighbour's.
constexpr const char* kStaged = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  SL_DYNAMIC_SMEM(sl_smem);
  float* T2 = reinterpret_cast<float*>(sl_smem + 0);
  const int32_t tx = threadIdx.x;
  SL_ST(0, T2, tx, SL_LD(1, T0.data, tx));
  BARRIER
  SL_ST(2, T1.data, tx, SL_LD(3, T2, (tx + 1) % 8));
  SL_SYNC(4);
}
)";

HandKernel staged(bool with_barrier) {
  HandKernel k;
  k.body = subst(kStaged, "BARRIER", with_barrier ? "SL_SYNC(5);" : "// (missing barrier)");
  k.buffers = {global("T0", 8, true), global("T1", 8, false),
               onchip("T2", MemorySpace::Shared, 8)};
  k.sites = {wr(2), rd(0), wr(1), rd(2), bar(), bar()};
  if (!with_barrier) k.sites.pop_back();
  k.dims.block = {8, 1, 1};
  k.dims.shared_bytes = 32;
  k.has_barrier = true;
  return k;
}

TEST_F(SanitizerTest, MissingBarrierIsASharedMemoryRace) {
  auto fs = run(staged(false), 8);
  ASSERT_FALSE(fs.empty());
  const SanitizerFinding* race = nullptr;
  for (const auto& f : fs)
    if (f.kind == Kind::ThreadRace && f.first.is_write) race = &f;
  ASSERT_NE(race, nullptr) << all(fs);
  // Thread 0 wrote T2[0] (site 0); thread 7 reads it (site 3) with no barrier between.
  EXPECT_EQ(race->tensor, "T2 (x_smem)");
  EXPECT_EQ(race->space, MemorySpace::Shared);
  EXPECT_EQ(race->element, 0);
  EXPECT_EQ(race->first.thread.x, 0u);
  EXPECT_EQ(race->second.thread.x, 7u);
  EXPECT_EQ(race->first.line, line(0));
  EXPECT_EQ(race->second.line, line(3));
  EXPECT_THAT(race->message(),
              HasSubstr("shared-memory race between threads in kernel hand: T2 (x_smem) element 0 "
                        "written by thread (0,0,0) of block (0,0,0) at line " +
                        std::to_string(line(0)) + " `SL_ST(0, T2, tx, SL_LD(1, T0.data, tx));` "
                        "and read by thread (7,0,0) at line " + std::to_string(line(3))));
  EXPECT_THAT(race->message(), HasSubstr("in the same barrier interval"));
}

TEST_F(SanitizerTest, BarrierMakesTheStagedKernelClean) {
  std::vector<float> out;
  auto fs = run(staged(true), 8, &out);
  EXPECT_TRUE(fs.empty()) << all(fs);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 0}));
}

// Every block's thread 0 writes element 0: blocks race on global memory.
TEST_F(SanitizerTest, TwoBlocksWritingOneElementIsABlockRace) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  if (threadIdx.x == 0) SL_ST(0, T1.data, 0, SL_LD(1, T0.data, blockIdx.x));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false)};
  k.sites = {wr(1), rd(0)};
  k.dims.grid = {3, 1, 1};
  k.dims.block = {2, 1, 1};
  auto fs = run(k, 4);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  const SanitizerFinding& f = fs[0];
  EXPECT_EQ(f.kind, Kind::BlockRace);
  EXPECT_EQ(f.tensor, "T1 (y)");
  EXPECT_EQ(f.element, 0);
  EXPECT_EQ(f.first.block.x, 0u);
  EXPECT_EQ(f.second.block.x, 1u);
  EXPECT_EQ(f.count, 2u);  // block 2 too
  EXPECT_THAT(f.message(), HasSubstr("global-memory race between blocks in kernel hand: T1 (y) "
                                     "element 0 written by block (0,0,0) thread (0,0,0) at line " +
                                     std::to_string(line(0))));
  EXPECT_THAT(f.message(), HasSubstr("and written by block (1,0,0) thread (0,0,0)"));
}

// Every thread of every block stores the same value in one element (as a
// block reduction's result is stored by every thread of its row): benign.
TEST_F(SanitizerTest, RewritingTheSameValueIsNoRace) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  SL_ST(0, T1.data, 0, SL_LD(1, T0.data, 3));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false)};
  k.sites = {wr(1), rd(0)};
  k.dims.grid = {2, 1, 1};
  k.dims.block = {4, 1, 1};
  std::vector<float> out;
  auto fs = run(k, 4, &out);
  EXPECT_TRUE(fs.empty()) << all(fs);
  EXPECT_EQ(out[0], 3.0f);
}

TEST_F(SanitizerTest, OutOfBoundsGlobalReadIsReportedAndContained) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  const int32_t tx = threadIdx.x;
  SL_ST(0, T1.data, tx, SL_LD(1, T0.data, tx + 1));
}
)";
  k.buffers = {global("T0", 8, true), global("T1", 8, false)};
  k.sites = {wr(1), rd(0)};
  k.dims.block = {8, 1, 1};
  std::vector<float> out;
  auto fs = run(k, 8, &out);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].kind, Kind::OutOfBounds);
  EXPECT_EQ(fs[0].element, 8);
  EXPECT_EQ(fs[0].first.thread.x, 7u);
  EXPECT_EQ(fs[0].message(),
            "out-of-bounds global read in kernel hand: T0 (x) element 8 of 8 by thread (7,0,0) of "
            "block (0,0,0) at line " + std::to_string(line(1)) +
                " `SL_ST(0, T1.data, tx, SL_LD(1, T0.data, tx + 1));`");
  EXPECT_EQ(out[7], 0.0f);  // the read went to the zeroed scratch area
}

TEST_F(SanitizerTest, OutOfBoundsSharedAndLocalAccesses) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  SL_DYNAMIC_SMEM(sl_smem);
  float* T2 = reinterpret_cast<float*>(sl_smem + 0);
  const int32_t tx = threadIdx.x;
  alignas(16) float T3[2]; SL_LOCAL(0, T3);
  SL_ST(1, T2, tx + 4, 1.0f);
  SL_ST(2, T3, tx, 2.0f);
  SL_ST(3, T1.data, tx, SL_LD(4, T0.data, tx));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false), onchip("T2", MemorySpace::Shared, 6),
               onchip("T3", MemorySpace::Local, 2)};
  k.sites = {decl(3, 2), wr(2), wr(3), wr(1), rd(0)};
  k.dims.block = {4, 1, 1};
  k.dims.shared_bytes = 24;
  auto fs = run(k, 4);
  ASSERT_EQ(fs.size(), 2u) << all(fs);
  // Thread 2 is the first past both ends: T2 has 6 elements, T3 two.
  EXPECT_EQ(fs[0].kind, Kind::OutOfBounds);
  EXPECT_EQ(fs[0].tensor, "T2 (x_smem)");
  EXPECT_EQ(fs[0].element, 6);
  EXPECT_EQ(fs[0].first.thread.x, 2u);
  EXPECT_EQ(fs[0].first.line, line(1));
  EXPECT_EQ(fs[0].count, 2u);  // and thread 3
  EXPECT_EQ(fs[1].kind, Kind::OutOfBounds);
  EXPECT_EQ(fs[1].tensor, "T3 (x_local)");
  EXPECT_EQ(fs[1].element, 2);
  EXPECT_THAT(fs[1].message(), HasSubstr("out-of-bounds local write in kernel hand: T3 (x_local) "
                                         "element 2 of 2 by thread (2,0,0)"));
}

// Thread 0 computes a Local value that every thread then reads: the others
// read registers they never wrote (issue #11 reproducer 2's pattern).
TEST_F(SanitizerTest, LocalValueWrittenByOneThreadReadByOthers) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  const int32_t tx = threadIdx.x;
  alignas(16) float T3[1]; SL_LOCAL(0, T3);
  if (tx == 0) SL_ST(1, T3, 0, SL_LD(2, T0.data, 0));
  SL_ST(3, T1.data, tx, SL_LD(4, T3, 0));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false), onchip("T3", MemorySpace::Local, 1)};
  k.sites = {decl(2, 1), wr(2), rd(0), wr(1), rd(2)};
  k.dims.block = {4, 1, 1};
  auto fs = run(k, 4);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].kind, Kind::Uninitialized);
  EXPECT_EQ(fs[0].tensor, "T3 (x_local)");
  EXPECT_EQ(fs[0].element, 0);
  EXPECT_EQ(fs[0].first.thread.x, 1u);
  EXPECT_EQ(fs[0].count, 3u);  // threads 1, 2 and 3
  EXPECT_EQ(fs[0].message(),
            "uninitialized local read in kernel hand: T3 (x_local) element 0 read by thread "
            "(1,0,0) of block (0,0,0) at line " + std::to_string(line(4)) +
                " `SL_ST(3, T1.data, tx, SL_LD(4, T3, 0));`, but this thread never wrote it since "
                "its declaration (2 more like it)");
}

TEST_F(SanitizerTest, OutputReadBeforeAnyWriteIsUninitialized) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  const int32_t tx = threadIdx.x;
  SL_ST(0, T1.data, tx, SL_LD(1, T1.data, tx) + SL_LD(2, T0.data, tx));
}
)";
  k.buffers = {global("T0", 2, true), global("T1", 2, false)};
  k.sites = {wr(1), rd(1), rd(0)};
  k.dims.block = {2, 1, 1};
  auto fs = run(k, 2);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].kind, Kind::Uninitialized);
  EXPECT_EQ(fs[0].tensor, "T1 (y)");
  EXPECT_THAT(fs[0].message(), HasSubstr("it is not an input and nothing wrote it"));
}

TEST_F(SanitizerTest, ThreadsAtDifferentBarriersDiverge) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  const int32_t tx = threadIdx.x;
  if (tx < 2) {
    SL_SYNC(0);
  } else {
    SL_SYNC(1);
  }
  SL_ST(2, T1.data, tx, SL_LD(3, T0.data, tx));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false)};
  k.sites = {bar(), bar(), wr(1), rd(0)};
  k.dims.block = {4, 1, 1};
  k.has_barrier = true;
  std::vector<float> out;
  auto fs = run(k, 4, &out);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].kind, Kind::DivergentBarrier);
  EXPECT_EQ(fs[0].first.thread.x, 0u);
  EXPECT_EQ(fs[0].second.thread.x, 2u);
  EXPECT_EQ(fs[0].message(), "divergent barrier in kernel hand: in block (0,0,0), thread (0,0,0) "
                             "waits at line " + std::to_string(line(0)) +
                                 " `SL_SYNC(0);` while thread (2,0,0) waits at line " +
                                 std::to_string(line(1)) + " `SL_SYNC(1);`");
  EXPECT_EQ(out, (std::vector<float>{0, 1, 2, 3}));  // the kernel ran on
}

TEST_F(SanitizerTest, ThreadExitingBeforeABarrierDiverges) {
  HandKernel k;
  k.body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, Tensor<float, 1, int32_t> T1) {
  const int32_t tx = threadIdx.x;
  if (tx == 3) return;
  SL_SYNC(0);
  SL_ST(1, T1.data, tx, SL_LD(2, T0.data, tx));
}
)";
  k.buffers = {global("T0", 4, true), global("T1", 4, false)};
  k.sites = {bar(), wr(1), rd(0)};
  k.dims.block = {4, 1, 1};
  k.has_barrier = true;
  auto fs = run(k, 4);
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].kind, Kind::DivergentBarrier);
  EXPECT_THAT(fs[0].message(), HasSubstr("thread (0,0,0) waits at line " + std::to_string(line(0)) +
                                         " `SL_SYNC(0);` while thread (3,0,0) has exited"));
}

TEST_F(SanitizerTest, UntracedBackendsRefuseTracedLaunches) {
  // A kernel compiled without trace cannot be launched traced.
  KernelSource src;
  src.source = unit("typedef int32_t sl_index_t;\n"
                    "extern \"C\" __global__ void schedlab_kernel(Tensor<float, 1, int32_t> T0, "
                    "Tensor<float, 1, int32_t> T1) {}\n" +
                    std::string(kEntry2));
  auto compiled = backend_->compile(src);
  Buffer<float> x(*backend_, 1), y(*backend_, 1);
  TraceKernel t;
  Sanitizer san;
  try {
    backend_->launch_traced(*compiled, {}, {x.arg1(ir::DataType::F32), y.arg1(ir::DataType::F32)},
                            t, san);
    FAIL() << "expected a user error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a traced launch needs a kernel compiled with KernelSource::trace"));
  }
}

}  // namespace
}  // namespace schedlab::runtime::testing
