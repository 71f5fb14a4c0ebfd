// schedlab/plugin_api/reduction_reference.hpp: the checks a reduction-based
// heuristic (the built-in normalization and reduction plugins) opens its
// analysis of a segment with: there is a reduction, no permute, and a
// reduction to use as the reference. Part of the C++ wrapper
// (schedlab/plugin.hpp includes every part).
#pragma once

#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

/// A segment's reductions and the one a heuristic transforms and propagates
/// (Segment::find_reference), or why there is none to use.
struct ReductionReference {
  std::string reject;                  ///< non-empty: why `plugin` cannot schedule the segment
  std::vector<TensorView> reductions;  ///< Segment::reduction_tvs
  TensorView ref;                      ///< the reference: a reduction
};

/// The reductions and the reference of `seg`, for `plugin` (its name opens
/// the message when a permute is refused): rejected without a reduction (the
/// pointwise plugin's job), with a permute anywhere (the reference's loop
/// cannot follow a permuted tensor), or when the reference is no reduction.
inline ReductionReference reduction_reference(Segment& seg, const std::string& plugin) {
  ReductionReference r;
  r.reductions = seg.reduction_tvs();
  if (r.reductions.empty()) {
    r.reject = "the segment has no reduction (the pointwise plugin schedules it)";
    return r;
  }
  for (const TensorView& tv : seg.tensors())
    if (tv.op_kind() == OpKind::Permute) {
      r.reject = plugin + " does not schedule a permute (" + describe(tv) + ")";
      return r;
    }
  r.ref = seg.find_reference();
  if (!r.ref || !r.ref.has_reduction()) r.reject = "the segment has no reduction reference";
  return r;
}

}  // namespace schedlab::plugin_api
