// matmul plugin: finding the contraction of a segment (contraction.h).
#include "contraction.h"

#include <algorithm>
#include <string>
#include <vector>

#include "schedlab/plugin_api/alignment.hpp"

namespace matmul {
namespace {

using pa::describe;

/// Non-broadcast, non-reduction logical axes.
int iteration_rank(const pa::TensorView& tv) {
  int n = 0;
  for (const pa::AxisInfo& x : tv.logical()) n += !x.is_reduction() && !x.is_broadcast();
  return n;
}

/// An operand's path back to its input: which axes of the product it
/// iterates, the input, and the product axis of the input's innermost axis.
struct Trace {
  std::string reject;
  pa::TensorView input;
  std::vector<bool> iterates;  ///< per product axis
  int inner = -1;              ///< product axis of the input's last logical axis
  std::vector<int> axes;       ///< product axis of each of the input's logical axes
};

/// Follows `t` (an operand of the product, of the product's rank) back
/// through casts, copies and broadcasts to a segment input.
Trace trace(pa::TensorView t, const pa::TensorView& product) {
  Trace tr;
  const int rank = product.nlogical();
  std::vector<int> to_product(static_cast<size_t>(rank));  // t's axis -> product axis
  for (int i = 0; i < rank; ++i) to_product[static_cast<size_t>(i)] = i;
  while (!t.is_input()) {
    const pa::Definition d = t.definition();
    const bool passes = d.op_kind == pa::OpKind::Cast || d.op_kind == pa::OpKind::LoadStore ||
                        d.op_kind == pa::OpKind::Broadcast;
    std::vector<pa::TensorView> in = t.producers();
    if (!passes || in.size() != 1) {
      tr.reject = "operand " + describe(t) + " of " + describe(product) + " is computed by " +
                  (t.op_name().empty() ? std::string("an op") : t.op_name()) +
                  "; expected a broadcast or cast of a segment input";
      return tr;
    }
    if (in[0].consumers().size() != 1) {
      tr.reject = describe(in[0]) + " is read by " + std::to_string(in[0].consumers().size()) +
                  " tensors; the matmul plugin caches an operand for the product only";
      return tr;
    }
    if (d.op_kind == pa::OpKind::Broadcast) {
      std::vector<int> next;
      for (size_t k = 0; k < d.axes.size(); ++k)
        if (d.axes[k] == 0) next.push_back(to_product[k]);
      to_product = next;
    }
    t = in[0];
  }
  tr.input = t;
  tr.iterates.assign(static_cast<size_t>(rank), false);
  const std::vector<pa::AxisInfo> dom = t.logical();
  if (dom.size() != to_product.size()) {
    tr.reject = "cannot map the axes of " + describe(t) + " onto " + describe(product);
    return tr;
  }
  for (size_t i = 0; i < dom.size(); ++i) {
    // A segment cut after the broadcast: its Shared tile would carry the
    // broadcast axes the tile layout does not expect.
    if (dom[i].is_broadcast()) {
      tr.reject = "operand input " + describe(t) + " has a broadcast axis (" + std::to_string(i) +
                  "): the segment starts after the operand's broadcast; expected a segment input "
                  "without broadcast axes, broadcast inside the segment";
      return tr;
    }
    tr.iterates[static_cast<size_t>(to_product[i])] = true;
  }
  if (!dom.empty()) tr.inner = to_product.back();
  tr.axes = to_product;
  return tr;
}

bool supported(pa::DataType t) {
  return t == pa::DataType::BF16 || t == pa::DataType::F16 || t == pa::DataType::F32;
}

/// The product's operands, refusals, dtypes: fills c.product, c.a, c.b.
void find_operands(Contraction& c, std::vector<Trace>& traces) {
  std::vector<pa::Operand> ops = c.product.operands();
  for (const pa::Operand& o : ops)
    if (!o.is_tensor()) {
      c.reject = describe(c.product) + " multiplies by " + o.text +
                 ", not by a second tensor: not a contraction";
      return;
    }
  if (ops.size() != 2 || ops[0].tensor == ops[1].tensor) {
    c.reject = describe(c.product) + " is not a product of two tensors: not a contraction";
    return;
  }
  for (const pa::Operand& o : ops) {
    traces.push_back(trace(o.tensor, c.product));
    if (!traces.back().reject.empty()) {
      c.reject = traces.back().reject;
      return;
    }
    const pa::DataType t = traces.back().input.dtype();
    if (!supported(t)) {
      c.reject = describe(traces.back().input) + " is " + dtype_name(t) +
                 "; the matmul plugin takes bf16, f16 or f32 operands";
      return;
    }
  }
  if (traces[0].input.dtype() != traces[1].input.dtype()) {
    c.reject = "operands of different dtypes: " + describe(traces[0].input) + " is " +
               dtype_name(traces[0].input.dtype()) + ", " + describe(traces[1].input) + " is " +
               dtype_name(traces[1].input.dtype());
    return;
  }
  c.dtype = traces[0].input.dtype();
}

/// The role of each axis of the sum; a is the operand with the first axis
/// that only one operand iterates.
void assign_roles(Contraction& c, const std::vector<Trace>& t) {
  const std::vector<pa::AxisInfo> dom = c.sum.logical();
  int k = -1;
  for (int i = 0; i < static_cast<int>(dom.size()); ++i)
    if (dom[static_cast<size_t>(i)].is_reduction()) {
      if (k >= 0) {
        c.reject = describe(c.sum) + " reduces several axes; a contraction reduces one (K)";
        return;
      }
      k = i;
    }
  for (const Trace& x : t)
    if (!x.iterates[static_cast<size_t>(k)]) {
      c.reject = "K (axis " + std::to_string(k) + " of " + describe(c.sum) +
                 ") is not the reduced axis of both operands: " + describe(x.input) +
                 " is broadcast along it";
      return;
    }
  int first = -1;  // which trace has the M axis
  int m_axes = 0, n_axes = 0;
  c.roles.assign(dom.size(), Role::Batch);
  for (int i = 0; i < static_cast<int>(dom.size()); ++i) {
    const size_t u = static_cast<size_t>(i);
    const bool in0 = t[0].iterates[u], in1 = t[1].iterates[u];
    if (i == k) {
      c.roles[u] = Role::K;
      c.K = dom[u].extent;
    } else if (in0 && in1) {
      c.batch *= dom[u].extent;
    } else if (in0 != in1) {
      const int who = in0 ? 0 : 1;
      if (first < 0) first = who;
      c.roles[u] = who == first ? Role::M : Role::N;
      (who == first ? c.M : c.N) = dom[u].extent;
      ++(who == first ? m_axes : n_axes);
    } else if (!dom[u].is_broadcast()) {
      c.reject =
          "axis " + std::to_string(i) + " of " + describe(c.sum) + " iterates in neither operand";
      return;
    }
  }
  if (m_axes != 1 || n_axes != 1) {
    c.reject = describe(c.sum) + " has " + std::to_string(m_axes) + " M and " +
               std::to_string(n_axes) +
               " N axes (axes only one operand iterates); expected one of each";
    return;
  }
  const Trace& ta = t[static_cast<size_t>(first)];
  const Trace& tb = t[static_cast<size_t>(1 - first)];
  c.a = {ta.input, c.roles[static_cast<size_t>(ta.inner)], {}};
  c.b = {tb.input, c.roles[static_cast<size_t>(tb.inner)], {}};
  for (int x : ta.axes) c.a.axes.push_back(c.roles[static_cast<size_t>(x)]);
  for (int x : tb.axes) c.b.axes.push_back(c.roles[static_cast<size_t>(x)]);
}

/// The epilogue: pointwise, every output after the sum, nothing broadcast back.
void check_epilogue(pa::Segment& seg, Contraction& c) {
  if (c.product.is_output() || c.product.consumers().size() != 1) {
    c.reject = "the product " + describe(c.product) + " is also read outside the sum";
    return;
  }
  const int kept = iteration_rank(c.sum);
  for (const pa::TensorView& out : seg.outputs())
    if (out != c.sum && !seg.is_dependency_of(c.sum, out)) {
      c.reject = "output " + describe(out) + " does not depend on the contraction " +
                 describe(c.sum) + "; the matmul plugin schedules the contraction and its epilogue";
      return;
    }
  // The epilogue is inlined into the output tile by position: a reshape
  // (view) regroups the axes, so no tile loop iterates the same elements on
  // both sides (lowering refused it: fuzz seed 1, case 64, linear + GELU +
  // reshape). The segmenter cuts the view into a segment of its own.
  for (const pa::TensorView& t : seg.vals_between({c.sum}, seg.outputs()))
    if (t.op_kind() == pa::OpKind::View) {
      c.reject = "epilogue tensor " + describe(t) + " is a reshape (view) of the contraction's "
                 "result: the output tile inlines its epilogue by position, which a reshape "
                 "regroups; schedule the reshape in a segment of its own";
      return;
    }
  // A batched tile's loops start with the batch axis, and a tensor is inlined
  // into its consumer's loops by position: an epilogue tensor computed
  // without the batch axes (a cast of an [M, 1] input, broadcast to the batch
  // later) cannot be (fuzz seed 44, case 41: lowering refused it).
  const bool batched = std::count(c.roles.begin(), c.roles.end(), Role::Batch) > 0;
  const int out_rank = c.sum.nlogical() - 1;
  if (batched)
    for (const pa::TensorView& t : seg.vals_between(seg.inputs(), seg.outputs()))
      if (!t.is_input() && t.nlogical() < out_rank && !seg.is_dependency_of(t, c.product)) {
        c.reject = "epilogue tensor " + describe(t) + " has " + std::to_string(t.nlogical()) +
                   " axes, fewer than the batched result's " + std::to_string(out_rank) +
                   ": computed without the batch axes, it cannot be inlined into the batched "
                   "output tile (broadcast its input to the batch axes first)";
        return;
      }
  for (const pa::TensorView& t : seg.vals_between({c.sum}, seg.outputs()))
    if (iteration_rank(t) > kept) {
      c.reject = "the result of " + describe(c.sum) + " is broadcast back over the reduced axis (" +
                 describe(t) + " iterates over " + std::to_string(iteration_rank(t)) + " axes)";
      return;
    }
}

}  // namespace

std::string dtype_name(pa::DataType t) {
  switch (t) {
    case pa::DataType::Bool:
      return "bool";
    case pa::DataType::I32:
      return "i32";
    case pa::DataType::I64:
      return "i64";
    case pa::DataType::F16:
      return "f16";
    case pa::DataType::BF16:
      return "bf16";
    case pa::DataType::F32:
      return "f32";
    case pa::DataType::F64:
      return "f64";
  }
  return "?";
}

Contraction analyze(pa::Segment& seg) {
  Contraction c;
  std::vector<pa::TensorView> sums = seg.reduction_tvs();
  if (sums.empty()) {
    c.reject = "the segment has no reduction: not a contraction";
    return c;
  }
  if (sums.size() > 1) {
    std::string names;
    for (const pa::TensorView& s : sums) names += (names.empty() ? "" : ", ") + describe(s);
    c.reject = std::to_string(sums.size()) + " reductions (" + names +
               "): the matmul plugin schedules one contraction per segment";
    return c;
  }
  c.sum = sums[0];
  if (c.sum.op_name() != "sum") {
    c.reject =
        describe(c.sum) + " is a " + c.sum.op_name() + " reduction, not a sum: not a contraction";
    return c;
  }
  std::vector<pa::TensorView> in = c.sum.producers();
  if (in.size() != 1 || in[0].is_input() || in[0].op_kind() != pa::OpKind::Binary ||
      in[0].op_name() != "mul") {
    c.reject = describe(c.sum) + " sums " +
               (in.empty() ? std::string("nothing") : describe(in[0])) +
               ", which is not a product: not a contraction (expected sum(a * b))";
    return c;
  }
  c.product = in[0];
  std::vector<Trace> traces;
  find_operands(c, traces);
  if (!c.reject.empty()) return c;
  assign_roles(c, traces);
  if (!c.reject.empty()) return c;
  check_epilogue(seg, c);
  return c;
}

}  // namespace matmul
