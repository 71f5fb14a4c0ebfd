// schedlab/model: memory traffic as the GPU's memory system would see it,
// counted from the CPU emulation's access trace (runtime/access_trace.h).
//
// Owns: TrafficObserver, which groups a launch's per-thread accesses into
// warp-wide requests (the lanes of one warp at the same site and the same
// per-thread occurrence, as AccessEvent::occurrence numbers them) and counts
//   global: requested bytes, 32-byte sectors (L1 <-> L2 traffic), and DRAM
//           bytes through an LRU model of the device's L2 (sectors; writes
//           allocate without a fetch and are written back when evicted or at
//           the end);
//   shared: wavefronts per request and the bank-conflict degree per site
//           (banks of 4 bytes; a request of B bytes per lane is served in
//           phases of 128 / B lanes; a phase takes as many wavefronts as the
//           most distinct 4-byte words any one bank holds).
// May depend on: runtime/access_trace.h, model/device.h.
// Invariants: counts are exact for the blocks observed; the caller scales
// sampled launches (model/profile.h). Out-of-bounds accesses, Local arrays
// and the block-reduction workspace (untraced) are not counted.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "schedlab/runtime/access_trace.h"

namespace schedlab::model {

/// Global-memory traffic of one buffer (tensor).
struct GlobalTraffic {
  std::string tensor;           ///< "T3 (m)"
  int64_t requests = 0;         ///< warp-wide requests
  int64_t thread_accesses = 0;  ///< single threads' accesses in them
  int64_t requested_bytes = 0;  ///< bytes the threads asked for
  int64_t sector_bytes = 0;     ///< 32 * sectors the requests touched
  int64_t read_bytes = 0;       ///< requested bytes of loads
  int64_t write_bytes = 0;      ///< requested bytes of stores
  /// DRAM bytes of the L2 model's compulsory read misses (a sector's first
  /// touch), of the DRAM reads in TrafficCounts::dram_read_bytes.
  int64_t first_read_bytes = 0;
  int64_t footprint_bytes = 0;  ///< the buffer's size in whole sectors
  /// requested / sector bytes: 1 when every byte of every sector is used.
  double efficiency() const {
    return sector_bytes > 0 ? double(requested_bytes) / double(sector_bytes) : 1.0;
  }
};

/// Shared-memory traffic of one access site.
struct SharedSiteTraffic {
  int site = -1;
  int line = 0;        ///< line of the generated unit
  std::string tensor;  ///< "T4 (x_smem)"
  bool is_write = false;
  int64_t requests = 0;          ///< warp-wide requests
  int64_t wavefronts = 0;        ///< what they took
  int64_t ideal_wavefronts = 0;  ///< what they would take without bank conflicts
  /// wavefronts / ideal: 1 without conflicts, 32 for a column of a 32x32 f32 tile.
  double conflict_ways() const {
    return ideal_wavefronts > 0 ? double(wavefronts) / double(ideal_wavefronts) : 1.0;
  }
};

/// Everything counted over the observed blocks.
struct TrafficCounts {
  int64_t blocks = 0;                     ///< blocks observed
  std::vector<GlobalTraffic> global;      ///< by buffer, Global buffers only
  std::vector<SharedSiteTraffic> shared;  ///< by site, Shared sites that were executed
  int64_t dram_read_bytes = 0;            ///< L2 misses of loads, 32 B each (first reads included)
  int64_t dram_write_bytes = 0;           ///< dirty sectors written back, 32 B each
  int64_t thread_accesses = 0;            ///< global and shared accesses of single threads
  int64_t threads = 0;                    ///< threads of the observed blocks
  /// The most barriers one observed block completed (its block reductions'
  /// included): the floor's barrier count (model/roofline.h).
  int64_t block_barriers = 0;
  /// The most dependent DRAM round trips of one observed block: each barrier
  /// interval with a global load waits for it, except a cp.async's, which
  /// waits only at the interval whose wait_group lands it (its latency
  /// overlaps the intervals in between: a circular buffer's prefetch), as
  /// the longest path of round trips over the intervals (block_round_trips).
  int64_t block_read_phases = 0;

  int64_t requested_bytes() const;
  int64_t sector_bytes() const;
  int64_t smem_wavefronts() const;
  int64_t smem_ideal_wavefronts() const;
  /// The worst site's conflict degree (1 with no shared memory).
  double bank_conflict_ways() const;
  /// DRAM bytes of the whole grid when these counts are of 1 / `scale` of
  /// its blocks (profile.h's sampling): writes and re-reads of evicted
  /// sectors scale with the blocks, first reads scale too but stop at each
  /// buffer's footprint (no grid reads a sector for the first time twice;
  /// a matmul's B, read by the sampled blocks in full, is not read again by
  /// every other row of blocks while it fits in L2). Exact at scale 1.
  double scaled_dram_bytes(double scale) const;
};

/// Wavefronts of one shared-memory request: per lane (0..31) its byte
/// address (in the block's shared memory) and width; lanes not in the
/// request have bytes == 0. `banks` of 4 bytes. Returns {wavefronts, ideal}.
std::pair<int64_t, int64_t> shared_wavefronts(const std::vector<std::pair<int64_t, int>>& lanes,
                                              int banks);

/// Wavefronts of one ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.b16:
/// `rows` holds the byte addresses (in the block's shared memory) that lanes
/// 0 .. 8N-1 pass, row j of matrix i from lane 8i + j, N = rows.size() / 8.
/// Each row is 16 bytes, so the request is shared_wavefronts' with 16-byte
/// lanes: phases of 8 lanes, one 8x8 matrix (128 bytes) each, so at least N
/// wavefronts, and one more for every further distinct 4-byte word a bank
/// holds in a phase (a row-major tile with a 128-byte pitch puts all eight
/// rows of a matrix in banks 0-3: 8 wavefronts per matrix; an XOR swizzle
/// of the 16-byte chunks, 1). The CUDA equivalent of Nsight Compute's
/// l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld for the instruction.
/// A traced unit that reports each lane's row as a 16-byte Shared read at
/// the ldmatrix's site gets the same count from TrafficObserver.
std::pair<int64_t, int64_t> ldmatrix_wavefronts(const std::vector<int64_t>& rows, int banks);

/// An LRU cache of 32-byte sectors that counts DRAM traffic.
class L2Model {
 public:
  explicit L2Model(int64_t capacity_bytes);
  /// One request's touch of `sector` (a global key: buffer and sector index).
  /// Returns true for a compulsory miss: a load of a sector never touched.
  bool touch(uint64_t sector, bool write);
  /// Writes back what is still dirty; call once at the end.
  void flush();
  int64_t read_bytes() const { return read_sectors_ * 32; }
  int64_t write_bytes() const { return write_sectors_ * 32; }

 private:
  struct Line {
    uint64_t sector;
    bool dirty;
  };
  size_t capacity_;
  std::list<Line> lru_;  ///< most recent first
  std::unordered_map<uint64_t, std::list<Line>::iterator> where_;
  std::unordered_set<uint64_t> seen_;  ///< every sector touched
  int64_t read_sectors_ = 0;
  int64_t write_sectors_ = 0;
};

/// Counts a traced launch; see the header comment.
class TrafficObserver final : public runtime::AccessObserver {
 public:
  TrafficObserver(int64_t l2_bytes, int shared_banks) : l2_(l2_bytes), banks_(shared_banks) {}

  void on_launch_begin(const runtime::TraceKernel& kernel) override;
  void on_block_begin(const runtime::BlockEvent& block) override;
  void on_access(const runtime::AccessEvent& access) override;
  void on_async_issue(const runtime::AccessEvent& copy) override;
  void on_block_end(const runtime::BlockEvent& block) override;
  /// A block stopped at a grid barrier: its pending warp requests are
  /// counted before another block's accesses come (grid persistence).
  void on_block_suspend(const runtime::BlockEvent& block) override;
  void on_launch_end() override;

  /// The counts, complete after on_launch_end.
  const TrafficCounts& counts() const { return counts_; }

 private:
  /// One warp-wide request being gathered: (site, warp, occurrence).
  struct Key {
    int site;
    int32_t warp;
    uint32_t occurrence;
    bool operator<(const Key& o) const {
      return std::tie(site, warp, occurrence) < std::tie(o.site, o.warp, o.occurrence);
    }
  };
  struct Lane {
    int lane;
    int64_t offset;  ///< bytes: in the buffer (Global) or in shared memory (Shared)
    int bytes;
  };
  void flush_request(const Key& key, const std::vector<Lane>& lanes);

  const runtime::TraceKernel* kernel_ = nullptr;
  const char* smem_ = nullptr;  ///< the running block's shared memory
  L2Model l2_;
  int banks_;
  TrafficCounts counts_;
  std::vector<int> global_index_;             ///< buffer id -> counts_.global index, or -1
  std::map<int, size_t> shared_index_;        ///< site -> counts_.shared index
  std::map<Key, std::vector<Lane>> pending_;  ///< this block's requests
  /// The last access, when a global read: a cp.async's source if its issue
  /// (same thread) comes next. (thread_linear, epoch) or thread -1.
  std::pair<int32_t, uint64_t> last_global_read_{-1, 0};
  std::map<uint64_t, int64_t> sync_reads_;    ///< epoch -> plain global reads in it
  /// (thread_linear, destination site) -> issue epochs of its pending
  /// cp.async copies, oldest first (a thread's copies land in issue order).
  std::map<std::pair<int32_t, int>, std::vector<uint64_t>> in_flight_;
  std::map<uint64_t, uint64_t> landed_from_;  ///< landing epoch -> latest issue epoch landing there
};

/// Dependent DRAM round trips of one block over its `intervals` barrier
/// intervals: interval e starts at T[e] (T[0] = 0, in round trips, barriers
/// free) and ends at E[e] = max(T[e] + 1 if it has a plain global load,
/// T[s] + 1 for the latest issue interval s of the cp.async copies that land
/// in it, T[e]); T[e + 1] = E[e]. The result is the last E. With only plain
/// loads: the intervals with one. A copy issued `p` intervals before the one
/// that lands it overlaps them: one round trip per p intervals.
int64_t block_round_trips(uint64_t intervals, const std::map<uint64_t, int64_t>& plain_reads,
                          const std::map<uint64_t, uint64_t>& landed_from);

}  // namespace schedlab::model
