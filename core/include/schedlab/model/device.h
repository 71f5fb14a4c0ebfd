// schedlab/model: device models, the hardware half of the performance model
// (docs/model.md, "Device models").
//
// Owns: DeviceModel, the published figures of one GPU read from a YAML file
// in configs/devices/ (h200, h100-sxm, a100-80g, l40s, rtx4090), its loader,
// and the runtime::DeviceProperties derived from it: the one description of
// a modelled device. The device heuristics see on the CPU backend is the
// kHeuristicDevice file's (model_device_properties); a real GPU reports its
// own properties through the driver (runtime::cuda_device_properties).
// May depend on: schedlab/base, runtime/device.h. A device model is data:
// nothing here queries a real device, so every machine predicts the same for
// the same file.
// Invariants: a loaded model has every field set and positive, and the
// limits agree with each other (per-block limits within per-SM ones); a file
// that breaks this is a user error at the offending key's file:line:col.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/runtime/device.h"

namespace schedlab::model {

/// DeviceModel::grid_barrier_us of a device file without the key: an
/// assumption of the order grid.sync() measurements show (docs/model.md).
inline constexpr double kDefaultGridBarrierUs = 2.0;

/// The link between two GPUs of a mesh (docs/multi-device.md, "The
/// model"): what one ring step of a collective costs.
struct Interconnect {
  std::string link;          ///< e.g. "NVLink 4", "PCIe Gen4 x16"
  double bandwidth_gbs = 0;  ///< per direction, per GPU
  double latency_us = 0;     ///< one ring step's fixed cost (an assumption, to calibrate)
};

/// One GPU as the model sees it. Bandwidths in GB/s (1e9 bytes per second).
struct DeviceModel {
  std::string name;                       ///< the file's stem and `name:` key, e.g. "h200"
  std::string description;                ///< e.g. "NVIDIA H200 SXM 141 GB"
  std::string path;                       ///< the file it was read from
  std::string arch;                       ///< the NVRTC target, e.g. "sm_90"
  int sm_count = 0;                       ///< streaming multiprocessors
  double sm_clock_mhz = 0;                ///< boost clock of the SMs
  double dram_bandwidth_gbs = 0;          ///< peak DRAM bandwidth
  double copy_bandwidth_gbs = 0;          ///< what a copy kernel reaches (<= the peak)
  int64_t l2_bytes = 0;                   ///< L2 cache capacity
  int64_t shared_bytes_per_sm = 0;        ///< shared memory per SM (largest carveout)
  int64_t shared_bytes_per_block = 0;     ///< the most one block may use (opt-in)
  int64_t shared_reserved_per_block = 0;  ///< reserved by the system per block (1 KiB, sm_80+)
  int64_t shared_alloc_granularity = 0;   ///< shared memory is allocated in these units
  int shared_banks = 0;                   ///< 4-byte banks; one wavefront per clock per SM
  int registers_per_sm = 0;               ///< 32-bit registers per SM
  int registers_per_block = 0;            ///< the most one block may use
  int registers_per_thread = 0;           ///< the most one thread may use
  int register_alloc_granularity = 0;     ///< registers are allocated per warp in these units
  int max_threads_per_block = 0;          ///< block size limit
  int max_threads_per_sm = 0;             ///< resident threads per SM
  int max_warps_per_sm = 0;               ///< resident warps per SM
  int max_blocks_per_sm = 0;              ///< resident blocks per SM
  int warp_schedulers_per_sm = 0;         ///< warp instructions issued per clock per SM
  // The fixed costs (docs/model.md, "the floor"): assumptions until
  // `schedlab calibrate` fits them to a GPU's records.
  double issue_efficiency = 0;    ///< fraction of the peak issue rate kernels reach
  double launch_overhead_us = 0;  ///< an empty kernel's time, launch to completion
  double dram_latency_ns = 0;     ///< a dependent DRAM load's latency under load
  double barrier_ns = 0;          ///< one __syncthreads on the critical path
  double shuffle_ns = 0;          ///< one dependent warp shuffle (a reduction tree level)
  double grid_sync_ns = 0;        ///< a grid reduction's fence, semaphore and partials' read
  /// A grid-wide barrier (sl_grid_sync, grid-persistent reductions) of a
  /// fully resident grid: every block's arrival and the release. Optional in
  /// a device file (kDefaultGridBarrierUs when absent).
  double grid_barrier_us = 0;
  double tensor_tflops = 0;  ///< dense bf16 tensor-core ceiling (f32 accumulate), any instruction
  /// What mma.sync.aligned.m16n8k16 (bf16 in, f32 accumulate) reaches over
  /// the whole device: the tensor term's rate (docs/model.md, "5. The
  /// roofline"). tensor_tflops on Ampere and Ada, where mma.sync is the peak
  /// path; on Hopper below it (wgmma is the peak path), an assumption.
  double mma_sync_tflops = 0;
  double fp32_tflops = 0;    ///< CUDA-core FP32 peak, 2 FLOPs per FMA lane (the fp32 term's rate)
  int64_t memory_bytes = 0;  ///< device memory (the datasheet's GB, counted as GiB)
  /// The `interconnect:` mapping (link, bandwidth_gbs, latency_us), required.
  Interconnect interconnect;

  /// The compute capability's major number, from `arch` ("sm_90" -> 9).
  int cc_major() const;
};

/// The device model used when none is named.
inline constexpr const char* kDefaultDevice = "h200";
/// The device model plugins schedule for on the CPU backend (an H100 SXM:
/// the figures the plugin ABI documents, SchedlabDeviceProperties).
inline constexpr const char* kHeuristicDevice = "h100-sxm";

/// `device` as the properties a plugin schedules for, named after the
/// model's description ("NVIDIA H200 SXM 141 GB (model)"), with is_model
/// set. The memory clock and bus width, which only the driver reports, are 0.
runtime::DeviceProperties device_properties(const DeviceModel& device);

/// The device heuristics see on the CPU backend (plugin::model_device):
/// kHeuristicDevice's file from the configuration directory
/// (base::config_dir()/devices), loaded once, named
/// "schedlab-model-<arch without '_'>" ("schedlab-model-sm90"), the name
/// plugins' log lines and the ABI documentation show.
const runtime::DeviceProperties& model_device_properties();

/// Reads one device file. user_error at file:line:col for invalid YAML, a
/// missing, unknown or duplicate key, a value of the wrong kind, and limits
/// that contradict each other.
DeviceModel load_device_file(const std::string& path);

/// `name_or_path`: a path to a .yaml file, or a device name looked up as
/// <dir>/<name>.yaml in `dirs`, first match wins. user_error naming the
/// devices found when there is no such device.
DeviceModel load_device(const std::string& name_or_path, const std::vector<std::string>& dirs);

/// The device names (file stems) in `dirs`, sorted, without duplicates.
std::vector<std::string> device_names(const std::vector<std::string>& dirs);

}  // namespace schedlab::model
