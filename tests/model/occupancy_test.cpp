// Occupancy: hand-computed cases for each limit, and agreement with the
// toolkit's cuda_occupancy.h (the header behind
// cudaOccupancyMaxActiveBlocksPerMultiprocessor) over a grid of launches on
// every shipped device.
#include "schedlab/model/occupancy.h"

#include <cuda_occupancy.h>
#include <gtest/gtest.h>

#include "schedlab/model/device.h"

namespace {

using schedlab::model::DeviceModel;
using schedlab::model::Occupancy;
using schedlab::model::occupancy;
using schedlab::model::OccupancyLimit;
using schedlab::runtime::LaunchDims;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

DeviceModel h200() {
  return schedlab::model::load_device("h200", kDirs);
}

LaunchDims launch(int64_t blocks, int64_t threads, size_t dynamic_shared = 0) {
  LaunchDims d;
  d.grid = {blocks, 1, 1};
  d.block = {threads, 1, 1};
  d.shared_bytes = dynamic_shared;
  return d;
}

TEST(Occupancy, WarpLimited) {
  // 256 threads = 8 warps; 64 warps per SM -> 8 blocks. Registers (16 ->
  // 512 per warp) allow 16 blocks, shared memory (1 KiB reserved) 228.
  Occupancy o = occupancy(h200(), 16, 0, launch(132 * 8 * 2, 256));
  EXPECT_EQ(o.warps_per_block, 8);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_EQ(o.warps_per_sm, 64);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  EXPECT_EQ(o.limit, OccupancyLimit::Warps);
  EXPECT_DOUBLE_EQ(o.waves, 2.0);
  EXPECT_EQ(o.shared_bytes_per_block, 1024);
}

TEST(Occupancy, RegisterLimited) {
  // 128 registers -> 4096 per warp; a sub-partition's 16384 hold 4 warps,
  // 16 per SM -> 2 blocks of 8 warps.
  Occupancy o = occupancy(h200(), 128, 0, launch(1000, 256));
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.warps_per_sm, 16);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.25);
  EXPECT_EQ(o.limit, OccupancyLimit::Registers);
}

TEST(Occupancy, RegisterGranularityRoundsUpPerWarp) {
  // 33 registers: 1056 per warp, allocated 1280; 16384 / 1280 = 12 warps per
  // sub-partition, 48 per SM -> 6 blocks of 8 warps (without the granularity
  // it would be 7).
  Occupancy o = occupancy(h200(), 33, 0, launch(1000, 256));
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_EQ(o.registers_per_block, 1280 * 8);
  EXPECT_EQ(o.limit, OccupancyLimit::Registers);
}

TEST(Occupancy, SharedMemoryLimitedWithReservedKiBAndGranularity) {
  // 40000 static + 1000 dynamic + 1024 reserved = 42024 -> 42112 (128 B
  // units); 233472 / 42112 = 5 blocks of 4 warps.
  Occupancy o = occupancy(h200(), 16, 40000, launch(1000, 128, 1000));
  EXPECT_EQ(o.shared_bytes_per_block, 42112);
  EXPECT_EQ(o.blocks_per_sm, 5);
  EXPECT_EQ(o.warps_per_sm, 20);
  EXPECT_EQ(o.limit, OccupancyLimit::SharedMemory);
}

TEST(Occupancy, BlockLimited) {
  // One warp per block: 64 would fit by warps, 32 blocks per SM is the cap.
  Occupancy o = occupancy(h200(), 16, 0, launch(1000, 32));
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
  EXPECT_EQ(o.limit, OccupancyLimit::Blocks);
}

TEST(Occupancy, ThreadLimitedOnAda) {
  // 1024 threads = 32 warps; an sm_89 SM holds 48 warps -> one block, 2/3.
  DeviceModel l40s = schedlab::model::load_device("l40s", kDirs);
  Occupancy o = occupancy(l40s, 32, 0, launch(142, 1024));
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_NEAR(o.occupancy, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(o.limit, OccupancyLimit::Warps);
  EXPECT_DOUBLE_EQ(o.waves, 1.0);
}

TEST(Occupancy, LaunchesThatCannotRunSayWhy) {
  Occupancy big = occupancy(h200(), 16, 0, launch(1, 2048));
  EXPECT_EQ(big.blocks_per_sm, 0);
  EXPECT_EQ(big.limit, OccupancyLimit::Launch);
  EXPECT_EQ(big.why_not, "2048 threads per block, the limit is 1024");
  Occupancy regs = occupancy(h200(), 255, 0, launch(1, 1024));
  EXPECT_EQ(regs.why_not, "262144 registers per block, the limit is 65536");
  Occupancy smem = occupancy(h200(), 16, 0, launch(1, 128, 232449));
  EXPECT_EQ(smem.why_not,
            "233600 bytes of shared memory per block (reserved 1 KiB included), the limit is "
            "233472");
}

/// cuda_occupancy.h's answer for the same device and launch.
int toolkit_blocks(const DeviceModel& d, int regs, size_t static_smem, int threads,
                   size_t dynamic_smem) {
  cudaOccDeviceProp p;
  p.computeMajor = d.cc_major();
  p.computeMinor = std::stoi(d.arch.substr(d.arch.size() - 1));
  p.maxThreadsPerBlock = d.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
  p.regsPerBlock = d.registers_per_block;
  p.regsPerMultiprocessor = d.registers_per_sm;
  p.warpSize = 32;
  p.sharedMemPerBlock = 48 * 1024;
  p.sharedMemPerMultiprocessor = size_t(d.shared_bytes_per_sm);
  p.numSms = d.sm_count;
  p.sharedMemPerBlockOptin = size_t(d.shared_bytes_per_block);
  p.reservedSharedMemPerBlock = size_t(d.shared_reserved_per_block);
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = d.max_threads_per_block;
  a.numRegs = regs;
  a.sharedSizeBytes = static_smem;
  a.partitionedGCConfig = PARTITIONED_GC_OFF;
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.maxDynamicSharedSizeBytes = size_t(d.shared_bytes_per_block) - static_smem;
  a.numBlockBarriers = 1;
  cudaOccDeviceState s;
  cudaOccResult r{};
  EXPECT_EQ(cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dynamic_smem),
            CUDA_OCC_SUCCESS);
  return r.activeBlocksPerMultiprocessor;
}

TEST(Occupancy, AgreesWithTheToolkitHeader) {
  int compared = 0;
  for (const std::string& name : schedlab::model::device_names(kDirs)) {
    DeviceModel d = schedlab::model::load_device(name, kDirs);
    for (int threads : {32, 64, 96, 128, 160, 256, 384, 512, 640, 1024})
      for (int regs : {16, 24, 32, 33, 40, 48, 64, 72, 96, 128, 168, 255})
        for (size_t smem : {size_t(0), size_t(4224), size_t(16384), size_t(40000), size_t(99000)}) {
          if (int64_t(smem) > d.shared_bytes_per_block) continue;
          Occupancy o = occupancy(d, regs, int64_t(smem), launch(1, threads));
          ASSERT_EQ(o.blocks_per_sm, toolkit_blocks(d, regs, smem, threads, 0))
              << name << ": " << threads << " threads, " << regs << " registers, " << smem
              << " B shared";
          ++compared;
        }
  }
  EXPECT_GT(compared, 2000);
}

}  // namespace
