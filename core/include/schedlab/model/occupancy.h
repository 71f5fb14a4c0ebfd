// schedlab/model: occupancy by NVIDIA's rules, as cuda_occupancy.h (the
// toolkit header behind cudaOccupancyMaxActiveBlocksPerMultiprocessor)
// computes it for a kernel's registers and shared memory and a launch.
//
// Owns: blocks and warps per SM, the limiting resource, and waves.
// May depend on: model/device.h, runtime/kernel.h (LaunchDims).
// Invariants: the four limits are those of cuda_occupancy.h without
// partitioned global caching and with the largest shared-memory carveout:
//   warps:     max_warps_per_sm / ceil(threads / 32), and max_blocks_per_sm;
//   registers: registers are allocated per warp, regs * 32 rounded up to the
//              allocation unit (256); each of the 4 sub-partitions holds
//              registers_per_sm / 4 and whole warps;
//   shared:    static + dynamic + the 1 KiB reserved per block, rounded up to
//              the allocation unit (128 B), into shared_bytes_per_sm;
//   launch:    a block over a per-block limit cannot run at all (0 blocks).
#pragma once

#include <cstdint>
#include <string>

#include "schedlab/model/device.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::model {

/// What bounds the number of resident blocks.
enum class OccupancyLimit { Warps, Blocks, Registers, SharedMemory, Launch };

/// "warps", "blocks", "registers", "shared memory", "launch".
const char* occupancy_limit_name(OccupancyLimit l);

struct Occupancy {
  int threads_per_block = 0;
  int warps_per_block = 0;
  int blocks_per_sm = 0;  ///< resident blocks per SM (0: the launch cannot run)
  int warps_per_sm = 0;   ///< resident warps per SM
  double occupancy = 0;   ///< warps_per_sm / max_warps_per_sm
  OccupancyLimit limit = OccupancyLimit::Warps;
  int registers_per_block = 0;         ///< allocated, with granularity
  int64_t shared_bytes_per_block = 0;  ///< allocated, reserved part and granularity included
  int64_t grid_blocks = 0;             ///< blocks in the grid
  double waves = 0;                    ///< grid_blocks / (blocks_per_sm * sm_count)
  std::string why_not;                 ///< when blocks_per_sm is 0: which per-block limit fails
};

/// Occupancy of a kernel using `registers` per thread and
/// `static_shared_bytes` of __shared__ arrays, launched with `dims` (its
/// dynamic shared memory included) on `device`.
Occupancy occupancy(const DeviceModel& device, int registers, int64_t static_shared_bytes,
                    const runtime::LaunchDims& dims);

}  // namespace schedlab::model
