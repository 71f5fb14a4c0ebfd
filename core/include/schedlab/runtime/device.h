// schedlab/runtime: what is known about a device, whichever backend found it
// out. A real GPU: the CUDA backend queries device 0 through the driver
// (runtime::cuda_device_properties). A modelled one: derived from its YAML
// device model, the one description of a modelled device
// (model::device_properties and model::model_device_properties,
// schedlab/model/device.h). Plugins' host and the model include this, not
// the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace schedlab::runtime {

/// What a heuristic may want to know about the device (device 0).
struct DeviceProperties {
  std::string name;                         ///< e.g. "NVIDIA H200"
  std::string arch;                         ///< NVRTC target, e.g. "sm_90"
  /// Derived from a YAML device model (model::device_properties), not
  /// queried from a GPU: the plugin ABI's SchedlabDeviceProperties.is_model.
  bool is_model = false;
  int cc_major = 0;                         ///< compute capability, major
  int cc_minor = 0;                         ///< compute capability, minor
  int sm_count = 0;                         ///< streaming multiprocessors
  int warp_size = 32;                       ///< threads per warp
  int max_threads_per_block = 0;            ///< block size limit
  int max_threads_per_sm = 0;               ///< resident threads per SM
  int max_blocks_per_sm = 32;               ///< resident blocks per SM (32 since sm_50)
  int registers_per_block = 0;              ///< 32-bit registers one block may use
  int registers_per_sm = 0;                 ///< 32-bit registers per SM
  size_t shared_bytes_per_block = 0;        ///< without opt-in (usually 48 KiB)
  size_t shared_bytes_per_block_optin = 0;  ///< with opt-in (dynamic shared memory)
  size_t shared_bytes_per_sm = 0;           ///< per SM, all resident blocks together
  size_t l2_bytes = 0;                      ///< L2 cache size
  size_t global_memory_bytes = 0;           ///< total device memory
  int memory_clock_khz = 0;                 ///< peak memory clock (0 for a model device)
  int memory_bus_bits = 0;                  ///< global memory bus width (0 for a model device)
  /// Peak DRAM bandwidth: 2 (double data rate) * memory clock * bus width.
  double peak_bandwidth_bytes_per_s = 0;
};

/// How many blocks of `threads` threads using `shared_bytes` of shared memory
/// (and `registers` 32-bit registers per thread; 0: unknown, not a limit)
/// the device holds at once, all SMs together: sm_count times the least of
/// max_blocks_per_sm, max_threads_per_sm over the block's whole warps,
/// shared_bytes_per_sm over shared_bytes, registers_per_sm over the block's
/// registers. What a kernel with grid barriers may launch at most (the CPU
/// backend's check; CUDA asks the driver's occupancy calculator instead).
struct Residency {
  int64_t per_sm = 0;      ///< blocks per SM
  int64_t total = 0;       ///< per_sm * sm_count
  const char* limit = "";  ///< what limits per_sm: "blocks", "threads", "shared memory", "registers"
};
Residency resident_blocks(const DeviceProperties& d, int64_t threads, size_t shared_bytes,
                          int registers = 0);

}  // namespace schedlab::runtime
