// reduction: the built-in reduction scheduler plugin, after nvFuser's inner
// and outer reduction schedulers. Written only against the plugin API.
//
// What it schedules: fusions whose reductions all reduce the same logical
// axes (row_sum, row_max, col_sum, sum_all, masked_row_sum, keepdim and
// epilogue variants, a pointwise output next to the reduction as in
// int_affine). The reference (find_reference: a reduction) is reordered to
// [iteration..., reduction...] and each group merged, giving [I, R] (or [R]
// for a full reduction). The reduction is *inner* when the innermost logical
// axis is reduced (R contiguous in memory), *outer* otherwise (I contiguous).
// It refuses, with the reason: reductions over different axes, a reduction
// result broadcast back over the reduced axes (a normalization: the
// `normalization` plugin's job), a computed tensor that does not iterate the
// reference's axes in order (pa::misaligned: propagation would give it the
// reference's loop over axes it does not have, e.g. an outer product of a
// reduction with itself binding BIDx twice), a tensor broadcast where the
// reference iterates that is read from two loop nests (a side output and the
// reduction's loop: pa::broadcast_read_by_two_nests), and, for the grid strategy, a
// reduction result read inside the kernel (lowering combines grid partials
// only into a fusion output); and, under strategy=auto, few long rows whose
// result is read inside the kernel: the block layout would starve the device
// (pa::starves_device) where a segment ending at the reduction goes grid-wide,
// so the segmenter cuts there. Only the segmenter's offers are refused so
// (ABI 1.5, offered_by_segmenter): asked for one kernel (a sweep point,
// --plugin), it schedules them whole, as does strategy=block.
// Lowering rules it relies on beyond those: a tensor a reader does not
// inline whole must be computed by the threads that read it, so a keepdim
// result's broadcast axes outside its inline position are left serial
// (pa::serialize_own_broadcast_axes; outputs nothing reads keep them bound:
// one writer per element).
//
// Strategies (parameter `strategy`; `auto` lets the heuristic choose):
//   serial  no thread cooperates on a reduced element. Inner: one row per
//           thread, [I/threads (BIDx), threads (TIDx), R/v/u, u, v]. Outer:
//           one column per thread, coalesced, [I/v/threads (BIDx), threads
//           (TIDx), R/u, u, v].
//   block   `reduce_threads` (rt) threads reduce each element together (warp
//           shuffles + shared memory). Inner: [I/ty (BIDx), ty (TIDy),
//           rt (TIDx), R/v/rt/u, u, v] with ty = threads / rt rows per block;
//           thread t reads vectors t, t + rt, ... of its row (coalesced).
//           Outer: [I/v/tx (BIDx), tx (TIDx), rt (TIDy), R/rt/u, u, v] with
//           tx = threads / rt columns per block.
//   grid    the block layout with the serial reduction loop further split
//           into `grid` contiguous chunks, one per block: BIDx (inner; the
//           rows go to BIDy) or BIDy (outer), placed before the thread axis.
//           The last block of each output element combines the partials (a
//           semaphore; no block waits).
// u is `unroll` (an Unroll loop), v is `vector`. With `rfactor`, the serial
// reduction axes are factored into a per-thread partial (sched::rfactor) of
// every reduction, so the cross-thread step reduces one value per thread.
//
// Loop order: the thread axis over R (rt) comes before the serial reduction
// loops, not after them as in nvFuser's [.., R/v/rt (serial), rt (TIDx), v].
// Bindings, not loop order, decide which thread reads what, so the accesses
// are the same; but with nvFuser's order the rfactor producer has an
// Iteration axis (rt) inside a serial reduction loop, and lowering then
// emits that producer's initialization inside the serial loop whenever a
// producer (the vectorized input cache) is inlined past it: the partial is
// reset on every iteration (row_sum, K=32, vector=4, rfactor: wrong sums).
//
// The heuristic (compute_params), from the segment's sizes and the device
// (the model device, schedlab-model-sm90, on the CPU backend):
//   vector  the widest access (16 bytes at most) that divides the contiguous
//           extent (R inner, I outer) of every full-rank input; read through
//           a cache_after copy whose innermost axis is Vectorize.
//   inner   rt = next_pow2(ceil(R/v / 4)) within [1, 512]: about four
//           vectors per thread. ty fills the block to 128 threads with rows,
//           halved while the rows leave SMs idle. serial when a row is at
//           most kSerialVectors vectors (a block reduction would cost more
//           than it saves).
//   outer   tx = next_pow2(ceil(I/v)) within [1, 128]: the columns. serial
//           when the columns alone give every SM a block, else rt (TIDy)
//           fills the block to 256 threads with threads over R.
//   grid    when the blocks of the iteration space leave SMs idle and R is
//           long: as many chunks as fill every SM (the blocks its threads
//           hold) in one wave, each chunk at least kMinVectorsPerThread
//           vectors per thread; never when a reduction result is read inside
//           the kernel.
//   unroll  2 when every thread loops at least 8 times over R, else 1.
//   rfactor true (nvFuser always factors the serial part).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/loop.hpp"
#include "schedlab/plugin_api/loop_nests.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/reduction_reference.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
using pa::ceil_div;
using pa::describe;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;
using pa::Loop;
// Largest gridDim.y: the most rows of an inner grid reduction.
using pa::rules::kMaxGridY;
using pa::rules::kMaxReduceThreads;
using pa::rules::kMinVectorsPerThread;
// The inner reduction aims at it; the outer one at twice.
using pa::rules::kTargetThreads;

namespace {

/// Inner rows of at most this many vectors are reduced by one thread each.
constexpr int64_t kSerialVectors = 4;

std::string axes_str(const std::vector<int>& axes) {
  std::string s = "{";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "}";
}

/// Non-broadcast, non-reduction logical axes.
int64_t iteration_rank(const pa::TensorView& tv) {
  int64_t n = 0;
  for (const pa::AxisInfo& a : tv.logical()) n += !a.is_reduction() && !a.is_broadcast();
  return n;
}

/// What the plugin learns about a segment before scheduling it.
struct Analysis {
  std::string reject;  ///< non-empty: why the plugin cannot schedule it
  std::vector<pa::TensorView> reductions;
  pa::TensorView ref;                         ///< the reference reduction
  std::vector<int> iter_axes, red_axes;       ///< logical positions in ref
  int64_t I = 1, R = 1;                       ///< iteration and reduced extents
  int64_t inner_extent = 1;                   ///< extent of the innermost logical axis
  bool inner = true;                          ///< the innermost logical axis is reduced
  bool read_in_kernel = false;                ///< a reduction result has a consumer in the segment
  std::string read_by;                        ///< that reduction and its consumer, for messages
  std::vector<pa::TensorView> vector_inputs;  ///< full-rank inputs: cacheable with vectors
  int64_t widest = 1;                         ///< bytes of the widest of vector_inputs
};

Analysis analyze(pa::Segment& seg) {
  Analysis a;
  pa::ReductionReference rr = pa::reduction_reference(seg, "reduction");
  a.reductions = rr.reductions;
  a.ref = rr.ref;
  if (!rr.reject.empty()) {
    a.reject = rr.reject;
    return a;
  }
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
  a.inner = dom.back().is_reduction();
  a.inner_extent = dom.back().extent;
  for (const pa::TensorView& r : a.reductions) {
    std::vector<int> axes;
    std::vector<pa::AxisInfo> d = r.logical();
    for (int i = 0; i < static_cast<int>(d.size()); ++i)
      if (d[i].is_reduction()) axes.push_back(i);
    if (d.size() != dom.size() || axes != a.red_axes) {
      a.reject = "reductions over different axes: " + describe(a.ref) + " reduces logical axes " +
                 axes_str(a.red_axes) + ", " + describe(r) + " reduces " + axes_str(axes) +
                 " (segment them apart)";
      return a;
    }
  }
  // Every computed tensor takes the reference's loop structure.
  if (std::string why = pa::first_misaligned(seg, a.ref); !why.empty()) {
    a.reject = why + "; reduction gives every tensor the reference's [I, R] loop";
    return a;
  }
  if (std::string why = pa::broadcast_read_by_two_nests(seg, a.ref); !why.empty()) {
    a.reject = why;
    return a;
  }
  // A result broadcast back over the reduced axes: some tensor downstream of a
  // reduction iterates over more axes than the reduction keeps.
  const int64_t kept = static_cast<int64_t>(a.iter_axes.size());
  for (const pa::TensorView& r : a.reductions) {
    for (const pa::TensorView& c : r.consumers())
      if (!a.read_in_kernel) {
        a.read_in_kernel = true;
        a.read_by = describe(r) + " is read by " + describe(c);
      }
    for (const pa::TensorView& t : seg.vals_between({r}, seg.outputs()))
      if (iteration_rank(t) > kept) {
        a.reject = "the result of " + describe(r) + " is broadcast back over the reduced axes (" +
                   describe(t) + " iterates over " + std::to_string(iteration_rank(t)) +
                   " axes): a normalization, which the normalization plugin schedules";
        return a;
      }
  }
  for (const pa::TensorView& in : seg.inputs()) {
    if (in.consumers().empty() || in.nlogical() != static_cast<int>(dom.size())) continue;
    std::vector<pa::AxisInfo> d = in.logical();
    if (std::any_of(d.begin(), d.end(), [](const pa::AxisInfo& x) { return x.is_broadcast(); }))
      continue;
    a.vector_inputs.push_back(in);
    a.widest = std::max(a.widest, dtype_bytes(in.dtype()));
  }
  return a;
}

/// The reference's loop axes by role while the schedule is built.
Loop loop_of(pa::TensorView tv, std::vector<std::string> roles) {
  return Loop(tv, std::move(roles), "reduction");
}

/// The resolved configuration of one schedule.
struct Config {
  std::string strategy;  ///< serial, block or grid
  int64_t vector = 1, threads = 128, reduce_threads = 1, grid = 2, unroll = 1;
  bool rfactor = true;
  /// The blocks of the iteration space leave SMs idle and the rows are long
  /// enough to split over blocks: grid, unless a result is read in the kernel.
  bool spread = false;
  /// Threads resident on the device without a grid split (the block layout).
  int64_t resident = 0;
};

/// The largest power of two v <= 8 with v * widest <= 16 bytes that divides
/// the contiguous extent; 1 without a full-rank input.
int64_t choose_vector(const Analysis& a) {
  if (a.vector_inputs.empty()) return 1;
  return pa::rules::dividing_vector(pa::rules::widest_vector(a.widest), a.inner_extent);
}

/// The heuristic: see the top of the file.
Config heuristic(const Analysis& a, const pa::DeviceProperties& d) {
  Config c;
  const int64_t sms = std::max(1, d.sm_count);
  const int64_t max_threads = std::max(32, d.max_threads_per_block);
  c.vector = choose_vector(a);
  int64_t iter_blocks = 1;
  int64_t serial_len = 1;  // vectors each thread reduces serially (without grid)
  if (a.inner) {
    const int64_t rv = ceil_div(a.R, c.vector);
    c.reduce_threads = std::clamp<int64_t>(next_pow2(ceil_div(rv, kMinVectorsPerThread)), 1,
                                           std::min(kMaxReduceThreads, max_threads));
    int64_t rows = std::max<int64_t>(1, kTargetThreads / c.reduce_threads);
    rows = std::min(rows, next_pow2(a.I));
    while (rows > 1 && ceil_div(a.I, rows) < sms) rows /= 2;
    c.threads = c.reduce_threads * rows;
    iter_blocks = ceil_div(a.I, rows);
    serial_len = ceil_div(rv, c.reduce_threads);
    c.strategy = rv <= kSerialVectors ? "serial" : "block";
    if (c.strategy == "serial") {
      c.threads = std::min<int64_t>(kTargetThreads, std::max<int64_t>(32, next_pow2(a.I)));
      while (c.threads > 32 && ceil_div(a.I, c.threads) < sms) c.threads /= 2;
      serial_len = rv;
    }
  } else {
    const int64_t iv = ceil_div(a.I, c.vector);
    const int64_t cols = std::clamp<int64_t>(next_pow2(iv), 1, kTargetThreads);
    iter_blocks = ceil_div(iv, cols);
    if (iter_blocks >= sms || a.R <= kMinVectorsPerThread) {
      c.strategy = "serial";
      c.reduce_threads = 1;
    } else {
      c.strategy = "block";
      c.reduce_threads = std::clamp<int64_t>(
          next_pow2(ceil_div(a.R, kMinVectorsPerThread)), 1,
          std::max<int64_t>(1, std::min(2 * kTargetThreads, max_threads) / cols));
    }
    c.threads = cols * c.reduce_threads;
    serial_len = ceil_div(a.R, c.reduce_threads);
  }
  // Grid: chunks so that every SM is full (as many blocks as its threads
  // hold, at most 32; two when the device does not say), each chunk long
  // enough. A half-full SM has half the loads in flight: row_sum at N=16,
  // K=2^20 predicts 0.62 of the h200's bandwidth with two 512-thread blocks
  // per SM, 0.90 with four; at N=64, K=2^18, 0.87 with 8 chunks a row (512
  // blocks) but 0.79 with 9 (576 blocks: a second wave).
  const int64_t per_sm =
      d.max_threads_per_sm > 0 ? std::clamp<int64_t>(d.max_threads_per_sm / c.threads, 1, 32) : 2;
  // One wave: a last, partial wave of blocks would leave SMs idle again.
  const int64_t want = per_sm * sms / iter_blocks;
  const int64_t by_length = serial_len / kMinVectorsPerThread;
  c.grid = std::max<int64_t>(2, std::min(want, by_length));
  c.spread = c.strategy != "serial" && iter_blocks < sms && by_length >= 2 && want >= 2 &&
             (a.inner ? iter_blocks <= kMaxGridY : c.grid <= kMaxGridY);
  c.resident = iter_blocks * c.threads;
  if (c.spread && !a.read_in_kernel) c.strategy = "grid";
  const int64_t per_thread = c.strategy == "grid" ? ceil_div(serial_len, c.grid) : serial_len;
  c.unroll = per_thread >= 8 ? 2 : 1;
  c.rfactor = true;
  return c;
}

/// Non-empty (the reason) when a reduction read inside the kernel would
/// starve the device: its rows are few and long, so one block per row keeps
/// too few loads in flight (at most an eighth of the device's resident
/// threads, pa::starves_device), while a segment ending at the reduction
/// could split the rows over blocks (strategy=grid). The segmenter then cuts
/// after the reduction.
std::string starved(const Analysis& a, const pa::DeviceProperties& d) {
  const Config c = heuristic(a, d);
  if (!c.spread || !pa::starves_device(c.resident, d)) return {};
  return "few long rows: " + std::to_string(c.resident / c.threads) + " blocks of " +
         std::to_string(c.threads) + " threads (the block strategy) keep " +
         std::to_string(c.resident) + " of the device's " +
         std::to_string(pa::resident_capacity(d)) + " resident threads busy, and " + a.read_by +
         " inside the kernel, so no grid split (segment after the reduction to split it; "
         "strategy=block schedules it as it is)";
}

void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "reduction: " + message);
}

}  // namespace

class Reduction : public pa::Plugin {
 public:
  std::string name() const override { return "reduction"; }
  /// Offered a segment after normalization (a persistent kernel beats a
  /// reduction plus a pointwise one), before transpose and pointwise.
  int priority() const override { return 30; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "nvFuser-style inner/outer reductions: serial, block (TIDx/TIDy) or grid (BIDx/BIDy), "
           "rfactor, vectorized loads";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::choice("strategy", {"auto", "serial", "block", "grid"}, "auto",
                          "who reduces an output element: one thread, a block, or several blocks"),
        pa::Param::choice("vector", {"1", "2", "4", "8"}, "1",
                          "elements per vector load of the full-rank inputs (1: none)"),
        pa::Param::integer("threads", 128, 1, 1024, "threads per block"),
        pa::Param::integer("reduce_threads", 32, 1, 1024,
                           "of those, threads that reduce one element together (block, grid): "
                           "TIDx for an inner reduction, TIDy for an outer one"),
        pa::Param::integer("grid", 8, 2, 65535, "blocks that reduce one element together (grid)"),
        pa::Param::integer("unroll", 1, 1, 16, "unroll factor of each thread's serial loop"),
        pa::Param::boolean("rfactor", true, "factor the serial part into per-thread partials"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params& p) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    Analysis a = analyze(seg);
    if (!a.reject.empty()) return pa::Verdict::no(a.reject);
    if (std::string why = pa::global_accumulator_with_own_broadcast(seg); !why.empty())
      return pa::Verdict::no(why);
    if (p.choice("strategy") == "grid" && a.read_in_kernel)
      return pa::Verdict::no(
          "strategy=grid: " + a.read_by +
          " inside the kernel, but lowering combines a grid reduction only into a fusion output");
    if (p.choice("strategy") == "auto" && a.read_in_kernel && seg.offered_by_segmenter())
      if (std::string why = starved(a, seg.device()); !why.empty()) return pa::Verdict::no(why);
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    // A tuned configuration for the segment's bucket (`run --tuned`, ABI 1.4)
    // is served as it is; the heuristic below chooses everywhere else.
    if (p.use_tuned()) return;
    Analysis a = analyze(seg);
    if (!a.reject.empty()) user_fail(a.reject);
    Config c = heuristic(a, seg.device());
    p.set_choice("strategy", c.strategy);
    p.set_choice("vector", std::to_string(c.vector));
    p.set_integer("threads", c.threads);
    p.set_integer("reduce_threads", c.reduce_threads);
    p.set_integer("grid", std::min(c.grid, kMaxGridY));
    p.set_integer("unroll", c.unroll);
    p.set_boolean("rfactor", c.rfactor);
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    Analysis a = analyze(seg);
    if (!a.reject.empty()) user_fail(a.reject);
    pa::DeviceProperties d = seg.device();
    Config c;
    c.strategy = p.choice("strategy");
    if (c.strategy == "auto") c.strategy = heuristic(a, d).strategy;
    c.vector = std::stoll(p.choice("vector"));
    c.threads = p.integer("threads");
    c.reduce_threads = c.strategy == "serial" ? 1 : p.integer("reduce_threads");
    c.grid = p.integer("grid");
    c.unroll = p.integer("unroll");
    c.rfactor = p.boolean("rfactor");
    check(a, c, d);

    // Vector caches first: cache_after rewires the inputs' uses.
    std::vector<pa::TensorView> caches;
    if (c.vector > 1)
      for (pa::TensorView in : a.vector_inputs) caches.push_back(in.cache_after());

    Loop loop = reorder_and_merge(a);
    if (a.inner)
      schedule_inner(c, loop);
    else
      schedule_outer(c, loop);
    seg.propagate_transformation(a.ref);
    seg.parallelize_all_like(a.ref);
    if (c.rfactor) factor_partials(seg, a.ref);
    for (pa::TensorView& cache : caches) cache.parallelize(-1, pa::LoopTransform::Vectorize);
    seg.inline_most();
    pa::serialize_own_broadcast_axes(seg);
  }

 private:
  /// User errors for settings the sizes or the device cannot take.
  static void check(const Analysis& a, const Config& c, const pa::DeviceProperties& d) {
    if (d.max_threads_per_block > 0 && c.threads > d.max_threads_per_block)
      user_fail("threads=" + std::to_string(c.threads) + " exceeds the device's " +
                std::to_string(d.max_threads_per_block) + " threads per block");
    if (c.threads % c.reduce_threads != 0)
      user_fail("reduce_threads=" + std::to_string(c.reduce_threads) +
                " does not divide threads=" + std::to_string(c.threads));
    if (c.vector > 1 && a.vector_inputs.empty())
      user_fail("vector=" + std::to_string(c.vector) + ": no input is read at full rank");
    if (c.vector > 1 && a.inner_extent % c.vector != 0)
      user_fail("vector=" + std::to_string(c.vector) + " does not divide the innermost extent " +
                std::to_string(a.inner_extent) + " of " + describe(a.vector_inputs.front()));
    if (c.strategy == "grid" && a.read_in_kernel)
      user_fail("strategy=grid: " + a.read_by +
                " inside the kernel, but lowering combines a grid reduction only into a fusion "
                "output");
    if (c.strategy == "grid" && a.inner) {
      int64_t rows = ceil_div(a.I, c.threads / c.reduce_threads);
      if (rows > kMaxGridY)
        user_fail("strategy=grid puts the " + std::to_string(rows) +
                  " row blocks on BIDy, more than its limit of " + std::to_string(kMaxGridY));
    }
  }

  /// ref's logical axes reordered to [iteration..., reduction...], each group
  /// merged: [I, R], or [R] for a full reduction.
  static Loop reorder_and_merge(const Analysis& a) {
    pa::TensorView ref = a.ref;
    std::vector<std::pair<int, int>> order;
    int next = 0;
    for (int i : a.iter_axes) order.push_back({i, next++});
    std::vector<pa::AxisInfo> dom = ref.logical();
    for (int i = 0; i < static_cast<int>(dom.size()); ++i)  // broadcast axes after the iteration
      if (dom[i].is_broadcast()) order.push_back({i, next++});
    for (int i : a.red_axes) order.push_back({i, next++});
    ref.reorder(order);
    const int n_iter = static_cast<int>(a.iter_axes.size());
    const int n_bcast = static_cast<int>(dom.size()) - n_iter - static_cast<int>(a.red_axes.size());
    // Broadcast axes (extent 1) merge into the iteration axis, or the reduction's.
    const int n_front = n_iter + n_bcast;
    for (int k = 1; k < n_front; ++k) ref.merge(0, 1);
    const int r0 = n_front > 0 ? 1 : 0;
    for (size_t k = 1; k < a.red_axes.size(); ++k) ref.merge(r0, r0 + 1);
    return n_front > 0 ? loop_of(ref, {"I", "R"}) : loop_of(ref, {"R"});
  }

  /// Inner: R contiguous. Threads on R (TIDx), rows on TIDy.
  static void schedule_inner(const Config& c, Loop& l) {
    const bool has_i = l.has("I");
    if (c.vector > 1) l.split("R", c.vector, "R", "v");
    if (c.strategy == "serial") {
      if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
      if (has_i) {
        l.split("I", c.threads, "I", "tx");
        l.bind("I", pa::ParallelType::BIDx);
        l.bind("tx", pa::ParallelType::TIDx);
      }
    } else {
      l.split("R", c.reduce_threads, "R", "rt");
      if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
      if (c.strategy == "grid") l.split("R", c.grid, "g", "R", /*inner_split=*/false);
      // The thread axis ahead of the serial loops (see "Loop order" at the top).
      l.move_before("rt", "R");
      const int64_t rows = c.threads / c.reduce_threads;
      if (has_i && rows > 1) l.split("I", rows, "I", "ty");
      l.bind("I", c.strategy == "grid" ? pa::ParallelType::BIDy : pa::ParallelType::BIDx);
      l.bind("ty", pa::ParallelType::TIDy);
      l.bind("g", pa::ParallelType::BIDx);
      l.bind("rt", pa::ParallelType::TIDx);
    }
    l.bind("u", pa::LoopTransform::Unroll);
  }

  /// Outer: I contiguous. Threads on I (TIDx), on R (TIDy); v innermost.
  static void schedule_outer(const Config& c, Loop& l) {
    if (c.vector > 1) l.split("I", c.vector, "I", "v");
    l.split("I", c.threads / c.reduce_threads, "I", "tx");
    if (c.reduce_threads > 1) l.split("R", c.reduce_threads, "R", "rt");
    if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
    if (c.strategy == "grid") l.split("R", c.grid, "g", "R", /*inner_split=*/false);
    if (l.has("v")) l.move_to_end("v");
    if (l.has("rt")) l.move_before("rt", "R");  // see "Loop order" at the top
    l.bind("I", pa::ParallelType::BIDx);
    l.bind("tx", pa::ParallelType::TIDx);
    l.bind("g", pa::ParallelType::BIDy);
    l.bind("rt", pa::ParallelType::TIDy);
    l.bind("u", pa::LoopTransform::Unroll);
  }

  /// rfactor of every reduction over its serial (unbound) reduction axes,
  /// when it also has bound ones: the serial part becomes a per-thread
  /// partial. The reductions share the reference's loop structure
  /// (propagated), so the same positions apply to each.
  static void factor_partials(pa::Segment& seg, const pa::TensorView& ref) {
    std::vector<int> serial;
    bool bound = false;
    std::vector<pa::AxisInfo> loop = ref.loop();
    for (int i = 0; i < static_cast<int>(loop.size()); ++i) {
      if (!loop[i].is_reduction()) continue;
      if (loop[i].parallel_type == pa::ParallelType::Serial)
        serial.push_back(i);
      else
        bound = true;
    }
    if (serial.empty() || !bound) return;
    for (pa::TensorView r : seg.reduction_tvs()) r.rfactor(serial);
  }
};

SCHEDLAB_PLUGIN(Reduction)
