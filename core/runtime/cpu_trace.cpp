// The CPU backend's access trace: hook calls to events (cpu_trace.h).
#include "cpu_trace.h"

#include <algorithm>
#include <cstring>

#include "schedlab/base/error.h"

namespace schedlab::runtime::cpu {

thread_local TraceContext* tl_trace = nullptr;

TraceContext::TraceContext(const TraceKernel& kernel, AccessObserver& observer,
                           CpuThreadState* state)
    : kernel_(kernel), observer_(observer), st_(state) {
  const auto& b = kernel.dims.block;
  const auto threads = static_cast<size_t>(b[0] * b[1] * b[2]);
  occurrences_.assign(threads * kernel.sites.size(), 0);
  announced_.assign(threads, BarrierEvent::kNoSite);
}

int32_t TraceContext::thread_linear() const {
  const CpuDim3 t = st_->thread_idx, d = st_->block_dim;
  return static_cast<int32_t>(t.x + d.x * (t.y + d.y * t.z));
}

void TraceContext::begin_block(int64_t block_linear) {
  block_linear_ = block_linear;
  epoch_ = 0;
  std::fill(occurrences_.begin(), occurrences_.end(), 0u);
  std::fill(announced_.begin(), announced_.end(), BarrierEvent::kNoSite);
  observer_.on_block_begin({st_->block_idx, block_linear, st_->smem, 0});
}

void TraceContext::end_block() {
  observer_.on_block_end({st_->block_idx, block_linear_, st_->smem, epoch_});
}

void TraceContext::suspend_block() {
  observer_.on_block_suspend({st_->block_idx, block_linear_, st_->smem, epoch_});
  suspended_[block_linear_] = {epoch_, occurrences_, announced_};
}

void TraceContext::resume_block(int64_t block_linear) {
  auto it = suspended_.find(block_linear);
  internal_assert(it != suspended_.end()) << "resuming block " << block_linear
                                          << " that no grid barrier stopped";
  block_linear_ = block_linear;
  epoch_ = it->second.epoch;
  occurrences_ = std::move(it->second.occurrences);
  announced_ = std::move(it->second.announced);
  suspended_.erase(it);
  observer_.on_block_resume({st_->block_idx, block_linear_, st_->smem, epoch_});
}

void TraceContext::barrier(const std::vector<int>& sites) {
  observer_.on_barrier({st_->block_idx, block_linear_, epoch_, &sites});
  ++epoch_;
  std::fill(announced_.begin(), announced_.end(), BarrierEvent::kNoSite);
}

AccessEvent TraceContext::event(int site, const void* base, long long offset, int bytes,
                                bool write, const void* value) {
  internal_assert(site >= 0 && static_cast<size_t>(site) < kernel_.sites.size())
      << "traced kernel " << kernel_.name << " reports access site " << site << " of "
      << kernel_.sites.size();
  const TraceSite& s = kernel_.sites[static_cast<size_t>(site)];
  internal_assert(s.buffer >= 0 && static_cast<size_t>(s.buffer) < kernel_.buffers.size())
      << "access site " << site << " of " << kernel_.name << " names no buffer";
  const TraceBuffer& b = kernel_.buffers[static_cast<size_t>(s.buffer)];
  const int32_t t = thread_linear();
  uint32_t& occ = occurrences_[static_cast<size_t>(t) * kernel_.sites.size() +
                               static_cast<size_t>(site)];
  const char* address = static_cast<const char*>(base) + offset;
  bool in = offset >= 0 && offset + bytes <= b.elements * b.elem_bytes;
  if (b.space == MemorySpace::Shared) {
    const int64_t at = address - st_->smem;
    in = in && at >= 0 && at + bytes <= static_cast<int64_t>(kernel_.dims.shared_bytes);
  }
  return AccessEvent{site,
                     s.buffer,
                     b.space,
                     write,
                     address,
                     value,
                     offset,
                     bytes,
                     in,
                     st_->block_idx,
                     st_->thread_idx,
                     block_linear_,
                     t,
                     epoch_,
                     occ++};
}

void* TraceContext::access(int site, const void* base, long long offset, int bytes, int write,
                           const void* value) {
  if (write == kTraceWarpDivergence) {
    const auto* lines = static_cast<const int*>(base);
    const auto* names = static_cast<const char* const*>(value);
    std::vector<WarpDivergenceEvent::Lane> lanes;
    for (int l = 0; l < bytes && l < 32; ++l) lanes.push_back({lines[l], names[l]});
    warp_divergence(static_cast<int32_t>(offset), std::move(lanes));
    return nullptr;
  }
  const AccessEvent e = event(site, base, offset, bytes, write != kTraceRead, value);
  if (write == kTraceAsyncIssue)
    observer_.on_async_issue(e);
  else
    observer_.on_access(e);
  if (e.in_bounds) return const_cast<void*>(e.address);
  internal_assert(bytes <= static_cast<int>(sizeof scratch_))
      << "an access of " << bytes << " bytes in kernel " << kernel_.name;
  std::memset(scratch_, 0, sizeof scratch_);
  return scratch_;
}

void TraceContext::warp_divergence(int32_t first_thread,
                                   std::vector<WarpDivergenceEvent::Lane> lanes) {
  WarpDivergenceEvent d;
  d.block = st_->block_idx;
  d.block_linear = block_linear_;
  d.epoch = epoch_;
  d.first_thread = first_thread;
  d.lanes = std::move(lanes);
  observer_.on_warp_divergence(d);
}

void TraceContext::declare(int site, const void* base, int bytes) {
  AccessEvent e = event(site, base, 0, bytes, false, nullptr);
  observer_.on_declare(e);
}

void* trace_access(int site, const void* base, long long offset, int bytes, int write,
                   const void* value) {
  TraceContext* t = tl_trace;
  internal_assert(t != nullptr) << "a traced kernel ran outside a traced launch";
  return t->access(site, base, offset, bytes, write, value);
}

void trace_declare(int site, const void* base, int bytes) {
  TraceContext* t = tl_trace;
  internal_assert(t != nullptr) << "a traced kernel ran outside a traced launch";
  t->declare(site, base, bytes);
}

void trace_barrier_site(int site) {
  TraceContext* t = tl_trace;
  internal_assert(t != nullptr) << "a traced kernel ran outside a traced launch";
  t->announce_barrier(site);
}

}  // namespace schedlab::runtime::cpu
