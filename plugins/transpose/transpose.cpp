// transpose: the built-in transpose scheduler plugin, after nvFuser's
// transpose scheduler: shared-memory tiles, so that both the reads of the
// inputs and the writes of the outputs are coalesced although the two
// disagree on the innermost axis. Written only against the plugin API.
//
// Which fusions: those whose outputs nothing in the segment reads (an output
// is written in its group's thread order, and lowering orders no Global read
// after another thread's write), and whose inputs and outputs fall in exactly
// two groups by innermost axis (group_inputs_outputs_by_inner_dim): group 1 holds the
// reference (the largest output), group 2 the tensors laid out the other way
// (transpose2d, batched_transpose, and pointwise math around a permute). The
// two innermost axes are inner1 (the reference's own) and inner2 (the axis of
// the reference that group 2's innermost axis maps to).
//
// The schedule (schedule):
//   caches    each group-2 input is read through a Shared cache_after copy;
//             each group-2 output is written from a Shared cache_before copy.
//             The transposition happens in shared memory, between the copy
//             and its neighbour, which index the tile in opposite orders.
//   tiling    the reference: split inner2 by tile2 and inner1 by tile1, move
//             both tile axes innermost, merge the rest into one axis:
//             [BIDx (tiles and batch), tile2, tile1]; propagated to every tensor.
//   group 1   (everything but the group-2 side) [BIDx, tile2, tile1] becomes
//             [BIDx, rest (Unroll), threads / row (TIDy), row (TIDx)]: tile1 is
//             split by `row` (below) and its outer part merged with tile2, unless
//             tile1 is the row already, then split by threads / row. Consecutive
//             threads (threadIdx.x fastest) walk inner1, the reference's
//             contiguous axis, in the order of the merged tile. Splitting the
//             tile rather than merging it whole and splitting by `threads` keeps
//             the index math to a few shifts (fewer instructions per element).
//   group 2   (the Shared input caches and the group-2 outputs) the tile axes
//             swapped first, [BIDx, tile1, tile2], then the same with tile2 as
//             the row: consecutive threads walk inner2, which is contiguous in
//             group-2 tensors. Both groups have the same block (row, threads / row).
//   inlining  inline_most: the Shared caches land at the tile (position 1),
//             so their buffers hold one tile (tile1 * tile2 elements), and
//             lowering puts a __syncthreads between writing and reading them.
//   padding   a Shared buffer is laid out over its allocation axes, [unroll,
//             TIDy, TIDx], so its rows are `row` elements, row = gcd(tile1,
//             tile2, threads): whole tile rows when the tile is square (the
//             default) and threads a multiple of its edge. The group that reads
//             a tile column-wise steps one row per thread; without padding a
//             row of 128 bytes (32 f32, 64 f16, 16 f64) puts every thread on one
//             bank, a 32-way conflict. pad_shared widens each row by one bank
//             word (one element for 4- and 8-byte types, 4 / size for smaller
//             ones) when the row pitch is an even number of such words, making
//             it odd: consecutive rows start on consecutive banks, and a column
//             read touches each bank once (for 8-byte types, once per half warp,
//             which is what one wavefront serves). The `pad` parameter turns it
//             off, for A/B comparisons.
//   swizzle   instead of padding (the `swizzle` parameter; `pad` is then
//             ignored), the host's XOR swizzle permutes each row by bank words:
//             unit c of row r is stored at unit c ^ (r % width), width the
//             largest power of two (at most 32) dividing the row's bank words.
//             A column read then meets `width` different bank words: for a
//             row of 128 bytes or more, one per thread of the warp (per half
//             warp for 8-byte types), as padding does, with no padding bytes.
//             Rows of an odd number of bank words need nothing (width 1).
//
// The heuristic (compute_params), from the sizes, dtypes and device:
//   tile1, tile2  128 bytes / the widest element size, within [8, 64]: one tile
//           row is one 128-byte line of global memory for f32 (32 elements),
//           f16 (64) and f64 (16). Each edge is then capped at its axis's
//           extent rounded up to a power of two (a size-1 axis gets a tile of
//           1), halved while the shared buffers (padding included) exceed
//           shared_bytes_per_block, and the larger edge halved (down to 32
//           bytes, one sector) while there would be fewer tiles than SMs.
//   threads four elements per thread (nvFuser's transposes keep a few in
//           flight), within [one warp, 256] and the device's limit, and no
//           more warps than the tile fills.
//   unroll  true: each thread's loop over its elements of the tile is unrolled.
//   pad     true: pad the Shared rows as above.
//   swizzle false: padding stays the default (a sweep compares the two).
//
// Not done: vectorized accesses (a padded row keeps vectors aligned only if the
// pad is a multiple of the width, which lowering checks; lowering refuses vector
// copies into or out of a swizzled buffer).
// A non-square tile has rows of the smaller edge, so a warp spans several rows
// on one side and padding leaves up to a (larger / smaller)-way conflict there
// (2-way on the writes of the 16 x 32 tiles of a 512 x 256 transpose, against
// 16-way on the reads unpadded).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
using pa::ceil_div;
using pa::dtype_bytes;
using pa::largest_pow2_at_most;
using pa::next_pow2;

namespace {

/// A row of a tile covers this many bytes of global memory by default.
constexpr int64_t kLineBytes = 128;
/// ... and never fewer than a sector when shrunk for parallelism.
constexpr int64_t kSectorBytes = 32;
constexpr int64_t kMinTile = 8, kMaxTile = 64;
constexpr int64_t kElementsPerThread = 4;
constexpr int64_t kMaxThreads = 256;
/// Shared memory is 32 banks of 4 bytes.
constexpr int64_t kBankBytes = 4;

/// The padding, in elements, that makes a row of `row` elements of `bytes`
/// each start one bank word (or one element, when wider) after the previous
/// one modulo the 32 banks: none when the pitch is already an odd number of
/// such units, or not a whole number of them (rows then share bank words).
int64_t row_pad(int64_t row, int64_t bytes) {
  const int64_t unit = std::max(bytes, kBankBytes);
  if (row * bytes % unit != 0 || row * bytes / unit % 2 == 1) return 0;
  return unit / bytes;
}

/// The swizzle width for a row of `row` elements of `bytes` each: the largest
/// power of two, at most 32, that divides the row's bank words (units of
/// max(1, 4 / bytes) elements, sched::swizzle_unit); 1 (none) when the row is
/// not a whole number of units or holds an odd number of them (its rows then
/// already start on different banks, as for row_pad).
int64_t swizzle_width(int64_t row, int64_t bytes) {
  const int64_t unit = std::max<int64_t>(1, kBankBytes / bytes);
  if (row % unit != 0) return 1;
  const int64_t units = row / unit;
  return std::min<int64_t>(SCHEDLAB_MAX_SWIZZLE_WIDTH, units & -units);
}

int64_t pow2_at_least(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

bool contains(const std::vector<pa::TensorView>& v, const pa::TensorView& t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

/// What the schedule needs to know about a fusion, or why it cannot.
struct Plan {
  std::string reason;  ///< non-empty: the fusion is not one this plugin schedules
  pa::TensorView ref;  ///< the reference (group 1)
  int inner1 = 0;      ///< the reference's innermost logical axis
  int inner2 = 0;      ///< the reference's axis that group 2's innermost maps to
  std::vector<pa::TensorView> g2_inputs, g2_outputs;

  static Plan no(std::string why) {
    Plan p;
    p.reason = std::move(why);
    return p;
  }
};

Plan analyze(pa::Segment& seg) {
  if (seg.outputs().empty()) return Plan::no("the segment has no outputs");
  for (const pa::TensorView& tv : seg.tensors())
    if (tv.op_kind() == pa::OpKind::Reduction || tv.has_reduction())
      return Plan::no("transpose schedules fusions without reductions; " + tv.str() + " is a " +
                      tv.op_name() + " reduction");
  // An output read inside the segment is written in one group's thread order
  // and may be read in the other's: no barrier orders a Global tensor.
  for (const pa::TensorView& out : seg.outputs())
    if (!out.is_input() && !out.consumers().empty())
      return Plan::no("the output " + pa::describe(out) + " is read inside the segment by " +
                      pa::describe(out.consumers().front()) +
                      "; transpose writes outputs in tile order only (segment them apart)");
  Plan p;
  p.ref = seg.find_reference();
  if (!p.ref) return Plan::no("the segment has no reference tensor");
  const int rank = p.ref.nlogical();
  if (rank < 2)
    return Plan::no("the reference " + p.ref.str() + " has " + std::to_string(rank) +
                    (rank == 1 ? " axis" : " axes") + "; a transpose needs two");

  std::vector<std::vector<pa::TensorView>> others;
  for (const auto& g : seg.group_inputs_outputs_by_inner_dim())
    if (!contains(g, p.ref)) others.push_back(g);
  if (others.empty())
    return Plan::no(
        "no transpose: every input and output has the innermost axis of the "
        "reference " +
        p.ref.str() + " (the pointwise plugin schedules these)");
  if (others.size() > 1)
    return Plan::no("the inputs and outputs fall in " + std::to_string(others.size() + 1) +
                    " groups by innermost axis; transpose tiles two layouts only");
  for (const pa::TensorView& tv : others[0]) {
    if (tv.is_input() && tv.consumers().empty()) continue;
    (tv.is_input() ? p.g2_inputs : p.g2_outputs).push_back(tv);
  }
  if (p.g2_inputs.empty() && p.g2_outputs.empty())
    return Plan::no("no transpose: the tensors laid out unlike the reference " + p.ref.str() +
                    " are unused inputs");

  // The tiles cover the same two axes in every group-2 tensor: each must have
  // the reference's rank and no broadcast axis.
  const pa::TensorView& g2 = p.g2_inputs.empty() ? p.g2_outputs[0] : p.g2_inputs[0];
  for (const auto* list : {&p.g2_inputs, &p.g2_outputs})
    for (const pa::TensorView& tv : *list) {
      if (tv.nlogical() != rank)
        return Plan::no(tv.str() + " has " + std::to_string(tv.nlogical()) +
                        " axes and the reference " + p.ref.str() + " " + std::to_string(rank) +
                        "; transpose tiles tensors of one rank");
      for (const pa::AxisInfo& a : tv.logical())
        if (a.is_broadcast())
          return Plan::no(tv.str() + " has a broadcast axis; transpose tiles full tensors only");
    }
  p.inner1 = rank - 1;
  p.inner2 = -1;
  for (int i = 0; i < rank - 1 && p.inner2 < 0; ++i)
    if (seg.axes_mapped(p.ref, i, g2, -1)) p.inner2 = i;
  if (p.inner2 < 0)
    return Plan::no("the innermost axis of " + g2.str() + " maps to no axis of the reference " +
                    p.ref.str());
  for (int i : {p.inner1, p.inner2})
    if (p.ref.logical_axis(i).extent < 1 || p.ref.logical_axis(i).is_broadcast())
      return Plan::no("axis " + std::to_string(i) + " of the reference " + p.ref.str() +
                      " is a broadcast or has no concrete extent");
  return p;
}

/// [BIDx, a, b] -> [BIDx, ceilDiv(a * b / row, threads / row) (Unroll),
/// threads / row (TIDy), row (TIDx)]; row divides b and threads, so the
/// linear thread index walks the tile in its row-major order.
void bind_tile(pa::TensorView& tv, int64_t b, int64_t threads, int64_t row, bool unroll) {
  if (b != row) {
    tv.split(2, row);  // [BIDx, a, b / row, row]
    tv.merge(1);       // [BIDx, a * (b / row), row]
  }
  tv.split(1, threads / row);
  tv.parallelize(0, pa::ParallelType::BIDx);
  tv.parallelize(2, pa::ParallelType::TIDy);
  tv.parallelize(3, pa::ParallelType::TIDx);
  tv.parallelize(1, unroll ? pa::LoopTransform::Unroll : pa::LoopTransform::Serial);
}

}  // namespace

class Transpose : public pa::Plugin {
 public:
  std::string name() const override { return "transpose"; }
  /// Offered a segment after the reductions, before pointwise (which would
  /// take a transpose too, without tiles).
  int priority() const override { return 20; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "nvFuser-style transpose: shared-memory tiles, coalesced reads and writes";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::integer("tile1", 32, 1, 256, "tile edge along the output's innermost axis"),
        pa::Param::integer("tile2", 32, 1, 256, "tile edge along the inputs' innermost axis"),
        pa::Param::integer("threads", 256, 1, 1024, "threads per block (TIDx)"),
        pa::Param::boolean("unroll", true, "unroll each thread's loop over its tile elements"),
        pa::Param::boolean("pad", true,
                           "pad the Shared tile rows so column reads meet no bank conflict"),
        pa::Param::boolean("swizzle", false,
                           "XOR-swizzle the Shared tile rows instead of padding them (pad is "
                           "then ignored)"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    Plan p = analyze(seg);
    return p.reason.empty() ? pa::Verdict::yes() : pa::Verdict::no(p.reason);
  }

  void compute_params(pa::Segment& seg, pa::Params& params) override {
    // A tuned configuration for the segment's bucket (`run --tuned`, ABI 1.4)
    // is served as it is; the heuristic below chooses everywhere else.
    if (params.use_tuned()) return;
    Plan p = analyze(seg);
    if (!p.reason.empty()) return;
    const pa::DeviceProperties d = seg.device();
    int64_t bytes = 1;
    for (const pa::TensorView& tv : seg.inputs()) bytes = std::max(bytes, dtype_bytes(tv.dtype()));
    for (const pa::TensorView& tv : seg.outputs()) bytes = std::max(bytes, dtype_bytes(tv.dtype()));

    const int64_t e1 = p.ref.logical_axis(p.inner1).extent;
    const int64_t e2 = p.ref.logical_axis(p.inner2).extent;
    const int64_t edge = std::clamp(kLineBytes / bytes, kMinTile, kMaxTile);
    int64_t t1 = std::min(edge, pow2_at_least(e1));
    int64_t t2 = std::min(edge, pow2_at_least(e2));

    // One tile per Shared buffer, each row padded (rows of the smaller edge at
    // most, a bound on what schedule pads), must fit a block's shared memory.
    const int64_t buffers = static_cast<int64_t>(p.g2_inputs.size() + p.g2_outputs.size());
    const auto shared = static_cast<int64_t>(d.shared_bytes_per_block);
    auto tile_bytes = [&] {
      const int64_t row = std::min(t1, t2);
      return t1 * t2 / row * (row + row_pad(row, bytes)) * bytes;
    };
    while (shared > 0 && tile_bytes() * buffers > shared && std::max(t1, t2) > 1)
      (t1 >= t2 ? t1 : t2) /= 2;

    // Enough tiles for every SM, without going below a sector per row.
    int64_t outer = 1;
    for (int i = 0; i < p.ref.nlogical(); ++i)
      if (i != p.inner1 && i != p.inner2)
        outer *= std::max<int64_t>(p.ref.logical_axis(i).extent, 1);
    const int64_t min_edge = std::max<int64_t>(1, kSectorBytes / bytes);
    auto tiles = [&] { return outer * ((e1 + t1 - 1) / t1) * ((e2 + t2 - 1) / t2); };
    while (tiles() < d.sm_count && std::max(t1, t2) > min_edge) (t1 >= t2 ? t1 : t2) /= 2;

    const int64_t warp = std::max(1, d.warp_size);
    const int64_t limit = d.max_threads_per_block > 0 ? d.max_threads_per_block : kMaxThreads;
    int64_t threads = std::clamp(t1 * t2 / kElementsPerThread, warp, std::min(kMaxThreads, limit));
    threads = std::min(threads, (t1 * t2 + warp - 1) / warp * warp);  // no idle warps

    params.set_integer("tile1", t1);
    params.set_integer("tile2", t2);
    params.set_integer("threads", threads);
    params.set_boolean("unroll", true);
    params.set_boolean("pad", true);
    params.set_boolean("swizzle", false);
  }

  void schedule(pa::Segment& seg, const pa::Params& params) override {
    const int64_t t1 = params.integer("tile1"), t2 = params.integer("tile2");
    const int64_t threads = params.integer("threads");
    const bool unroll = params.boolean("unroll"), pad = params.boolean("pad");
    const bool swizzle = params.boolean("swizzle");
    const int64_t row = std::gcd(std::gcd(t1, t2), threads);
    Plan p = analyze(seg);
    if (!p.reason.empty()) throw pa::Error(SCHEDLAB_ERR_USER, "transpose: " + p.reason);
    const pa::DeviceProperties d = seg.device();
    if (d.max_threads_per_block > 0 && threads > d.max_threads_per_block)
      throw pa::Error(SCHEDLAB_ERR_USER,
                      "transpose: threads=" + std::to_string(threads) + " exceeds the device's " +
                          std::to_string(d.max_threads_per_block) + " threads per block");

    // The group-2 side: what runs in group 2's thread order.
    std::vector<pa::TensorView> side;
    auto make_shared = [&](pa::TensorView c) {
      c.set_memory_type(pa::MemoryType::Shared);
      const int64_t bytes = dtype_bytes(c.dtype());
      if (swizzle) {
        if (const int64_t w = swizzle_width(row, bytes); w > 1) c.swizzle(w);
      } else if (pad) {
        c.pad_shared(row_pad(row, bytes));
      }
    };
    for (pa::TensorView in : p.g2_inputs) {
      pa::TensorView c = in.cache_after();
      make_shared(c);
      side.push_back(c);
    }
    for (pa::TensorView out : p.g2_outputs) {
      make_shared(out.cache_before());
      side.push_back(out);
    }

    // [.., inner2, .., inner1] -> [BIDx, tile2, tile1] on the reference, then everywhere.
    pa::TensorView& ref = p.ref;
    const int n = ref.nlogical();
    ref.split(p.inner1, t1);  // inner1 is last: [.., inner1 / t1, t1]
    ref.split(p.inner2, t2);  // [.., inner2 / t2, t2, .., inner1 / t1, t1]
    ref.reorder({{p.inner2 + 1, n}});
    while (ref.nloop() > 3) ref.merge(0);
    seg.propagate_transformation(ref);

    std::vector<pa::TensorView> group1;
    for (const pa::TensorView& tv : seg.tensors())
      if (!tv.is_input() && !contains(side, tv)) group1.push_back(tv);
    bind_tile(ref, t1, threads, row, unroll);
    seg.propagate_transformation(ref, group1);
    seg.parallelize_all_like(ref, -1, group1);
    for (pa::TensorView& tv : side) {
      tv.reorder({{1, 2}, {2, 1}});
      bind_tile(tv, t2, threads, row, unroll);
    }
    seg.inline_most();
  }
};

SCHEDLAB_PLUGIN(Transpose)
