// normalization/multi_pass.cpp: the multi-pass path (persistence=none): its
// split, and the recomputation of the persistent intermediates for each
// pass that reads them (ABI 1.5's recompute, nvFuser's recomputeTv), so
// that nothing is kept between passes (normalization.cpp has the design).
#include <algorithm>
#include <optional>
#include <vector>

#include "normalization.h"

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace normalization {

using pa::ceil_div;

Config multi_pass_split(const Analysis& a, const pa::DeviceProperties& d) {
  const int64_t max_threads = pa::rules::max_threads_per_block(d);
  // No buffers: as many elements per thread as keep the row at
  // kMaxRowThreads threads; each pass is a serial loop over them. No
  // vectors: the persistent inputs and the Global intermediates are read
  // without a cache, so a vector's elements would be separate loads, each
  // warp-wide one touching `vector` times the sectors (the model: softmax
  // at K=16384 with vector=4 reads 29 % coalesced).
  Config c;
  c.path = Path::MultiPass;
  c.vector = 1;
  const int64_t vectors = ceil_div(a.R, c.vector);
  c.persist = std::max<int64_t>(1, ceil_div(vectors, std::min(kMaxRowThreads, max_threads)));
  if (c.persist > kMaxSerialPersist) c.persist = kMaxSerialPersist;
  c.rows = choose_rows(a, d, ceil_div(vectors, c.persist));
  c = cost(a, d, c);
  if (!c.fits()) c.persist = 0;
  return c;
}

namespace {

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

/// The first view among t and the computed producers a recompute of t would
/// copy (down to the inputs and the reductions); nullopt if none.
std::optional<pa::TensorView> view_recomputed(pa::TensorView t) {
  if (t.op_kind() == pa::OpKind::View) return t;
  for (pa::TensorView in : t.producers()) {
    if (in.is_input() || in.op_kind() == pa::OpKind::Reduction) continue;
    if (std::optional<pa::TensorView> v = view_recomputed(in)) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string recompute_refusal(const Analysis& a) {
  for (const pa::TensorView& p : a.persistent) {
    if (p.is_input()) continue;
    if (std::optional<pa::TensorView> v = view_recomputed(p))
      return "the persistent intermediate " + describe(p) + " would be recomputed for the " +
             "passes after its reduction, and " + describe(*v) +
             " on the way is made by a view, whose copy the schedule's propagation does not " +
             "reach (persistence=none and a shared path that recomputes cannot take it; " +
             "expected persistence=registers, shared or grid)";
  }
  return {};
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

}  // namespace normalization
