// The roofline prediction: each term binds in the case built for it, the
// tail stretches a grid one block over a wave, and bandwidth_fraction is
// ideal bytes over predicted time over the peak.
#include "schedlab/model/roofline.h"

#include <gtest/gtest.h>

namespace {

using schedlab::model::DeviceModel;
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
  EXPECT_DOUBLE_EQ(p.predicted_s, w.dram_bytes / 4320e9);
  EXPECT_DOUBLE_EQ(p.bandwidth_fraction, 4320.0 / 4800.0);
}

TEST(Roofline, OneBlockOverAWaveDoublesTheBusiestSm) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  Work w;
  w.dram_bytes = w.ideal_bytes = 1e9;
  Prediction p = predict(d, full(d, 133), w);
  EXPECT_DOUBLE_EQ(p.tail, 2.0 * 132 / 133);
  EXPECT_DOUBLE_EQ(p.dram_s, 1e9 / 4320e9 * p.tail);
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

TEST(Roofline, ALaunchThatCannotRunPredictsNothing) {
  DeviceModel d = schedlab::model::load_device("h200", kDirs);
  schedlab::runtime::LaunchDims dims;
  dims.block = {2048, 1, 1};
  Prediction p = predict(d, schedlab::model::occupancy(d, 16, 0, dims), Work{});
  EXPECT_EQ(p.limiter, "launch");
  EXPECT_EQ(p.predicted_s, 0);
}

}  // namespace
