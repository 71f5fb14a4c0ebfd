// Warp-wide requests from the access trace: sectors, an L2 model, and
// shared-memory wavefronts (rules in traffic.h; docs/model.md).
#include "schedlab/model/traffic.h"

#include <algorithm>

#include "schedlab/base/error.h"

namespace schedlab::model {

namespace {

/// The sum of one counter over a list of per-tensor or per-site counts.
template <typename T>
int64_t total(const std::vector<T>& items, int64_t T::*counter) {
  int64_t n = 0;
  for (const T& item : items) n += item.*counter;
  return n;
}

}  // namespace

int64_t TrafficCounts::requested_bytes() const {
  return total(global, &GlobalTraffic::requested_bytes);
}
int64_t TrafficCounts::sector_bytes() const {
  return total(global, &GlobalTraffic::sector_bytes);
}
int64_t TrafficCounts::smem_wavefronts() const {
  return total(shared, &SharedSiteTraffic::wavefronts);
}
int64_t TrafficCounts::smem_ideal_wavefronts() const {
  return total(shared, &SharedSiteTraffic::ideal_wavefronts);
}
double TrafficCounts::scaled_dram_bytes(double scale) const {
  double first = 0;
  for (const GlobalTraffic& g : global)
    first += std::min(double(g.first_read_bytes) * scale, double(g.footprint_bytes));
  const int64_t again = dram_read_bytes - total(global, &GlobalTraffic::first_read_bytes);
  return first + double(again + dram_write_bytes) * scale;
}

double TrafficCounts::bank_conflict_ways() const {
  double worst = 1.0;
  for (const SharedSiteTraffic& s : shared) worst = std::max(worst, s.conflict_ways());
  return worst;
}

std::pair<int64_t, int64_t> shared_wavefronts(const std::vector<std::pair<int64_t, int>>& lanes,
                                              int banks) {
  int widest = 0;
  for (const auto& [addr, bytes] : lanes) widest = std::max(widest, bytes);
  if (widest == 0) return {0, 0};
  // A phase serves banks * 4 bytes: all 32 lanes for 4-byte accesses, 16 for
  // 8-byte, 8 for 16-byte ones.
  const int per_phase = std::clamp(banks * 4 / widest, 1, 32);
  int64_t wavefronts = 0, ideal = 0;
  for (size_t first = 0; first < lanes.size(); first += size_t(per_phase)) {
    // Distinct 4-byte words per bank in this phase: lanes reading one word
    // share it (a broadcast), different words in one bank serialize.
    std::vector<std::vector<int64_t>> words(static_cast<size_t>(banks));
    bool active = false;
    for (size_t l = first; l < std::min(lanes.size(), first + size_t(per_phase)); ++l) {
      const auto& [addr, bytes] = lanes[l];
      if (bytes == 0) continue;
      active = true;
      for (int64_t w = addr / 4; w <= (addr + bytes - 1) / 4; ++w) {
        std::vector<int64_t>& in_bank = words[size_t(w % banks)];
        if (std::find(in_bank.begin(), in_bank.end(), w) == in_bank.end()) in_bank.push_back(w);
      }
    }
    if (!active) continue;
    size_t most = 0;
    for (const auto& in_bank : words) most = std::max(most, in_bank.size());
    wavefronts += int64_t(most);
    ++ideal;
  }
  return {wavefronts, ideal};
}

std::pair<int64_t, int64_t> ldmatrix_wavefronts(const std::vector<int64_t>& rows, int banks) {
  internal_assert(!rows.empty() && rows.size() <= 32 && rows.size() % 8 == 0)
      << "ldmatrix: expected 8, 16 or 32 row addresses, found " << rows.size();
  std::vector<std::pair<int64_t, int>> lanes(32, {0, 0});
  for (size_t l = 0; l < rows.size(); ++l) lanes[l] = {rows[l], 16};
  return shared_wavefronts(lanes, banks);
}

L2Model::L2Model(int64_t capacity_bytes)
    : capacity_(size_t(std::max<int64_t>(1, capacity_bytes / 32))) {}

bool L2Model::touch(uint64_t sector, bool write) {
  if (auto it = where_.find(sector); it != where_.end()) {
    it->second->dirty = it->second->dirty || write;
    lru_.splice(lru_.begin(), lru_, it->second);
    return false;
  }
  // A load miss fetches the sector; a store allocates it without a fetch
  // (the L2 keeps byte masks for partial writes).
  const bool first = seen_.insert(sector).second;
  if (!write) ++read_sectors_;
  if (lru_.size() == capacity_) {
    const Line& victim = lru_.back();
    if (victim.dirty) ++write_sectors_;
    where_.erase(victim.sector);
    lru_.pop_back();
  }
  lru_.push_front({sector, write});
  where_[sector] = lru_.begin();
  return first && !write;
}

void L2Model::flush() {
  for (Line& l : lru_) {
    if (l.dirty) ++write_sectors_;
    l.dirty = false;
  }
}

void TrafficObserver::on_launch_begin(const runtime::TraceKernel& kernel) {
  kernel_ = &kernel;
  counts_ = {};
  shared_index_.clear();
  global_index_.assign(kernel.buffers.size(), -1);
  for (size_t b = 0; b < kernel.buffers.size(); ++b) {
    if (kernel.buffers[b].space != runtime::MemorySpace::Global) continue;
    global_index_[b] = int(counts_.global.size());
    const runtime::TraceBuffer& buf = kernel.buffers[b];
    counts_.global.push_back(
        {buf.label, 0, 0, 0, 0, 0, 0, 0, (buf.elements * buf.elem_bytes + 31) / 32 * 32});
  }
}

int64_t block_round_trips(uint64_t intervals, const std::map<uint64_t, int64_t>& plain_reads,
                          const std::map<uint64_t, uint64_t>& landed_from) {
  // start[e]: T[e]; only the intervals that load or land change it.
  std::vector<int64_t> start(intervals + 2, 0);
  int64_t t = 0;
  for (uint64_t e = 0; e <= intervals; ++e) {
    start[e] = t;
    int64_t end = t;
    if (auto it = plain_reads.find(e); it != plain_reads.end() && it->second > 0) end = t + 1;
    if (auto it = landed_from.find(e); it != landed_from.end() && it->second <= e)
      end = std::max(end, start[it->second] + 1);
    t = end;
  }
  return t;
}

void TrafficObserver::on_block_begin(const runtime::BlockEvent& block) {
  pending_.clear();
  last_global_read_ = {-1, 0};
  sync_reads_.clear();
  in_flight_.clear();
  landed_from_.clear();
  smem_ = block.smem;
}

void TrafficObserver::on_access(const runtime::AccessEvent& a) {
  last_global_read_ = {-1, 0};
  if (a.space == runtime::MemorySpace::Local) return;
  // A cp.async landing (at its wait_group): the interval it lands in waits
  // for the round trip that started at its issue.
  if (a.space == runtime::MemorySpace::Shared && a.is_write) {
    auto it = in_flight_.find({a.thread_linear, a.site});
    if (it != in_flight_.end() && !it->second.empty()) {
      uint64_t& from = landed_from_.try_emplace(a.epoch, it->second.front()).first->second;
      from = std::max(from, it->second.front());
      it->second.erase(it->second.begin());
    }
  }
  if (!a.in_bounds) return;
  ++counts_.thread_accesses;
  if (a.space == runtime::MemorySpace::Global && !a.is_write) {
    ++sync_reads_[a.epoch];
    last_global_read_ = {a.thread_linear, a.epoch};
  }
  // Shared accesses are placed by their byte address in the block's shared
  // memory (banks are a property of the address, not of the buffer).
  const int64_t offset = a.space == runtime::MemorySpace::Shared
                             ? static_cast<const char*>(a.address) - smem_
                             : a.offset;
  pending_[Key{a.site, a.thread_linear / 32, a.occurrence}].push_back(
      {a.thread_linear % 32, offset, a.bytes});
}

void TrafficObserver::on_async_issue(const runtime::AccessEvent& copy) {
  // The global read just before, by this thread, was the copy's source: not
  // a plain load the interval waits for.
  if (last_global_read_.first == copy.thread_linear && last_global_read_.second == copy.epoch) {
    auto it = sync_reads_.find(copy.epoch);
    if (it != sync_reads_.end() && --it->second == 0) sync_reads_.erase(it);
  }
  last_global_read_ = {-1, 0};
  in_flight_[{copy.thread_linear, copy.site}].push_back(copy.epoch);
}

void TrafficObserver::flush_request(const Key& key, const std::vector<Lane>& lanes) {
  const runtime::TraceSite& site = kernel_->sites[size_t(key.site)];
  const runtime::TraceBuffer& buf = kernel_->buffers[size_t(site.buffer)];
  const bool write = site.kind == runtime::TraceSite::Kind::Write;
  if (buf.space == runtime::MemorySpace::Shared) {
    auto [it, added] = shared_index_.emplace(key.site, counts_.shared.size());
    if (added) counts_.shared.push_back({key.site, site.line, buf.label, write, 0, 0, 0});
    SharedSiteTraffic& s = counts_.shared[it->second];
    std::vector<std::pair<int64_t, int>> by_lane(32, {0, 0});
    for (const Lane& l : lanes) by_lane[size_t(l.lane)] = {l.offset, l.bytes};
    auto [wavefronts, ideal] = shared_wavefronts(by_lane, banks_);
    ++s.requests;
    s.wavefronts += wavefronts;
    s.ideal_wavefronts += ideal;
    return;
  }
  internal_assert(global_index_[size_t(site.buffer)] >= 0)
      << "traffic: site " << key.site << " accesses buffer " << site.buffer
      << ", which is not Global";
  GlobalTraffic& g = counts_.global[size_t(global_index_[size_t(site.buffer)])];
  std::vector<int64_t> sectors;
  int64_t bytes = 0;
  for (const Lane& l : lanes) {
    bytes += l.bytes;
    for (int64_t s = l.offset / 32; s <= (l.offset + l.bytes - 1) / 32; ++s) sectors.push_back(s);
  }
  std::sort(sectors.begin(), sectors.end());
  sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
  ++g.requests;
  g.thread_accesses += int64_t(lanes.size());
  g.requested_bytes += bytes;
  (write ? g.write_bytes : g.read_bytes) += bytes;
  g.sector_bytes += 32 * int64_t(sectors.size());
  // Buffers start 256-byte aligned on the GPU, so a sector index in the
  // buffer is a sector of memory; the buffer id keeps buffers apart.
  for (int64_t s : sectors)
    if (l2_.touch((uint64_t(site.buffer) << 48) | uint64_t(s), write)) g.first_read_bytes += 32;
}

void TrafficObserver::on_block_end(const runtime::BlockEvent& block) {
  ++counts_.blocks;
  counts_.block_barriers = std::max(counts_.block_barriers, int64_t(block.barriers));
  counts_.block_read_phases =
      std::max(counts_.block_read_phases,
               block_round_trips(block.barriers, sync_reads_, landed_from_));
  const runtime::LaunchDims& d = kernel_->dims;
  counts_.threads += d.block[0] * d.block[1] * d.block[2];
  for (const auto& [key, lanes] : pending_) flush_request(key, lanes);
  pending_.clear();
}

void TrafficObserver::on_block_suspend(const runtime::BlockEvent&) {
  for (const auto& [key, lanes] : pending_) flush_request(key, lanes);
  pending_.clear();
}

void TrafficObserver::on_launch_end() {
  l2_.flush();
  counts_.dram_read_bytes = l2_.read_bytes();
  counts_.dram_write_bytes = l2_.write_bytes();
}

}  // namespace schedlab::model
