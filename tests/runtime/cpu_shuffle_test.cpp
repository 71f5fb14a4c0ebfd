// Warp shuffles and __syncwarp on the CPU backend: hand-written CUDA units
// whose threads run as fibers, checked against CUDA's semantics (warp = 32
// consecutive linear thread ids; width segments; out-of-segment sources read
// the caller's own value). Each unit is also compiled by NVRTC.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "test_support.h"

namespace schedlab::runtime {
namespace {

using test_support::user_error_of;
using testing::Buffer;
using testing::subst;
using testing::TempDir;
using testing::unit;

// One value per thread of type TYPE; BODY sees t (linear thread id in the
// block), n (threads per block), lane, g (index of the thread in the grid)
// and out.
constexpr std::string_view kFrame = R"CUDA(
typedef Tensor<TYPE, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 out) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int n = blockDim.x * blockDim.y * blockDim.z;
  const int lane = t % 32;
  const int g = blockIdx.x * n + t;
  BODY
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0]); }
#endif
)CUDA";

KernelSource kernel(std::string_view type, std::string_view body) {
  KernelSource k;
  k.source = unit(subst(subst(std::string(kFrame), "TYPE", type), "BODY", body));
  k.has_barrier = true;
  return k;
}

constexpr std::string_view kXorReduce = R"(
  int v = lane;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  out.data[g] = v;)";

constexpr std::string_view kDownReduce = R"(
  float v = (float)t;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  out.data[g] = v;)";

// Values above 2^32 so that a 32-bit exchange would be caught.
constexpr std::string_view kUpScan = R"(
  long long v = (1LL << 40) + t;
  for (int d = 1; d < 32; d <<= 1) {
    long long u = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += u;
  }
  out.data[g] = v;)";

constexpr std::string_view kBroadcast = R"(
  double v = t * 0.5 + 1e10;
  out.data[g] = __shfl_sync(0xffffffffu, v, SRC);)";

// Four results per thread, all within segments of 8 lanes.
constexpr std::string_view kWidth8 = R"(
  unsigned v = 1000u + t;
  out.data[4 * g] = __shfl_sync(0xffffffffu, v, 2, 8);
  out.data[4 * g + 1] = __shfl_down_sync(0xffffffffu, v, 3, 8);
  out.data[4 * g + 2] = __shfl_up_sync(0xffffffffu, v, 3, 8);
  out.data[4 * g + 3] = __shfl_xor_sync(0xffffffffu, v, 8, 8);)";

// Lane 0 of each warp sums the warp's active lanes: the last warp is partial.
constexpr std::string_view kPartialWarp = R"(
  const int base = t - lane;
  const int count = n - base < 32 ? n - base : 32;
  const unsigned mask = count == 32 ? 0xffffffffu : (1u << count) - 1u;
  int v = t;
  for (int o = 16; o > 0; o >>= 1) {
    int u = __shfl_down_sync(mask, v, o);
    if (lane + o < count) v += u;
  }
  out.data[g] = v;)";

// The two half-warps exchange separately, a different number of times.
constexpr std::string_view kHalfWarps = R"(
  int v = lane;
  if (lane < 16) {
    v = __shfl_xor_sync(0x0000ffffu, v, 1);
    v = __shfl_xor_sync(0x0000ffffu, v, 2);
  } else {
    v = __shfl_xor_sync(0xffff0000u, v, 4);
  }
  out.data[g] = v;)";

// __syncwarp orders the shared-memory writes before the neighbour's read.
constexpr std::string_view kSyncWarp = R"(
  __shared__ int s[64];
  s[t] = 7 * t;
  __syncwarp();
  out.data[g] = s[t ^ 1];)";

constexpr std::string_view kExitedLane = R"(
  if (lane == 3) return;
  int v = __shfl_xor_sync(0xffffffffu, lane, 1);
  out.data[g] = v;)";

constexpr std::string_view kFullMaskPartialWarp = R"(
  out.data[g] = __shfl_xor_sync(0xffffffffu, lane, 1);)";

class CpuShuffleTest : public ::testing::Test {
 protected:
  template <typename T>
  std::vector<T> run(const KernelSource& src, ir::DataType dt, std::array<int64_t, 3> block,
                     int64_t grid, int64_t per_thread = 1) {
    auto k = be->compile(src);
    Buffer<T> out(*be, static_cast<size_t>(block[0] * block[1] * block[2] * grid * per_thread));
    LaunchDims dims;
    dims.block = block;
    dims.grid = {grid, 1, 1};
    be->launch(*k, dims, {out.arg1(dt)});
    return out.read();
  }

  TempDir cache;
  std::unique_ptr<Backend> be = make_cpu_backend(model::model_device_properties(), cache.path());
};

TEST_F(CpuShuffleTest, XorReduceOverTwoWarps) {
  for (auto block : {std::array<int64_t, 3>{64, 1, 1}, std::array<int64_t, 3>{16, 4, 1}}) {
    auto out = run<int32_t>(kernel("int32_t", kXorReduce), ir::DataType::I32, block, 3);
    ASSERT_EQ(out.size(), 192u);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 496) << "thread " << i;
  }
}

TEST_F(CpuShuffleTest, DownTreeReduceInLaneZero) {
  auto out = run<float>(kernel("float", kDownReduce), ir::DataType::F32, {64, 1, 1}, 2);
  for (int b = 0; b < 2; ++b)
    for (int w = 0; w < 2; ++w) {
      const int base = 32 * w;
      EXPECT_EQ(out[b * 64 + base], static_cast<float>(32 * base + 496)) << b << " " << w;
      // Lane 31 never has a source in range: it adds its own value 5 times.
      EXPECT_EQ(out[b * 64 + base + 31], static_cast<float>(32 * (base + 31))) << b << " " << w;
    }
}

TEST_F(CpuShuffleTest, UpInclusiveScanOfLongLong) {
  auto out = run<int64_t>(kernel("int64_t", kUpScan), ir::DataType::I64, {64, 1, 1}, 2);
  for (int64_t i = 0; i < 128; ++i) {
    const int64_t t = i % 64, lane = t % 32;
    int64_t want = 0;
    for (int64_t k = t - lane; k <= t; ++k) want += (int64_t{1} << 40) + k;
    ASSERT_EQ(out[i], want) << "thread " << i;
  }
}

TEST_F(CpuShuffleTest, BroadcastDoubleFromLaneFive) {
  // srcLane is taken modulo the width: 37 is lane 5 too.
  for (std::string_view src : {"5", "37"}) {
    auto out = run<double>(kernel("double", subst(std::string(kBroadcast), "SRC", src)),
                           ir::DataType::F64, {64, 1, 1}, 2);
    for (int64_t i = 0; i < 128; ++i) {
      const int64_t t = i % 64;
      ASSERT_EQ(out[i], static_cast<double>(t - t % 32 + 5) * 0.5 + 1e10) << src << " " << i;
    }
  }
}

TEST_F(CpuShuffleTest, WidthEightSegments) {
  auto out = run<int32_t>(kernel("uint32_t", kWidth8), ir::DataType::I32, {64, 1, 1}, 1, 4);
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, seg = lane % 8, v = 1000 + t;
    EXPECT_EQ(out[4 * t], v - seg + 2) << t;
    EXPECT_EQ(out[4 * t + 1], seg + 3 < 8 ? v + 3 : v) << t;
    EXPECT_EQ(out[4 * t + 2], seg >= 3 ? v - 3 : v) << t;
    // A lane may read an earlier segment, never a later one.
    EXPECT_EQ(out[4 * t + 3], (lane & 8) ? v - 8 : v) << t;
  }
}

TEST_F(CpuShuffleTest, PartialLastWarpWithItsMask) {
  auto out = run<int32_t>(kernel("int32_t", kPartialWarp), ir::DataType::I32, {40, 1, 1}, 2);
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(out[b * 40], 496) << b;
    EXPECT_EQ(out[b * 40 + 32], 32 + 33 + 34 + 35 + 36 + 37 + 38 + 39) << b;
  }
}

TEST_F(CpuShuffleTest, HalfWarpsExchangeSeparately) {
  auto out = run<int32_t>(kernel("int32_t", kHalfWarps), ir::DataType::I32, {64, 1, 1}, 1);
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    EXPECT_EQ(out[t], lane < 16 ? lane ^ 3 : lane ^ 4) << t;
  }
}

TEST_F(CpuShuffleTest, SyncWarpOrdersSharedMemory) {
  auto out = run<int32_t>(kernel("int32_t", kSyncWarp), ir::DataType::I32, {64, 1, 1}, 4);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], 7 * ((i % 64) ^ 1)) << i;
}

TEST_F(CpuShuffleTest, MaskNamingExitedLaneIsDeadlock) {
  auto k = be->compile(kernel("int32_t", kExitedLane));
  Buffer<int32_t> out(*be, 64);
  LaunchDims dims;
  dims.block = {64, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(ir::DataType::I32)}); }),
            "kernel deadlock: thread (3,0,0) of block (0,0,0) exited while 31 threads of its "
            "warp wait at __shfl_xor_sync (kernel schedlab_kernel)");
  // The stopped fibers were unwound: the backend keeps working.
  auto ok = run<int32_t>(kernel("int32_t", kXorReduce), ir::DataType::I32, {64, 1, 1}, 2);
  for (int32_t v : ok) ASSERT_EQ(v, 496);
}

TEST_F(CpuShuffleTest, FullMaskOnPartialWarpIsDeadlock) {
  auto k = be->compile(kernel("int32_t", kFullMaskPartialWarp));
  Buffer<int32_t> out(*be, 40);
  LaunchDims dims;
  dims.block = {40, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(ir::DataType::I32)}); }),
            "kernel deadlock: lane 8 of warp 1 of block (0,0,0) is past the block's 40 threads "
            "while 8 threads of its warp wait at __shfl_xor_sync (kernel schedlab_kernel)");
}

TEST_F(CpuShuffleTest, ShuffleWithoutHasBarrierIsAnError) {
  auto src = kernel("int32_t", kXorReduce);
  src.has_barrier = false;
  auto k = be->compile(src);
  Buffer<int32_t> out(*be, 32);
  LaunchDims dims;
  dims.block = {32, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(ir::DataType::I32)}); }),
            "a kernel called __shfl_xor_sync but its KernelSource has has_barrier = false; the "
            "CPU backend runs such kernels without fibers");
}

// The units above are the text the GPU would run: NVRTC must accept them.
TEST(CpuShuffleSource, TestKernelsAreValidCuda) {
  TempDir cache;
  const std::vector<KernelSource> all = {
      kernel("int32_t", kXorReduce),  kernel("float", kDownReduce),
      kernel("int64_t", kUpScan),     kernel("double", subst(std::string(kBroadcast), "SRC", "37")),
      kernel("uint32_t", kWidth8),    kernel("int32_t", kPartialWarp),
      kernel("int32_t", kHalfWarps),  kernel("int32_t", kSyncWarp),
      kernel("int32_t", kExitedLane), kernel("int32_t", kFullMaskPartialWarp)};
  for (const auto& src : all) {
    std::string log;
    EXPECT_NO_THROW(nvrtc_compile(src, "compute_90", &log, cache.path())) << log << src.source;
  }
}

}  // namespace
}  // namespace schedlab::runtime
