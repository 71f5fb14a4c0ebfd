// schedlab/model: the profile of one kernel on a device model, the
// performance model's whole answer (docs/model.md).
//
// Owns: profile_kernel(), which puts the parts together:
//   1. resources from NVRTC for the device's arch (resources.h);
//   2. occupancy and waves for the launch (occupancy.h);
//   3. memory traffic from a traced run on the CPU backend (traffic.h), of
//      the whole grid or of its first blocks (sampling, below);
//   4. the dynamic instruction estimate (below) and the roofline (roofline.h).
// May depend on: model/*, runtime (executor, access trace), ref (inputs).
// Invariants: deterministic for a given kernel, sizes and device file: the
// inputs are generated from a fixed seed and nothing is timed, so two runs
// give identical profiles.
//
// Sampling: a grid of more than ProfileOptions::max_blocks blocks is traced
// for its first blocks only: whole rows of the grid in x (whole x-y planes
// in z) up to max_blocks (fewer when the traced CPU emulation's budget,
// runtime/work_estimate.h, allows fewer: sample_blocks_within), and the
// counts are scaled by grid / sampled blocks. This assumes blocks are alike (true of the generated kernels: the
// same code on another tile); tests/model compare sampled and full counts.
//
// Instructions: PTX gives a static count. The dynamic count per thread is
// estimated as static instructions * max(1, traced accesses per thread /
// static memory instructions): loops repeat their memory accesses as often
// as the rest of their body, and the trace counts the former exactly; every
// instruction runs at least once (straight-line code, and the block
// reduction, whose shared accesses the trace does not see). The same
// factor scales the PTX's CUDA-core arithmetic (PtxCounts: FLOPs, FP lanes)
// into the grid's flops and fp_lane_ops (roofline.h's Work). mma.sync is
// counted exactly from the kernel IR instead (runtime::emulated_work's
// kir::MmaTile instances x warps x blocks; a tile at an operand's edge counts
// whole, as the warp executes it): mma_instructions, and 4096 FLOPs each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/model/device.h"
#include "schedlab/model/occupancy.h"
#include "schedlab/model/resources.h"
#include "schedlab/model/roofline.h"
#include "schedlab/model/traffic.h"
#include "schedlab/report/record.h"
#include "schedlab/runtime/device.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/runtime/work_estimate.h"

namespace schedlab::model {

struct ProfileOptions {
  std::string cache_dir;     ///< NVRTC's and the CPU backend's kernel cache (runtime::cache_dir)
  int64_t max_blocks = 512;  ///< trace at most about this many blocks; 0: the whole grid
  uint64_t seed = 1;         ///< of the generated inputs
};

/// One kernel's profile; byte and wavefront figures are for the whole grid.
struct KernelProfile {
  std::string name;    ///< e.g. "softmax" or "softmax segment 1 (reduction)"
  std::string device;  ///< the device model's name
  KernelResources resources;
  runtime::LaunchDims dims;
  Occupancy occupancy;
  TrafficCounts traffic;       ///< as counted over the sampled blocks (unscaled)
  int64_t sampled_blocks = 0;  ///< blocks traced
  double scale = 1;            ///< grid blocks / sampled blocks
  double requested_bytes = 0;  ///< global bytes the threads asked for
  double sector_bytes = 0;     ///< 32-byte sectors they touched
  double dram_bytes = 0;       ///< estimated DRAM traffic (L2 model)
  int64_t ideal_bytes = 0;     ///< each input read once, each output written once
  double smem_wavefronts = 0;
  double bank_conflict_ways = 1;       ///< the worst shared-memory site's
  double instructions_per_thread = 0;  ///< dynamic PTX instructions, estimated
  double warp_instructions = 0;        ///< over the grid
  double flops = 0;                    ///< over the grid: CUDA-core and tensor-core (Work::flops)
  double fp_lane_ops = 0;              ///< CUDA-core FP lanes over the grid
  double mma_instructions = 0;         ///< warp-wide m16n8k16 over the grid
  Terms terms;                         ///< the work in the time model's terms
  Prediction prediction;
};

/// Profiles `prepared` (lowered from `fusion` under `sizes`) on `device`:
/// `cpu` must be a CPU backend (it runs the traced kernel). `ideal_bytes` as
/// sweep::io_bytes. user_error if NVRTC rejects the kernel.
KernelProfile profile_kernel(runtime::Backend& cpu, const runtime::PreparedKernel& prepared,
                             const ir::Fusion& fusion, const ir::SizeBindings& sizes,
                             int64_t ideal_bytes, const DeviceModel& device,
                             const ProfileOptions& options, const std::string& name);

/// The launch actually traced for `dims` under `max_blocks` (see Sampling).
runtime::LaunchDims sampled_dims(const runtime::LaunchDims& dims, int64_t max_blocks);

/// `max_blocks` lowered to the blocks whose emulation fits the traced CPU
/// budget `traced_limit` (runtime::cpu_work_limit(true); 0: none), at least
/// one: a large grid's profile traces the blocks the budget allows instead
/// of being refused. 0 (the whole grid) stays 0: a whole traced launch
/// beyond the budget is refused, as the sanitizer's is.
int64_t sample_blocks_within(int64_t max_blocks, const runtime::EmulatedWork& work,
                             double traced_limit);

/// Profiles as one JSON document (an array of kernel objects with the fields
/// docs/model.md lists), pretty-printed when `indent` >= 0.
std::string profiles_json(const std::vector<KernelProfile>& profiles, int indent = 2);

/// A kernel's model terms as the compact JSON object profiles_json gives
/// under "terms" (what `schedlab calibrate` reads back from records).
std::string terms_json(const Terms& terms);

/// What a sweep record keeps of a profile (report::Prediction).
report::Prediction record_prediction(const KernelProfile& profile);

/// The same for people: one block of lines per kernel.
std::string format_profiles(const std::vector<KernelProfile>& profiles);

}  // namespace schedlab::model
