// A collective's predicted time (docs/multi-device.md, "The model"): NCCL's
// ring formulas over the device file's interconnect, checked by hand.
#include <gtest/gtest.h>

#include "schedlab/model/collective.h"
#include "schedlab/model/device.h"

namespace {

using schedlab::lower::CollectiveKind;
using schedlab::model::collective_us;
using schedlab::model::DeviceModel;
using schedlab::model::load_device;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

/// 100 GB/s each way (100e3 bytes per us), 2 us a step.
DeviceModel link() {
  DeviceModel d;
  d.interconnect = {"test link", 100, 2.0};
  return d;
}

TEST(Collective, AllreduceIsTwoRingPassesOfOneDthEach) {
  // D = 4, S = 4e6 bytes: 2 * 3 * (2 + 1e6 / 1e5) = 6 * 12 = 72 us.
  EXPECT_DOUBLE_EQ(collective_us(link(), CollectiveKind::Allreduce, 4'000'000, 4), 72.0);
  // D = 2, S = 12 bytes (sum_sharded's partial at N=3): 2 * (2 + 6 / 1e5).
  EXPECT_DOUBLE_EQ(collective_us(link(), CollectiveKind::Allreduce, 12, 2), 2 * (2 + 6e-5));
}

TEST(Collective, ReduceScatterIsOnePassOfOneDthEach) {
  // D = 4, S = 4e6: 3 * (2 + 10) = 36 us, half the allreduce.
  EXPECT_DOUBLE_EQ(collective_us(link(), CollectiveKind::ReduceScatter, 4'000'000, 4), 36.0);
}

TEST(Collective, AllgatherMovesEachRanksChunkOnce) {
  // D = 4, chunk 1e6 bytes: 3 * (2 + 10) = 36 us.
  EXPECT_DOUBLE_EQ(collective_us(link(), CollectiveKind::Allgather, 1'000'000, 4), 36.0);
  // D = 8: 7 steps of the same chunk.
  EXPECT_DOUBLE_EQ(collective_us(link(), CollectiveKind::Allgather, 1'000'000, 8), 84.0);
}

TEST(Collective, SliceAndOneRankCostNothing) {
  EXPECT_EQ(collective_us(link(), CollectiveKind::Slice, 1 << 20, 4), 0.0);
  for (CollectiveKind k : {CollectiveKind::Allreduce, CollectiveKind::ReduceScatter,
                           CollectiveKind::Allgather, CollectiveKind::Slice})
    EXPECT_EQ(collective_us(link(), k, 1 << 20, 1), 0.0);
}

TEST(Collective, TakesAPlansCommunication) {
  schedlab::lower::Communication c{CollectiveKind::Allreduce};
  c.bytes_per_rank = 4'000'000;
  EXPECT_DOUBLE_EQ(collective_us(link(), c, 4), 72.0);
}

TEST(Collective, APlansCommunicationsAddUpOnItsMesh) {
  schedlab::lower::ShardedPlan plan;
  plan.mesh = schedlab::ir::DeviceMesh::of_size(4);
  schedlab::lower::Communication ar{CollectiveKind::Allreduce};
  ar.bytes_per_rank = 4'000'000;  // 72 us on 4 ranks
  schedlab::lower::Communication ag{CollectiveKind::Allgather};
  ag.bytes_per_rank = 1'000'000;  // 36 us
  schedlab::lower::Communication slice{CollectiveKind::Slice};
  slice.bytes_per_rank = 0;
  plan.steps.emplace_back(ar);  // move-only steps: no initializer list
  plan.steps.emplace_back(slice);
  plan.steps.emplace_back(ag);
  EXPECT_DOUBLE_EQ(schedlab::model::communication_us(link(), plan), 108.0);
  plan.mesh = schedlab::ir::DeviceMesh::of_size(1);
  EXPECT_EQ(schedlab::model::communication_us(link(), plan), 0.0);
}

TEST(Collective, ShippedDevicesHaveTheirLinks) {
  DeviceModel h200 = load_device("h200", kDirs);
  EXPECT_EQ(h200.interconnect.link, "NVLink 4");
  EXPECT_DOUBLE_EQ(h200.interconnect.bandwidth_gbs, 450);
  EXPECT_DOUBLE_EQ(load_device("h100-sxm", kDirs).interconnect.bandwidth_gbs, 450);
  EXPECT_DOUBLE_EQ(load_device("a100-80g", kDirs).interconnect.bandwidth_gbs, 300);
  EXPECT_DOUBLE_EQ(load_device("l40s", kDirs).interconnect.bandwidth_gbs, 32);
  EXPECT_DOUBLE_EQ(load_device("rtx4090", kDirs).interconnect.bandwidth_gbs, 32);
  // A 64 MiB allreduce over 8 H200s: 14 steps of 1 us + 8 MiB at 450 GB/s
  // (18.6 us each): about 275 us, the bus bandwidth nccl-tests reports near
  // the link's peak.
  double us = collective_us(h200, CollectiveKind::Allreduce, 64 << 20, 8);
  EXPECT_NEAR(us, 14 * (1.0 + (8 << 20) / 450e3), 1e-9);
  // PCIe is 14x slower for the same bytes.
  EXPECT_GT(collective_us(load_device("l40s", kDirs), CollectiveKind::Allreduce, 64 << 20, 8),
            10 * us);
}

}  // namespace
