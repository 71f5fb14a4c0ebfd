// schedlab/plugin_api/alignment.hpp: heuristic helpers that say how a
// segment's tensors line up with a reference before anything is scheduled
// (misaligned, row_operands, ...), and serialize_own_broadcast_axes. Part of
// the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace schedlab::plugin_api {

// ---- Heuristic helpers: how a segment's tensors line up with a reference.
// A heuristic that transforms a reference and propagates the transforms
// relies on every tensor iterating (a part of) the reference's space in the
// reference's order; these say, before any scheduling, whether a tensor does.

/// "T3 (m)": a tensor by number and its fusion name, for messages.
inline std::string describe(const TensorView& tv) {
  return tv.name().empty() ? tv.str() : tv.str() + " (" + tv.name() + ")";
}

/// The logical axis of `ref` that logical axis `axis` of `tv` iterates: the
/// one axis exactly mapped to it (the same data; a Broadcast axis ties to
/// nothing); -1 when none is, or more than one. Both tensors must be
/// unscheduled, so that their loop axes are their logical axes.
inline int ref_axis_of(Segment& seg, const TensorView& tv, int axis, const TensorView& ref) {
  if (tv == ref) return axis;
  if (tv.logical_axis(axis).is_broadcast()) return -1;
  int found = -1;
  for (int i = 0; i < ref.nlogical(); ++i) {
    if (ref.logical_axis(i).is_broadcast() || !seg.axes_mapped(ref, i, tv, axis, /*exact=*/true))
      continue;
    if (found >= 0) return -1;
    found = i;
  }
  return found;
}

/// The input of the nearest view (OpKind::View, ABI 1.10) that `tv` feeds
/// in `seg` (tv itself when it is one), or a null TensorView when none is
/// below it. Propagation replays that view's splits and merges on tv, so tv
/// lines up with the view's input, not with a reference past the view.
inline TensorView view_input_below(Segment& seg, const TensorView& tv) {
  std::vector<TensorView> in_seg = seg.tensors();
  auto member = [&](const TensorView& t) {
    return std::find(in_seg.begin(), in_seg.end(), t) != in_seg.end();
  };
  std::vector<TensorView> frontier{tv}, seen{tv};
  while (!frontier.empty()) {
    std::vector<TensorView> next;
    for (const TensorView& t : frontier)
      for (const TensorView& c : t.consumers()) {
        if (!member(c)) continue;
        if (c.op_kind() == OpKind::View) return t;
        if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
        seen.push_back(c);
        next.push_back(c);
      }
    frontier = std::move(next);
  }
  return TensorView();
}

/// Why `tv` does not iterate a sub-space of `ref` in ref's order, or "" when
/// it does: each non-broadcast logical axis of tv must iterate (ref_axis_of)
/// its own axis of ref, in increasing order. A tensor that fails (an outer
/// product of a reduction with itself, an axis unrelated to the reference,
/// a permuted intermediate) cannot take the reference's loop structure.
/// A tensor that feeds a view (reshape) lines up with the view's input
/// instead (local_reference): the view's output is checked against ref, and
/// propagation carries ref's schedule across the view
/// (sched::propagate_transformation).
inline TensorView local_reference(Segment& seg, const TensorView& tv, const TensorView& ref) {
  // Only when ref lies past the view: propagation from a reference that
  // feeds the same view does not cross it.
  TensorView x = view_input_below(seg, tv);
  return x && view_input_below(seg, ref) != x ? x : ref;
}

inline std::string misaligned(Segment& seg, const TensorView& tv, const TensorView& ref) {
  if (TensorView x = local_reference(seg, tv, ref); x != ref)
    return x == tv ? "" : misaligned(seg, tv, x);
  int last = -1;
  std::vector<AxisInfo> dom = tv.logical();
  for (int j = 0; j < static_cast<int>(dom.size()); ++j) {
    if (dom[static_cast<size_t>(j)].is_broadcast()) continue;
    int i = ref_axis_of(seg, tv, j, ref);
    if (i < 0)
      return describe(tv) + " axis " + std::to_string(j) + " (extent " +
             dom[static_cast<size_t>(j)].extent_expr +
             ") iterates no single axis of the reference " + describe(ref);
    if (i <= last)
      return describe(tv) + " axis " + std::to_string(j) + " iterates axis " + std::to_string(i) +
             " of the reference " + describe(ref) + ", not after its axis " + std::to_string(last) +
             " (a permuted or repeated axis)";
    last = i;
  }
  return "";
}

/// The rank-1 inputs of `seg` that something reads and whose one axis has
/// `row_extent` elements: a normalization's row operands (layernorm's weight
/// and bias), which a heuristic reads with the row's vectors through caches
/// of their own (read element by element, a warp's loads would span
/// `vector` times the sectors they use).
inline std::vector<TensorView> row_operands(Segment& seg, int64_t row_extent) {
  std::vector<TensorView> r;
  for (const TensorView& in : seg.inputs()) {
    const std::vector<AxisInfo> d = in.logical();
    if (!in.consumers().empty() && d.size() == 1 && d[0].extent == row_extent) r.push_back(in);
  }
  return r;
}

/// The first tensor of `seg` computed in it (not an input) that is
/// misaligned with `ref`, and why; "" when there is none.
inline std::string first_misaligned(Segment& seg, const TensorView& ref) {
  for (const TensorView& tv : seg.tensors()) {
    if (tv.is_input()) continue;
    std::string why = misaligned(seg, tv, ref);
    if (!why.empty()) return why;
  }
  return "";
}

/// Why serialize_own_broadcast_axes cannot be used on this segment, or "":
/// a reduction that is a segment output and is also read inside the segment
/// keeps its Broadcast axes serial, so every thread would reset and
/// accumulate the same Global elements (a race). Such a segment must be split
/// (the segmenter does, when the plugin refuses it with this reason).
inline std::string global_accumulator_with_own_broadcast(Segment& seg) {
  for (const TensorView& r : seg.reduction_tvs()) {
    if (!r.is_output() || r.consumers().empty()) continue;
    for (const AxisInfo& a : r.loop())
      if (a.is_broadcast())
        return describe(r) +
               " is a reduction result the segment outputs and also reads, with a "
               "Broadcast axis of extent 1: every thread would accumulate into the same Global "
               "elements (segment the readers apart)";
  }
  return "";
}

/// After inline_most: every broadcast loop axis that a tensor computed in
/// `seg` keeps outside its inline position is made Serial, unless the tensor
/// is an output nothing in the segment reads. Bound, such an axis (a keepdim
/// statistic split and bound like the row it is broadcast to) would be
/// computed by the threads inside its extent of one element only, while each
/// consumer thread reads it ("reads elements of Local ... computed by other
/// threads"); serial, every thread computes its own copy of the one element
/// (an output read inside is then written by each, with the same value, as
/// lowering does for an output inlined into its reader). An output nothing
/// reads keeps its bindings: one thread writes each element, reading
/// producers that every thread computed. A producer inlined past an axis
/// made Serial shares that loop, so its axis there is made Serial too
/// (inlined axes must agree on their bindings).
/// The same holds for a bound axis whose extent differs from that of a
/// consumer's axis of the same binding: merge(b{1}, K) bound to BIDx beside
/// a consumer's merge(N, K) (the broadcast widened to N) gives block b the
/// element b of the tensor but element b of N * K to the consumer.
inline void serialize_own_broadcast_axes(Segment& seg) {
  std::vector<TensorView> tensors = seg.tensors();
  for (TensorView tv : tensors) {
    if (tv.is_input() || (tv.is_output() && tv.consumers().empty())) continue;
    std::vector<AxisInfo> loop = tv.loop();
    std::vector<std::vector<AxisInfo>> readers;
    for (const TensorView& c : tv.consumers()) readers.push_back(c.loop());
    // Whether some reader binds `a`'s parallel type to an iteration axis of
    // another extent (a's iteration axis widened by a broadcast).
    auto widened = [&](const AxisInfo& a) {
      if (a.iter_type != IterType::Iteration) return false;
      for (const auto& rl : readers)
        for (const AxisInfo& r : rl)
          if (r.iter_type == IterType::Iteration && r.parallel_type == a.parallel_type &&
              r.extent_expr != a.extent_expr)
            return true;
      return false;
    };
    for (int k = tv.compute_at_pos(); k < static_cast<int>(loop.size()); ++k) {
      const AxisInfo& a = loop[static_cast<size_t>(k)];
      if (a.parallel_type != ParallelType::Serial && (a.is_broadcast() || widened(a)))
        tv.parallelize(k, ParallelType::Serial);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const TensorView& c : tensors) {
      if (c.is_input()) continue;
      std::vector<AxisInfo> cloop = c.loop();
      for (TensorView p : c.producers()) {
        if (p.is_input()) continue;
        std::vector<AxisInfo> ploop = p.loop();
        const int shared = std::min(p.compute_at_pos(), static_cast<int>(cloop.size()));
        for (int k = 0; k < shared; ++k)
          if (cloop[static_cast<size_t>(k)].parallel_type == ParallelType::Serial &&
              ploop[static_cast<size_t>(k)].parallel_type != ParallelType::Serial) {
            p.parallelize(k, ParallelType::Serial);
            changed = true;
          }
      }
    }
  }
}

}  // namespace schedlab::plugin_api
