// schedlab/plugin_api/loop_nests.hpp: which loop nest each tensor of a
// segment ends up computed in when a heuristic gives every tensor the
// reference's loop and inlines as much as it can (inline_most), predicted
// before anything is scheduled, and the tensors lowering cannot place then:
// one broadcast where the reference iterates, read from two nests. Part of
// the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace schedlab::plugin_api {

/// The tensor whose loops `tv` is computed in once inlined as far as it can
/// be: itself when nothing in the segment reads it, when it is a reduction
/// (its producers run in its reduction loops, its readers after them), or
/// when its readers are computed in different nests (it keeps loops of its
/// own: a persistent tensor read before and after a reduction, a tensor read
/// by a side output); else the one nest of its readers. `memo` caches
/// answers by tensor number across calls on one segment.
inline TensorView loop_nest_of(const TensorView& tv, std::map<int, TensorView>& memo) {
  if (auto it = memo.find(tv.number()); it != memo.end()) return it->second;
  TensorView nest = tv;
  std::vector<TensorView> readers = tv.consumers();
  if (!readers.empty() && !tv.has_reduction()) {
    nest = loop_nest_of(readers.front(), memo);
    for (const TensorView& c : readers)
      if (loop_nest_of(c, memo) != nest) nest = tv;
  }
  memo[tv.number()] = nest;
  return nest;
}

/// A logical axis of `ref`, neither reduced nor broadcast, that no axis of
/// `tv` iterates (ref_axis_of): tv is broadcast there. -1 when tv iterates
/// every one.
inline int missing_iteration_axis(Segment& seg, const TensorView& tv, const TensorView& ref) {
  std::vector<bool> covered(static_cast<size_t>(ref.nlogical()), false);
  for (int j = 0; j < tv.nlogical(); ++j)
    if (int i = ref_axis_of(seg, tv, j, ref); i >= 0) covered[static_cast<size_t>(i)] = true;
  std::vector<AxisInfo> dom = ref.logical();
  for (int i = 0; i < static_cast<int>(dom.size()); ++i)
    if (!covered[static_cast<size_t>(i)] && !dom[static_cast<size_t>(i)].is_reduction() &&
        !dom[static_cast<size_t>(i)].is_broadcast())
      return i;
  return -1;
}

/// Why a tensor computed in `seg` cannot take the reference's loop, or "":
/// one broadcast where `ref` iterates (a keepdim statistic of another segment
/// broadcast over the rows here) is merged into the same bound loop axes as
/// the rows, so it must be inlined whole into its readers (lowering rule 4,
/// docs/lowering-rules.md); when its readers are computed in two loop nests
/// (loop_nest_of) it keeps loops of its own, whose bound axes iterate other
/// elements than its readers' ("reads elements of Local ... computed by other
/// blocks": fuzz seed 33, cases 343 and 893). The segmenter then splits it
/// from one of the nests, which reads it from Global memory.
inline std::string broadcast_read_by_two_nests(Segment& seg, const TensorView& ref) {
  std::map<int, TensorView> memo;
  for (const TensorView& tv : seg.tensors()) {
    if (tv.is_input() || tv == ref) continue;
    std::vector<TensorView> readers = tv.consumers();
    if (readers.size() < 2 || loop_nest_of(tv, memo) != tv) continue;
    const int axis = missing_iteration_axis(seg, tv, ref);
    if (axis < 0) continue;
    TensorView other;
    for (const TensorView& c : readers)
      if (loop_nest_of(c, memo) != loop_nest_of(readers.front(), memo)) other = c;
    return describe(tv) + " is broadcast where the reference " + describe(ref) +
           " iterates (its axis " + std::to_string(axis) + ", extent " +
           ref.logical_axis(axis).extent_expr + ") and is read in two loop nests (by " +
           describe(readers.front()) + " and " + describe(other) +
           "), so it cannot be inlined whole into its readers (segment them apart)";
  }
  return "";
}

}  // namespace schedlab::plugin_api
