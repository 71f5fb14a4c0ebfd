// pointwise: the built-in pointwise scheduler plugin, after nvFuser's
// pointwise scheduler in its 1D and 2D forms, and the segmenter's last resort.
// Written only against the plugin API.
//
// Three schedules; flat or 2D whenever they apply:
//   2D      nvFuser's 2D pointwise schedule (below), for a flat fusion whose
//           broadcast inputs ([K] bias under [N, K]) lack the same outer
//           axes of the reference (see "2D applies").
//   flat    nvFuser's 1D pointwise schedule (below), for fusions without
//           reductions whose computed tensors all iterate the reference's
//           space in its order (see "Flat applies" below).
//   serial  the last resort, for a single expression the other built-ins
//           refuse (a reduction over axes no reduction schedule takes, a
//           0-d result): one thread per element of the output, each
//           reducing serially; with more than one expression nothing is
//           bound (one thread computes everything, intermediates in global
//           workspaces). Slow, always correct.
// can_schedule accepts what flat applies to, and any single expression (the
// segmenter offers every group that no merge took in alone, so together
// with it the built-ins take every valid fusion); it refuses the rest with
// the reason, so that the segmenter splits them.
//
// The heuristic (compute_params), from the segment's concrete sizes and the
// target device (the model device, schedlab-model-sm90, on the CPU backend):
//   vector  the widest access that is legal for every tensor it applies to:
//           the largest power of two v with v * sizeof(dtype) <= 16 bytes (one
//           128-bit access) that divides the innermost extent of every
//           vectorizable input and output (see vector_candidates); 1 if none.
//   block   threads per block: nvFuser's default of 128, clamped to the
//           device's max_threads_per_block, and halved (down to one warp)
//           while the grid would leave SMs idle (fewer blocks than SMs).
//   unroll  elements each thread handles per vector, serially: how many
//           times the problem (in vectors) covers every resident thread of
//           the device (sm_count * max_threads_per_sm), rounded down to a
//           power of two, capped at kMaxUnroll; 1 for problems that do not
//           fill the device once.
//   break point (break_point, the 2D schedule's split of the reference's
//           axes into outer [0, bp) and inner [bp, rank)): the outer axes
//           the broadcast inputs lack, where 2D applies and a row (the inner
//           side) holds at least a warp of vectors; otherwise 0, flat (a
//           narrow row would idle TIDx lanes, flat packs rows together).
//           In 2D `unroll` counts rows per thread, raised (to 16) while the
//           rows would overflow gridDim.y (65535); past that, flat.
//
// The 2D schedule (schedule_2d): caches as in flat, now also for the inputs
// that iterate only the inner side; reference [outer.., inner..] ->
//     [O, I] -> [BIDy, TIDy, rows (Unroll), BIDx, TIDx (bx), vector]
// as nvFuser's [o-BIDy, o-TIDy, o-Unroll | i-BIDx, i-TIDx, i-Vect], with
// bx = the largest power of two <= min(block, I / vector) and TIDy = block /
// bx (several rows a block when a row is short). The inner-only input's
// cache has no rows loop: one vector load per thread, reused by every row it
// handles, indexed by the inner loop alone (no `idx % K`). Full inputs'
// caches are computed outside the rows loop, as flat's are outside unroll.
// The cache of a [1, K] input gets its (Broadcast) row axes unbound: bound,
// it could not be inlined into readers and would be computed by one block
// ("computed by other blocks"); serial, each thread loads it itself.
//
// 2D applies (break_point()): the reference has rank >= 2 and no Broadcast
// axis; every input iterates, in order, either all of its axes or a suffix
// [bp, rank) of them, the same bp for all broadcast inputs (a [N, 1] input,
// a permuted one, or two different suffixes: flat); every computed tensor
// has the reference's axes or is the broadcast of an input.
//
// The flat schedule (schedule):
//   reference = the largest output (find_reference); its broadcast axes
//   first, unmerged (see schedule_flat); merge every other axis; split by
//   vector (inner), then by block, then by unroll:
//     [broadcast.., BIDx, unroll (Unroll), TIDx (block), vector]
//   propagate to every tensor, parallelize_all_like, and, when vector > 1,
//   read each vectorizable input through a cache_after copy and write each
//   vectorizable output from a cache_before copy, with their innermost
//   (vector) axes Vectorize; inline_most last. With unroll > 1 the input
//   caches are then computed at BIDx, outside the unrolled loop: a thread
//   issues all its vector loads (unroll per input) before any math or store,
//   so they are in flight together (memory-level parallelism), and its
//   registers hold unroll * vector elements per input.
//
// Flat applies (lowering's rules, core/lower/lowerable.h and indexing.h):
// every computed tensor takes the reference's merged loop, so each must
// iterate the reference's axes in order (misaligned() in plugin.hpp). A
// tensor of fewer axes (a [K] intermediate under an [N, K] reference, a
// Broadcast where the reference has an Iteration axis) cannot take that loop;
// it is inlined whole into its readers (indexed through theirs), so it must
// not be an output and every reader must have all of the reference's axes.
// Otherwise it would be computed by the threads of the reference's first
// elements and read by others ("reads elements of Local ... computed by
// other threads"), or be inlined into loops widened by a broadcast while
// keeping loops of its own ("inlined at position ... broadcast-widened").
// Inputs may be broadcast or permuted: they are read through the index.
//
// Vectorizable (lowering's rules, core/lower/vectorize.h): the Vectorize axis
// must be the inner split of the tensor's innermost logical axis. That holds
// for a tensor whose innermost axis is the reference's (the same group of
// group_inputs_outputs_by_inner_dim) and that has the reference's rank and no
// broadcast axis, and, in 2D, for an input that iterates the inner side
// only. A transposed input, or under flat a broadcast one ([K] bias under
// [N, K]), is read element by element instead.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
using pa::ceil_div;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;
using pa::rules::kMaxGridY;
using pa::rules::kMaxUnroll;
/// nvFuser's default block size for pointwise kernels.
using pa::rules::kTargetThreads;

namespace {

/// Logical axes that are not reductions.
std::vector<pa::AxisInfo> iteration_domain(const pa::TensorView& tv) {
  std::vector<pa::AxisInfo> r;
  for (const pa::AxisInfo& a : tv.logical())
    if (!a.is_reduction()) r.push_back(a);
  return r;
}

int64_t numel(const pa::TensorView& tv) {
  int64_t n = 1;
  for (const pa::AxisInfo& a : iteration_domain(tv)) n *= std::max<int64_t>(a.extent, 1);
  return n;
}

/// The inputs and outputs that can be accessed with vectors (see the top).
struct Candidates {
  std::vector<pa::TensorView> inputs, outputs;
  std::vector<pa::TensorView> all() const {
    std::vector<pa::TensorView> r = inputs;
    r.insert(r.end(), outputs.begin(), outputs.end());
    return r;
  }
};

/// With a break point `bp` > 0 (the 2D schedule), an input that iterates only
/// the inner side (a [K] bias) is a candidate too: its innermost axis is the
/// inner loop's.
Candidates vector_candidates(pa::Segment& seg, const pa::TensorView& ref, int bp = 0) {
  std::vector<pa::TensorView> group;
  for (const auto& g : seg.group_inputs_outputs_by_inner_dim())
    if (std::find(g.begin(), g.end(), ref) != g.end()) group = g;
  size_t rank = iteration_domain(ref).size();
  auto vectorizable = [&](const pa::TensorView& tv) {
    if (std::find(group.begin(), group.end(), tv) == group.end()) return false;
    auto dom = iteration_domain(tv);
    if (dom.size() != rank || dom.empty()) return false;
    return std::none_of(dom.begin(), dom.end(),
                        [](const pa::AxisInfo& a) { return a.is_broadcast() || a.extent < 0; });
  };
  Candidates c;
  auto inner_only = [&](const pa::TensorView& tv) {
    if (bp == 0) return false;
    std::vector<pa::AxisInfo> dom = iteration_domain(tv);
    auto n = std::count_if(dom.begin(), dom.end(), [](const pa::AxisInfo& a) {
      return !a.is_broadcast() && a.extent >= 0;
    });
    return n == static_cast<int64_t>(rank) - bp && !dom.back().is_broadcast();
  };
  for (const pa::TensorView& in : seg.inputs())
    if (!in.consumers().empty() && (vectorizable(in) || inner_only(in))) c.inputs.push_back(in);
  for (const pa::TensorView& out : seg.outputs())
    if (vectorizable(out)) c.outputs.push_back(out);
  return c;
}

int64_t inner_extent(const pa::TensorView& tv) {
  return iteration_domain(tv).back().extent;
}

/// Has the reference's axes: its rank, with Broadcast axes where it has them.
bool full_like(const pa::TensorView& tv, const std::vector<pa::AxisInfo>& ref_dom) {
  std::vector<pa::AxisInfo> dom = tv.logical();
  if (dom.size() != ref_dom.size()) return false;
  for (size_t i = 0; i < dom.size(); ++i)
    if (dom[i].is_broadcast() != ref_dom[i].is_broadcast()) return false;
  return true;
}

/// A computed tensor past a view that permutes the reference's outer axes
/// (split_heads: y = permute(reshape(t, [B, S, H, D]), [0, 2, 1, 3])): every
/// axis iterates its own axis of the reference, and the innermost is the
/// reference's innermost, so reads and writes stay coalesced and no tile is
/// needed (the transpose plugin, which has no reshape support, refuses it).
/// propagate_reshape, then propagation of the reference's merged loop across
/// the permute, give it the reference's loop (nvFuser's pointwise scheduler
/// after propagateReshapeTransforms). Only where the segment has a view.
bool permuted_past_view(pa::Segment& seg, const pa::TensorView& tv, const pa::TensorView& ref) {
  const std::vector<pa::TensorView> all = seg.tensors();
  if (std::none_of(all.begin(), all.end(),
                   [](const pa::TensorView& t) { return t.op_kind() == pa::OpKind::View; }))
    return false;
  const int rank = ref.nlogical();
  if (tv.nlogical() != rank) return false;
  std::vector<bool> hit(static_cast<size_t>(rank), false);
  for (int j = 0; j < rank; ++j) {
    if (tv.logical_axis(j).is_broadcast() || ref.logical_axis(j).is_broadcast()) return false;
    const int i = pa::ref_axis_of(seg, tv, j, ref);
    if (i < 0 || hit[static_cast<size_t>(i)]) return false;
    hit[static_cast<size_t>(i)] = true;
  }
  return pa::ref_axis_of(seg, tv, rank - 1, ref) == rank - 1;
}

/// Why the flat schedule does not apply (see "Flat applies" at the top), or "".
std::string flat_obstacle(pa::Segment& seg) {
  for (const pa::TensorView& tv : seg.tensors())
    if (tv.op_kind() == pa::OpKind::Reduction || tv.has_reduction())
      return "pointwise schedules fusions without reductions; " + tv.str() + " is a " +
             tv.op_name() +
             " reduction (a single expression it takes serially, as the last resort)";
  pa::TensorView ref = seg.find_reference();
  if (!ref) return "the segment has no reference tensor";
  const std::vector<pa::AxisInfo> rdom = ref.logical();
  if (std::all_of(rdom.begin(), rdom.end(), [](const pa::AxisInfo& a) { return a.is_broadcast(); }))
    return "the reference " + pa::describe(ref) + " has no axis to parallelize";
  const std::string loop = "; the flat schedule gives every tensor the reference's loop";
  for (const pa::TensorView& tv : seg.tensors()) {
    if (tv.is_input() || tv == ref) continue;
    if (std::string why = pa::misaligned(seg, tv, ref); !why.empty() && !permuted_past_view(seg, tv, ref))
      return why + loop;
    // Upstream of a view, a tensor lines up with the view's input.
    const pa::TensorView lref = pa::local_reference(seg, tv, ref);
    const std::vector<pa::AxisInfo> ldom = lref != ref ? lref.logical() : rdom;
    if (full_like(tv, ldom)) continue;
    // Fewer axes than the reference (a [K] intermediate under [N, K]): it is
    // inlined whole into each reader, which must then have every axis.
    if (tv.is_output())
      return "the output " + pa::describe(tv) + " iterates fewer axes than the reference " +
             pa::describe(ref) + loop;
    for (const pa::TensorView& c : tv.consumers())
      if (!full_like(c, ldom))
        return pa::describe(tv) + " and its reader " + pa::describe(c) +
               " both iterate fewer axes than the reference " + pa::describe(ref) +
               "; the flat schedule inlines such a tensor whole into readers with every axis";
  }
  return "";
}

/// Tensors the segment computes (not its inputs).
size_t computed_count(pa::Segment& seg) {
  size_t n = 0;
  for (const pa::TensorView& tv : seg.tensors()) n += !tv.is_input();
  return n;
}

/// The 2D schedule's break point for this segment (see "2D applies" at the
/// top), or 0 where it does not apply: the number of outer reference axes
/// that the broadcast inputs lack. Needs the unscheduled segment.
int break_point(pa::Segment& seg) {
  if (!flat_obstacle(seg).empty()) return 0;
  pa::TensorView ref = seg.find_reference();
  const std::vector<pa::AxisInfo> rdom = ref.logical();
  const int rank = static_cast<int>(rdom.size());
  if (rank < 2 ||
      std::any_of(rdom.begin(), rdom.end(), [](const pa::AxisInfo& a) { return a.is_broadcast(); }))
    return 0;
  int bp = 0;
  for (const pa::TensorView& in : seg.inputs()) {
    if (in.consumers().empty()) continue;
    // The reference axes `in` iterates must be a suffix [lead, rank), in order.
    std::vector<int> axes;
    for (int j = 0; j < in.nlogical(); ++j) {
      if (in.logical_axis(j).is_broadcast()) {
        if (!axes.empty()) return 0;  // a broadcast axis inside: [N, 1] under [N, K]
        continue;
      }
      axes.push_back(pa::ref_axis_of(seg, in, j, ref));
    }
    const int lead = rank - static_cast<int>(axes.size());
    for (size_t k = 0; k < axes.size(); ++k)
      if (axes[k] != lead + static_cast<int>(k)) return 0;  // permuted or unmapped
    if (lead == 0) continue;
    if (lead == rank || (bp != 0 && bp != lead)) return 0;  // a scalar, or two break points
    bp = lead;
  }
  if (bp == 0) return 0;
  // Computed tensors: the reference's axes, or the broadcast of an input.
  for (const pa::TensorView& tv : seg.tensors()) {
    if (tv.is_input() || full_like(tv, rdom)) continue;
    const std::vector<pa::TensorView> prod = tv.producers();
    if (tv.op_kind() != pa::OpKind::Broadcast || prod.size() != 1 || !prod[0].is_input()) return 0;
  }
  return bp;
}

/// The 2D schedule's shape for a break point: inner extent (the product of
/// the axes from the break point on) and outer extent (the rest).
struct Sides {
  int64_t outer = 1, inner = 1;
};
Sides sides(const pa::TensorView& ref, int bp) {
  Sides s;
  std::vector<pa::AxisInfo> dom = iteration_domain(ref);
  for (int i = 0; i < static_cast<int>(dom.size()); ++i)
    (i < bp ? s.outer : s.inner) *= std::max<int64_t>(dom[static_cast<size_t>(i)].extent, 1);
  return s;
}

/// TIDx of the 2D schedule: as many of `block` threads as the inner side has
/// vectors (a power of two); TIDy takes the rest.
int64_t block_x(int64_t block, int64_t inner_vectors) {
  return std::max<int64_t>(
      1, std::min(largest_pow2_at_most(block), largest_pow2_at_most(inner_vectors)));
}
}  // namespace

class Pointwise : public pa::Plugin {
 public:
  std::string name() const override { return "pointwise"; }
  /// The most general built-in: offered a segment after every other.
  int priority() const override { return 10; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "nvFuser-style 1D/2D pointwise: flatten (or split at the broadcast break point), "
           "vectorize, unroll, bind BIDx/TIDx (BIDy/TIDy), inline";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::integer("block", kTargetThreads, 32, 1024, "threads per block (TIDx)"),
        pa::Param::choice("vector", {"1", "2", "4", "8"}, "1",
                          "elements per vector load/store of inputs and outputs (1: none)"),
        pa::Param::integer(
            "unroll", 1, 1, 16,
            "vectors each thread handles, unrolled (2D: rows, reusing the inner-only inputs)"),
        pa::Param::integer(
            "break_point", 0, 0, 8,
            "outer axes of the 2D schedule, those the broadcast inputs lack (0: flat 1D)"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    const std::string flat = flat_obstacle(seg);
    // The last resort takes single expressions only: a larger group is for the
    // segmenter to split, so that the other plugins get its parts.
    if (flat.empty() || computed_count(seg) == 1) return pa::Verdict::yes();
    return pa::Verdict::no(flat);
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    // A tuned configuration for the segment's bucket (`run --tuned`, ABI 1.4)
    // is served as it is; the heuristic below chooses everywhere else.
    if (p.use_tuned()) return;
    if (!flat_obstacle(seg).empty()) {  // serial: only `block` applies
      p.set_integer("block", kTargetThreads);
      return;
    }
    pa::TensorView ref = seg.find_reference();
    pa::DeviceProperties d = seg.device();
    const int64_t n = numel(ref);

    // Vector width: the widest 16-byte-or-narrower access that divides the
    // innermost extent of every tensor it would apply to. (A broadcast input
    // that the 2D schedule adds shares the reference's innermost extent.)
    const int bp = break_point(seg);
    Candidates c = vector_candidates(seg, ref, bp);
    int64_t vector = 1;
    if (!c.all().empty()) {
      int64_t widest = 1;
      for (const pa::TensorView& tv : c.all()) widest = std::max(widest, dtype_bytes(tv.dtype()));
      vector = pa::rules::widest_vector(widest);
      for (const pa::TensorView& tv : c.all())
        vector = pa::rules::dividing_vector(vector, inner_extent(tv));
    }

    // Threads per block: 128, within the device's limit, fewer for a small
    // problem so that every SM gets a block.
    const int64_t warp = std::max(1, d.warp_size);
    const int64_t sms = std::max(1, d.sm_count);
    int64_t block =
        std::min<int64_t>(kTargetThreads, std::max<int64_t>(d.max_threads_per_block, 32));
    const int64_t vectors = (n + vector - 1) / vector;
    while (block / 2 >= std::max<int64_t>(warp, 32) && (vectors + block - 1) / block < sms)
      block /= 2;

    // Unroll: once the problem covers every resident thread more than once.
    const int64_t resident = sms * std::max<int64_t>(d.max_threads_per_sm, block);
    int64_t unroll =
        std::min(kMaxUnroll, largest_pow2_at_most(std::max<int64_t>(vectors / resident, 1)));

    // 2D where it applies and a row holds at least a warp of vectors (fewer
    // would idle lanes of TIDx; flat packs rows together instead); `unroll`
    // then counts rows, raised while the rows would overflow gridDim.y.
    int chosen = 0;
    if (bp > 0) {
      const Sides sd = sides(ref, bp);
      const int64_t inner_vectors = ceil_div(sd.inner, vector);
      const int64_t by = std::max<int64_t>(1, block / block_x(block, inner_vectors));
      const int64_t rows = ceil_div(sd.outer, by);
      int64_t u = std::min(unroll, largest_pow2_at_most(rows));
      while (u < 16 && ceil_div(rows, u) > kMaxGridY) u *= 2;
      if (inner_vectors >= std::max<int64_t>(warp, 32) && ceil_div(rows, u) <= kMaxGridY) {
        chosen = bp;
        unroll = u;
      }
    }

    p.set_integer("block", block);
    p.set_choice("vector", std::to_string(vector));
    p.set_integer("unroll", unroll);
    p.set_integer("break_point", chosen);
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    if (!flat_obstacle(seg).empty())
      schedule_serial(seg, p.integer("block"));
    else if (p.integer("break_point") > 0)
      schedule_2d(seg, p);
    else
      schedule_flat(seg, p);
  }

 private:
  /// The last resort (see the top): a single expression's output with its
  /// non-reduction axes merged, split by `block` over [BIDx, TIDx], reduced
  /// serially by each thread; more than one expression stays unscheduled.
  static void schedule_serial(pa::Segment& seg, int64_t block) {
    if (computed_count(seg) != 1) return;
    pa::TensorView out = seg.outputs().front();
    std::vector<pa::AxisInfo> dom = out.logical();
    std::vector<std::pair<int, int>> order;
    int next = 0;
    for (int i = 0; i < static_cast<int>(dom.size()); ++i)
      if (!dom[static_cast<size_t>(i)].is_reduction()) order.push_back({i, next++});
    const int n_iter = next;
    if (n_iter == 0) return;  // a full reduction: one thread
    for (int i = 0; i < static_cast<int>(dom.size()); ++i)
      if (dom[static_cast<size_t>(i)].is_reduction()) order.push_back({i, next++});
    out.reorder(order);
    for (int k = 1; k < n_iter; ++k) out.merge(0);
    out.split(0, block);
    out.parallelize(0, pa::ParallelType::BIDx);
    out.parallelize(1, pa::ParallelType::TIDx);
  }

  static void check_block(pa::Segment& seg, int64_t block) {
    pa::DeviceProperties d = seg.device();
    if (d.max_threads_per_block > 0 && block > d.max_threads_per_block)
      throw pa::Error(SCHEDLAB_ERR_USER,
                      "pointwise: block=" + std::to_string(block) + " exceeds the device's " +
                          std::to_string(d.max_threads_per_block) + " threads per block");
  }

  /// Caches for the vector accesses (made before the reference is chosen):
  /// each candidate input read through a cache_after copy, each candidate
  /// output written from a cache_before copy. `vectors` gets the tensors
  /// whose innermost axis is to be Vectorize, `input_caches` the input copies
  /// that iterate every reference axis (the ones hoisted out of the unroll).
  static void make_caches(pa::Segment& seg, int64_t vector, int bp,
                          std::vector<pa::TensorView>& vectors,
                          std::vector<pa::TensorView>& input_caches) {
    if (vector <= 1) return;
    pa::TensorView ref = seg.find_reference();
    Candidates c = vector_candidates(seg, ref, bp);
    for (const pa::TensorView& tv : c.all())
      if (inner_extent(tv) % vector != 0)
        throw pa::Error(SCHEDLAB_ERR_USER, "pointwise: vector=" + std::to_string(vector) +
                                               " does not divide the innermost extent " +
                                               std::to_string(inner_extent(tv)) + " of " +
                                               tv.str());
    const size_t rank = iteration_domain(ref).size();
    for (pa::TensorView in : c.inputs) {
      const std::vector<pa::AxisInfo> dom = iteration_domain(in);
      const bool full = dom.size() == rank &&
                        std::none_of(dom.begin(), dom.end(),
                                     [](const pa::AxisInfo& a) { return a.is_broadcast(); });
      vectors.push_back(in.cache_after());
      if (full) input_caches.push_back(vectors.back());
    }
    for (pa::TensorView out : c.outputs) {
      out.cache_before();
      vectors.push_back(out);
    }
  }

  /// nvFuser's 2D schedule (see the top): outer axes [0, bp) merged and bound
  /// to BIDy (and TIDy), inner axes merged, vectorized and bound to BIDx/TIDx.
  static void schedule_2d(pa::Segment& seg, const pa::Params& p) {
    const int64_t block = p.integer("block");
    const int64_t vector = std::stoll(p.choice("vector"));
    const int64_t unroll = p.integer("unroll");
    const int bp = static_cast<int>(p.integer("break_point"));
    check_block(seg, block);
    if (const int own = break_point(seg); own != bp)
      throw pa::Error(SCHEDLAB_ERR_USER,
                      "pointwise: break_point=" + std::to_string(bp) +
                          " does not apply; this segment's is " + std::to_string(own) +
                          " (0: none; the 2D schedule needs broadcast inputs that lack the same "
                          "outer axes of the reference and iterate the rest in its order)");
    pa::TensorView ref = seg.find_reference();
    const Sides sd = sides(ref, bp);
    const int64_t bx = block_x(block, ceil_div(sd.inner, vector));
    const int64_t by = std::max<int64_t>(1, block / bx);
    if (const int64_t grid_y = ceil_div(ceil_div(sd.outer, by), unroll); grid_y > kMaxGridY)
      throw pa::Error(SCHEDLAB_ERR_USER,
                      "pointwise: break_point=" + std::to_string(bp) + " with unroll=" +
                          std::to_string(unroll) + " needs a grid of " + std::to_string(grid_y) +
                          " blocks in y, more than " + std::to_string(kMaxGridY) +
                          "; raise unroll");

    std::vector<pa::TensorView> vectors, input_caches;
    make_caches(seg, vector, bp, vectors, input_caches);
    ref = seg.find_reference();
    // [outer.., inner..] -> [O, I] -> [O, I/v, v] -> [O, I/v/bx, bx, v]
    //   -> [O/u, u, ..] -> [O/u/by, by, u, I/v/bx, bx, v]
    while (ref.nloop() > bp + 1) ref.merge(bp);
    while (ref.nloop() > 2) ref.merge(0);
    if (vector > 1) ref.split(1, vector);
    ref.split(1, bx);
    if (unroll > 1) ref.split(0, unroll);
    if (by > 1) ref.split(0, by);
    int at = 0;
    ref.parallelize(at++, pa::ParallelType::BIDy);
    if (by > 1) ref.parallelize(at++, pa::ParallelType::TIDy);
    const int rows = at;  // the unrolled rows loop, if any
    if (unroll > 1) ref.parallelize(at++, pa::LoopTransform::Unroll);
    ref.parallelize(at, pa::ParallelType::BIDx);
    ref.parallelize(at + 1, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    for (pa::TensorView& tv : vectors) tv.parallelize(-1, pa::LoopTransform::Vectorize);
    // The cache of a [1, K] input has the rows as Broadcast axes, bound like
    // the reference's: it cannot be inlined past them (its readers' rows are
    // not its own), and left bound, one block's row would compute it for all
    // ("computed by other blocks"). Serial, it is computed by every thread.
    for (pa::TensorView& tv : vectors) {
      if (!tv.producers().empty() && tv.producers()[0].is_input() &&
          std::find(input_caches.begin(), input_caches.end(), tv) == input_caches.end()) {
        std::vector<pa::AxisInfo> loop = tv.loop();
        for (int i = 0; i < static_cast<int>(loop.size()); ++i)
          if (loop[static_cast<size_t>(i)].is_broadcast() &&
              loop[static_cast<size_t>(i)].parallel_type != pa::ParallelType::Serial)
            tv.parallelize(i, pa::ParallelType::Serial);
      }
    }
    seg.inline_most();
    // As in flat: the full inputs' loads of every row before any math. An
    // inner-only input's cache has no rows loop: it is loaded once and reused
    // by every row the thread handles.
    if (unroll > 1)
      for (pa::TensorView& tv : input_caches) tv.inline_at(rows);
  }

  static void schedule_flat(pa::Segment& seg, const pa::Params& p) {
    const int64_t block = p.integer("block");
    const int64_t vector = std::stoll(p.choice("vector"));
    const int64_t unroll = p.integer("unroll");
    check_block(seg, block);

    std::vector<pa::TensorView> vectors, input_caches;
    make_caches(seg, vector, 0, vectors, input_caches);

    pa::TensorView ref = seg.find_reference();
    // nvFuser's propagateReshapeTransforms: the producers of each reshape take
    // its shape first (propagate_transformation below crosses the reshapes
    // too; this keeps their loops in the reshaped form as nvFuser's do).
    const std::vector<pa::TensorView> all = seg.tensors();
    if (std::any_of(all.begin(), all.end(),
                    [](const pa::TensorView& t) { return t.op_kind() == pa::OpKind::View; }))
      seg.propagate_reshape();
    // Broadcast axes (extent 1) first, left out of the merge: a tensor without
    // them ([N, K] under an [1, N, K] reference) then merges the same axes into
    // a loop that maps to the reference's, and is bound like it. Merged with
    // them, its loop would map to none: unbound, every thread would compute
    // all of it.
    const std::vector<pa::AxisInfo> dom = ref.loop();
    std::vector<std::pair<int, int>> order;
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < static_cast<int>(dom.size()); ++i)
        if (dom[static_cast<size_t>(i)].is_broadcast() == (pass == 0))
          order.push_back({i, static_cast<int>(order.size())});
    const int o = static_cast<int>(std::count_if(
        dom.begin(), dom.end(), [](const pa::AxisInfo& a) { return a.is_broadcast(); }));
    if (o > 0) ref.reorder(order);
    while (ref.nloop() > o + 1) ref.merge(o);
    // [.., I] -> [.., I/v, v] -> [.., I/v/b, b, v] -> [.., I/v/b/u, u, b, v]
    int tidx = 0;
    if (vector > 1) ref.split(o, vector);
    ref.split(o, block);
    if (unroll > 1) {
      ref.split(o, unroll);
      ref.parallelize(o + 1, pa::LoopTransform::Unroll);
      tidx = o + 2;
    } else {
      tidx = o + 1;
    }
    ref.parallelize(o, pa::ParallelType::BIDx);
    ref.parallelize(tidx, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    for (pa::TensorView& tv : vectors) tv.parallelize(-1, pa::LoopTransform::Vectorize);
    seg.inline_most();
    // Loads first: the input caches are computed outside the unrolled loop
    // (at BIDx), so each thread issues all unroll x inputs vector loads before
    // any math or store, as nvFuser's pointwise scheduler does.
    if (unroll > 1)
      for (pa::TensorView& tv : input_caches) tv.inline_at(o + 1);
  }
};

SCHEDLAB_PLUGIN(Pointwise)
