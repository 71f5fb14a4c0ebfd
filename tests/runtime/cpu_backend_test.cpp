// The CPU backend on real compiled kernels: hand-written CUDA units (the
// runtime header plus a kernel) compiled by the host compiler and run.
#include "schedlab/runtime/cpu_backend.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "cpu_test_util.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/model/device.h"
#include "test_support.h"

namespace schedlab::runtime {
namespace {

using test_support::user_error_of;
using testing::Buffer;
using testing::subst;
using testing::TempDir;
using testing::unit;
namespace fs = std::filesystem;
constexpr auto F32 = ir::DataType::F32;

// out = a + b over a 2-D grid of 2-D blocks; b is read through a transposed view.
constexpr std::string_view kAdd2d = R"CUDA(
typedef Tensor<float, 2, IDX> T2;
extern "C" __global__ void schedlab_kernel(T2 a, T2 b, T2 out) {
  IDX col = IDX(blockIdx.x) * blockDim.x + threadIdx.x;
  IDX row = IDX(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row < out.size[0] && col < out.size[1])
    out.data[row * out.stride[0] + col * out.stride[1]] =
        a.data[row * a.stride[0] + col * a.stride[1]] + b.data[row * b.stride[0] + col * b.stride[1]];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*(T2*)p[0], *(T2*)p[1], *(T2*)p[2]);
}
#endif
)CUDA";

// One partial sum per block: a shared-memory tree over blockDim.x threads.
// SYNC is __syncthreads() in the real kernel and nothing in the racy one.
constexpr std::string_view kBlockSum = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 in, T1 out) {
  SL_DYNAMIC_SMEM(sl_smem);
  float* s = reinterpret_cast<float*>(sl_smem);
  const int t = threadIdx.x;
  const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int i = b * blockDim.x + t;
  s[t] = i < in.size[0] ? in.data[i * in.stride[0]] : 0.0f;
  SYNC;
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    SYNC;
  }
  if (t == 0) out.data[b * out.stride[0]] = s[0];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0], *(T1*)p[1]); }
#endif
)CUDA";

// The same tree with a static __shared__ array and a 2-D block of 16x16.
constexpr std::string_view kBlockSumStatic = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 in, T1 out) {
  __shared__ float s[256];
  const int t = threadIdx.x + blockDim.x * threadIdx.y;
  const int i = blockIdx.x * 256 + t;
  s[t] = in.data[i];
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out.data[blockIdx.x] = s[0];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0], *(T1*)p[1]); }
#endif
)CUDA";

// Threads leave before a barrier that the rest of the block waits at.
constexpr std::string_view kEarlyExit = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 out) {
  if (EXIT_BEFORE_FIRST) return;
  __syncthreads();
  if (EXIT_BEFORE_SECOND) return;
  __syncthreads();
  out.data[(blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x] = 1.0f;
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0]); }
#endif
)CUDA";

// f32 -> f16 -> f32 and f32 -> bf16 -> f32; and all f16 bit patterns -> f32 -> f16.
constexpr std::string_view kHalfRoundTrip = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
typedef Tensor<uint16_t, 1, int32_t> U1;
extern "C" __global__ void schedlab_kernel(T1 in, T1 via_half, T1 via_bf16, U1 bits, U1 bits_back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < in.size[0]) {
    via_half.data[i] = sl_to_float(sl_to_half(in.data[i]));
    via_bf16.data[i] = sl_to_float(sl_to_bf16(in.data[i]));
  }
  if (i < bits.size[0]) bits_back.data[i] = sl_to_half(sl_to_float(sl_half{bits.data[i]})).bits;
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*(T1*)p[0], *(T1*)p[1], *(T1*)p[2], *(U1*)p[3], *(U1*)p[4]);
}
#endif
)CUDA";

// Every thread of every block adds into one counter: atomics across workers.
constexpr std::string_view kAtomicSum = R"CUDA(
typedef Tensor<int32_t, 1, int32_t> I1;
extern "C" __global__ void schedlab_kernel(I1 in, I1 out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < in.size[0]) atomicAdd(out.data, in.data[i]);
  __threadfence();
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(I1*)p[0], *(I1*)p[1]); }
#endif
)CUDA";

// CUDA's math: float overloads in the global namespace (exp(float) is expf).
constexpr std::string_view kMath = R"CUDA(
typedef Tensor<float, 1, int32_t> T1;
extern "C" __global__ void schedlab_kernel(T1 in, T1 out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < in.size[0]) {
    float x = in.data[i];
    out.data[3 * i] = exp(x);
    out.data[3 * i + 1] = isnan(x) ? -1.0f : tanh(x) + fmaxf(x, 0.5f);
    out.data[3 * i + 2] = pow(fabs(x), 1.5f);
  }
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(T1*)p[0], *(T1*)p[1]); }
#endif
)CUDA";

KernelSource kernel(std::string_view body, bool has_barrier, int index_bits = 32) {
  KernelSource k;
  k.source = unit(body);
  k.has_barrier = has_barrier;
  k.index_bits = index_bits;
  return k;
}

KernelSource block_sum(bool with_barriers) {
  return kernel(subst(std::string(kBlockSum), "SYNC", with_barriers ? "__syncthreads()" : ""),
                with_barriers);
}

KernelSource early_exit(std::string_view before_first, std::string_view before_second) {
  return kernel(subst(subst(std::string(kEarlyExit), "EXIT_BEFORE_FIRST", before_first),
                      "EXIT_BEFORE_SECOND", before_second),
                true);
}

class CpuBackendTest : public ::testing::Test {
 protected:
  TempDir cache;
  std::unique_ptr<Backend> be = make_cpu_backend(model::model_device_properties(), cache.path());
};

void check_add_2d(Backend& be, int index_bits) {
  const char* idx = index_bits == 32 ? "int32_t" : "int64_t";
  auto k = be.compile(kernel(subst(std::string(kAdd2d), "IDX", idx), false, index_bits));
  const int64_t rows = 37, cols = 1000;
  std::vector<float> a(rows * cols), b(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(3 * i + 1);
  }
  Buffer<float> da(be, a), db(be, b), dout(be, rows * cols);
  LaunchDims dims;
  dims.block = {32, 8, 1};
  dims.grid = {(cols + 31) / 32, (rows + 7) / 8, 1};
  // b holds the transpose: element (r, c) of the view is b[c * rows + r].
  be.launch(*k, dims,
            {da.arg(F32, {rows, cols}, {cols, 1}), db.arg(F32, {rows, cols}, {1, rows}),
             dout.arg(F32, {rows, cols}, {cols, 1})});
  auto out = dout.read();
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (out[r * cols + c] != a[r * cols + c] + b[c * rows + r] && bad++ < 5)
        ADD_FAILURE() << "out(" << r << "," << c << ") = " << out[r * cols + c];
  EXPECT_EQ(bad, 0);
}

TEST_F(CpuBackendTest, Elementwise2dInt32) {
  check_add_2d(*be, 32);
}
TEST_F(CpuBackendTest, Elementwise2dInt64) {
  check_add_2d(*be, 64);
}

// Runs the block sum over a 3-D grid and returns the per-block results.
std::vector<float> run_block_sum(Backend& be, const KernelSource& src, const std::vector<float>& in,
                                 LaunchDims dims) {
  const int64_t blocks = dims.grid[0] * dims.grid[1] * dims.grid[2];
  auto k = be.compile(src);
  Buffer<float> din(be, in), dout(be, blocks);
  dims.shared_bytes = dims.block[0] * sizeof(float);
  be.launch(*k, dims, {din.arg1(F32), dout.arg1(F32)});
  return dout.read();
}

std::vector<float> block_sum_input(int64_t n) {
  std::vector<float> in(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 13 + 1);  // sums stay exact
  return in;
}

TEST_F(CpuBackendTest, BlockTreeSumWithBarriers) {
  LaunchDims dims;
  dims.grid = {5, 3, 2};
  dims.block = {256, 1, 1};
  const int64_t blocks = 30, n = blocks * 256 - 100;  // the last block is partial
  auto in = block_sum_input(n);
  auto out = run_block_sum(*be, block_sum(true), in, dims);
  for (int64_t b = 0; b < blocks; ++b) {
    double want = 0;
    for (int64_t i = b * 256; i < std::min(n, (b + 1) * 256); ++i) want += in[i];
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

// Without barriers the tree reads partial sums before they are written; the
// result differs, so the test above would catch a barrier that does nothing.
TEST_F(CpuBackendTest, BlockTreeSumWithoutBarriersIsWrong) {
  LaunchDims dims;
  dims.grid = {8, 1, 1};
  dims.block = {256, 1, 1};
  auto in = block_sum_input(8 * 256);
  auto good = run_block_sum(*be, block_sum(true), in, dims);
  auto racy = run_block_sum(*be, block_sum(false), in, dims);
  int differ = 0;
  for (int b = 0; b < 8; ++b) differ += good[b] != racy[b];
  EXPECT_EQ(differ, 8) << "the racy variant agreed with the barrier version";
  // Run as a loop, thread 0 finishes alone first and sees zeroed shared memory.
  EXPECT_EQ(racy[0], in[0]);
}

TEST_F(CpuBackendTest, StaticSharedArrayWith2dBlock) {
  auto k = be->compile(kernel(kBlockSumStatic, true));
  const int blocks = 64;
  auto in = block_sum_input(blocks * 256);
  Buffer<float> din(*be, in), dout(*be, blocks);
  LaunchDims dims;
  dims.grid = {blocks, 1, 1};
  dims.block = {16, 16, 1};
  be->launch(*k, dims, {din.arg1(F32), dout.arg1(F32)});
  auto out = dout.read();
  for (int b = 0; b < blocks; ++b) {
    double want = 0;
    for (int i = b * 256; i < (b + 1) * 256; ++i) want += in[i];
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

TEST_F(CpuBackendTest, EarlyExitBeforeBarrierIsDeadlock) {
  auto k = be->compile(early_exit("threadIdx.x == 0", "false"));
  Buffer<float> out(*be, 64);
  LaunchDims dims;
  dims.block = {64, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(F32)}); }),
            "kernel deadlock: thread (0,0,0) of block (0,0,0) exited while 63 threads wait at "
            "__syncthreads (kernel schedlab_kernel)");
}

TEST_F(CpuBackendTest, EarlyExitInOneBlockAfterFirstBarrier) {
  auto k = be->compile(early_exit("false", "blockIdx.x == 3 && threadIdx.y == 1"));
  Buffer<float> out(*be, 8 * 32);
  LaunchDims dims;
  dims.grid = {8, 1, 1};
  dims.block = {16, 2, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(F32)}); }),
            "kernel deadlock: thread (0,1,0) of block (3,0,0) exited while 16 threads wait at "
            "__syncthreads (kernel schedlab_kernel)");
  // The stopped fibers were unwound: the backend keeps working.
  auto ok = be->compile(early_exit("false", "false"));
  be->launch(*ok, dims, {out.arg1(F32)});
  for (float v : out.read()) ASSERT_EQ(v, 1.0f);
}

TEST_F(CpuBackendTest, BarrierWithoutHasBarrierIsAnError) {
  auto src = early_exit("false", "false");
  src.has_barrier = false;
  auto k = be->compile(src);
  Buffer<float> out(*be, 32);
  LaunchDims dims;
  dims.block = {32, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {out.arg1(F32)}); }),
            "a kernel called __syncthreads but its KernelSource has has_barrier = false; the CPU "
            "backend runs such kernels without fibers");
}

TEST_F(CpuBackendTest, CompileErrorCarriesLogAndSavedSource) {
  KernelSource src =
      kernel("extern \"C\" void schedlab_kernel_entry(void**) { not_declared(); }", false);
  src.name = "broken";
  std::string msg = user_error_of([&] { be->compile(src); });
  std::smatch m;
  ASSERT_TRUE(std::regex_search(msg, m, std::regex("source saved at (\\S+\\.cu\\.cpp)"))) << msg;
  EXPECT_NE(msg.find("the host compiler failed on kernel 'broken'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("error:"), std::string::npos) << msg;  // the compiler's own words
  EXPECT_NE(msg.find("not_declared"), std::string::npos) << msg;
  const fs::path saved = m[1].str();
  EXPECT_EQ(saved.parent_path(), fs::path(cache.path()));
  std::ifstream in(saved);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("not_declared();"), std::string::npos);
  EXPECT_NE(text.find("#define SCHEDLAB_CPU 1"), std::string::npos);
  fs::path log = saved;
  log.replace_extension().replace_extension(".log");
  EXPECT_TRUE(fs::exists(log)) << log;
}

TEST_F(CpuBackendTest, MissingEntryIsAnError) {
  KernelSource src = kernel("extern \"C\" __global__ void schedlab_kernel() {}", false);
  EXPECT_NE(user_error_of([&] { be->compile(src); })
                .find("kernel 'schedlab_kernel' does not define extern \"C\" void "
                      "schedlab_kernel_entry(void**)"),
            std::string::npos);
}

TEST_F(CpuBackendTest, DiskCacheIsReusedByAnotherBackend) {
  const KernelSource src = block_sum(true);
  const uint64_t before = cpu_compile_count();
  be->compile(src);
  EXPECT_EQ(cpu_compile_count(), before + 1);
  be->compile(src);  // memory cache
  EXPECT_EQ(cpu_compile_count(), before + 1);

  std::vector<fs::path> objects;
  for (const auto& e : fs::directory_iterator(cache.path()))
    if (e.path().extension() == ".so") objects.push_back(e.path());
  ASSERT_EQ(objects.size(), 1u);
  const auto mtime = fs::last_write_time(objects[0]);

  auto second = make_cpu_backend(model::model_device_properties(), cache.path());
  LaunchDims dims;
  dims.grid = {4, 1, 1};
  dims.block = {256, 1, 1};
  auto in = block_sum_input(4 * 256);
  auto out = run_block_sum(*second, src, in, dims);
  EXPECT_EQ(cpu_compile_count(), before + 1) << "the second backend recompiled";
  EXPECT_EQ(fs::last_write_time(objects[0]), mtime);
  EXPECT_EQ(out[0], run_block_sum(*be, src, in, dims)[0]);

  TempDir other;
  make_cpu_backend(model::model_device_properties(), other.path())->compile(src);
  EXPECT_EQ(cpu_compile_count(), before + 2) << "a different cache dir must compile";
}

TEST_F(CpuBackendTest, HalfAndBfloat16MatchReference) {
  auto k = be->compile(kernel(kHalfRoundTrip, false));
  std::vector<float> in;
  auto from_bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  // A stride through every float bit pattern, plus the neighbourhood of each
  // f16 value and of each tie between f16 neighbours (where rounding matters).
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) in.push_back(from_bits(uint32_t(u)));
  for (float f : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 6.1035156e-05f, 5.9604645e-08f,
                  2.9802322e-08f, 2.9802326e-08f, 1.0f / 3.0f})
    for (float s : {1.0f, -1.0f}) in.push_back(s * f);
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float f = std::ldexp(1.0f + float(rng() % 2048) / 2048.0f, int(rng() % 44) - 28);
    in.push_back(f);
    in.push_back(std::nextafter(f, 0.0f));
    in.push_back(std::nextafter(f, 1e30f));
  }
  std::vector<uint16_t> bits(65536);
  for (int i = 0; i < 65536; ++i) bits[i] = uint16_t(i);

  Buffer<float> din(*be, in), dh(*be, in.size()), db(*be, in.size());
  Buffer<uint16_t> dbits(*be, bits), dback(*be, bits.size());
  LaunchDims dims;
  dims.block = {256, 1, 1};
  dims.grid = {int64_t(in.size() + 255) / 256, 1, 1};
  be->launch(*k, dims,
             {din.arg1(F32), dh.arg1(F32), db.arg1(F32), dbits.arg1(ir::DataType::F16),
              dback.arg1(ir::DataType::F16)});
  auto h = dh.read(), b = db.read();
  int bad = 0;
  auto same = [](float got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    return got == float(want) && std::signbit(got) == std::signbit(want);
  };
  for (size_t i = 0; i < in.size(); ++i) {
    double wh = ir::round_to_dtype(in[i], ir::DataType::F16);
    double wb = ir::round_to_dtype(in[i], ir::DataType::BF16);
    if ((!same(h[i], wh) || !same(b[i], wb)) && bad++ < 10)
      ADD_FAILURE() << "x = " << in[i] << ": f16 " << h[i] << " want " << wh << ", bf16 " << b[i]
                    << " want " << wb;
  }
  EXPECT_EQ(bad, 0);
  // Every f16 value survives f16 -> f32 -> f16 (NaNs stay NaNs).
  auto back = dback.read();
  for (int i = 0; i < 65536; ++i) {
    const bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0;
    if (nan)
      EXPECT_EQ(back[i] & 0x7e00, 0x7e00) << "bits " << i;
    else
      EXPECT_EQ(back[i], i) << "bits " << i;
  }
}

TEST_F(CpuBackendTest, AtomicAddAcrossBlocks) {
  auto k = be->compile(kernel(kAtomicSum, false));
  const int n = 100000;
  std::vector<int32_t> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 7;
  Buffer<int32_t> din(*be, in), dout(*be, 1);
  LaunchDims dims;
  dims.block = {128, 1, 1};
  dims.grid = {(n + 127) / 128, 1, 1};
  be->launch(*k, dims, {din.arg1(ir::DataType::I32), dout.arg1(ir::DataType::I32)});
  int64_t want = 0;
  for (int v : in) want += v;
  EXPECT_EQ(dout.read()[0], want);
}

TEST_F(CpuBackendTest, MathHasFloatOverloads) {
  auto k = be->compile(kernel(kMath, false));
  std::vector<float> in = {0.0f, -1.25f, 3.5f, 88.0f, -0.0f, 1e-3f, std::nanf("")};
  Buffer<float> din(*be, in), dout(*be, 3 * in.size());
  LaunchDims dims;
  dims.block = {32, 1, 1};
  be->launch(*k, dims, {din.arg1(F32), dout.arg1(F32)});
  auto out = dout.read();
  auto same = [](float a, float b) { return std::isnan(a) ? std::isnan(b) : a == b; };
  for (size_t i = 0; i < in.size(); ++i) {
    const float x = in[i];
    const float y = std::isnan(x) ? -1.0f : std::tanh(x) + std::fmax(x, 0.5f);
    EXPECT_TRUE(same(out[3 * i], std::exp(x))) << x;  // std::exp(float) is expf
    EXPECT_TRUE(same(out[3 * i + 1], y)) << x;
    EXPECT_TRUE(same(out[3 * i + 2], std::pow(std::fabs(x), 1.5f))) << x;
  }
}

TEST_F(CpuBackendTest, LaunchDimsAreChecked) {
  auto k = be->compile(block_sum(true));
  LaunchDims dims;
  dims.block = {2048, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {}); }),
            "launch of 'schedlab_kernel': block (2048,1,1) exceeds CUDA's limits: at most 1024 "
            "threads, 1024 in x and y, 64 in z");
  dims.block = {64, 32, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {}); }),
            "launch of 'schedlab_kernel': block (64,32,1) exceeds CUDA's limits: at most 1024 "
            "threads, 1024 in x and y, 64 in z");
  dims.block = {32, 1, 1};
  dims.grid = {0, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {}); }),
            "launch of 'schedlab_kernel': grid (0,1,1) and block (32,1,1) must be positive in "
            "every dimension");
  dims.grid = {1, 70000, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {}); }),
            "launch of 'schedlab_kernel': grid (1,70000,1) exceeds CUDA's limits (2^31-1, 65535, "
            "65535)");
}

// The limits are the emulated device's, from its YAML device model: the
// model device's (an H100 SXM: 227 KiB of shared memory per block with
// opt-in), or another model's when the backend emulates that one.
TEST(CpuBackendDevice, LimitsAreTheEmulatedDevices) {
  TempDir cache;
  EXPECT_EQ(make_cpu_backend(model::model_device_properties(), cache.path())->max_shared_bytes(),
            227u << 10);
  DeviceProperties a100 = model::device_properties(
      model::load_device("a100-80g", {SCHEDLAB_SOURCE_DIR "/configs/devices"}));
  EXPECT_EQ(make_cpu_backend(a100, cache.path())->max_shared_bytes(), 163u << 10);
  a100.max_threads_per_block = 512;
  std::unique_ptr<Backend> be = make_cpu_backend(a100, cache.path());
  auto k = be->compile(block_sum(true));
  LaunchDims dims;
  dims.block = {1024, 1, 1};
  EXPECT_EQ(user_error_of([&] { be->launch(*k, dims, {}); }),
            "launch of 'schedlab_kernel': block (1024,1,1) exceeds CUDA's limits: at most 512 "
            "threads, 1024 in x and y, 64 in z");
}

TEST_F(CpuBackendTest, TimeIsLabelledCpuEmulation) {
  auto k = be->compile(block_sum(true));
  auto in = block_sum_input(16 * 256);
  Buffer<float> din(*be, in), dout(*be, 16);
  LaunchDims dims;
  dims.grid = {16, 1, 1};
  dims.block = {256, 1, 1};
  dims.shared_bytes = 256 * sizeof(float);
  Timing t = be->time(*k, dims, {din.arg1(F32), dout.arg1(F32)}, 2, 5);
  EXPECT_EQ(t.clock, "cpu-emulation");
  ASSERT_EQ(t.seconds.size(), 5u);
  for (double s : t.seconds) EXPECT_GT(s, 0.0);
  EXPECT_EQ(be->name(), "cpu");
}

TEST(CpuBackendMemory, AllocIs64ByteAligned) {
  TempDir cache;
  auto be = make_cpu_backend(model::model_device_properties(), cache.path());
  for (size_t n : {0, 1, 63, 64, 1000}) {
    void* p = be->alloc(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    be->free(p);
  }
}

// The units above are the text the GPU would run: NVRTC must accept them.
TEST(CpuBackendSource, TestKernelsAreValidCuda) {
  std::vector<KernelSource> all = {kernel(subst(std::string(kAdd2d), "IDX", "int64_t"), false),
                                   block_sum(true),
                                   kernel(kBlockSumStatic, true),
                                   early_exit("threadIdx.x == 0", "false"),
                                   kernel(kHalfRoundTrip, false),
                                   kernel(kAtomicSum, false),
                                   kernel(kMath, false)};
  for (const auto& src : all) {
    nvrtcProgram prog;
    ASSERT_EQ(nvrtcCreateProgram(&prog, src.source.c_str(), "k.cu", 0, nullptr, nullptr),
              NVRTC_SUCCESS);
    const char* opts[] = {"--gpu-architecture=compute_90"};
    nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    EXPECT_EQ(rc, NVRTC_SUCCESS) << log << "\n" << src.source;
    nvrtcDestroyProgram(&prog);
  }
}

}  // namespace
}  // namespace schedlab::runtime
