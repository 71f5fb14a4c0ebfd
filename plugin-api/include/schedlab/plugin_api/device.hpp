// schedlab/plugin_api/device.hpp: the target device as a plugin sees it
// (SchedlabDeviceProperties) and what a heuristic derives from it alone.
// Part of the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <cstdint>
#include <string>

namespace schedlab::plugin_api {

/// The target device (SchedlabDeviceProperties; a model device on the CPU backend).
struct DeviceProperties {
  bool is_model = false;  ///< from a device model (configs/devices), not a real GPU
  std::string name;
  std::string arch;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  uint64_t shared_bytes_per_block = 0;
  uint64_t shared_bytes_per_block_optin = 0;
  uint64_t shared_bytes_per_sm = 0;
  uint64_t l2_bytes = 0;
  uint64_t global_memory_bytes = 0;
  double peak_bandwidth_bytes_per_s = 0;
};

/// The threads the device holds resident at once (all SMs full).
inline int64_t resident_capacity(const DeviceProperties& d) {
  return int64_t{d.sm_count > 0 ? d.sm_count : 1} *
         (d.max_threads_per_sm > 0 ? d.max_threads_per_sm : 2048);
}

/// True when a kernel whose blocks hold `threads` threads in all keeps at
/// most an eighth of the device's resident threads busy: too few loads in
/// flight to cover DRAM latency, whatever each thread does (the model's
/// latency term, docs/model.md: 1/8 of an H200's threads with 16-byte
/// loads move about 4 TB/s at best). The built-in heuristics refuse a
/// segment that would run so, when cutting it apart lets a reduction split
/// its rows over blocks instead, and only in the segmenter's offers
/// (Segment::offered_by_segmenter), which then cut it; asked to schedule it
/// whole (a sweep point, --plugin), they do.
inline bool starves_device(int64_t threads, const DeviceProperties& d) {
  return threads * 8 <= resident_capacity(d);
}

}  // namespace schedlab::plugin_api
