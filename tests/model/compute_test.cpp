// Compute in the performance model (issue 36): FLOPs and FP lanes counted
// from PTX, the tensor term (mma.sync FLOPs at the device's mma.sync rate)
// and the fp32 term (CUDA-core lanes at its FP32 rate) binding where they
// should, compute_fraction against the relevant peak, the CUDA-core matmul
// composite predicted compute- or issue-bound at 4096^3 (not DRAM-bound),
// and the profile's and the sweep record's new fields.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../report/report_test_util.h"
#include "profile_test_util.h"
#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/model/resources.h"
#include "schedlab/model/roofline.h"
#include "schedlab/model/traffic.h"
#include "schedlab/report/record.h"

namespace {

namespace model = schedlab::model;
namespace sweep = schedlab::sweep;
using model::DeviceModel;
using model::Occupancy;
using model::Prediction;
using model::Work;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

using model::testing_util::h200;
using model::testing_util::profile;

/// `blocks` blocks of 128 threads (4 warps), 64 registers: 8 resident per SM.
Occupancy launch(int64_t blocks, const DeviceModel& d = h200()) {
  schedlab::runtime::LaunchDims dims;
  dims.grid = {blocks, 1, 1};
  dims.block = {128, 1, 1};
  return model::occupancy(d, 64, 0, dims);
}

/// A tiled bf16 matmul's work at M = N = K = 4096 with 128x128 CTA tiles:
/// 1024 blocks, every multiply-add on the tensor cores.
Work tensor_matmul() {
  const double mnk = 4096.0 * 4096 * 4096;
  Work w;
  w.mma_instructions = mnk / (16 * 8 * 16);
  w.flops = 2 * mnk;
  w.dram_bytes = w.ideal_bytes = 3 * 4096.0 * 4096 * 2;
  w.warp_instructions = w.mma_instructions * 3;  // mma, its ldmatrix share, the loop
  return w;
}

TEST(Compute, PtxArithmeticCountsFlopsLanesAndMma) {
  auto a = [](const std::string& op) { return model::ptx_arithmetic(op); };
  EXPECT_EQ(a("fma.rn.f32").flops, 2);
  EXPECT_EQ(a("fma.rn.f32").fp_ops, 1);
  EXPECT_EQ(a("add.f32").flops, 1);
  EXPECT_EQ(a("mul.rn.bf16x2").flops, 2);  // two lanes
  EXPECT_EQ(a("fma.rn.f16x2").flops, 4);
  EXPECT_EQ(a("fma.rn.f16x2").fp_ops, 2);
  EXPECT_EQ(a("ex2.approx.ftz.f32").fp_ops, 1);
  EXPECT_EQ(a("mad.lo.s32").flops, 0);  // integers are not FLOPs
  EXPECT_EQ(a("add.s64").fp_ops, 0);
  EXPECT_EQ(a("cvt.f32.bf16").flops, 0);  // a conversion is not arithmetic
  EXPECT_EQ(a("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32").mma_flops, 4096);
  EXPECT_EQ(a("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32").mma_flops, 2048);
  EXPECT_EQ(a("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32").flops, 0);
}

TEST(Compute, CountPtxAddsTheBodysArithmetic) {
  const std::string ptx = R"(
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .f32 	%f<9>;
	fma.rn.f32 	%f3, %f1, %f2, %f3;
	add.f32 	%f4, %f3, %f1;
	mad.lo.s32 	%r1, %r2, %r3, %r4;
	// begin inline asm
	mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};
	// end inline asm
	ret;
}
)";
  model::PtxCounts c = model::count_ptx(ptx, "k");
  EXPECT_EQ(c.flops, 3);
  EXPECT_EQ(c.fp_arithmetic_ops, 2);
  EXPECT_EQ(c.mma_flops, 4096);
  EXPECT_EQ(c.instructions, 5);
}

TEST(Compute, MmaWorkIsTensorBound) {
  const Work w = tensor_matmul();
  const Prediction p = model::predict(h200(), launch(1024), w);
  EXPECT_EQ(p.limiter, "tensor");
  // 1024 blocks over 132 SMs: the busiest runs 8 of them (a tail of 1.03).
  const double busiest = 8.0 / 1024;
  EXPECT_DOUBLE_EQ(p.tensor_s, w.mma_instructions * 4096 * busiest * 132 / 660e12);
  EXPECT_DOUBLE_EQ(p.predicted_s, p.launch_s + p.chain_s + p.tensor_s);
  // The fraction of the mma.sync peak: the tail and the floor below 1.
  EXPECT_DOUBLE_EQ(p.compute_fraction, w.flops / p.predicted_s / 660e12);
  EXPECT_GT(p.compute_fraction, 0.85);
  EXPECT_LT(p.compute_fraction, 1.0);
}

TEST(Compute, FewBlocksUseAFractionOfTheTensorCores) {
  Work w = tensor_matmul();
  w.mma_instructions /= 16;
  w.flops /= 16;
  // 66 blocks: half the SMs have work, so the device runs at half its rate.
  const Prediction p = model::predict(h200(), launch(66), w);
  EXPECT_NEAR(p.tensor_s / (w.mma_instructions * 4096 * 2 / 660e12), 1.0, 1e-12);
}

TEST(Compute, WithoutMmaTheTensorTermIsZero) {
  Work w = tensor_matmul();
  w.mma_instructions = 0;
  const Prediction p = model::predict(h200(), launch(1024), w);
  EXPECT_EQ(p.tensor_s, 0);
  EXPECT_NE(p.limiter, "tensor");
}

// A100 has 64 FP32 lanes per SM and issues 128 threads' instructions per
// clock: FMA-only code is bound by its lanes. (On H100 and H200 the lanes
// match the issue rate, 128 per clock, so such code binds both at once.)
TEST(Compute, CudaCoreLanesAreFp32Bound) {
  const DeviceModel a100 = model::load_device("a100-80g", kDirs);
  // 4096^3 multiply-adds as FMAs on CUDA cores, one instruction each.
  const double mnk = 4096.0 * 4096 * 4096;
  Work w;
  w.fp_lane_ops = mnk;
  w.flops = 2 * mnk;
  w.warp_instructions = mnk / 32;
  w.dram_bytes = w.ideal_bytes = 3 * 4096.0 * 4096 * 2;
  const Prediction p = model::predict(a100, launch(108 * 64, a100), w);
  EXPECT_EQ(p.limiter, "fp32");
  EXPECT_NEAR(p.fp32_s / (2 * mnk / 19.5e12), 1.0, 1e-12);
  // Against the FP32 peak (no mma.sync).
  EXPECT_DOUBLE_EQ(p.compute_fraction, w.flops / p.predicted_s / 19.5e12);
  // Four instructions per FMA make it issue-bound instead.
  w.warp_instructions *= 4;
  EXPECT_EQ(model::predict(a100, launch(108 * 64, a100), w).limiter, "issue");
}

TEST(Compute, DeviceModelsCarryTheirPeaks) {
  for (const std::string& name : model::device_names(kDirs)) {
    const DeviceModel d = model::load_device(name, kDirs);
    EXPECT_GT(d.mma_sync_tflops, 0) << name;
    EXPECT_LE(d.mma_sync_tflops, d.tensor_tflops) << name;
    // Ampere and Ada: mma.sync is the peak path; Hopper: below it.
    if (d.cc_major() < 9) {
      EXPECT_EQ(d.mma_sync_tflops, d.tensor_tflops) << name;
    } else {
      EXPECT_LT(d.mma_sync_tflops, d.tensor_tflops) << name;
    }
    // The FP32 peak is the SMs' lanes at the clock: 128 per SM (64 on A100).
    const double lanes = d.arch == "sm_80" ? 64 : 128;
    EXPECT_NEAR(d.fp32_tflops, d.sm_count * lanes * 2 * d.sm_clock_mhz * 1e-6, 0.5) << name;
  }
}

// ldmatrix.x4 of a 16x16 bf16 A tile in a row-major 16 x 64 shared tile
// (128-byte rows): matrix i holds rows 8 (i % 2) .. +7, 16-byte column chunk
// i / 2. Unswizzled, the eight rows of a matrix sit in the same four banks:
// 8 wavefronts each. With the 16-byte chunk XORed with the row (mod 8), the
// conflict-free 4, one per matrix; a bad swizzle shows as conflicts.
TEST(Compute, LdmatrixWavefrontsShowABadSwizzle) {
  auto rows = [](bool swizzle) {
    std::vector<int64_t> r;
    for (int m = 0; m < 4; ++m)
      for (int j = 0; j < 8; ++j) {
        const int64_t row = 8 * (m % 2) + j, chunk = m / 2;
        r.push_back(row * 128 + 16 * (swizzle ? chunk ^ (row % 8) : chunk));
      }
    return r;
  };
  EXPECT_EQ(model::ldmatrix_wavefronts(rows(true), 32), (std::pair<int64_t, int64_t>{4, 4}));
  EXPECT_EQ(model::ldmatrix_wavefronts(rows(false), 32), (std::pair<int64_t, int64_t>{32, 4}));
  // x1 and x2: one wavefront per matrix when conflict-free.
  std::vector<int64_t> x2 = rows(true);
  x2.resize(16);
  EXPECT_EQ(model::ldmatrix_wavefronts(x2, 32).first, 2);
  x2.resize(8);
  EXPECT_EQ(model::ldmatrix_wavefronts(x2, 32).first, 1);
}

// The matmul composite on CUDA cores (the reduction plugin: one output per
// thread, a serial loop over K): 2 M N K FLOPs, and at 4096^3 its time is
// the arithmetic's (issue or FP32 lanes), not the DRAM's.
TEST(Compute, TheCudaCoreMatmulIsComputeBoundAtLargeK) {
  const double m = 4096, n = 4096, k = 4096;
  // The whole grid would be 4e11 statements of emulation, over the budget;
  // the profile launches (and checks) only the two blocks it traces.
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
  auto p = profile("matmul_bf16", {{"M", 4096}, {"N", 4096}, {"K", 4096}}, "reduction", 2);
  EXPECT_EQ(p.mma_instructions, 0);
  EXPECT_EQ(p.prediction.tensor_s, 0);
  // One FMA per multiply-add, from the PTX, repeated as the header of
  // profile.h estimates (every static instruction as often as the memory
  // accesses repeat: the unrolled loop and its remainder alike): within 10 %.
  EXPECT_NEAR(p.flops / (2 * m * n * k), 1.0, 0.1) << p.flops;
  EXPECT_NEAR(p.fp_lane_ops / (m * n * k), 1.0, 0.1) << p.fp_lane_ops;
  EXPECT_TRUE(p.prediction.limiter == "issue" || p.prediction.limiter == "fp32")
      << p.prediction.limiter;
  EXPECT_GT(p.prediction.fp32_s, p.prediction.dram_s);
  EXPECT_GT(p.prediction.issue_s, p.prediction.dram_s);
  EXPECT_DOUBLE_EQ(p.prediction.compute_fraction, p.flops / p.prediction.predicted_s / 67e12);

  // The JSON carries the fields; the terms carry the work for calibrate.
  auto j = nlohmann::json::parse(model::profiles_json({p}))[0];
  EXPECT_DOUBLE_EQ(j.at("flops").get<double>(), p.flops);
  EXPECT_DOUBLE_EQ(j.at("tensor_us").get<double>(), 0);
  EXPECT_DOUBLE_EQ(j.at("fp32_us").get<double>(), p.prediction.fp32_s * 1e6);
  EXPECT_DOUBLE_EQ(j.at("compute_fraction").get<double>(), p.prediction.compute_fraction);
  EXPECT_DOUBLE_EQ(j.at("terms").at("fp32_flops").get<double>(), p.terms.fp32_flops);
  EXPECT_NE(model::format_profiles({p}).find("  compute       "), std::string::npos);

  // The sweep record keeps them, and reads them back.
  schedlab::report::Record r;
  r.prediction = model::record_prediction(p);
  EXPECT_DOUBLE_EQ(r.prediction->flops, p.flops);
  EXPECT_DOUBLE_EQ(r.prediction->compute_fraction, p.prediction.compute_fraction);
}

TEST(Compute, RecordsWithAndWithoutTheComputeFieldsRead) {
  using schedlab::report::Prediction;
  schedlab::report::Record r = schedlab::report::testing_util::ok_record("eager", {}, {1.0});
  r.prediction = Prediction{"h200", 12.5, "tensor", 0.1, "[]", 1e12, 11.0, 0.9};
  auto j = nlohmann::json::parse(schedlab::report::to_json(r));
  ASSERT_TRUE(j.at("prediction").contains("tensor_us"));
  schedlab::report::Record back = schedlab::report::record_from_json(j.dump(), {"x", 1, 0});
  ASSERT_TRUE(back.prediction);
  EXPECT_DOUBLE_EQ(back.prediction->flops, 1e12);
  EXPECT_DOUBLE_EQ(back.prediction->tensor_us, 11.0);
  EXPECT_DOUBLE_EQ(back.prediction->compute_fraction, 0.9);
  // A record written before them reads with zeros.
  for (const char* key : {"flops", "tensor_us", "compute_fraction"}) j["prediction"].erase(key);
  back = schedlab::report::record_from_json(j.dump(), {"x", 1, 0});
  ASSERT_TRUE(back.prediction);
  EXPECT_DOUBLE_EQ(back.prediction->predicted_us, 12.5);
  EXPECT_EQ(back.prediction->flops, 0);
  EXPECT_EQ(back.prediction->compute_fraction, 0);
}

}  // namespace
