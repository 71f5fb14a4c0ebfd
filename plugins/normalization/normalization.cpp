// normalization: the built-in persistent normalization scheduler plugin,
// after nvFuser's inner persistent scheduler. Written only against plugin.hpp.
//
// What it schedules: fusions whose reductions all reduce the same innermost
// logical axes and whose results are broadcast back over them (softmax,
// log_softmax, layernorm, rmsnorm): row statistics, then math on every
// element of the row with them. A *persistent* tensor is one read before a
// reduction and again after it. Three paths keep it (`persistence`):
//   registers  each thread keeps its part of every persistent tensor in
//              registers across the reductions, so the row is read from
//              global memory once.
//   shared     the persistent buffers go to Shared memory, one slice of
//              rows * R elements per buffer and block (dynamic shared
//              memory up to the device's opt-in limit), in the order the
//              fusion computes them (the inputs' caches first) while they fit;
//              the rest stay in registers. When they do not fit so, or a
//              kept buffer's vectors are wider than 16 bytes (the f32 cast
//              of a bf16 row: read element by element, 8-way bank
//              conflicts), the intermediates are recomputed by each pass (as
//              on the multi-pass path) and only the inputs' caches persist, in
//              their storage type (a bf16 row: 2 bytes an element, not the 8
//              of its f32 cast and e). Every Shared buffer is written and
//              read a vector at a time (a register copy per reading pass), so
//              its [persist, threads, vector] layout meets no bank conflict.
//              The row is still read once.
//   none       multi-pass: no buffer. Each reduction and the epilogue is a
//              serial loop over the row (threads stride it, persist vectors
//              each, then a block reduction); persistent inputs are read from
//              global memory again by every pass, and persistent
//              intermediates (softmax's e, layernorm's d) are recomputed
//              from them and the statistics by each later pass that reads
//              them (ABI 1.5's recompute, nvFuser's recomputeTv, as nvFuser's
//              and Apex's multi-pass kernels do).
// It refuses, with the reason: no reduction, reductions over different axes,
// an outer (non-innermost) reduced axis, no result broadcast back (the
// reduction plugin's job), a computed tensor that does not iterate the
// reference's axes in order (pa::misaligned: an output over an axis the
// reduction does not have, an outer product of a statistic with itself), a
// forced path the row does not fit (naming the sizes and the limit), rows
// too long even for the multi-pass path (more than 65536 elements per
// thread at 1024 threads), and, under persistence=auto, few rows on the
// multi-pass path, when the segmenter offers them (they starve the device,
// pa::starves_device; segmented, each reduction splits its rows over blocks:
// see starved(); asked for one kernel, ABI 1.5's offered_by_segmenter false,
// it takes them).
// Lowering rules it relies on: a Vectorize axis is the inner split of the
// innermost logical axis and its width divides that extent at launch, so the
// vector divides the innermost reduced extent, not the merged row (N * K);
// a tensor not inlined whole into its readers must be computed by the
// threads that read it, so a keepdim statistic read by tensors of two shapes
// (logsumexp's m, read by x - m and by m + log(s)) keeps its broadcast axes
// serial and each thread computes its own copy (pa::serialize_own_broadcast_axes);
// a Shared buffer spans the thread axes of its loops (Indexer::allocation_axes),
// so a Shared persistent tensor is rows * persist * ceilDiv(R/v, persist) * v
// elements per block, placed after the block-reduction workspace
// (place_dynamic_shared; its size is a constant in a size-specialized kernel).
//
// The schedule, on the reference reduction [I, R] (iteration axes merged,
// reduced axes merged; R contiguous):
//   [I/rows (BIDx), rows (TIDy), persist (Unroll), ceilDiv(R/v, persist) (TIDx), v]
// Each block holds `rows` rows; ceilDiv(R/v, persist) threads (a symbolic
// extent: the block is sized at launch) split each row, each thread holding
// `persist` vectors of `vector` elements per persistent tensor. The
// reductions are serial over persist and v, then block reductions over TIDx
// (an allreduce: every thread reads the row's statistic). With
// `cache_inputs`, every full-rank input is read once through a register
// cache (vectorized when vector > 1) and every full-rank output written
// through one; without it, persistent inputs are read from global memory
// again after each reduction. On the multi-pass path persist is a serial
// loop (not unrolled) and persistent inputs are never cached.
//
// The heuristic (compute_params), from the segment's sizes and the device
// (the model device, schedlab-model-sm90, on the CPU backend), takes the
// first path that fits: registers, then shared, then none.
//   vector   the widest access (16 bytes at most) that divides the innermost
//            reduced extent (a row of several reduced axes is merged, and a
//            vector must not cross the innermost one: lowering checks the
//            innermost extent's divisibility at launch).
//   persist  registers and shared: the smallest that keeps the row's
//            threads within kMaxRowThreads (512: big blocks cost occupancy
//            and reduction latency), at least kMinPersist (2 vectors in
//            flight per thread; 4 for 2-byte storage, min_persist) while the
//            row still spans a warp of threads (fewer, down to a row of
//            kTargetThreads threads, when so few rows starve the device:
//            least_persist),
//            and that keeps the per-thread register buffers within the
//            budget: registers = sum over persistent tensors in registers of
//            persist * vector * ceil(bytes/4), plus kRegisterOverhead, at
//            most min(255, registers_per_block / threads); and the Shared
//            buffers (sum of rows * persist * row threads * vector * bytes)
//            within shared_bytes_per_block_optin less 8 bytes per thread for
//            the block reductions. Past 512 threads, the smallest that fits;
//            at most 64 (an unrolled loop). Then the smallest from there up
//            to twice it that divides the row's vectors, if one fits
//            (heuristic_for's `dividing`: no short last thread). none: vector 1 (nothing read
//            twice is cached), persist ceilDiv(R, 512).
//   rows     fills the block towards kTargetThreads (128) when a row needs
//            few threads, halved while the row blocks leave SMs idle.
// On schedlab-model-sm90 (65536 registers, 227 KiB opt-in shared memory per
// block) that gives, for K a multiple of 1024 (docs/plugins.md has the table):
//   softmax, log_softmax, layernorm (two f32 buffers): registers to 18432
//     (then the registers would leave less than kRegisterHeadroom free),
//     shared to 56320 (the input's cache in Shared memory, the intermediate
//     there too or in registers) and at 57344 (the cache alone, the
//     intermediate recomputed), multi-pass from 58368.
//   rmsnorm (one f32 buffer): registers to 36864, shared to 57344, multi-pass
//     from 58368. softmax_bf16, layernorm_bf16 (two f32 buffers: the cast
//     of x, which is what persists, not the bf16 cache, and e or d):
//     registers to 27648, then shared with the bf16 cache alone (the rest
//     recomputed) to 114688. rmsnorm_bf16 (the cast):
//     registers to 55296, shared (the bf16 cache) to 114688. A 256 KiB f32
//     row (K=65536) fits neither.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/plugin.hpp"

namespace pa = schedlab::plugin_api;
using pa::ceil_div;
using pa::describe;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;

namespace {

/// The widest single access, in bytes (LDG.128).
constexpr int64_t kMaxVectorBytes = 16;
/// Registers per thread the rest of the kernel needs (indices, statistics,
/// addresses), besides the persistent buffers.
constexpr int64_t kRegisterOverhead = 32;
/// Registers the registers path leaves free under persistence=auto, when the
/// shared path fits instead and keeps every buffer: near the limit ptxas
/// spills (rmsnorm at N=16384 with 512 threads, K=40960, estimated 112 of 128
/// registers: 232 B of stack; layernorm at K=24576: 176 B), where the shared
/// path, conflict-free, predicts the same time with none (docs/perf.md, stop
/// 31). Not when the shared path would recompute: softmax_bf16's second exp
/// makes it issue-bound (56 % of the bandwidth at K=24576, against 89 %).
constexpr int64_t kRegisterHeadroom = 24;
/// The hardware limit of registers per thread.
constexpr int64_t kMaxRegistersPerThread = 255;
/// Threads per row the heuristic prefers not to exceed.
constexpr int64_t kMaxRowThreads = 512;
/// Threads per block the heuristic aims at when rows are short.
constexpr int64_t kTargetThreads = 128;
/// Largest persist the heuristic tries, and schedule allows, for a
/// persistent path (persist is an unrolled loop there).
constexpr int64_t kMaxPersist = 64;
/// The schema's maximum: vectors per thread per pass on the multi-pass path.
constexpr int64_t kMaxSerialPersist = 65536;
/// Shared memory per thread the block reductions take (placed after the
/// Shared buffers: one element of the widest reduction type, f64 at most).
constexpr int64_t kReduceWorkspaceBytes = 8;
/// Smallest persist the heuristic picks while a row still spans a warp
/// (4-byte elements and wider; see min_persist for narrower ones).
constexpr int64_t kMinPersist = 2;
constexpr int64_t kWarp = 32;

/// Non-broadcast, non-reduction logical axes.
int64_t iteration_rank(const pa::TensorView& tv) {
  int64_t n = 0;
  for (const pa::AxisInfo& a : tv.logical()) n += !a.is_reduction() && !a.is_broadcast();
  return n;
}

/// What the plugin learns about a segment before scheduling it.
struct Analysis {
  std::string reject;                    ///< non-empty: why the plugin cannot schedule it
  pa::TensorView ref;                    ///< the reference reduction
  std::vector<int> iter_axes, red_axes;  ///< logical positions in ref
  int64_t I = 1, R = 1;                  ///< rows and row length
  int64_t inner_extent = 1;              ///< the innermost reduced axis (vectors never cross it)
  int64_t full_rank = 0;                 ///< iteration axes of a full (unreduced) tensor
  std::vector<pa::TensorView> full_inputs, full_outputs;  ///< cacheable at full rank
  /// Tensors read both before and after a reduction (inputs: through their cache).
  std::vector<pa::TensorView> persistent;
  /// What stays persistent once the intermediates are recomputed
  /// (recompute_intermediates): the full inputs the persistent tensors are
  /// computed from (x, for softmax's e and the bf16 fusions' f32 cast of x).
  std::vector<pa::TensorView> persistent_inputs;
  int64_t widest = 1;  ///< bytes of the widest full-rank input or output
};

/// Registers one persistent element of `tv` takes.
int64_t registers_per_element(const pa::TensorView& tv) {
  return ceil_div(dtype_bytes(tv.dtype()), 4);
}

Analysis analyze(pa::Segment& seg) {
  Analysis a;
  std::vector<pa::TensorView> reductions = seg.reduction_tvs();
  if (reductions.empty()) {
    a.reject = "the segment has no reduction (the pointwise plugin schedules it)";
    return a;
  }
  for (const pa::TensorView& tv : seg.tensors())
    if (tv.op_kind() == pa::OpKind::Permute) {
      a.reject = "normalization does not schedule a permute (" + describe(tv) + ")";
      return a;
    }
  a.ref = seg.find_reference();
  std::vector<pa::AxisInfo> dom = a.ref.logical();
  for (int i = 0; i < static_cast<int>(dom.size()); ++i) {
    if (dom[i].is_reduction()) {
      a.red_axes.push_back(i);
      a.R *= dom[i].extent;
    } else if (!dom[i].is_broadcast()) {
      a.iter_axes.push_back(i);
      a.I *= dom[i].extent;
    }
  }
  for (const pa::TensorView& r : reductions) {
    std::vector<int> axes;
    std::vector<pa::AxisInfo> d = r.logical();
    for (int i = 0; i < static_cast<int>(d.size()); ++i)
      if (d[i].is_reduction()) axes.push_back(i);
    if (d.size() != dom.size() || axes != a.red_axes) {
      a.reject = "reductions over different axes: " + describe(a.ref) + " and " + describe(r);
      return a;
    }
  }
  // Every computed tensor takes the reference's loop structure.
  if (std::string why = pa::first_misaligned(seg, a.ref); !why.empty()) {
    a.reject = why + "; normalization gives every tensor the reference's row layout";
    return a;
  }
  a.full_rank = static_cast<int64_t>(a.iter_axes.size() + a.red_axes.size());
  a.inner_extent = dom.back().extent;
  bool broadcast_back = false;
  for (const pa::TensorView& r : reductions)
    for (const pa::TensorView& t : seg.vals_between({r}, seg.outputs()))
      broadcast_back |= iteration_rank(t) == a.full_rank;
  if (!broadcast_back) {
    a.reject =
        "no reduction result is broadcast back over the reduced axes; the reduction "
        "plugin schedules plain reductions";
    return a;
  }
  // Inner: the reduced axes are the innermost ones, so a row is contiguous.
  for (size_t k = 0; k < a.red_axes.size(); ++k)
    if (a.red_axes[a.red_axes.size() - 1 - k] != static_cast<int>(dom.size() - 1 - k)) {
      a.reject = "normalization schedules inner reductions (the innermost axes reduced); " +
                 describe(a.ref) + " reduces an outer axis";
      return a;
    }
  auto is_full = [&](const pa::TensorView& t) {
    std::vector<pa::AxisInfo> d = t.logical();
    return static_cast<int64_t>(d.size()) == a.full_rank &&
           std::none_of(d.begin(), d.end(),
                        [](const pa::AxisInfo& x) { return x.is_broadcast() || x.is_reduction(); });
  };
  for (const pa::TensorView& in : seg.inputs())
    if (!in.consumers().empty() && is_full(in)) a.full_inputs.push_back(in);
  for (const pa::TensorView& out : seg.outputs())
    if (is_full(out) && !out.consumers().empty()) {
      // An output read inside the fusion stays a plain Global tensor.
    } else if (is_full(out)) {
      a.full_outputs.push_back(out);
    }
  for (const pa::TensorView& t : a.full_inputs)
    a.widest = std::max(a.widest, dtype_bytes(t.dtype()));
  for (const pa::TensorView& t : a.full_outputs)
    a.widest = std::max(a.widest, dtype_bytes(t.dtype()));
  // Persistent: a full tensor that some reduction needs and that is read
  // again by something that needs that reduction's result.
  for (const pa::TensorView& t : seg.tensors()) {
    if (!is_full(t) || t.is_output()) continue;
    bool persistent = false;
    for (const pa::TensorView& r : reductions) {
      if (!seg.is_dependency_of(t, r)) continue;
      for (const pa::TensorView& c : t.consumers())
        persistent |= c != r && seg.is_dependency_of(r, c);
    }
    if (persistent) a.persistent.push_back(t);
  }
  for (const pa::TensorView& in : a.full_inputs) {
    bool needed = false;
    for (const pa::TensorView& p : a.persistent)
      needed = needed || p == in || seg.is_dependency_of(in, p);
    if (needed) a.persistent_inputs.push_back(in);
  }
  return a;
}

/// `a` as the schedule sees it once the intermediates are recomputed: only
/// the inputs they come from persist.
Analysis with_recompute(Analysis a) {
  a.persistent = a.persistent_inputs;
  return a;
}

/// Where a row's persistent buffers live (the `persistence` parameter).
enum class Path {
  Registers,  ///< every buffer in registers (Local, persist * vector per thread)
  Shared,     ///< buffers in Shared memory, in order, while they fit; the rest in registers
  MultiPass,  ///< no buffer: inputs re-read, intermediates recomputed by each pass
};

const char* path_name(Path p) {
  switch (p) {
    case Path::Registers:
      return "registers";
    case Path::Shared:
      return "shared";
    case Path::MultiPass:
      return "none";
  }
  return "?";
}

/// One choice of the split, and what it costs.
struct Config {
  Path path = Path::Registers;
  int64_t vector = 1, persist = 1, rows = 1;
  bool cache_inputs = true;
  /// Shared path: the intermediates are recomputed by each pass and only the
  /// inputs' caches persist (with_recompute), as their own f32 buffers do not fit.
  bool recompute = false;
  std::vector<bool> in_shared;  ///< per Analysis::persistent: its buffer is Shared
  int64_t row_threads = 0;      ///< ceilDiv(R / vector, persist), at these sizes
  int64_t threads = 0;          ///< per block, whole warps
  int64_t registers = 0;        ///< per thread: buffers plus overhead
  int64_t allowed = 0;          ///< per thread at this block size
  int64_t shared_bytes = 0;     ///< the Shared buffers of a block
  int64_t shared_allowed = 0;   ///< the device's limit less the block-reduction workspace
  bool fits_registers() const { return registers <= allowed; }
  bool fits_shared() const { return shared_bytes <= shared_allowed; }
  bool fits() const { return fits_registers() && fits_shared(); }
};

/// Whether persistent tensor `t` keeps a buffer across the reductions: an
/// input only through its cache; nothing on the multi-pass path.
bool buffered(const pa::TensorView& t, const Config& c) {
  return c.path != Path::MultiPass && (!t.is_input() || c.cache_inputs);
}

/// Shared memory one block may use: the opt-in limit (dynamic shared memory).
int64_t shared_limit(const pa::DeviceProperties& d) {
  return static_cast<int64_t>(d.shared_bytes_per_block_optin > 0 ? d.shared_bytes_per_block_optin
                                                                 : d.shared_bytes_per_block);
}

/// Fills in what `c` costs at the segment's sizes on device `d`.
Config cost(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.row_threads = ceil_div(ceil_div(a.R, c.vector), c.persist);
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
  const int64_t max_threads = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  c.allowed = c.threads > max_threads
                  ? 0
                  : std::min(kMaxRegistersPerThread, static_cast<int64_t>(d.registers_per_block) /
                                                         std::max<int64_t>(c.threads, 1));
  c.shared_allowed = std::max<int64_t>(0, shared_limit(d) - c.threads * kReduceWorkspaceBytes);
  return c;
}

/// The shared path's placement: every buffer Shared, then the last ones
/// (intermediates come after the inputs' caches) back in registers while
/// the Shared buffers exceed the limit.
Config place_shared(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.in_shared.assign(a.persistent.size(), true);
  c = cost(a, d, c);
  for (size_t i = a.persistent.size(); i-- > 0 && !c.fits_shared();) {
    c.in_shared[i] = false;
    c = cost(a, d, c);
  }
  return c;
}

/// Whether a vector of `t` under `c` is wider than one access (16 bytes).
bool wider_than_an_access(const Config& c, const pa::TensorView& t) {
  return c.vector * dtype_bytes(t.dtype()) > kMaxVectorBytes;
}

/// Whether a Shared buffer of `c` holds vectors wider than one 16-byte
/// access (an f32 buffer of a bf16 row at vector=8): the shared path cannot
/// read it through a register copy, so it is read element by element, with
/// bank conflicts (the model: softmax_bf16 at N=256, K=32768, keeping its
/// f32 cast and e in shared memory, 8-way, 28 % of peak bandwidth).
bool shared_read_by_element(const Analysis& a, const Config& c) {
  for (size_t i = 0; i < a.persistent.size(); ++i)
    if (c.in_shared[i] && wider_than_an_access(c, a.persistent[i])) return true;
  return false;
}

/// The shared path: the persistent buffers placed as above; when they do
/// not fit, or would be read element by element (shared_read_by_element),
/// the intermediates recomputed by each pass and only the inputs' caches
/// kept (in their storage type: a bf16 row of K elements takes 2K bytes
/// where its f32 cast took 4K and softmax's e 4K more).
Config cost_shared(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.recompute = false;
  Config keep = place_shared(a, d, c);
  const bool only_inputs = std::all_of(a.persistent.begin(), a.persistent.end(),
                                       [](const pa::TensorView& t) { return t.is_input(); });
  if (only_inputs || (keep.fits() && !shared_read_by_element(a, keep))) return keep;
  Config r = place_shared(with_recompute(a), d, c);
  r.recompute = true;
  return r.fits() ? r : keep;
}

/// The largest row, in bytes of persistent buffers, one block can hold:
/// the best thread count's threads * (allowed registers - overhead) * 4.
int64_t capacity_bytes(const pa::DeviceProperties& d, int64_t* best_threads, int64_t* best_regs) {
  int64_t best = 0;
  const int64_t warp = std::max(1, d.warp_size);
  for (int64_t t = warp; t <= std::max(d.max_threads_per_block, 32); t += warp) {
    int64_t regs =
        std::min(kMaxRegistersPerThread, static_cast<int64_t>(d.registers_per_block) / t);
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
  int64_t v = std::min<int64_t>(8, largest_pow2_at_most(kMaxVectorBytes / a.widest));
  while (v > 1 && a.inner_extent % v != 0) v /= 2;
  return v;
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

/// Rows per block: towards kTargetThreads, while every SM still gets a block.
int64_t choose_rows(const Analysis& a, const pa::DeviceProperties& d, int64_t row_threads) {
  int64_t rows = std::max<int64_t>(
      1, largest_pow2_at_most(kTargetThreads / std::max<int64_t>(row_threads, 1)));
  rows = std::min(rows, next_pow2(a.I));
  while (rows > 1 && ceil_div(a.I, rows) < std::max(1, d.sm_count)) rows /= 2;
  return rows;
}

/// The heuristic's split for one path (see the top); persist = 0 when no
/// split of that path fits. `divide`: then a persist that divides the row.
Config heuristic_for(const Analysis& a, const pa::DeviceProperties& d, Path path,
                     bool divide = true) {
  const int64_t max_threads = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  if (path == Path::MultiPass) {
    // No buffers: as many elements per thread as keep the row at
    // kMaxRowThreads threads; each pass is a serial loop over them. No
    // vectors: the persistent inputs and the Global intermediates are read
    // without a cache, so a vector's elements would be separate loads, each
    // warp-wide one touching `vector` times the sectors (the model: softmax
    // at K=16384 with vector=4 reads 29 % coalesced).
    Config c;
    c.path = path;
    c.vector = 1;
    const int64_t vectors = ceil_div(a.R, c.vector);
    c.persist = std::max<int64_t>(1, ceil_div(vectors, std::min(kMaxRowThreads, max_threads)));
    if (c.persist > kMaxSerialPersist) c.persist = kMaxSerialPersist;
    c.rows = choose_rows(a, d, ceil_div(vectors, c.persist));
    c = cost(a, d, c);
    if (!c.fits()) c.persist = 0;
    return c;
  }
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

/// Whether `c` leaves kRegisterHeadroom registers free (any path but
/// registers does).
bool roomy(const Config& c) {
  return c.path != Path::Registers || c.registers + kRegisterHeadroom <= c.allowed;
}

/// The first path that fits: registers (while roomy, when shared memory fits
/// every buffer instead), then shared memory, then multi-pass.
Config heuristic(const Analysis& a, const pa::DeviceProperties& d) {
  Config c;
  for (Path p : {Path::Registers, Path::Shared, Path::MultiPass}) {
    // Roomy as first chosen: a dividing persist takes fewer threads, each
    // allowed more registers, but its larger buffers spill as readily
    // (rmsnorm at K=39936: persist 24, 416 threads, 1448 B of stack).
    if (p == Path::Registers)
      if (Config first = heuristic_for(a, d, p, false); first.persist != 0 && !roomy(first))
        if (Config shared = heuristic_for(a, d, Path::Shared); shared.persist != 0 && !shared.recompute)
          return shared;
    c = heuristic_for(a, d, p);
    if (c.persist != 0) return c;
  }
  return c;
}

std::string names(const std::vector<pa::TensorView>& tvs) {
  std::string s;
  for (const pa::TensorView& t : tvs) s += (s.empty() ? "" : ", ") + describe(t);
  return s;
}

/// Why no split of `path` fits: the row, its buffers, and the device's limit.
std::string too_long(const Analysis& a, const pa::DeviceProperties& d, Path path) {
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

void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "normalization: " + message);
}

/// Recomputes `copy`'s computed producers for it, down to the fusion inputs
/// and the reduction results (the statistics), so that nothing computed in
/// an earlier pass is read by the pass `copy` belongs to.
void recompute_producers(pa::TensorView copy) {
  std::vector<pa::TensorView> done;
  for (pa::TensorView in : copy.producers()) {
    if (in.is_input() || in.op_kind() == pa::OpKind::Reduction) continue;
    if (std::find(done.begin(), done.end(), in) != done.end()) continue;  // d * d
    done.push_back(in);
    recompute_producers(in.recompute({copy}));
  }
}

/// The multi-pass path without a Global workspace: each persistent
/// intermediate (softmax's e, layernorm's d, the bf16 fusions' f32 cast of
/// x) is recomputed from the inputs and the statistics for its readers
/// after the reduction it feeds (nvFuser's recomputeTv, as nvFuser's and
/// Apex's multi-pass kernels do). The intermediate is then read only in the
/// pass that computes it: one row-sized write and read fewer per
/// intermediate. Returns whether anything was recomputed.
bool recompute_intermediates(pa::Segment& seg, const Analysis& a) {
  const std::vector<pa::TensorView> reductions = seg.reduction_tvs();
  bool any = false;
  for (pa::TensorView p : a.persistent) {
    if (p.is_input()) continue;
    std::vector<pa::TensorView> late;
    for (const pa::TensorView& c : p.consumers()) {
      bool after = false;
      for (const pa::TensorView& r : reductions)
        after = after || (c != r && seg.is_dependency_of(p, r) && seg.is_dependency_of(r, c));
      if (after) late.push_back(c);
    }
    if (late.empty()) continue;
    recompute_producers(p.recompute(late));
    any = true;
  }
  return any;
}

/// The `persistence` parameter: a path, or none for auto.
std::optional<Path> forced_path(const pa::Params& p) {
  const std::string v = p.choice("persistence");
  if (v == "registers") return Path::Registers;
  if (v == "shared") return Path::Shared;
  if (v == "none") return Path::MultiPass;
  return std::nullopt;
}

}  // namespace

class Normalization : public pa::Plugin {
 public:
  std::string name() const override { return "normalization"; }
  std::string version() const override { return "1.1"; }
  std::string description() const override {
    return "nvFuser-style inner persistent normalization: the row in registers or shared memory "
           "across block reductions, multi-pass past that";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::choice("vector", {"1", "2", "4", "8"}, "1",
                          "elements per vector access of the full-rank inputs and outputs"),
        pa::Param::integer("persist", 1, 1, kMaxSerialPersist,
                           "vectors of each row every thread keeps (the row's threads: "
                           "ceilDiv(R / vector, persist)); per pass on the multi-pass path"),
        pa::Param::integer("rows", 1, 1, 1024, "rows per block (TIDy)"),
        pa::Param::boolean("cache_inputs", true,
                           "read full-rank inputs once into registers (else re-read after "
                           "each reduction)"),
        pa::Param::choice("persistence", {"auto", "registers", "shared", "none"}, "auto",
                          "where the row's persistent buffers live: registers, shared memory "
                          "(what does not fit stays in registers), none (multi-pass: inputs "
                          "re-read, intermediates recomputed by each pass); auto: the "
                          "first of these that fits"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params& p) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    Analysis a = analyze(seg);
    if (!a.reject.empty()) return pa::Verdict::no(a.reject);
    if (std::string why = pa::global_accumulator_with_own_broadcast(seg); !why.empty())
      return pa::Verdict::no(why);
    const pa::DeviceProperties d = seg.device();
    if (std::optional<Path> path = forced_path(p)) {
      if (heuristic_for(a, d, *path).persist == 0) return pa::Verdict::no(too_long(a, d, *path));
    } else if (Config c = heuristic(a, d); c.persist == 0) {
      return pa::Verdict::no(too_long(a, d, Path::MultiPass));
    } else if (std::string why = starved(a, d, c); !why.empty() && seg.offered_by_segmenter()) {
      return pa::Verdict::no(why);
    }
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    // A tuned configuration for the segment's bucket (`run --tuned`, ABI 1.4)
    // is served as it is; the heuristic below chooses everywhere else.
    if (p.use_tuned()) return;
    Analysis a = analyze(seg);
    if (!a.reject.empty()) user_fail(a.reject);
    Config c = heuristic(a, seg.device());
    if (c.persist == 0) user_fail(too_long(a, seg.device(), Path::MultiPass));
    p.set_choice("vector", std::to_string(c.vector));
    p.set_integer("persist", c.persist);
    p.set_integer("rows", c.rows);
    p.set_boolean("cache_inputs", c.cache_inputs);
    p.set_choice("persistence", path_name(c.path));
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    Analysis a = analyze(seg);
    if (!a.reject.empty()) user_fail(a.reject);
    pa::DeviceProperties d = seg.device();
    Config c;
    c.vector = std::stoll(p.choice("vector"));
    c.persist = p.integer("persist");
    c.rows = p.integer("rows");
    c.cache_inputs = p.boolean("cache_inputs");
    const std::optional<Path> forced = forced_path(p);
    // auto with a given split: the first path it fits, registers while
    // roomy when shared memory fits too, keeping every buffer (as the
    // heuristic).
    std::optional<Config> tight;
    for (Path path : {Path::Registers, Path::Shared, Path::MultiPass}) {
      if (forced && path != *forced) continue;
      c.path = path;
      c = path == Path::Shared ? cost_shared(a, d, c) : cost(a, d, c);
      if (!c.fits() || (path != Path::MultiPass && c.persist > kMaxPersist)) continue;
      if (!forced && !roomy(c)) {
        tight = c;
        continue;
      }
      break;
    }
    if (tight && (c.path != Path::Shared || !c.fits() || c.recompute)) c = *tight;
    const std::string what =
        "vector=" + std::to_string(c.vector) + ", persist=" + std::to_string(c.persist) +
        ", rows=" + std::to_string(c.rows) + ", persistence=" + path_name(c.path);
    if (c.vector > 1 && !c.cache_inputs)
      user_fail("vector=" + std::to_string(c.vector) + " needs cache_inputs=true");
    if (a.inner_extent % c.vector != 0)
      user_fail("vector=" + std::to_string(c.vector) + " does not divide the innermost extent " +
                std::to_string(a.inner_extent) + " of the rows");
    const int64_t threads = c.row_threads * c.rows;
    if (d.max_threads_per_block > 0 && threads > d.max_threads_per_block)
      user_fail(what + " needs " + std::to_string(c.row_threads) + " x " + std::to_string(c.rows) +
                " = " + std::to_string(threads) + " threads per block for rows of " +
                std::to_string(a.R) + ", more than the device's " +
                std::to_string(d.max_threads_per_block));
    if (c.path != Path::MultiPass && c.persist > kMaxPersist)
      user_fail(what + ": persist above " + std::to_string(kMaxPersist) +
                " unrolls too far; expected persistence=none (a serial loop) for so many vectors "
                "per thread");
    // cost_shared keeps in Shared memory only what fits there: what does not
    // fit is a register budget that is exceeded.
    if (!c.fits())
      user_fail(what + " needs " + std::to_string(c.registers) + " registers per thread (" +
                std::to_string(c.registers - kRegisterOverhead) + " for the persistent buffers" +
                (c.path == Path::Shared
                     ? " that do not fit in the " + std::to_string(c.shared_allowed) +
                           " bytes of shared memory a block has"
                     : std::string()) +
                "), more than the " + std::to_string(c.allowed) + " a block of " +
                std::to_string(threads) + " threads allows");

    // Multi-pass, and the shared path when the intermediates' buffers do not
    // fit: what would be kept between passes is recomputed instead, and only
    // the inputs persist (re-read by each pass, or kept through their caches).
    if (c.path == Path::MultiPass || c.recompute) {
      const std::vector<pa::TensorView> inputs = a.persistent_inputs;
      if (recompute_intermediates(seg, a)) a = analyze(seg);
      a.persistent = inputs;
    }

    // Caches before any transform: cache_before needs an untransformed output.
    // On the multi-pass path a persistent input is read from global memory by
    // each pass instead (a cache would be a buffer across the reductions).
    std::vector<pa::TensorView> vectorized;
    std::vector<pa::TensorView> persistent = a.persistent;  // inputs replaced by their caches
    if (c.cache_inputs) {
      for (pa::TensorView in : a.full_inputs) {
        auto at = std::find(a.persistent.begin(), a.persistent.end(), in);
        if (c.path == Path::MultiPass && at != a.persistent.end()) continue;
        pa::TensorView cache = in.cache_after();
        vectorized.push_back(cache);
        if (at != a.persistent.end())
          persistent[static_cast<size_t>(at - a.persistent.begin())] = cache;
      }
      for (pa::TensorView out : a.full_outputs) {
        out.cache_before();
        vectorized.push_back(out);
      }
      // A row operand ([K]: layernorm's weight and bias) read with the
      // row's vectors too, through its own cache: read element by element,
      // a warp's loads span `vector` times the sectors they use (the model:
      // layernorm_bf16 at K=65536 with vector=8 read 22 % coalesced).
      if (c.vector > 1 && c.path != Path::MultiPass && a.red_axes.size() == 1)
        for (pa::TensorView in : pa::row_operands(seg, a.inner_extent))
          if (std::find(a.full_inputs.begin(), a.full_inputs.end(), in) == a.full_inputs.end())
            vectorized.push_back(in.cache_after());
    }

    // The shared path writes and reads each Shared buffer a vector at a
    // time: it reads into a register copy in every pass that reads it (recompute: one copy per
    // reader, so that none is kept across a reduction). Read element by
    // element, the [persist, threads, vector] layout puts a warp's loads
    // `vector` elements apart: 4-way bank conflicts for f32 at vector=4 and
    // for bf16 at vector=8. A vector wider than 16 bytes (an f32 buffer of a
    // bf16 row) cannot be one access, and stays read element by element.
    if (c.path == Path::Shared && c.vector > 1)
      for (size_t i = 0; i < persistent.size(); ++i) {
        if (!c.in_shared[i] || !buffered(a.persistent[i], c) ||
            wider_than_an_access(c, persistent[i]))
          continue;
        // An intermediate is computed in registers and stored a vector at a
        // time as well.
        if (!persistent[i].is_input() && persistent[i] == a.persistent[i]) {
          persistent[i].cache_before();
          vectorized.push_back(persistent[i]);
        }
        pa::TensorView reg = persistent[i].cache_after();
        const std::vector<pa::TensorView> readers = reg.consumers();
        vectorized.push_back(reg);
        for (size_t k = 1; k < readers.size(); ++k) vectorized.push_back(reg.recompute({readers[k]}));
      }

    // [I, R] -> [I/rows, rows, persist, ceilDiv(R/v, persist), v]
    pa::TensorView ref = a.ref;
    std::vector<std::pair<int, int>> order;
    int next = 0;
    std::vector<pa::AxisInfo> dom = ref.logical();
    for (int i = 0; i < static_cast<int>(dom.size()); ++i)
      if (!dom[i].is_reduction()) order.push_back({i, next++});
    for (int i : a.red_axes) order.push_back({i, next++});
    ref.reorder(order);
    const int n_front = next - static_cast<int>(a.red_axes.size());
    for (int k = 1; k < n_front; ++k) ref.merge(0, 1);
    int r = n_front > 0 ? 1 : 0;
    for (size_t k = 1; k < a.red_axes.size(); ++k) ref.merge(r, r + 1);
    if (c.vector > 1) ref.split(r, c.vector);
    ref.split(r, c.persist, /*inner_split=*/false);
    // Buffers indexed by persist need it unrolled (registers are named, not
    // addressed); the multi-pass path's passes are plain serial loops.
    if (c.path != Path::MultiPass) ref.parallelize(r, pa::LoopTransform::Unroll);
    ref.parallelize(r + 1, pa::ParallelType::TIDx);
    if (n_front > 0) {
      if (c.rows > 1) {
        ref.split(0, c.rows);
        ref.parallelize(1, pa::ParallelType::TIDy);
      }
      ref.parallelize(0, pa::ParallelType::BIDx);
    }
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    if (c.vector > 1)
      for (pa::TensorView& tv : vectorized) tv.parallelize(-1, pa::LoopTransform::Vectorize);
    for (size_t i = 0; i < persistent.size(); ++i) {
      if (c.path == Path::Shared && c.in_shared[i] && buffered(a.persistent[i], c))
        persistent[i].set_memory_type(pa::MemoryType::Shared);
      // Written by one pass and read by a later one, by the same thread.
      if (c.path == Path::MultiPass && !persistent[i].is_input())
        persistent[i].set_memory_type(pa::MemoryType::Global);
    }
    seg.inline_most();
    pa::serialize_own_broadcast_axes(seg);
  }
};

SCHEDLAB_PLUGIN(Normalization)
