// What the profile tests share: the CPU backend they trace on, the h200
// device model, and the profile of a standard fusion scheduled by a built-in
// plugin, as `schedlab show FUSION --stage profile` makes it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::model::testing_util {

inline std::string cache_dir() {
  return SCHEDLAB_BINARY_DIR "/tests/model/kernel-cache";
}

inline runtime::Backend& cpu() {
  static std::unique_ptr<runtime::Backend> b =
      runtime::make_cpu_backend(model_device_properties(), cache_dir());
  return *b;
}

inline const DeviceModel& h200() {
  static const DeviceModel d = load_device("h200", {SCHEDLAB_SOURCE_DIR "/configs/devices"});
  return d;
}

/// `fusion` at `sizes` scheduled by the built-in `plugin`, profiled on h200
/// over about `max_blocks` blocks.
inline KernelProfile profile(const std::string& fusion, const ir::SizeBindings& sizes,
                             const std::string& plugin, int64_t max_blocks = 512,
                             const std::vector<std::string>& settings = {}) {
  sweep::BoundFusion bf =
      sweep::bind_fusion(fusion, {SCHEDLAB_SOURCE_DIR "/configs/fusions"}, sizes);
  plugin::Registry registry({SCHEDLAB_BINARY_DIR "/plugins"});
  sweep::PluginRun run =
      sweep::schedule_with_plugin(*registry.get(plugin), bf, device_properties(h200()), settings);
  EXPECT_TRUE(run.accepted) << run.reason;
  const ir::Fusion& f = *bf.def.fusion;
  ProfileOptions o;
  o.cache_dir = cache_dir();
  o.max_blocks = max_blocks;
  return profile_kernel(cpu(), runtime::prepare(f, bf.sizes), f, bf.sizes,
                        sweep::io_bytes(f, bf.sizes), h200(), o, fusion);
}

}  // namespace schedlab::model::testing_util
