// normalization: the built-in persistent normalization scheduler plugin,
// after nvFuser's inner persistent scheduler. Written only against plugin.hpp.
//
// What it schedules: fusions whose reductions all reduce the same innermost
// logical axes and whose results are broadcast back over them (softmax,
// log_softmax, layernorm, rmsnorm): row statistics, then math on every
// element of the row with them. The row stays in registers: each thread
// keeps its part of every *persistent* tensor (one read before a reduction
// and again after it) across the reductions, so the row is read from global
// memory once. It refuses, with the reason: no reduction, reductions over
// different axes, an outer (non-innermost) reduced axis, no result broadcast
// back (the reduction plugin's job), a computed tensor that does not iterate
// the reference's axes in order (pa::misaligned: an output over an axis the
// reduction does not have, an outer product of a statistic with itself), and
// rows too long for the device's registers (naming the sizes and the limit).
// Lowering rules it relies on: a Vectorize axis is the inner split of the
// innermost logical axis and its width divides that extent at launch, so the
// vector divides the innermost reduced extent, not the merged row (N * K);
// a tensor not inlined whole into its readers must be computed by the
// threads that read it, so a keepdim statistic read by tensors of two shapes
// (logsumexp's m, read by x - m and by m + log(s)) keeps its broadcast axes
// serial and each thread computes its own copy (pa::serialize_own_broadcast_axes).
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
// again after each reduction.
//
// The heuristic (compute_params), from the segment's sizes and the device
// (the model device, schedlab-model-sm90, on the CPU backend):
//   vector   the widest access (16 bytes at most) that divides the innermost
//            reduced extent (a row of several reduced axes is merged, and a
//            vector must not cross the innermost one: lowering checks the
//            innermost extent's divisibility at launch).
//   persist  the smallest that keeps the row's threads within kMaxRowThreads
//            (512: big blocks cost occupancy and reduction latency), at least
//            kMinPersist (2 vectors in flight per thread) while the row still
//            spans a warp of threads, and that keeps the
//            per-thread buffers within the register budget: registers =
//            sum over persistent tensors of persist * vector * ceil(bytes/4),
//            plus kRegisterOverhead, at most min(255, registers_per_block /
//            threads). Past 512 threads, the smallest persist that fits.
//   rows     fills the block towards kTargetThreads (128) when a row needs
//            few threads, halved while the row blocks leave SMs idle.
// Shared memory is not used for the buffers: lowering places a buffer whose
// extent is symbolic (the threads of a row) in a global workspace, not in
// shared memory, so rows that do not fit in registers are refused instead.
#include <algorithm>
#include <cstdint>
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
/// The hardware limit of registers per thread.
constexpr int64_t kMaxRegistersPerThread = 255;
/// Threads per row the heuristic prefers not to exceed.
constexpr int64_t kMaxRowThreads = 512;
/// Threads per block the heuristic aims at when rows are short.
constexpr int64_t kTargetThreads = 128;
/// Largest persist the heuristic tries (the schema's maximum).
constexpr int64_t kMaxPersist = 64;
/// Smallest persist the heuristic picks while a row still spans a warp.
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
  return a;
}

/// One choice of the split, and what it costs.
struct Config {
  int64_t vector = 1, persist = 1, rows = 1;
  bool cache_inputs = true;
  int64_t row_threads = 0;  ///< ceilDiv(R / vector, persist), at these sizes
  int64_t registers = 0;    ///< per thread: buffers plus overhead
  int64_t allowed = 0;      ///< per thread at this block size
  bool fits() const { return registers <= allowed; }
};

/// Fills in what `c` costs at the segment's sizes on device `d`.
Config cost(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.row_threads = ceil_div(ceil_div(a.R, c.vector), c.persist);
  int64_t per_element = 0;
  for (const pa::TensorView& t : a.persistent)
    if (!t.is_input() || c.cache_inputs) per_element += registers_per_element(t);
  c.registers = per_element * c.persist * c.vector + kRegisterOverhead;
  const int64_t warp = std::max(1, d.warp_size);
  const int64_t threads = ceil_div(c.row_threads * c.rows, warp) * warp;
  const int64_t max_threads = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  c.allowed = threads > max_threads
                  ? 0
                  : std::min(kMaxRegistersPerThread, static_cast<int64_t>(d.registers_per_block) /
                                                         std::max<int64_t>(threads, 1));
  return c;
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

/// Rows per block: towards kTargetThreads, while every SM still gets a block.
int64_t choose_rows(const Analysis& a, const pa::DeviceProperties& d, int64_t row_threads) {
  int64_t rows = std::max<int64_t>(
      1, largest_pow2_at_most(kTargetThreads / std::max<int64_t>(row_threads, 1)));
  rows = std::min(rows, next_pow2(a.I));
  while (rows > 1 && ceil_div(a.I, rows) < std::max(1, d.sm_count)) rows /= 2;
  return rows;
}

/// The heuristic's split (see the top); nullopt-like (persist = 0) when no
/// split fits.
Config heuristic(const Analysis& a, const pa::DeviceProperties& d) {
  Config first_fit;
  first_fit.persist = 0;
  for (int64_t persist = 1; persist <= kMaxPersist; ++persist) {
    Config c;
    c.vector = choose_vector(a, true);
    c.persist = persist;
    c.rows = choose_rows(a, d, ceil_div(ceil_div(a.R, c.vector), persist));
    c = cost(a, d, c);
    if (!c.fits()) continue;
    // Two vectors per thread at least while a row keeps a warp: one load in
    // flight per thread cannot cover DRAM latency, and the block reductions'
    // cost per element halves (the model: softmax at K=1024 goes from
    // issue-bound at 79 % of bandwidth to DRAM-bound at 89 %).
    const int64_t vectors = ceil_div(a.R, c.vector);
    const bool too_few = persist < kMinPersist && ceil_div(vectors, kMinPersist) >= kWarp;
    if (!too_few && c.row_threads <= kMaxRowThreads) return c;
    if (first_fit.persist == 0) first_fit = c;
  }
  return first_fit;
}

std::string names(const std::vector<pa::TensorView>& tvs) {
  std::string s;
  for (const pa::TensorView& t : tvs) s += (s.empty() ? "" : ", ") + describe(t);
  return s;
}

/// Why no split fits: the row, its buffers, and the device's limit.
std::string too_long(const Analysis& a, const pa::DeviceProperties& d) {
  int64_t row_bytes = 0;
  for (const pa::TensorView& t : a.persistent) row_bytes += registers_per_element(t) * 4 * a.R;
  int64_t threads = 0, regs = 0;
  int64_t cap = capacity_bytes(d, &threads, &regs);
  return "a row of " + std::to_string(a.R) + " elements does not fit in registers: its " +
         std::to_string(a.persistent.size()) + " persistent buffer" +
         (a.persistent.size() == 1 ? "" : "s") + " (" + names(a.persistent) + ") need " +
         std::to_string(row_bytes) + " bytes per row, and a block of " + d.name +
         " holds at most " + std::to_string(cap) + " (" + std::to_string(threads) + " threads x (" +
         std::to_string(regs) + " - " + std::to_string(kRegisterOverhead) +
         " registers) x 4 bytes; " + std::to_string(d.registers_per_block) +
         " registers per block, " + std::to_string(kMaxRegistersPerThread) + " per thread)";
}

void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "normalization: " + message);
}

}  // namespace

class Normalization : public pa::Plugin {
 public:
  std::string name() const override { return "normalization"; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "nvFuser-style inner persistent normalization: the row in registers across block "
           "reductions";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::choice("vector", {"1", "2", "4", "8"}, "1",
                          "elements per vector access of the full-rank inputs and outputs"),
        pa::Param::integer("persist", 1, 1, kMaxPersist,
                           "vectors of each row every thread keeps (the row's threads: "
                           "ceilDiv(R / vector, persist))"),
        pa::Param::integer("rows", 1, 1, 1024, "rows per block (TIDy)"),
        pa::Param::boolean("cache_inputs", true,
                           "read full-rank inputs once into registers (else re-read after "
                           "each reduction)"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    Analysis a = analyze(seg);
    if (!a.reject.empty()) return pa::Verdict::no(a.reject);
    if (std::string why = pa::global_accumulator_with_own_broadcast(seg); !why.empty())
      return pa::Verdict::no(why);
    if (heuristic(a, seg.device()).persist == 0) return pa::Verdict::no(too_long(a, seg.device()));
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    Analysis a = analyze(seg);
    if (!a.reject.empty()) user_fail(a.reject);
    Config c = heuristic(a, seg.device());
    if (c.persist == 0) user_fail(too_long(a, seg.device()));
    p.set_choice("vector", std::to_string(c.vector));
    p.set_integer("persist", c.persist);
    p.set_integer("rows", c.rows);
    p.set_boolean("cache_inputs", c.cache_inputs);
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
    c = cost(a, d, c);
    const std::string what = "vector=" + std::to_string(c.vector) +
                             ", persist=" + std::to_string(c.persist) +
                             ", rows=" + std::to_string(c.rows);
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
    if (!c.fits())
      user_fail(what + " needs " + std::to_string(c.registers) + " registers per thread (" +
                std::to_string(c.registers - kRegisterOverhead) + " for the persistent buffers), " +
                "more than the " + std::to_string(c.allowed) + " a block of " +
                std::to_string(threads) + " threads allows");

    // Caches before any transform: cache_before needs an untransformed output.
    std::vector<pa::TensorView> vectorized;
    if (c.cache_inputs) {
      for (pa::TensorView in : a.full_inputs) vectorized.push_back(in.cache_after());
      for (pa::TensorView out : a.full_outputs) {
        out.cache_before();
        vectorized.push_back(out);
      }
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
    ref.parallelize(r, pa::LoopTransform::Unroll);
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
    seg.inline_most();
    pa::serialize_own_broadcast_axes(seg);
  }
};

SCHEDLAB_PLUGIN(Normalization)
