// autosched/facts.cpp: the facts the rules match on (facts.h). Each check
// says which lowering rule it protects; the same rules guard the built-in
// plugins, whose comments explain them at length (plugins/pointwise,
// reduction, normalization, transpose).
#include "facts.h"

#include <algorithm>

#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/loop_nests.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace autosched {

using pa::describe;

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::Pointwise:
      return "pointwise";
    case Pattern::InnerReduction:
      return "inner reduction";
    case Pattern::OuterReduction:
      return "outer reduction";
    case Pattern::Normalization:
      return "normalization";
    case Pattern::Transpose:
      return "transpose";
  }
  return "?";
}

namespace {

/// Non-broadcast, non-reduction logical axes.
int64_t iteration_rank(const pa::TensorView& tv) {
  int64_t n = 0;
  for (const pa::AxisInfo& a : tv.logical()) n += !a.is_reduction() && !a.is_broadcast();
  return n;
}

bool contains(const std::vector<pa::TensorView>& v, const pa::TensorView& t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

/// Full rank: every logical axis iterated (no broadcast, no reduction), `rank` of them.
bool full(const pa::TensorView& t, size_t rank) {
  std::vector<pa::AxisInfo> d = t.logical();
  return d.size() == rank && std::none_of(d.begin(), d.end(), [](const pa::AxisInfo& x) {
           return x.is_broadcast() || x.is_reduction() || x.extent < 1;
         });
}

/// The inputs and outputs that can be read or written with vectors: the
/// reference's innermost axis is theirs (its inner-dim group), and they
/// have its full iteration rank. Outputs read inside the segment stay plain.
/// A reduction reference is neither input nor output, and its computed
/// tensors iterate its axes in order (the facts check it): there, full rank
/// alone puts a tensor in the reference's layout.
void vector_candidates(pa::Segment& seg, Facts& f, size_t rank) {
  std::vector<pa::TensorView> group;
  for (const auto& g : seg.group_inputs_outputs_by_inner_dim())
    if (contains(g, f.ref)) group = g;
  const bool any_layout = f.ref.has_reduction();
  auto in_layout = [&](const pa::TensorView& t) { return any_layout || contains(group, t); };
  for (const pa::TensorView& in : seg.inputs())
    if (!in.consumers().empty() && in_layout(in) && full(in, rank)) f.vector_inputs.push_back(in);
  for (const pa::TensorView& out : seg.outputs())
    if (out.consumers().empty() && full(out, rank) && (in_layout(out) || out == f.ref))
      f.vector_outputs.push_back(out);
  for (const auto* list : {&f.vector_inputs, &f.vector_outputs})
    for (const pa::TensorView& t : *list) f.widest = std::max(f.widest, pa::dtype_bytes(t.dtype()));
}

/// Has the reference's axes: its rank, with Broadcast axes where it has them.
bool full_like(const pa::TensorView& tv, const std::vector<pa::AxisInfo>& ref_dom) {
  std::vector<pa::AxisInfo> dom = tv.logical();
  if (dom.size() != ref_dom.size()) return false;
  for (size_t i = 0; i < dom.size(); ++i)
    if (dom[i].is_broadcast() != ref_dom[i].is_broadcast()) return false;
  return true;
}

/// Without reductions, every computed tensor takes the reference's flat
/// loop: it iterates the reference's axes in order (pa::misaligned), and a
/// tensor with fewer axes is inlined whole into readers that have them all.
std::string pointwise_obstacle(pa::Segment& seg, const pa::TensorView& ref) {
  const std::vector<pa::AxisInfo> rdom = ref.logical();
  if (std::all_of(rdom.begin(), rdom.end(), [](const pa::AxisInfo& a) { return a.is_broadcast(); }))
    return "the reference " + describe(ref) + " has no axis to parallelize";
  const std::string loop = "; autosched gives every tensor the reference's flat loop";
  for (const pa::TensorView& tv : seg.tensors()) {
    if (tv.is_input() || tv == ref) continue;
    if (std::string why = pa::misaligned(seg, tv, ref); !why.empty()) return why + loop;
    // Upstream of a view (reshape), a tensor lines up with the view's input.
    const pa::TensorView lref = pa::local_reference(seg, tv, ref);
    const std::vector<pa::AxisInfo> ldom = lref != ref ? lref.logical() : rdom;
    if (full_like(tv, ldom)) continue;
    if (tv.is_output())
      return "the output " + describe(tv) + " iterates fewer axes than the reference " +
             describe(ref) + loop;
    for (const pa::TensorView& c : tv.consumers())
      if (!full_like(c, ldom))
        return describe(tv) + " and its reader " + describe(c) +
               " both iterate fewer axes than the reference " + describe(ref) + loop;
  }
  return "";
}

/// The transpose facts, or why the segment is not a two-layout transpose
/// (then the pointwise rules read the other layout through its index).
std::string transpose_facts(pa::Segment& seg, Facts& f) {
  for (const pa::TensorView& out : seg.outputs())
    if (!out.consumers().empty())
      return "the output " + describe(out) + " is read inside the segment";
  const int rank = f.ref.nlogical();
  if (rank < 2) return "the reference has fewer than two axes";
  std::vector<std::vector<pa::TensorView>> others;
  for (const auto& g : seg.group_inputs_outputs_by_inner_dim())
    if (!contains(g, f.ref)) others.push_back(g);
  if (others.size() != 1) return "not two layouts";
  for (const pa::TensorView& tv : others[0]) {
    if (tv.is_input() && tv.consumers().empty()) continue;
    if (tv.nlogical() != rank) return "a tensor of another rank in the other layout";
    for (const pa::AxisInfo& a : tv.logical())
      if (a.is_broadcast()) return "a broadcast tensor in the other layout";
    (tv.is_input() ? f.t_inputs : f.t_outputs).push_back(tv);
  }
  if (f.t_inputs.empty() && f.t_outputs.empty()) return "only unused inputs in the other layout";
  const pa::TensorView& t = f.t_inputs.empty() ? f.t_outputs[0] : f.t_inputs[0];
  f.inner1 = rank - 1;
  for (int i = 0; i < rank - 1 && f.inner2 < 0; ++i)
    if (seg.axes_mapped(f.ref, i, t, -1)) f.inner2 = i;
  if (f.inner2 < 0) return "the other layout's innermost axis maps to no axis of the reference";
  for (int i : {f.inner1, f.inner2})
    if (f.ref.logical_axis(i).extent < 1 || f.ref.logical_axis(i).is_broadcast())
      return "a transposed axis is a broadcast";
  for (int i = 0; i < rank; ++i)
    if (i != f.inner1 && i != f.inner2)
      f.outer *= std::max<int64_t>(f.ref.logical_axis(i).extent, 1);
  return "";
}

Facts reject(std::string why) {
  Facts f;
  f.reject = std::move(why);
  return f;
}

/// The reduction facts: every reduction over the same axes, every computed
/// tensor on the reference's [I, R] loop; a result broadcast back over the
/// reduced axes makes a normalization (inner only).
Facts reduction_facts(pa::Segment& seg, const std::vector<pa::TensorView>& reductions) {
  Facts f;
  for (const pa::TensorView& tv : seg.tensors())
    if (tv.op_kind() == pa::OpKind::Permute)
      return reject("autosched does not reduce and permute in one kernel (" + describe(tv) + ")");
  f.ref = seg.find_reference();
  if (!f.ref || !f.ref.has_reduction()) return reject("the segment has no reduction reference");
  const std::vector<pa::AxisInfo> dom = f.ref.logical();
  for (int i = 0; i < static_cast<int>(dom.size()); ++i) {
    if (dom[i].extent < 1) return reject("axis " + std::to_string(i) + " has no concrete extent");
    if (dom[i].is_reduction()) {
      f.red_axes.push_back(i);
      f.R *= dom[i].extent;
    } else if (!dom[i].is_broadcast()) {
      f.iter_axes.push_back(i);
      f.I *= dom[i].extent;
    }
  }
  f.inner_extent = dom.back().extent;
  for (const pa::TensorView& r : reductions) {
    std::vector<int> axes;
    std::vector<pa::AxisInfo> d = r.logical();
    for (int i = 0; i < static_cast<int>(d.size()); ++i)
      if (d[i].is_reduction()) axes.push_back(i);
    if (d.size() != dom.size() || axes != f.red_axes)
      return reject("reductions over different axes: " + describe(f.ref) + " and " + describe(r) +
                    " (segment them apart)");
  }
  if (std::string why = pa::first_misaligned(seg, f.ref); !why.empty())
    return reject(why + "; autosched gives every tensor the reference's [I, R] loop");
  if (std::string why = pa::broadcast_read_by_two_nests(seg, f.ref); !why.empty())
    return reject(why);
  const int64_t kept = static_cast<int64_t>(f.iter_axes.size());
  const int64_t rank = kept + static_cast<int64_t>(f.red_axes.size());
  bool back = false;
  for (const pa::TensorView& r : reductions) {
    f.read_in_kernel |= !r.consumers().empty();
    for (const pa::TensorView& t : seg.vals_between({r}, seg.outputs())) {
      const int64_t n = iteration_rank(t);
      if (n > kept && n != rank)
        return reject("the result of " + describe(r) + " is broadcast back over some of the " +
                      "reduced axes only (" + describe(t) + ")");
      back |= n == rank;
    }
  }
  const bool inner = dom.back().is_reduction();
  if (!back) {
    f.pattern = inner ? Pattern::InnerReduction : Pattern::OuterReduction;
    vector_candidates(seg, f, dom.size());
    // A reduction reads its inputs at full rank, reduced axes included.
    f.vector_outputs.clear();
    f.widest = 1;
    for (const pa::TensorView& t : f.vector_inputs)
      f.widest = std::max(f.widest, pa::dtype_bytes(t.dtype()));
    return f;
  }
  for (size_t k = 0; k < f.red_axes.size(); ++k)
    if (f.red_axes[f.red_axes.size() - 1 - k] != static_cast<int>(dom.size() - 1 - k))
      return reject("a reduction result broadcast back over an outer reduced axis of " +
                    describe(f.ref) + ": autosched normalizes inner (contiguous) rows only");
  f.pattern = Pattern::Normalization;
  vector_candidates(seg, f, static_cast<size_t>(rank));
  for (const pa::TensorView& t : seg.tensors()) {
    if (t.is_output() || !full(t, static_cast<size_t>(rank))) continue;
    bool persistent = false;
    for (const pa::TensorView& r : reductions) {
      if (!seg.is_dependency_of(t, r)) continue;
      for (const pa::TensorView& c : t.consumers())
        persistent |= c != r && seg.is_dependency_of(r, c);
    }
    if (persistent) f.persistent.push_back(t);
  }
  if (f.red_axes.size() == 1)
    for (const pa::TensorView& in : pa::row_operands(seg, f.inner_extent))
      if (!contains(f.vector_inputs, in)) f.row_operands.push_back(in);
  return f;
}

}  // namespace

Facts read_facts(pa::Segment& seg) {
  if (seg.outputs().empty()) return reject("the segment has no outputs");
  std::vector<pa::TensorView> reductions = seg.reduction_tvs();
  if (!reductions.empty()) return reduction_facts(seg, reductions);
  Facts f;
  f.ref = seg.find_reference();
  if (!f.ref) return reject("the segment has no reference tensor");
  for (const pa::AxisInfo& a : f.ref.logical())
    if (a.extent < 1) return reject("the reference has an axis without a concrete extent");
  Facts t = f;
  if (transpose_facts(seg, t).empty()) {
    t.pattern = Pattern::Transpose;
    return t;
  }
  if (std::string why = pointwise_obstacle(seg, f.ref); !why.empty()) return reject(why);
  f.pattern = Pattern::Pointwise;
  for (const pa::AxisInfo& a : f.ref.logical()) f.I *= std::max<int64_t>(a.extent, 1);
  f.inner_extent = f.ref.logical_axis(-1).extent;
  vector_candidates(seg, f, f.ref.logical().size());
  return f;
}

}  // namespace autosched
