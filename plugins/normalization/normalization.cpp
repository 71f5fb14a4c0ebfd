// normalization: the built-in persistent normalization scheduler plugin,
// after nvFuser's inner persistent scheduler. Written only against the plugin API.
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
// serial and each thread computes its own copy (pa::serialize_own_broadcast_axes),
// but one broadcast where the reference iterates shares the rows' bound axes,
// so read both before and after a reduction it is refused
// (pa::broadcast_read_by_two_nests);
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

#include "normalization.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/types.hpp"

using namespace normalization;

namespace {

void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "normalization: " + message);
}

/// The `persistence` parameter: a path, or none for auto.
std::optional<Path> forced_path(const pa::Params& p) {
  const std::string v = p.choice("persistence");
  if (v == "registers") return Path::Registers;
  if (v == "shared") return Path::Shared;
  if (v == "none") return Path::MultiPass;
  if (v == "grid") return Path::Grid;
  return std::nullopt;
}

}  // namespace

class Normalization : public pa::Plugin {
 public:
  std::string name() const override { return "normalization"; }
  /// The most specific built-in: offered a segment first (one persistent
  /// kernel beats a reduction plus a pointwise one).
  int priority() const override { return 40; }
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
        pa::Param::choice("persistence", {"auto", "registers", "shared", "none", "grid"}, "auto",
                          "where the row's persistent buffers live: registers, shared memory "
                          "(what does not fit stays in registers), none (multi-pass: inputs "
                          "re-read, intermediates recomputed by each pass), grid (each row "
                          "over blocks of 512 threads, persist vectors each, in registers, "
                          "its reductions grid allreduces: one kernel, every block "
                          "resident); auto: the first of the first three that fits, grid "
                          "for few long rows"),

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
    for (Path path : {Path::Registers, Path::Shared, Path::MultiPass, Path::Grid}) {
      if (forced ? path != *forced : path == Path::Grid) continue;
      if (path == Path::Grid) c.rows = 1;
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
      if (std::string why = recompute_refusal(a); !why.empty()) user_fail(what + ": " + why);
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

    stage_shared_buffers(a, c, persistent, vectorized);

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
    if (c.path == Path::Grid) {
      // [I, R] -> [I (BIDy), ceilDiv(R/v, threads * persist) (BIDx), persist,
      // threads (TIDx), v]: a row over blocks, each thread `persist` vectors
      // `threads` apart (coalesced), the reductions grid allreduces.
      ref.split(r, c.row_threads);
      ref.split(r, c.persist);
      ref.parallelize(r, pa::ParallelType::BIDx);
      ref.parallelize(r + 1, pa::LoopTransform::Unroll);
      ref.parallelize(r + 2, pa::ParallelType::TIDx);
      if (n_front > 0) ref.parallelize(0, pa::ParallelType::BIDy);
    } else {
      ref.split(r, c.persist, /*inner_split=*/false);
      // Buffers indexed by persist need it unrolled (registers are named, not
      // addressed); the multi-pass path's passes are plain serial loops.
      if (c.path != Path::MultiPass) ref.parallelize(r, pa::LoopTransform::Unroll);
      ref.parallelize(r + 1, pa::ParallelType::TIDx);
    }
    if (n_front > 0 && c.path != Path::Grid) {
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
    // The statistics every block of the row reads: grid allreduces.
    if (c.path == Path::Grid)
      for (pa::TensorView red : seg.reduction_tvs()) red.grid_persistent();
  }
};

SCHEDLAB_PLUGIN(Normalization)
