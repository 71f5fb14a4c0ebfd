// mma.sync m16n8k16 bf16 throughput: every warp of a full grid issues
// back-to-back mma.sync on register fragments (four independent accumulator
// chains, so a warp need not wait for its previous result), with A = B = 1
// so that each accumulator gains exactly 16 per instruction. The test checks
// that every lane ends with the exact sum (the instructions ran, in every
// warp) and prints the rate: on a GPU (mma_throughput_gpu_test, label gpu,
// which scripts/gpu-check runs and logs) it measures what the device models'
// `mma_sync_tflops` assumes (docs/model.md); on the CPU backend it runs a
// small grid and its rate means nothing. No threshold: speed is measured, not
// asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cpu_test_util.h"
#include "lower_test_util.h"
#include "mma_test_util.h"
#include "schedlab/runtime/cuda_backend.h"

namespace schedlab::mma_testing {
namespace {

using runtime::testing::Buffer;
using runtime::testing::subst;

constexpr std::string_view kThroughput = R"CUDA(
typedef Tensor<float, 1, int32_t> TF;
extern "C" __global__ void schedlab_kernel(TF out) {
  const uint32_t one2 = 0x3f803f80u;  // two bf16 1.0
  const uint32_t a[4] = {one2, one2, one2, one2};
  const uint32_t b[2] = {one2, one2};
  float c0[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f};
  float c2[4] = {0.f, 0.f, 0.f, 0.f}, c3[4] = {0.f, 0.f, 0.f, 0.f};
  for (int i = 0; i < ITERS; ++i) {
    sl_mma_m16n8k16<sl_bfloat16>(c0, a, b, c0);
    sl_mma_m16n8k16<sl_bfloat16>(c1, a, b, c1);
    sl_mma_m16n8k16<sl_bfloat16>(c2, a, b, c2);
    sl_mma_m16n8k16<sl_bfloat16>(c3, a, b, c3);
  }
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < 4; ++j) out.data[t * 4 + j] = c0[j] + c1[j] + c2[j] + c3[j];
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TF*)p[0]); }
#endif
)CUDA";

using MmaThroughput = lower::testing::BackendTest;

TEST_F(MmaThroughput, EveryWarpSumsExactlyAndTheRateIsPrinted) {
  // On a GPU: 8 blocks of 4 warps per SM, 2048 iterations (each accumulator
  // reaches 2^15, exact in f32); on the CPU one warp, 8 iterations.
  const bool gpu = lower::testing::kCudaTestBackend;
  int blocks = 1, iters = 8;
  const int threads = gpu ? 128 : 32;
  if (gpu) {
    const auto props = runtime::cuda_device_properties();
    ASSERT_TRUE(props.has_value());
    blocks = 8 * props->sm_count;
    iters = 2048;
  }
  runtime::Backend& be = lower::testing::test_backend();
  Buffer<float> out(be, static_cast<size_t>(blocks * threads * 4));
  const runtime::KernelSource src =
      mma_kernel(subst(std::string(kThroughput), "ITERS", std::to_string(iters)));
  lower::testing::expect_nvrtc_accepts(src);  // the unit the GPU runs, for sm_90
  auto k = be.compile(src);
  runtime::LaunchDims dims;
  dims.grid = {static_cast<uint32_t>(blocks), 1, 1};
  dims.block = {static_cast<uint32_t>(threads), 1, 1};
  const runtime::Timing t = be.time(*k, dims, {out.arg1(ir::DataType::F32)}, 1, gpu ? 5 : 1);
  const std::vector<float> got = out.read();
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], 64.0f * static_cast<float>(iters)) << "element " << i;
  const double best = *std::min_element(t.seconds.begin(), t.seconds.end());
  const double flops = double(blocks) * (threads / 32) * iters * 4 * (2.0 * 16 * 8 * 16);
  std::printf("mma.sync m16n8k16 bf16 (f32 accumulate): %.1f TFLOPS on %s (%d blocks x %d warps, "
              "%d iterations x 4 chains, best of %zu launches: %.3f ms)\n",
              flops / best * 1e-12, t.clock.c_str(), blocks, threads / 32, iters,
              t.seconds.size(), best * 1e3);
  RecordProperty("mma_sync_tflops", std::to_string(flops / best * 1e-12));
}

}  // namespace
}  // namespace schedlab::mma_testing
