// The time model: each term binds in the case built for it, the tail
// stretches a grid one block over a wave, bandwidth_fraction is ideal bytes
// over predicted time over the peak, and the floor (launch + one block's
// chain) lies under every prediction.
#include "schedlab/model/roofline.h"

#include "schedlab/model/reduction_depth.h"

#include <gtest/gtest.h>

namespace {

using schedlab::model::DeviceModel;
using schedlab::model::empty_kernel_s;
using schedlab::model::Occupancy;
using schedlab::model::predict;
using schedlab::model::Prediction;
using schedlab::model::Work;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

Occupancy full(const DeviceModel& d, int64_t blocks) {
  schedlab::runtime::LaunchDims dims;
  dims.grid = {blocks, 1, 1};
  dims.block = {256, 1, 1};
  return schedlab::model::occupancy(d, 16, 0, dims);
}

TEST(Roofline, ACopyIsDramBound) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 2.0 * (1 << 30);  // 1 GiB read, 1 GiB written
  w.warp_instructions = (1 << 28) / 32.0 * 10;     // 10 instructions per element
  Prediction p = predict(d, full(d, 132 * 64), w);
  EXPECT_EQ(p.limiter, "dram");
  EXPECT_DOUBLE_EQ(p.tail, 1.0);
  EXPECT_DOUBLE_EQ(p.dram_s, w.dram_bytes / 4300e9);
  // The floor: the launch and one dependent DRAM round trip.
  EXPECT_DOUBLE_EQ(p.launch_s, 2e-6);
  EXPECT_DOUBLE_EQ(p.chain_s, 500e-9);
  EXPECT_DOUBLE_EQ(p.predicted_s, 2e-6 + 500e-9 + w.dram_bytes / 4300e9);
  EXPECT_DOUBLE_EQ(p.bandwidth_fraction, w.ideal_bytes / p.predicted_s / 4800e9);
}

TEST(Roofline, OneBlockOverAWaveDoublesTheBusiestSm) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e9;
  Prediction p = predict(d, full(d, 133), w);
  EXPECT_DOUBLE_EQ(p.tail, 2.0 * 132 / 133);
  EXPECT_DOUBLE_EQ(p.dram_s, 1e9 / 4300e9 * p.tail);
}

TEST(Roofline, ConflictedSharedMemoryNamesBankConflicts) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e8;
  w.smem_ideal_wavefronts = 1e7;
  w.smem_wavefronts = 32 * 1e7;
  Prediction p = predict(d, full(d, 132 * 64), w);
  EXPECT_EQ(p.limiter, "bank conflicts");
  EXPECT_DOUBLE_EQ(p.smem_s, w.smem_wavefronts / 132 / 1980e6);
  w.smem_wavefronts = w.smem_ideal_wavefronts = 1e9;
  EXPECT_EQ(predict(d, full(d, 132 * 64), w).limiter, "shared memory");
}

TEST(Roofline, ManyInstructionsAreIssueBound) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e8;
  w.warp_instructions = 1e10;
  Prediction p = predict(d, full(d, 132 * 64), w);
  EXPECT_EQ(p.limiter, "issue");
  EXPECT_DOUBLE_EQ(p.issue_s, 1e10 / 132 / (4 * 1980e6));
}

TEST(Roofline, FewResidentThreadsAreLatencyBound) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e9;
  // 132 blocks of 256 threads, 4 loads of 4 B each in flight, per 500 ns:
  // 1.08 TB/s.
  Prediction p = predict(d, full(d, 132), w);
  EXPECT_EQ(p.limiter, "latency");
  EXPECT_DOUBLE_EQ(p.latency_s, 1e9 / (132.0 * 256 * 4 * 4 / 500e-9));
  // 16-byte vectors keep four times the bytes in flight.
  w.bytes_per_access = 16;
  EXPECT_DOUBLE_EQ(predict(d, full(d, 132), w).latency_s, p.latency_s / 4);
}

TEST(Roofline, ATinyKernelIsLimitedByTheFloor) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 128 * 1024 * 4 * 2;  // softmax N=128,K=1024: read + write
  w.barriers = 4;
  w.shuffle_levels = 20;
  Prediction p = predict(d, full(d, 128), w);
  EXPECT_EQ(p.limiter, "floor");
  EXPECT_DOUBLE_EQ(p.chain_s, 500e-9 + 4 * 20e-9 + 20 * 15e-9);
  EXPECT_GE(p.predicted_s, empty_kernel_s(d) + 500e-9);
  EXPECT_DOUBLE_EQ(p.predicted_s, p.launch_s + p.chain_s + p.latency_s);
}

TEST(Roofline, AGridReductionAddsItsRoundTrip) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e6;
  Prediction without = predict(d, full(d, 132), w);
  w.grid_reductions = 1;
  Prediction with = predict(d, full(d, 132), w);
  EXPECT_DOUBLE_EQ(with.chain_s - without.chain_s, 500e-9);  // grid_sync_ns
}

TEST(Roofline, ManyRoundsOfLongChainsAreSyncBound) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e6;
  w.barriers = 1000;  // 20 us per block
  // 256-thread blocks, 8 resident per SM: 132 * 8 * 10 blocks are 10 rounds.
  Prediction p = predict(d, full(d, 132 * 8 * 10), w);
  EXPECT_EQ(p.limiter, "sync");
  EXPECT_DOUBLE_EQ(p.sync_s, 9 * p.chain_s);
  EXPECT_DOUBLE_EQ(p.predicted_s, p.launch_s + 10 * p.chain_s);
}

TEST(Roofline, NoKernelThatRunsIsPredictedUnderAnEmptyKernel) {
  // Over a grid of works and launches, every term >= 0 keeps the floor.
  for (const std::string& name : schedlab::model::device_names(kDirs)) {
    DeviceModel d = schedlab::model::load_device(name, kDirs);
    for (double bytes : {0.0, 4.0, 1e3, 1e6, 1e9})
      for (int64_t blocks : {1, 7, 132, 1000, 100000}) {
        Work w;
        w.dram_bytes = w.ideal_bytes = bytes;
        w.warp_instructions = bytes / 16;
        Prediction p = predict(d, full(d, blocks), w);
        EXPECT_GE(p.predicted_s, empty_kernel_s(d)) << name << " " << bytes << " " << blocks;
        if (bytes > 0) {
          EXPECT_GE(p.predicted_s, empty_kernel_s(d) + d.dram_latency_ns * 1e-9);
        }
      }
  }
}

TEST(Roofline, BlockReductionTreeLevels) {
  using schedlab::model::block_reduce_levels;
  EXPECT_EQ(block_reduce_levels(1), 5);  // one warp: offsets 16, 8, 4, 2, 1
  EXPECT_EQ(block_reduce_levels(32), 5);
  EXPECT_EQ(block_reduce_levels(64), 10);  // whole warps: a second tree over their partials
  EXPECT_EQ(block_reduce_levels(1024), 10);
  EXPECT_EQ(block_reduce_levels(33), 6);   // not whole warps: a serial fold of 1 more
  EXPECT_EQ(block_reduce_levels(100), 8);  // 4 segments: 3 more
}

TEST(Roofline, ALaunchThatCannotRunPredictsNothing) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  schedlab::runtime::LaunchDims dims;
  dims.block = {2048, 1, 1};
  Prediction p = predict(d, schedlab::model::occupancy(d, 16, 0, dims), Work{});
  EXPECT_EQ(p.limiter, "launch");
  EXPECT_EQ(p.predicted_s, 0);
}

}  // namespace
