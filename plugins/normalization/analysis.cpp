// normalization/analysis.cpp: what the plugin learns about a segment before
// scheduling it (normalization.h): the reference reduction, its rows, the
// full-rank inputs and outputs, and the persistent tensors.
#include <algorithm>
#include <string>
#include <vector>

#include "normalization.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/loop_nests.hpp"
#include "schedlab/plugin_api/reduction_reference.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace normalization {

using pa::ceil_div;
using pa::describe;
using pa::dtype_bytes;

namespace {

/// Non-broadcast, non-reduction logical axes.
int64_t iteration_rank(const pa::TensorView& tv) {
  int64_t n = 0;
  for (const pa::AxisInfo& a : tv.logical()) n += !a.is_reduction() && !a.is_broadcast();
  return n;
}

}  // namespace

int64_t registers_per_element(const pa::TensorView& tv) {
  return ceil_div(dtype_bytes(tv.dtype()), 4);
}

Analysis analyze(pa::Segment& seg) {
  Analysis a;
  pa::ReductionReference rr = pa::reduction_reference(seg, "normalization");
  const std::vector<pa::TensorView>& reductions = rr.reductions;
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
  for (const pa::TensorView& r : reductions) {
    std::vector<int> axes;
    std::vector<pa::AxisInfo> d = r.logical();
    for (int i = 0; i < static_cast<int>(d.size()); ++i)
      if (d[i].is_reduction()) axes.push_back(i);
    if (d.size() != dom.size() || axes != a.red_axes) {
      a.reject = "reductions over different axes: " + describe(a.ref) + " and " + describe(r);
      return a;
    }
  }
  // Every computed tensor takes the reference's loop structure.
  if (std::string why = pa::first_misaligned(seg, a.ref); !why.empty()) {
    a.reject = why + "; normalization gives every tensor the reference's row layout";
    return a;
  }
  if (std::string why = pa::broadcast_read_by_two_nests(seg, a.ref); !why.empty()) {
    a.reject = why;
    return a;
  }
  a.full_rank = static_cast<int64_t>(a.iter_axes.size() + a.red_axes.size());
  a.inner_extent = dom.back().extent;
  bool broadcast_back = false;
  for (const pa::TensorView& r : reductions)
    for (const pa::TensorView& t : seg.vals_between({r}, seg.outputs()))
      broadcast_back |= iteration_rank(t) == a.full_rank;
  if (!broadcast_back) {
    a.reject =
        "no reduction result is broadcast back over the reduced axes; the reduction "
        "plugin schedules plain reductions";
    return a;
  }
  // Inner: the reduced axes are the innermost ones, so a row is contiguous.
  for (size_t k = 0; k < a.red_axes.size(); ++k)
    if (a.red_axes[a.red_axes.size() - 1 - k] != static_cast<int>(dom.size() - 1 - k)) {
      a.reject = "normalization schedules inner reductions (the innermost axes reduced); " +
                 describe(a.ref) + " reduces an outer axis";
      return a;
    }
  auto is_full = [&](const pa::TensorView& t) {
    std::vector<pa::AxisInfo> d = t.logical();
    return static_cast<int64_t>(d.size()) == a.full_rank &&
           std::none_of(d.begin(), d.end(),
                        [](const pa::AxisInfo& x) { return x.is_broadcast() || x.is_reduction(); });
  };
  for (const pa::TensorView& in : seg.inputs())
    if (!in.consumers().empty() && is_full(in)) a.full_inputs.push_back(in);
  for (const pa::TensorView& out : seg.outputs())
    if (is_full(out) && !out.consumers().empty()) {
      // An output read inside the fusion stays a plain Global tensor.
    } else if (is_full(out)) {
      a.full_outputs.push_back(out);
    }
  for (const pa::TensorView& t : a.full_inputs)
    a.widest = std::max(a.widest, dtype_bytes(t.dtype()));
  for (const pa::TensorView& t : a.full_outputs)
    a.widest = std::max(a.widest, dtype_bytes(t.dtype()));
  // Persistent: a full tensor that some reduction needs and that is read
  // again by something that needs that reduction's result.
  for (const pa::TensorView& t : seg.tensors()) {
    if (!is_full(t) || t.is_output()) continue;
    bool persistent = false;
    for (const pa::TensorView& r : reductions) {
      if (!seg.is_dependency_of(t, r)) continue;
      for (const pa::TensorView& c : t.consumers())
        persistent |= c != r && seg.is_dependency_of(r, c);
    }
    if (persistent) a.persistent.push_back(t);
  }
  for (const pa::TensorView& in : a.full_inputs) {
    bool needed = false;
    for (const pa::TensorView& p : a.persistent)
      needed = needed || p == in || seg.is_dependency_of(in, p);
    if (needed) a.persistent_inputs.push_back(in);
  }
  return a;
}

Analysis with_recompute(Analysis a) {
  a.persistent = a.persistent_inputs;
  return a;
}

}  // namespace normalization
