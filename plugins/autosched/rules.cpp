// autosched/rules.cpp: the rewrite rules (rules.h), one class each, in the
// order run_rules tries them. A rule's comment says what it matches, what it
// rewrites, and the lowering rule that makes the rewrite sound.
#include "rules.h"

#include <algorithm>
#include <numeric>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace autosched {

using pa::ceil_div;
using pa::LoopTransform;
using pa::ParallelType;

namespace {

bool is(const State& s, Pattern p) {
  return s.facts.pattern == p;
}
bool is_reduction(const State& s) {
  return is(s, Pattern::InnerReduction) || is(s, Pattern::OuterReduction);
}

/// The padding, in elements, that makes a Shared row of `row` elements of
/// `bytes` each start one bank word after the previous one (an odd pitch in
/// bank words), so that a column read meets each bank once; 0 when the
/// pitch is odd already or not a whole number of words (the transpose
/// plugin's row_pad).
int64_t row_pad(int64_t row, int64_t bytes) {
  const int64_t unit = std::max<int64_t>(bytes, 4);
  if (row * bytes % unit != 0 || row * bytes / unit % 2 == 1) return 0;
  return unit / bytes;
}

// ---- 1. Caches for full-rank accesses
// Matches: a vector width above 1 (any pattern but a transpose), or a
// normalization (whose rows persist in the copies of its inputs).
// Rewrites: each full-rank input in the reference's layout is read through a
// cache_after copy, each such output written from a cache_before copy; the
// copies' innermost axes are vectorized later (lowering vectorizes only the
// inner split of a tensor's innermost logical axis, and only a copy between
// Global and registers). Made first: cache_before needs an untransformed
// output, and cache_after rewires the inputs' uses before propagation.
class CacheFullRankAccesses : public Rule {
 public:
  const char* name() const override { return "CacheFullRankAccesses"; }
  bool matches(const State& s) const override {
    return !is(s, Pattern::Transpose) && (s.config.vector > 1 || is(s, Pattern::Normalization));
  }
  void apply(State& s) const override {
    s.persistent = s.facts.persistent;
    for (pa::TensorView in : s.facts.vector_inputs) {
      pa::TensorView cache = in.cache_after();
      s.vectorized.push_back(cache);
      if (is(s, Pattern::Pointwise)) s.hoisted.push_back(cache);
      std::replace(s.persistent.begin(), s.persistent.end(), in, cache);
    }
    if (is_reduction(s)) return;  // reductions write reduced outputs
    for (pa::TensorView out : s.facts.vector_outputs) {
      out.cache_before();
      s.vectorized.push_back(out);
    }
    // A row operand ([K]) read element by element would touch `vector`
    // times the sectors it uses, as in the normalization plugin.
    if (is(s, Pattern::Normalization) && s.config.vector > 1)
      for (pa::TensorView in : s.facts.row_operands) s.vectorized.push_back(in.cache_after());
  }
};

// ---- 2. Stage transposed accesses through Shared memory
// Matches: a transpose with `stage`. Rewrites: each input in the other
// layout is read through a Shared cache_after copy, each output in it
// written from a Shared cache_before copy, rows padded against bank
// conflicts. The tile is transposed between the copy and its neighbour,
// which walk it in opposite orders (BindTransposeTiles); lowering puts the
// barrier between them.
class StageTransposedAccesses : public Rule {
 public:
  const char* name() const override { return "StageTransposedAccesses"; }
  bool matches(const State& s) const override {
    return is(s, Pattern::Transpose) && s.config.stage;
  }
  void apply(State& s) const override {
    const int64_t row = std::gcd(s.config.tile, s.config.threads);
    auto share = [&](pa::TensorView c) {
      c.set_memory_type(pa::MemoryType::Shared);
      c.pad_shared(row_pad(row, pa::dtype_bytes(c.dtype())));
    };
    for (pa::TensorView in : s.facts.t_inputs) {
      pa::TensorView c = in.cache_after();
      share(c);
      s.staged.push_back(c);
    }
    for (pa::TensorView out : s.facts.t_outputs) {
      share(out.cache_before());
      s.staged.push_back(out);
    }
  }
};

// ---- 3. Choose the reference and canonicalize its loop
// Matches: every pattern but a transpose (TileTranspose shapes that one).
// Rewrites the reference (the facts': a reduction, else the largest output)
// to [I] (pointwise: its Broadcast axes first and unmerged, so that a tensor
// without them merges the same axes into a loop mapped to the reference's)
// or [I, R] (iteration and Broadcast axes merged, reduced axes merged), or
// [R] for a full reduction.
class ChooseReference : public Rule {
 public:
  const char* name() const override { return "ChooseReference"; }
  bool matches(const State& s) const override { return !is(s, Pattern::Transpose); }
  void apply(State& s) const override {
    pa::TensorView ref = s.facts.ref;
    const std::vector<pa::AxisInfo> dom = ref.logical();
    const int n = static_cast<int>(dom.size());
    std::vector<std::pair<int, int>> order;
    if (is(s, Pattern::Pointwise)) {
      std::vector<std::string> roles;
      for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < n; ++i)
          if (dom[static_cast<size_t>(i)].is_broadcast() == (pass == 0))
            order.push_back({i, static_cast<int>(order.size())});
      int o = 0;
      for (const pa::AxisInfo& a : dom) o += a.is_broadcast();
      if (o > 0) ref.reorder(order);
      while (ref.nloop() > o + 1) ref.merge(o);
      for (int k = 0; k < o; ++k) roles.push_back("b" + std::to_string(k));
      roles.push_back("I");
      s.loop = Loop(ref, roles, "autosched");
      return;
    }
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < n; ++i)
        if (dom[static_cast<size_t>(i)].is_reduction() == (pass == 1))
          order.push_back({i, static_cast<int>(order.size())});
    ref.reorder(order);
    const int n_front = n - static_cast<int>(s.facts.red_axes.size());
    for (int k = 1; k < n_front; ++k) ref.merge(0, 1);
    const int r0 = n_front > 0 ? 1 : 0;
    for (size_t k = 1; k < s.facts.red_axes.size(); ++k) ref.merge(r0, r0 + 1);
    s.loop = n_front > 0 ? Loop(ref, {"I", "R"}, "autosched") : Loop(ref, {"R"}, "autosched");
  }
};

// ---- 4. Tile a transpose
// Matches: a transpose. Rewrites the reference to [tiles (and batch), tile2,
// tile1]: its own innermost axis (inner1) and the axis the other layout's
// innermost maps to (inner2) split by the tile edge, both tile axes moved
// innermost, the rest merged; propagated to every tensor.
class TileTranspose : public Rule {
 public:
  const char* name() const override { return "TileTranspose"; }
  bool matches(const State& s) const override { return is(s, Pattern::Transpose); }
  void apply(State& s) const override {
    pa::TensorView ref = s.facts.ref;
    const int n = ref.nlogical();
    ref.split(s.facts.inner1, s.config.tile);
    ref.split(s.facts.inner2, s.config.tile);
    ref.reorder({{s.facts.inner2 + 1, n}});
    while (ref.nloop() > 3) ref.merge(0);
    s.seg.propagate_transformation(ref);
  }
};

// ---- 5. Bind a pointwise loop
// Matches: pointwise. [I] -> [I/v/b/u (BIDx), u (Unroll), b (TIDx), v]:
// consecutive threads take consecutive vectors (coalesced), each thread
// `unroll` of them, a block's apart.
class BindPointwise : public Rule {
 public:
  const char* name() const override { return "BindPointwise"; }
  bool matches(const State& s) const override { return is(s, Pattern::Pointwise); }
  void apply(State& s) const override {
    const Config& c = s.config;
    Loop& l = s.loop;
    if (c.vector > 1) l.split("I", c.vector, "I", "v");
    l.split("I", c.threads, "I", "tx");
    if (c.unroll > 1) l.split("I", c.unroll, "I", "u");
    l.bind("I", ParallelType::BIDx);
    l.bind("u", LoopTransform::Unroll);
    l.bind("tx", ParallelType::TIDx);
    s.hoist_at = l.at("I") + 1;
  }
};

// ---- 6. Bind an inner reduction
// Matches: a reduction of the innermost (contiguous) axes.
//   serial (reduce_threads 1): a row per thread,
//     [I/threads (BIDx), threads (TIDx), R/v/u, u (Unroll), v].
//   block: [I/rows (BIDx), rows (TIDy), rt (TIDx), R/v/rt/u, u, v]; thread t
//     reads vectors t, t + rt, ... of its row (coalesced).
//   grid: the serial loop split into `grid` chunks on BIDx, rows on BIDy.
// The thread axis rt comes before the serial loops: with it inside them, the
// rfactor producer would be reset inside the serial loop (see the reduction
// plugin's "Loop order").
class BindInnerReduction : public Rule {
 public:
  const char* name() const override { return "BindInnerReduction"; }
  bool matches(const State& s) const override { return is(s, Pattern::InnerReduction); }
  void apply(State& s) const override {
    const Config& c = s.config;
    Loop& l = s.loop;
    if (c.vector > 1) l.split("R", c.vector, "R", "v");
    if (c.reduce_threads <= 1) {
      if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
      if (l.has("I")) {
        l.split("I", c.threads, "I", "tx");
        l.bind("I", ParallelType::BIDx);
        l.bind("tx", ParallelType::TIDx);
      }
    } else {
      l.split("R", c.reduce_threads, "R", "rt");
      if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
      if (c.grid > 1) l.split("R", c.grid, "g", "R", /*inner_split=*/false);
      l.move_before("rt", "R");
      if (l.has("I") && c.rows > 1) l.split("I", c.rows, "I", "ty");
      l.bind("I", c.grid > 1 ? ParallelType::BIDy : ParallelType::BIDx);
      l.bind("ty", ParallelType::TIDy);
      l.bind("g", ParallelType::BIDx);
      l.bind("rt", ParallelType::TIDx);
    }
    l.bind("u", LoopTransform::Unroll);
  }
};

// ---- 7. Bind an outer reduction
// Matches: a reduction of outer axes (I contiguous).
//   [I/v/tx (BIDx), tx (TIDx), rt (TIDy), R/rt/u, u (Unroll), v]
// with tx = threads / reduce_threads columns per block (coalesced) and, for
// grid > 1, the serial loop split into chunks on BIDy.
class BindOuterReduction : public Rule {
 public:
  const char* name() const override { return "BindOuterReduction"; }
  bool matches(const State& s) const override { return is(s, Pattern::OuterReduction); }
  void apply(State& s) const override {
    const Config& c = s.config;
    Loop& l = s.loop;
    const int64_t rt = std::max<int64_t>(1, c.reduce_threads);
    if (c.vector > 1) l.split("I", c.vector, "I", "v");
    l.split("I", std::max<int64_t>(1, c.threads / rt), "I", "tx");
    if (rt > 1) l.split("R", rt, "R", "rt");
    if (c.unroll > 1) l.split("R", c.unroll, "R", "u");
    if (c.grid > 1) l.split("R", c.grid, "g", "R", /*inner_split=*/false);
    if (l.has("v")) l.move_to_end("v");
    if (l.has("rt")) l.move_before("rt", "R");
    l.bind("I", ParallelType::BIDx);
    l.bind("tx", ParallelType::TIDx);
    l.bind("g", ParallelType::BIDy);
    l.bind("rt", ParallelType::TIDy);
    l.bind("u", LoopTransform::Unroll);
  }
};

// ---- 8. Bind persistent rows
// Matches: a normalization.
//   [I/rows (BIDx), rows (TIDy), persist (Unroll), ceilDiv(R/v, persist) (TIDx), v]
// Each thread keeps `persist` vectors of its row in every persistent buffer
// across the reductions (unrolled: registers are named, not addressed); the
// row's threads (a symbolic extent, sized at launch) reduce it together.
class BindPersistentRows : public Rule {
 public:
  const char* name() const override { return "BindPersistentRows"; }
  bool matches(const State& s) const override { return is(s, Pattern::Normalization); }
  void apply(State& s) const override {
    const Config& c = s.config;
    Loop& l = s.loop;
    if (c.vector > 1) l.split("R", c.vector, "R", "v");
    l.split("R", c.persist, "p", "rt", /*inner_split=*/false);
    l.bind("p", LoopTransform::Unroll);
    l.bind("rt", ParallelType::TIDx);
    if (l.has("I") && c.rows > 1) l.split("I", c.rows, "I", "ty");
    l.bind("I", ParallelType::BIDx);
    l.bind("ty", ParallelType::TIDy);
  }
};

// ---- 9. Propagate the reference
// Matches: every pattern but a transpose (BindTransposeTiles binds two
// groups apart). Every tensor takes the reference's transforms and bindings
// (the facts guarantee each iterates the reference's axes in order).
class PropagateReference : public Rule {
 public:
  const char* name() const override { return "PropagateReference"; }
  bool matches(const State& s) const override { return !is(s, Pattern::Transpose); }
  void apply(State& s) const override {
    s.seg.propagate_transformation(s.facts.ref);
    s.seg.parallelize_all_like(s.facts.ref);
  }
};

/// [B, a, b] -> [B (BIDx), ceilDiv(a * b / row, threads / row) (Unroll),
/// threads / row (TIDy), row (TIDx)]: row divides b and threads, so the
/// linear thread index walks the tile in its row-major order.
void bind_tile(pa::TensorView& tv, int64_t b, int64_t threads, int64_t row) {
  if (b != row) {
    tv.split(2, row);
    tv.merge(1);
  }
  tv.split(1, threads / row);
  tv.parallelize(0, ParallelType::BIDx);
  tv.parallelize(1, LoopTransform::Unroll);
  tv.parallelize(2, ParallelType::TIDy);
  tv.parallelize(3, ParallelType::TIDx);
}

// ---- 10. Bind transpose tiles
// Matches: a transpose. The reference's side walks [tile2, tile1] with
// consecutive threads along inner1 (its contiguous axis); the staged side
// (StageTransposedAccesses) swaps the tile axes first and walks inner2,
// contiguous in its tensors. Both use the same block of threads.
class BindTransposeTiles : public Rule {
 public:
  const char* name() const override { return "BindTransposeTiles"; }
  bool matches(const State& s) const override { return is(s, Pattern::Transpose); }
  void apply(State& s) const override {
    const int64_t t = s.config.tile, threads = s.config.threads;
    const int64_t row = std::gcd(t, threads);
    std::vector<pa::TensorView> group;
    for (const pa::TensorView& tv : s.seg.tensors())
      if (!tv.is_input() && std::find(s.staged.begin(), s.staged.end(), tv) == s.staged.end())
        group.push_back(tv);
    pa::TensorView ref = s.facts.ref;
    bind_tile(ref, t, threads, row);
    s.seg.propagate_transformation(ref, group);
    s.seg.parallelize_all_like(ref, -1, group);
    for (pa::TensorView& tv : s.staged) {
      tv.reorder({{1, 2}, {2, 1}});
      bind_tile(tv, t, threads, row);
    }
  }
};

// ---- 11. rfactor reductions
// Matches: a reduction whose reference has both serial and bound reduction
// axes. Rewrites every reduction into a per-thread partial over the serial
// axes (sched::rfactor), so the cross-thread (and cross-block) step reduces
// one value per thread. The reductions share the reference's loop
// (propagated), so the same positions apply to each.
class RfactorReductions : public Rule {
 public:
  const char* name() const override { return "RfactorReductions"; }
  bool matches(const State& s) const override {
    if (!is_reduction(s)) return false;
    bool serial = false, bound = false;
    for (const pa::AxisInfo& a : s.facts.ref.loop()) {
      if (!a.is_reduction()) continue;
      (a.parallel_type == ParallelType::Serial ? serial : bound) = true;
    }
    return serial && bound;
  }
  void apply(State& s) const override {
    std::vector<int> serial;
    std::vector<pa::AxisInfo> loop = s.facts.ref.loop();
    for (int i = 0; i < static_cast<int>(loop.size()); ++i)
      if (loop[static_cast<size_t>(i)].is_reduction() &&
          loop[static_cast<size_t>(i)].parallel_type == ParallelType::Serial)
        serial.push_back(i);
    for (pa::TensorView r : s.seg.reduction_tvs()) r.rfactor(serial);
  }
};

// ---- 12. Vectorize the innermost contiguous axis
// Matches: copies made by CacheFullRankAccesses and a vector width above 1.
// Their innermost loop axis is the inner split by the vector width of the
// innermost logical axis (every Bind rule splits it last), which lowering
// emits as one vector access.
class VectorizeInnermost : public Rule {
 public:
  const char* name() const override { return "VectorizeInnermost"; }
  bool matches(const State& s) const override {
    return s.config.vector > 1 && !s.vectorized.empty();
  }
  void apply(State& s) const override {
    for (pa::TensorView& tv : s.vectorized) tv.parallelize(-1, LoopTransform::Vectorize);
  }
};

// ---- 13. Keep persistent rows in Shared memory
// Matches: a normalization with shared_persist. The persistent buffers
// (the inputs' copies and the intermediates read after a reduction) live in
// Shared memory: a row longer than the registers hold still crosses DRAM
// once. Lowering sizes each buffer over the block's thread axes.
class PersistInSharedMemory : public Rule {
 public:
  const char* name() const override { return "PersistInSharedMemory"; }
  bool matches(const State& s) const override {
    return is(s, Pattern::Normalization) && s.config.shared_persist && !s.persistent.empty();
  }
  void apply(State& s) const override {
    for (pa::TensorView& tv : s.persistent)
      if (!tv.is_input()) tv.set_memory_type(pa::MemoryType::Shared);
  }
};

// ---- 14. Inline pointwise producers
// Matches: always. inline_most computes every producer inside its readers'
// loops as far as the loops map; then a pointwise schedule's input copies
// are computed outside the unrolled loop (all loads in flight before any
// math), and a keepdim statistic's Broadcast axes outside its inline
// position are made serial, so that every thread that reads it computes it
// (pa::serialize_own_broadcast_axes).
class InlinePointwiseProducers : public Rule {
 public:
  const char* name() const override { return "InlinePointwiseProducers"; }
  bool matches(const State&) const override { return true; }
  void apply(State& s) const override {
    s.seg.inline_most();
    if (s.config.unroll > 1)
      for (pa::TensorView& tv : s.hoisted) tv.inline_at(s.hoist_at);
    if (is_reduction(s) || is(s, Pattern::Normalization)) pa::serialize_own_broadcast_axes(s.seg);
  }
};

}  // namespace

const std::vector<std::unique_ptr<Rule>>& rules() {
  static const std::vector<std::unique_ptr<Rule>> all = [] {
    std::vector<std::unique_ptr<Rule>> r;
    r.push_back(std::make_unique<CacheFullRankAccesses>());
    r.push_back(std::make_unique<StageTransposedAccesses>());
    r.push_back(std::make_unique<ChooseReference>());
    r.push_back(std::make_unique<TileTranspose>());
    r.push_back(std::make_unique<BindPointwise>());
    r.push_back(std::make_unique<BindInnerReduction>());
    r.push_back(std::make_unique<BindOuterReduction>());
    r.push_back(std::make_unique<BindPersistentRows>());
    r.push_back(std::make_unique<PropagateReference>());
    r.push_back(std::make_unique<BindTransposeTiles>());
    r.push_back(std::make_unique<RfactorReductions>());
    r.push_back(std::make_unique<VectorizeInnermost>());
    r.push_back(std::make_unique<PersistInSharedMemory>());
    r.push_back(std::make_unique<InlinePointwiseProducers>());
    return r;
  }();
  return all;
}

void run_rules(State& s) {
  for (const auto& rule : rules()) {
    if (!rule->matches(s)) continue;
    rule->apply(s);
    s.applied.push_back(rule->name());
  }
}

}  // namespace autosched
