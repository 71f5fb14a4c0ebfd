// autosched: the autoscheduler plugin (issue 18). For any fusion it derives
// a schedule by small pattern-matching rewrite rules, one class per rule,
// matched deterministically in a fixed order (the Finch autoscheduler's
// design; no e-graph, no search). Written only against the plugin API.
//
// Three parts:
//   facts   (facts.h) what the rules match on, read once from the
//           unscheduled segment: the reference (a reduction, else the largest
//           output), the pattern (pointwise, inner or outer reduction,
//           normalization, transpose), the extents, the tensors accessible
//           with vectors, the persistent tensors, the transposed layout. A
//           segment no rule set can schedule correctly is refused here, with
//           the reason (can_schedule), so the segmenter splits it.
//   rules   (rules.h) the rewrites, in order: cache full-rank accesses, stage
//           transposed accesses through Shared memory, choose and
//           canonicalize the reference, tile a transpose, bind iteration and
//           reduction axes to blocks and threads (one rule per pattern),
//           propagate, rfactor reductions, vectorize the innermost contiguous
//           axis, keep persistent rows in Shared memory, inline pointwise
//           producers. docs/plugins.md lists them with what each matches.
//   choices (this file) the rules' free choices are the schema below, so
//           that a tuner searches them; compute_params is the default choice,
//           the built-in heuristics' rules of thumb restated per pattern:
//   vector   the widest access of at most 16 bytes dividing the innermost
//            extent of every tensor accessed with vectors (the innermost
//            reduced extent for a normalization, which never crosses it).
//   pointwise  threads 128, halved while the blocks leave SMs idle; unroll
//            the times the vectors cover every resident thread (at most 4).
//   inner reduction  reduce_threads next_pow2(R/v / 4) in [1, 512] (about
//            four vectors per thread), rows filling 128 threads, halved while
//            blocks leave SMs idle; serial (one row a thread) for rows of at
//            most 4 vectors.
//   outer reduction  a warp-multiple of columns up to 128 on TIDx; serial
//            when the columns fill the SMs, else reduce_threads on TIDy up to
//            256 threads.
//   both     grid: chunks filling every SM in one wave (the blocks its threads
//            hold) when the blocks leave SMs idle and R is long (never when a
//            result is read in the kernel: then, when the rows without a
//            split would keep at most an eighth of the device's threads busy,
//            can_schedule refuses, so the segmenter cuts after the reduction);
//            unroll 2 when each thread loops 8 times or more.
//   normalization  the smallest persist that keeps a row's threads within
//            512, at least 2 vectors a thread while the row spans a warp, and
//            the registers of the kept buffers within budget; past registers,
//            the buffers in Shared memory (persistence=shared); rows filling
//            128 threads.
//   transpose  square tiles of 128 bytes a row (8 to 64 elements), halved
//            while the tiles leave SMs idle (not below a 32-byte sector),
//            four elements per thread (a warp to 256 threads).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "facts.h"
#include "rules.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
using autosched::Config;
using autosched::Facts;
using autosched::Pattern;
using pa::ceil_div;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;

// The rules the other built-in heuristics follow too (one home each).
using pa::rules::kMaxGridY;
using pa::rules::kMaxPersist;
using pa::rules::kMaxReduceThreads;
using pa::rules::kMaxRowThreads;
using pa::rules::kMaxUnroll;
using pa::rules::kMinVectorsPerThread;
using pa::rules::kReduceWorkspaceBytes;
using pa::rules::kRegisterOverhead;
using pa::rules::kTargetThreads;

namespace {

[[noreturn]] void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "autosched: " + message);
}

bool is_reduction(const Facts& f) {
  return f.pattern == Pattern::InnerReduction || f.pattern == Pattern::OuterReduction;
}

/// The widest vector (16 bytes at most) that divides the innermost extent;
/// 1 without a tensor accessed with vectors.
int64_t choose_vector(const Facts& f) {
  if (f.vector_inputs.empty() && f.vector_outputs.empty()) return 1;
  return pa::rules::dividing_vector(pa::rules::widest_vector(f.widest), f.inner_extent);
}

int64_t max_threads(const pa::DeviceProperties& d) {
  return pa::rules::max_threads_per_block(d);
}

void pointwise_choice(const Facts& f, const pa::DeviceProperties& d, Config& c) {
  c.vector = choose_vector(f);
  const int64_t sms = std::max(1, d.sm_count);
  const int64_t vectors = ceil_div(f.I, c.vector);
  c.threads = std::min(kTargetThreads, max_threads(d));
  while (c.threads / 2 >= 32 && ceil_div(vectors, c.threads) < sms) c.threads /= 2;
  const int64_t resident = sms * std::max<int64_t>(d.max_threads_per_sm, c.threads);
  c.unroll = std::min(kMaxUnroll, largest_pow2_at_most(std::max<int64_t>(vectors / resident, 1)));
}

/// The reduction rules' choice; returns the threads resident without a grid
/// split when the rows are few and long enough that the choice splits them
/// over blocks, or would but for a result read in the kernel (0 otherwise).
int64_t reduction_choice(const Facts& f, const pa::DeviceProperties& d, Config& c) {
  const int64_t sms = std::max(1, d.sm_count);
  c.vector = choose_vector(f);
  int64_t blocks = 1, serial_len = 1;
  bool serial = false;
  if (f.pattern == Pattern::InnerReduction) {
    const int64_t rv = ceil_div(f.R, c.vector);
    c.reduce_threads = std::clamp<int64_t>(next_pow2(ceil_div(rv, kMinVectorsPerThread)), 1,
                                           std::min(kMaxReduceThreads, max_threads(d)));
    c.rows = std::min(std::max<int64_t>(1, kTargetThreads / c.reduce_threads), next_pow2(f.I));
    while (c.rows > 1 && ceil_div(f.I, c.rows) < sms) c.rows /= 2;
    blocks = ceil_div(f.I, c.rows);
    serial_len = ceil_div(rv, c.reduce_threads);
    serial = rv <= kMinVectorsPerThread;
    if (serial) {
      c.reduce_threads = 1;
      c.rows = 1;
      c.threads = std::min<int64_t>(kTargetThreads, std::max<int64_t>(32, next_pow2(f.I)));
      while (c.threads > 32 && ceil_div(f.I, c.threads) < sms) c.threads /= 2;
      serial_len = rv;
    }
  } else {
    const int64_t iv = ceil_div(f.I, c.vector);
    const int64_t cols = std::clamp<int64_t>(next_pow2(iv), 1, kTargetThreads);
    blocks = ceil_div(iv, cols);
    serial = blocks >= sms || f.R <= kMinVectorsPerThread;
    c.reduce_threads =
        serial ? 1
               : std::clamp<int64_t>(
                     next_pow2(ceil_div(f.R, kMinVectorsPerThread)), 1,
                     std::max<int64_t>(1, std::min(2 * kTargetThreads, max_threads(d)) / cols));
    c.threads = cols * c.reduce_threads;
    serial_len = ceil_div(f.R, c.reduce_threads);
  }
  // As many chunks as fill every SM (the blocks its threads hold) in one
  // wave, as the reduction plugin does.
  const int64_t per_sm =
      d.max_threads_per_sm > 0 ? std::clamp<int64_t>(d.max_threads_per_sm / c.threads, 1, 32) : 2;
  const int64_t want = per_sm * sms / blocks;
  const int64_t by_length = serial_len / kMinVectorsPerThread;
  const int64_t grid = std::max<int64_t>(2, std::min(want, by_length));
  c.grid = 1;
  const bool spread = !serial && blocks < sms && by_length >= 2 && want >= 2 &&
                      (f.pattern == Pattern::InnerReduction ? blocks <= kMaxGridY : grid <= kMaxGridY);
  if (spread && !f.read_in_kernel) c.grid = grid;
  c.unroll = ceil_div(serial_len, c.grid) >= 8 ? 2 : 1;
  return spread ? blocks * c.threads : 0;
}

/// What a normalization split costs: threads per block, registers per
/// thread and Shared bytes per block, and whether they fit the device.
struct RowCost {
  int64_t row_threads = 0, threads = 0, registers = 0, shared = 0;
  bool fits = false;
};

RowCost row_cost(const Facts& f, const pa::DeviceProperties& d, const Config& c) {
  RowCost r;
  r.row_threads = ceil_div(ceil_div(f.R, c.vector), c.persist);
  r.threads = ceil_div(r.row_threads * c.rows, 32) * 32;
  int64_t per_element = 0;
  for (const pa::TensorView& t : f.persistent) {
    // An input's buffer is its copy (CacheFullRankAccesses), if it has one.
    const bool copied =
        std::find(f.vector_inputs.begin(), f.vector_inputs.end(), t) != f.vector_inputs.end();
    if (t.is_input() && !copied) continue;
    if (c.shared_persist)
      r.shared +=
          ceil_div(c.rows * c.persist * r.row_threads * c.vector * dtype_bytes(t.dtype()), 16) * 16;
    else
      per_element += ceil_div(dtype_bytes(t.dtype()), 4);
  }
  r.registers = per_element * c.persist * c.vector + kRegisterOverhead;
  const int64_t allowed =
      r.threads > max_threads(d)
          ? 0
          : pa::rules::registers_per_thread(d, r.threads);
  const int64_t shared_limit = pa::rules::shared_bytes_limit(d);
  r.fits = r.registers <= allowed && r.shared <= shared_limit - r.threads * kReduceWorkspaceBytes;
  return r;
}

/// The normalization choice (see the top); false when no split fits.
bool normalization_choice(const Facts& f, const pa::DeviceProperties& d, Config& c) {
  const int64_t sms = std::max(1, d.sm_count);
  c.vector = choose_vector(f);
  for (bool shared : {false, true}) {
    Config first;
    bool have_first = false;
    for (int64_t persist = 1; persist <= kMaxPersist; ++persist) {
      Config t = c;
      t.shared_persist = shared;
      t.persist = persist;
      const int64_t row_threads = ceil_div(ceil_div(f.R, t.vector), persist);
      t.rows = std::max<int64_t>(1, largest_pow2_at_most(kTargetThreads / row_threads));
      t.rows = std::min(t.rows, next_pow2(f.I));
      while (t.rows > 1 && ceil_div(f.I, t.rows) < sms) t.rows /= 2;
      const RowCost r = row_cost(f, d, t);
      if (!r.fits) continue;
      // Two vectors a thread, four for 2-byte storage (as the normalization
      // plugin's least_persist: f32 math on half the bytes), unless so few
      // rows starve the device with them: then rows of up to kTargetThreads.
      const int64_t vectors = ceil_div(f.R, t.vector);
      int64_t least = f.widest < 4 ? 4 : 2;
      if (pa::starves_device(f.I * ceil_div(vectors, least), d))
        least = std::clamp<int64_t>(ceil_div(vectors, kTargetThreads), 1, least);
      const bool too_few = persist < least && ceil_div(vectors, least) >= 32;
      if (!too_few && r.row_threads <= kMaxRowThreads) {
        c = t;
        return true;
      }
      if (!have_first) {
        first = t;
        have_first = true;
      }
    }
    if (have_first) {
      c = first;
      return true;
    }
  }
  return false;
}

/// Shared bytes of the staged tiles, rows padded (a bound on what the rule pads).
int64_t tile_bytes(const Facts& f, int64_t tile) {
  int64_t bytes = 0;
  for (const auto* list : {&f.t_inputs, &f.t_outputs})
    for (const pa::TensorView& t : *list) bytes += tile * (tile + 4) * dtype_bytes(t.dtype());
  return bytes;
}

void transpose_choice(pa::Segment& seg, const Facts& f, const pa::DeviceProperties& d, Config& c) {
  int64_t bytes = 1;
  for (const pa::TensorView& tv : seg.inputs()) bytes = std::max(bytes, dtype_bytes(tv.dtype()));
  for (const pa::TensorView& tv : seg.outputs()) bytes = std::max(bytes, dtype_bytes(tv.dtype()));
  const int64_t e1 = f.ref.logical_axis(f.inner1).extent;
  const int64_t e2 = f.ref.logical_axis(f.inner2).extent;
  int64_t tile = std::min(std::clamp<int64_t>(128 / bytes, 8, 64), next_pow2(std::min(e1, e2)));
  const auto shared = static_cast<int64_t>(d.shared_bytes_per_block);
  while (shared > 0 && tile > 1 && tile_bytes(f, tile) > shared) tile /= 2;
  const int64_t min_edge = std::max<int64_t>(1, 32 / bytes);
  while (tile > min_edge && f.outer * ceil_div(e1, tile) * ceil_div(e2, tile) < d.sm_count)
    tile /= 2;
  c.tile = tile;
  c.threads = std::clamp<int64_t>(tile * tile / 4, 32, std::min<int64_t>(256, max_threads(d)));
  c.threads = std::min(c.threads, ceil_div(tile * tile, 32) * 32);
  c.stage = true;
}

/// The configuration a call's parameters describe.
Config read_config(const pa::Params& p) {
  Config c;
  c.vector = std::stoll(p.choice("vector"));
  c.threads = p.integer("threads");
  c.rows = p.integer("rows");
  c.reduce_threads = p.integer("reduce_threads");
  c.unroll = p.integer("unroll");
  c.persist = p.integer("persist");
  c.shared_persist = p.choice("persistence") == "shared";
  c.grid = p.integer("grid");
  c.tile = p.integer("tile");
  c.stage = p.boolean("stage");
  return c;
}

/// User errors for settings these sizes or this device cannot take.
void check(const Facts& f, const Config& c, const pa::DeviceProperties& d) {
  const std::string what = std::string(autosched::pattern_name(f.pattern)) + ": ";
  auto over = [&](int64_t threads, const std::string& how) {
    if (threads > max_threads(d))
      user_fail(what + how + " = " + std::to_string(threads) +
                " threads per block, more than the device's " + std::to_string(max_threads(d)));
  };
  if (c.vector > 1 && f.pattern != Pattern::Transpose) {
    if (f.vector_inputs.empty() && f.vector_outputs.empty())
      user_fail(what + "vector=" + std::to_string(c.vector) +
                ": no input or output is accessed at full rank in the reference's layout");
    if (f.inner_extent % c.vector != 0)
      user_fail(what + "vector=" + std::to_string(c.vector) +
                " does not divide the innermost extent " + std::to_string(f.inner_extent) + " of " +
                pa::describe(f.ref));
  }
  switch (f.pattern) {
    case Pattern::Pointwise:
      over(c.threads, "threads");
      break;
    case Pattern::InnerReduction:
      if (c.reduce_threads <= 1) {
        over(c.threads, "threads");
      } else {
        over(c.rows * c.reduce_threads, "rows x reduce_threads");
        if (c.grid > 1 && ceil_div(f.I, c.rows) > kMaxGridY)
          user_fail(what + "grid=" + std::to_string(c.grid) + " puts " +
                    std::to_string(ceil_div(f.I, c.rows)) + " row blocks on BIDy, more than " +
                    std::to_string(kMaxGridY));
      }
      break;
    case Pattern::OuterReduction:
      over(c.threads, "threads");
      if (c.threads % c.reduce_threads != 0)
        user_fail(what + "reduce_threads=" + std::to_string(c.reduce_threads) +
                  " does not divide threads=" + std::to_string(c.threads));
      break;
    case Pattern::Normalization: {
      const RowCost r = row_cost(f, d, c);
      over(r.threads, "ceilDiv(R / vector, persist) x rows");
      if (c.shared_persist && !r.fits)
        user_fail(what + "persistence=shared needs " + std::to_string(r.shared) +
                  " bytes of Shared memory per block, more than the device allows");
      break;
    }
    case Pattern::Transpose:
      over(c.threads, "threads");
      if (c.stage && tile_bytes(f, c.tile) > static_cast<int64_t>(d.shared_bytes_per_block))
        user_fail(what + "tile=" + std::to_string(c.tile) + " needs " +
                  std::to_string(tile_bytes(f, c.tile)) +
                  " bytes of Shared memory per block, more than the device's " +
                  std::to_string(d.shared_bytes_per_block));
      break;
  }
  if (c.grid > 1 && f.read_in_kernel)
    user_fail(what + "grid=" + std::to_string(c.grid) +
              ": a reduction result is read inside the kernel, but lowering combines a grid "
              "reduction only into a fusion output");
}

}  // namespace

class Autosched : public pa::Plugin {
 public:
  std::string name() const override { return "autosched"; }
  /// A generalist: offered a segment after every specific built-in.
  int priority() const override { return SCHEDLAB_PRIORITY_DEFAULT; }
  std::string version() const override { return "0.1"; }
  std::string description() const override {
    return "autoscheduler: schedules derived by pattern-matching rewrite rules (Finch-style), "
           "its rules' free choices as parameters";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::choice("vector", {"1", "2", "4", "8"}, "1",
                          "elements per vector access of the innermost contiguous axis"),
        pa::Param::integer("threads", 128, 1, 1024,
                           "threads per block: pointwise, serial inner and outer reductions "
                           "(columns x reduce_threads), transposes"),
        pa::Param::integer("rows", 1, 1, 1024,
                           "rows per block (TIDy) of an inner block reduction or a normalization"),
        pa::Param::integer("reduce_threads", 1, 1, 1024,
                           "threads that reduce one element together (1: serial)"),
        pa::Param::integer("unroll", 1, 1, 16,
                           "unrolled vectors per thread (pointwise) or serial reduction steps"),
        pa::Param::integer("persist", 1, 1, kMaxPersist,
                           "normalization: vectors of a row each thread keeps across the "
                           "reductions (the row's threads: ceilDiv(R / vector, persist))"),
        pa::Param::choice("persistence", {"registers", "shared"}, "registers",
                          "normalization: where the kept rows live"),
        pa::Param::integer("grid", 1, 1, 65535,
                           "blocks that reduce one element together (1: none)"),
        pa::Param::integer("tile", 32, 1, 256, "transpose: the square tile's edge"),
        pa::Param::boolean("stage", true,
                           "transpose: stage the other layout through Shared memory"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params& p) override {
    const Facts f = autosched::read_facts(seg);
    if (!f.reject.empty()) return pa::Verdict::no(f.reject);
    if (is_reduction(f) || f.pattern == Pattern::Normalization)
      if (std::string why = pa::global_accumulator_with_own_broadcast(seg); !why.empty())
        return pa::Verdict::no(why);
    if (p.integer("grid") > 1 && f.read_in_kernel)
      return pa::Verdict::no(
          "grid > 1: a reduction result is read inside the kernel, and "
          "lowering combines a grid reduction only into a fusion output");
    if (is_reduction(f) && f.read_in_kernel && seg.offered_by_segmenter()) {
      // As the reduction plugin: few long rows whose result is read in the
      // kernel (no grid split) starve the device; cut after the reduction.
      Config c;
      const int64_t resident = reduction_choice(f, seg.device(), c);
      if (resident > 0 && pa::starves_device(resident, seg.device()))
        return pa::Verdict::no(
            "few long rows: " + std::to_string(resident) + " threads (grid=1) of the device's " +
            std::to_string(pa::resident_capacity(seg.device())) +
            " resident, and a reduction result is read inside the kernel, so no grid split "
            "(segment after the reduction to split it)");
    }
    if (f.pattern == Pattern::Normalization) {
      Config c;
      if (!normalization_choice(f, seg.device(), c))
        return pa::Verdict::no("a row of " + std::to_string(f.R) +
                               " elements fits neither registers nor Shared memory (autosched "
                               "has no multi-pass rule)");
    }
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    // A tuned configuration for the segment's bucket (`run --tuned`, ABI 1.4)
    // is served as it is; the heuristic below chooses everywhere else.
    if (p.use_tuned()) return;
    const Facts f = autosched::read_facts(seg);
    if (!f.reject.empty()) user_fail(f.reject);
    const pa::DeviceProperties d = seg.device();
    Config c;
    switch (f.pattern) {
      case Pattern::Pointwise:
        pointwise_choice(f, d, c);
        break;
      case Pattern::InnerReduction:
      case Pattern::OuterReduction:
        reduction_choice(f, d, c);
        break;
      case Pattern::Normalization:
        if (!normalization_choice(f, d, c))
          user_fail("a row of " + std::to_string(f.R) + " elements fits no persistent split");
        break;
      case Pattern::Transpose:
        transpose_choice(seg, f, d, c);
        break;
    }
    p.set_choice("vector", std::to_string(c.vector));
    p.set_integer("threads", c.threads);
    p.set_integer("rows", c.rows);
    p.set_integer("reduce_threads", c.reduce_threads);
    p.set_integer("unroll", c.unroll);
    p.set_integer("persist", c.persist);
    p.set_choice("persistence", c.shared_persist ? "shared" : "registers");
    p.set_integer("grid", c.grid);
    p.set_integer("tile", c.tile);
    p.set_boolean("stage", c.stage);
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    const Facts f = autosched::read_facts(seg);
    if (!f.reject.empty()) user_fail(f.reject);
    const Config c = read_config(p);
    check(f, c, seg.device());
    autosched::State s{seg, f, c, {}, {}, {}, 0, {}, {}, {}};
    autosched::run_rules(s);
    std::string log = "autosched (" + std::string(autosched::pattern_name(f.pattern)) + "):";
    for (const std::string& r : s.applied) log += " " + r;
    pa::log(pa::LogLevel::Debug, log);
  }
};

SCHEDLAB_PLUGIN(Autosched)
