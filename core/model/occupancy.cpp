// Occupancy, following cuda_occupancy.h's cudaOccMaxBlocksPerSM*Limit
// functions (see occupancy.h for the rules and what is left out).
#include "schedlab/model/occupancy.h"

#include <algorithm>
#include <climits>

namespace schedlab::model {
namespace {

int64_t round_up(int64_t x, int64_t unit) {
  return (x + unit - 1) / unit * unit;
}

/// cuda_occupancy.h: 4 sub-partitions per SM on every architecture since 7.0.
constexpr int kSubPartitions = 4;

}  // namespace

const char* occupancy_limit_name(OccupancyLimit l) {
  switch (l) {
    case OccupancyLimit::Warps:
      return "warps";
    case OccupancyLimit::Blocks:
      return "blocks";
    case OccupancyLimit::Registers:
      return "registers";
    case OccupancyLimit::SharedMemory:
      return "shared memory";
    case OccupancyLimit::Launch:
      return "launch";
  }
  return "?";
}

Occupancy occupancy(const DeviceModel& d, int registers, int64_t static_shared_bytes,
                    const runtime::LaunchDims& dims) {
  Occupancy o;
  const int64_t threads = dims.block[0] * dims.block[1] * dims.block[2];
  o.threads_per_block = int(std::min<int64_t>(threads, INT_MAX));
  o.warps_per_block = int((threads + 31) / 32);
  o.grid_blocks = dims.grid[0] * dims.grid[1] * dims.grid[2];

  const int64_t regs_per_warp = round_up(int64_t(registers) * 32, d.register_alloc_granularity);
  o.registers_per_block = int(regs_per_warp * o.warps_per_block);
  // The hardware check assumes a block's warps spread over all sub-partitions.
  const int64_t regs_assumed = regs_per_warp * round_up(o.warps_per_block, kSubPartitions);
  o.shared_bytes_per_block =
      round_up(static_shared_bytes + int64_t(dims.shared_bytes) + d.shared_reserved_per_block,
               d.shared_alloc_granularity);

  if (threads > d.max_threads_per_block)
    o.why_not = std::to_string(threads) + " threads per block, the limit is " +
                std::to_string(d.max_threads_per_block);
  else if (registers > d.registers_per_thread)
    o.why_not = std::to_string(registers) + " registers per thread, the limit is " +
                std::to_string(d.registers_per_thread);
  else if (regs_assumed > d.registers_per_block)
    o.why_not = std::to_string(regs_assumed) + " registers per block, the limit is " +
                std::to_string(d.registers_per_block);
  else if (o.shared_bytes_per_block > d.shared_bytes_per_block + d.shared_reserved_per_block)
    o.why_not = std::to_string(o.shared_bytes_per_block) +
                " bytes of shared memory per block (reserved 1 KiB included), the limit is " +
                std::to_string(d.shared_bytes_per_block + d.shared_reserved_per_block);
  if (!o.why_not.empty()) {
    o.limit = OccupancyLimit::Launch;
    return o;
  }

  // Each limit in blocks per SM; the smallest wins, the first listed on a tie.
  struct Candidate {
    int64_t blocks;
    OccupancyLimit limit;
  };
  const int64_t warps_per_sub =
      regs_per_warp > 0 ? d.registers_per_sm / kSubPartitions / regs_per_warp : INT_MAX;
  const Candidate limits[] = {
      {d.max_warps_per_sm / o.warps_per_block, OccupancyLimit::Warps},
      {d.max_blocks_per_sm, OccupancyLimit::Blocks},
      {regs_per_warp > 0 ? warps_per_sub * kSubPartitions / o.warps_per_block : INT_MAX,
       OccupancyLimit::Registers},
      {d.shared_bytes_per_sm / o.shared_bytes_per_block, OccupancyLimit::SharedMemory},
  };
  const Candidate* best =
      std::min_element(std::begin(limits), std::end(limits),
                       [](const Candidate& a, const Candidate& b) { return a.blocks < b.blocks; });
  o.blocks_per_sm = int(best->blocks);
  o.limit = best->limit;
  o.warps_per_sm = o.blocks_per_sm * o.warps_per_block;
  o.occupancy = double(o.warps_per_sm) / d.max_warps_per_sm;
  if (o.blocks_per_sm > 0) o.waves = double(o.grid_blocks) / (double(o.blocks_per_sm) * d.sm_count);
  return o;
}

}  // namespace schedlab::model
