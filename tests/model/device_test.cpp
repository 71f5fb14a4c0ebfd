// Device models: the shipped files load with their published figures, and
// every malformed file (tests/model/invalid) fails with its promised
// diagnostic at file:line:col.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "diagnostic_files.h"
#include "schedlab/base/error.h"
#include "schedlab/model/device.h"
#include "test_support.h"

namespace {

using schedlab::model::DeviceModel;
using schedlab::model::load_device;
using testing::HasSubstr;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

TEST(DeviceModel, ShipsTheFiveDevices) {
  EXPECT_THAT(schedlab::model::device_names(kDirs),
              testing::ElementsAre("a100-80g", "h100-sxm", "h200", "l40s", "rtx4090"));
  for (const std::string& name : schedlab::model::device_names(kDirs)) {
    DeviceModel d = load_device(name, kDirs);
    EXPECT_EQ(d.name, name);
    EXPECT_LE(d.copy_bandwidth_gbs, d.dram_bandwidth_gbs) << name;
    EXPECT_EQ(d.max_threads_per_sm, 32 * d.max_warps_per_sm) << name;
  }
}

TEST(DeviceModel, H200IsTheDefaultWithItsPublishedFigures) {
  DeviceModel d = load_device(schedlab::model::kDefaultDevice, kDirs);
  EXPECT_EQ(d.name, "h200");
  EXPECT_EQ(d.arch, "sm_90");
  EXPECT_EQ(d.cc_major(), 9);
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_DOUBLE_EQ(d.dram_bandwidth_gbs, 4800);
  EXPECT_EQ(d.l2_bytes, 50 << 20);
  EXPECT_EQ(d.shared_bytes_per_sm, 228 << 10);
  EXPECT_EQ(d.shared_reserved_per_block, 1024);
  EXPECT_EQ(d.register_alloc_granularity, 256);
}

// The device plugins schedule for on the CPU backend comes from
// configs/devices/h100-sxm.yaml: the figures plugin.h documents for
// SchedlabDeviceProperties, under the name plugins' log lines show.
TEST(DeviceModel, TheHeuristicsDeviceIsTheH100ModelWithTheAbiFigures) {
  const schedlab::runtime::DeviceProperties& p = schedlab::model::model_device_properties();
  EXPECT_EQ(p.name, "schedlab-model-sm90");
  EXPECT_TRUE(p.is_model);
  EXPECT_EQ(p.arch, "sm_90");
  EXPECT_EQ(p.cc_major, 9);
  EXPECT_EQ(p.cc_minor, 0);
  EXPECT_EQ(p.sm_count, 132);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  EXPECT_EQ(p.max_threads_per_sm, 2048);
  EXPECT_EQ(p.registers_per_block, 65536);
  EXPECT_EQ(p.registers_per_sm, 65536);
  EXPECT_EQ(p.shared_bytes_per_block, 48u << 10);
  EXPECT_EQ(p.shared_bytes_per_block_optin, 227u << 10);
  EXPECT_EQ(p.shared_bytes_per_sm, 228u << 10);
  EXPECT_EQ(p.l2_bytes, 50u << 20);
  EXPECT_EQ(p.global_memory_bytes, size_t(80) << 30);
  EXPECT_DOUBLE_EQ(p.peak_bandwidth_bytes_per_s, 3.35e12);
  // The same figures as the model of that file, but for the name.
  schedlab::runtime::DeviceProperties q =
      schedlab::model::device_properties(load_device(schedlab::model::kHeuristicDevice, kDirs));
  EXPECT_EQ(q.name, "NVIDIA H100 SXM5 80 GB (model)");
  EXPECT_TRUE(q.is_model);  // every device model's, not only the heuristics' device
  EXPECT_EQ(q.sm_count, p.sm_count);
  EXPECT_EQ(q.shared_bytes_per_block_optin, p.shared_bytes_per_block_optin);
}

TEST(DeviceModel, AdaHasTheSmallerSm) {
  DeviceModel d = load_device("l40s", kDirs);
  EXPECT_EQ(d.arch, "sm_89");
  EXPECT_EQ(d.max_threads_per_sm, 1536);
  EXPECT_EQ(d.max_blocks_per_sm, 24);
  EXPECT_EQ(d.shared_bytes_per_sm, 100 << 10);
}

TEST(DeviceModel, LoadsByPath) {
  DeviceModel d = load_device(SCHEDLAB_SOURCE_DIR "/configs/devices/a100-80g.yaml", {});
  EXPECT_EQ(d.sm_count, 108);
  EXPECT_EQ(d.cc_major(), 8);
}

TEST(DeviceModel, UnknownNameListsTheDevices) {
  try {
    load_device("h2000", kDirs);
    FAIL() << "loaded a device that does not exist";
  } catch (const schedlab::UserError& e) {
    EXPECT_EQ(e.message(),
              "--device: no device model named 'h2000'; expected one of a100-80g, h100-sxm, h200, "
              "l40s, rtx4090 (did you mean 'h200'?)");
  }
}

TEST(DeviceModel, MissingFileIsAUserError) {
  EXPECT_THROW(load_device("/nonexistent/x.yaml", kDirs), schedlab::UserError);
}

const std::string kInvalidDir = SCHEDLAB_SOURCE_DIR "/tests/model/invalid";

std::vector<std::string> invalid_files() {
  return schedlab::test_support::files_with_extension(kInvalidDir, ".yaml");
}

class InvalidDeviceFile : public testing::TestWithParam<std::string> {};

TEST_P(InvalidDeviceFile, Diagnoses) {
  schedlab::test_support::expect_diagnostic(
      GetParam(), [](const std::string& path) { schedlab::model::load_device_file(path); });
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidDeviceFile, testing::ValuesIn(invalid_files()),
                         schedlab::test_support::file_case_name);

TEST(InvalidDeviceFiles, AtLeast15DistinctCases) {
  schedlab::test_support::expect_distinct_cases(invalid_files(), 15, kInvalidDir);
}

}  // namespace
