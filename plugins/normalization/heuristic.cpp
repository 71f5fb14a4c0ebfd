// normalization/heuristic.cpp: what one split costs (registers, Shared
// memory, threads) and the heuristic's choice of path and split
// (normalization.cpp has the rules, normalization.h the types).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "normalization.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace normalization {

using pa::ceil_div;
using pa::describe;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;

const char* path_name(Path p) {
  switch (p) {
    case Path::Registers:
      return "registers";
    case Path::Shared:
      return "shared";
    case Path::MultiPass:
      return "none";
    case Path::Grid:
      return "grid";
  }
  return "?";
}

bool buffered(const pa::TensorView& t, const Config& c) {
  return c.path != Path::MultiPass && (!t.is_input() || c.cache_inputs);
}

int64_t shared_limit(const pa::DeviceProperties& d) {
  return pa::rules::shared_bytes_limit(d);
}

Config cost(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.row_threads = ceil_div(ceil_div(a.R, c.vector), c.persist);
  if (c.path == Path::Grid) {
    // A block of grid_threads() threads, the row over as many blocks as its
    // vectors need at `persist` each.
    c.row_threads = grid_threads(d);
    c.blocks = ceil_div(ceil_div(ceil_div(a.R, c.vector), c.row_threads), c.persist);
  }
  c.in_shared.resize(a.persistent.size(), false);
  const int64_t warp = std::max(1, d.warp_size);
  c.threads = ceil_div(c.row_threads * c.rows, warp) * warp;
  // A Shared buffer spans the block's rows and the split row (persist *
  // row_threads * vector >= R: the last thread's tail is allocated too).
  const int64_t row_elements = c.persist * c.row_threads * c.vector;
  int64_t per_element = 0;
  c.shared_bytes = 0;
  for (size_t i = 0; i < a.persistent.size(); ++i) {
    const pa::TensorView& t = a.persistent[i];
    if (!buffered(t, c)) continue;
    if (c.path == Path::Shared && c.in_shared[i])
      c.shared_bytes += ceil_div(c.rows * row_elements * dtype_bytes(t.dtype()), 16) * 16;
    else
      per_element += registers_per_element(t);
  }
  c.registers = per_element * c.persist * c.vector + kRegisterOverhead;
  c.allowed = c.threads > pa::rules::max_threads_per_block(d)
                  ? 0
                  : pa::rules::registers_per_thread(d, c.threads);
  c.shared_allowed = std::max<int64_t>(0, shared_limit(d) - c.threads * kReduceWorkspaceBytes);
  return c;
}

namespace {

/// The largest row, in bytes of persistent buffers, one block can hold:
/// the best thread count's threads * (allowed registers - overhead) * 4.
int64_t capacity_bytes(const pa::DeviceProperties& d, int64_t* best_threads, int64_t* best_regs) {
  int64_t best = 0;
  const int64_t warp = std::max(1, d.warp_size);
  for (int64_t t = warp; t <= std::max(d.max_threads_per_block, 32); t += warp) {
    int64_t regs = pa::rules::registers_per_thread(d, t);
    int64_t bytes = t * std::max<int64_t>(regs - kRegisterOverhead, 0) * 4;
    if (bytes > best) {
      best = bytes;
      *best_threads = t;
      *best_regs = regs;
    }
  }
  return best;
}

int64_t choose_vector(const Analysis& a, bool cache_inputs) {
  if (!cache_inputs || (a.full_inputs.empty() && a.full_outputs.empty())) return 1;
  return pa::rules::dividing_vector(pa::rules::widest_vector(a.widest), a.inner_extent);
}

/// The smallest persist while a row spans a warp: kMinPersist vectors per
/// thread, twice as many for 2-byte storage (bf16, f16). Their math is f32
/// per element, so a thread's fixed costs (the block reductions, the
/// indexing) weigh twice as much against half the bytes: the model gives
/// softmax_bf16 at N=16384 issue-bound at 73 % of peak with 2 vectors of 8
/// (K=4096), 88 % with 4; at K=1024 19.3 us against 15.8. layernorm_bf16
/// and rmsnorm_bf16 predict the same either way.
int64_t min_persist(const Analysis& a) {
  return a.widest < 4 ? 2 * kMinPersist : kMinPersist;
}

/// min_persist, unless so few rows starve the device (pa::starves_device)
/// with it: a wave that cannot fill the device is latency bound, and each
/// thread's serial work then sets its time, so a row spreads over up to
/// kTargetThreads threads first (the model: layernorm_bf16 at N=256, K=1024
/// takes 1.00 us with 4 vectors of 8 a thread, a warp a row, and 0.31 us
/// with 1, 128 threads; at N=2048 the 4 vectors stay best).
int64_t least_persist(const Analysis& a, const pa::DeviceProperties& d, int64_t vectors) {
  const int64_t least = min_persist(a);
  if (!pa::starves_device(a.I * ceil_div(vectors, least), d)) return least;
  return std::clamp<int64_t>(ceil_div(vectors, kTargetThreads), 1, least);
}

std::string names(const std::vector<pa::TensorView>& tvs) {
  std::string s;
  for (const pa::TensorView& t : tvs) s += (s.empty() ? "" : ", ") + describe(t);
  return s;
}

}  // namespace

int64_t choose_rows(const Analysis& a, const pa::DeviceProperties& d, int64_t row_threads) {
  int64_t rows = std::max<int64_t>(
      1, largest_pow2_at_most(kTargetThreads / std::max<int64_t>(row_threads, 1)));
  rows = std::min(rows, next_pow2(a.I));
  while (rows > 1 && ceil_div(a.I, rows) < std::max(1, d.sm_count)) rows /= 2;
  return rows;
}

Config heuristic_for(const Analysis& a, const pa::DeviceProperties& d, Path path, bool divide) {
  if (path == Path::MultiPass) {
    if (!recompute_refusal(a).empty()) {
      Config none;
      none.persist = 0;
      return none;
    }
    return multi_pass_split(a, d);
  }
  if (path == Path::Grid) return grid_split(a, d);
  auto candidate = [&](int64_t persist) {
    Config c;
    c.path = path;
    c.vector = choose_vector(a, true);
    c.persist = persist;
    c.rows = choose_rows(a, d, ceil_div(ceil_div(a.R, c.vector), persist));
    return path == Path::Shared ? cost_shared(a, d, c) : cost(a, d, c);
  };
  // A split that leaves the last thread of a row short predicates every
  // vector of the unrolled loop: the smallest persist up to twice the chosen
  // one that divides the row's vectors, when one fits (the model:
  // layernorm_bf16 at N=16384, K=27648 on the shared path, 59 % of the
  // bandwidth with persist 7, 494 threads; 88 % with 8, 432 threads).
  auto dividing = [&](const Config& c) {
    if (!divide) return c;
    const int64_t vectors = ceil_div(a.R, c.vector);
    for (int64_t p = c.persist; p <= std::min(2 * c.persist, kMaxPersist); ++p)
      if (vectors % p == 0) {
        if (p == c.persist) return c;
        if (Config t = candidate(p); t.fits()) return t;
      }
    return c;
  };
  Config first_fit;
  first_fit.persist = 0;
  for (int64_t persist = 1; persist <= kMaxPersist; ++persist) {
    Config c = candidate(persist);
    if (!c.fits()) continue;
    // Two vectors per thread at least while a row keeps a warp: one load in
    // flight per thread cannot cover DRAM latency, and the block reductions'
    // cost per element halves (the model: softmax at K=1024 goes from
    // issue-bound at 79 % of bandwidth to DRAM-bound at 89 %).
    const int64_t vectors = ceil_div(a.R, c.vector);
    const int64_t least = least_persist(a, d, vectors);
    const bool too_few = persist < least && ceil_div(vectors, least) >= kWarp;
    if (!too_few && c.row_threads <= kMaxRowThreads) return dividing(c);
    if (first_fit.persist == 0) first_fit = c;
  }
  return first_fit.persist != 0 ? dividing(first_fit) : first_fit;
}

bool roomy(const Config& c) {
  return c.path != Path::Registers || c.registers + kRegisterHeadroom <= c.allowed;
}

Config heuristic(const Analysis& a, const pa::DeviceProperties& d) {
  Config c = heuristic_in_block(a, d);
  // Few long rows: a row over several blocks, in one kernel through grid
  // barriers (nvFuser's grid-persistent normalization), when no block path
  // fits or the one that does is the multi-pass path on too few rows to keep
  // the device busy (starved()), and the rows split over blocks. The block
  // paths keep every other choice.
  if (c.persist == 0 || !starved(a, d, c).empty())
    if (Config g = grid_split(a, d); g.persist != 0) return g;
  return c;
}

Config heuristic_in_block(const Analysis& a, const pa::DeviceProperties& d) {
  Config c;
  for (Path p : {Path::Registers, Path::Shared, Path::MultiPass}) {
    // Roomy as first chosen: a dividing persist takes fewer threads, each
    // allowed more registers, but its larger buffers spill as readily
    // (rmsnorm at K=39936: persist 24, 416 threads, 1448 B of stack).
    if (p == Path::Registers)
      if (Config first = heuristic_for(a, d, p, false); first.persist != 0 && !roomy(first))
        if (Config shared = heuristic_for(a, d, Path::Shared);
            shared.persist != 0 && !shared.recompute)
          return shared;
    c = heuristic_for(a, d, p);
    if (c.persist != 0) return c;
  }
  return c;
}

std::string too_long(const Analysis& a, const pa::DeviceProperties& d, Path path) {
  if (path == Path::Grid) return grid_refusal(a, d);
  if (std::string why = recompute_refusal(a); path == Path::MultiPass && !why.empty()) return why;
  const std::string row = "a row of " + std::to_string(a.R) + " elements";
  if (path == Path::MultiPass)
    return row + " is too long even for the multi-pass path (persistence=none): at most " +
           std::to_string(kMaxSerialPersist) + " elements per thread and " +
           std::to_string(d.max_threads_per_block) + " threads per row on " + d.name;
  int64_t row_bytes = 0;
  for (const pa::TensorView& t : a.persistent) row_bytes += registers_per_element(t) * 4 * a.R;
  const std::string buffers = std::to_string(a.persistent.size()) + " persistent buffer" +
                              (a.persistent.size() == 1 ? "" : "s") + " (" + names(a.persistent) +
                              ")";
  if (path == Path::Shared) {
    int64_t bytes = 0;
    for (const pa::TensorView& t : a.persistent) bytes += dtype_bytes(t.dtype()) * a.R;
    return row +
           " does not fit in shared memory and registers together (persistence=shared): "
           "its " +
           buffers + " need " + std::to_string(bytes) + " bytes per row, and a block of " + d.name +
           " has " + std::to_string(shared_limit(d)) + " bytes of shared memory (less " +
           std::to_string(kReduceWorkspaceBytes) + " per thread for the block reductions) and " +
           std::to_string(d.registers_per_block) + " registers for the rest";
  }
  int64_t threads = 0, regs = 0;
  int64_t cap = capacity_bytes(d, &threads, &regs);
  return row + " does not fit in registers: its " + buffers + " need " + std::to_string(row_bytes) +
         " bytes per row, and a block of " + d.name + " holds at most " + std::to_string(cap) +
         " (" + std::to_string(threads) + " threads x (" + std::to_string(regs) + " - " +
         std::to_string(kRegisterOverhead) + " registers) x 4 bytes; " +
         std::to_string(d.registers_per_block) + " registers per block, " +
         std::to_string(kMaxRegistersPerThread) + " per thread)";
}

/// Non-empty (the reason) when the heuristic's choice `c` is the multi-pass
/// path and its rows are too few to keep the device's loads in flight: at
/// most an eighth of the resident threads (pa::starves_device). Every pass then waits on
/// DRAM latency (the model: softmax at K=65536 takes 32 us for 16 to 256
/// rows). Segmented apart, each reduction splits its rows over blocks (the
/// reduction plugin's grid strategy): 6.2 us at 16 rows, 20 us at 64, 50 at
/// 128. The registers and shared paths read a row once and are kept.
std::string starved(const Analysis& a, const pa::DeviceProperties& d, const Config& c) {
  if (c.path != Path::MultiPass) return {};
  const int64_t resident = ceil_div(a.I, c.rows) * c.threads;
  if (!pa::starves_device(resident, d)) return {};
  return "few long rows: the multi-pass path (rows of " + std::to_string(a.R) +
         " elements) keeps " + std::to_string(resident) + " of the device's " +
         std::to_string(pa::resident_capacity(d)) + " resident threads busy" +
         ", too few to cover DRAM latency; segmented, each reduction can split its rows "
         "over blocks (persistence=none schedules it as it is)";
}

}  // namespace normalization
