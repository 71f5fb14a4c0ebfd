// The communication pass: sharding propagation, the rules, collectives and
// local steps (schedlab/lower/communication.h, docs/multi-device.md).
#include "schedlab/lower/communication.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "schedlab/base/error.h"
#include "schedlab/ir/dtype.h"
#include "schedlab/ir/printer.h"

namespace schedlab::lower {

using ir::Expr;
using ir::IterDomain;
using ir::TensorView;
using Layout = PlanValue::Layout;

std::string_view collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::Allreduce:
      return "allreduce";
    case CollectiveKind::ReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::Allgather:
      return "allgather";
    case CollectiveKind::Slice:
      return "slice";
  }
  return "?";
}

namespace {

std::string layout_str(Layout l, int axis, ir::ReductionOpType op) {
  switch (l) {
    case Layout::Replicated:
      return "replicated";
    case Layout::Sharded:
      return "sharded on axis " + std::to_string(axis);
    case Layout::Partial:
      return "partial " + std::string(ir::reduction_op_name(op));
  }
  return "?";
}

}  // namespace

std::string PlanValue::str() const {
  return tensor->describe() + " " + layout_str(layout, axis, partial_op) + " " +
         ir::shape_str(local_shape);
}

std::string Communication::str(const std::vector<PlanValue>& values) const {
  std::string args;
  switch (kind) {
    case CollectiveKind::Allreduce:
      args = std::string(ir::reduction_op_name(op));
      break;
    case CollectiveKind::ReduceScatter:
      args = std::string(ir::reduction_op_name(op)) + ", axis " + std::to_string(axis);
      break;
    case CollectiveKind::Allgather:
    case CollectiveKind::Slice:
      args = "axis " + std::to_string(axis);
      break;
  }
  return std::string(collective_name(kind)) + "(" + args + ") " +
         values.at(static_cast<size_t>(input)).tensor->str() + " -> " +
         values.at(static_cast<size_t>(output)).tensor->str();
}

namespace {

/// A layout a tensor can be held in.
struct Want {
  Layout layout = Layout::Replicated;
  int axis = -1;  ///< Sharded: the data axis
  ir::ReductionOpType op = ir::ReductionOpType::Sum;
  bool operator==(const Want& o) const {
    return layout == o.layout && (layout != Layout::Sharded || axis == o.axis) &&
           (layout != Layout::Partial || op == o.op);
  }
};

/// The logical position of data axis `a` (Reduction axes skipped).
int logical_of_data(const TensorView* t, int a) {
  int seen = 0;
  for (int i = 0; i < t->nlogical(); ++i) {
    if (t->logical()[static_cast<size_t>(i)]->is_reduction()) continue;
    if (seen++ == a) return i;
  }
  internal_error << "data axis " << a << " out of range for " << t->describe();
}

/// The data position of logical axis `l` (not a Reduction axis).
int data_of_logical(const TensorView* t, int l) {
  int d = 0;
  for (int i = 0; i < l; ++i)
    if (!t->logical()[static_cast<size_t>(i)]->is_reduction()) ++d;
  return d;
}

class Planner {
 public:
  /// `hints`: body tensors to make sharded (on an output logical axis) by
  /// slicing their producer's replicated inputs rather than their result.
  using Hints = std::map<const TensorView*, int>;
  Planner(const ir::Fusion& f, const ir::SizeBindings& sizes, const ir::DeviceMesh& mesh,
          Hints hints = {})
      : f_(f), D_(mesh.size()), hints_(std::move(hints)) {
    plan_.fusion = &f;
    plan_.mesh = mesh;
    plan_.sizes = sizes;
    user_assert(D_ >= 1) << "fusion '" << f.name() << "': expected a device mesh of at least one "
                         << "device, found an empty one";
  }

  ShardedPlan run() {
    // Inputs: their declaration, or replicated.
    for (const TensorView* in : f_.inputs()) {
      Want w;
      if (auto d = declared(in); d && d->sharded()) {
        w.layout = Layout::Sharded;
        w.axis = data_of_logical(in, d->axis);
      }
      int v = make_value(in, w, /*ready=*/0, /*producer=*/nullptr);
      canonical_[in] = v;
    }
    for (const Expr* e : f_.exprs_for_outputs()) plan_expr(e);
    for (const TensorView* out : f_.outputs()) {
      int v = canonical_.at(out);
      if (plan_.values[static_cast<size_t>(v)].layout == Layout::Partial) v = convert(v, Want{});
      plan_.outputs.push_back(v);
    }
    // Slices to move up mean another round (plan_communication): the step
    // rules are checked on the last round only.
    more_ = movable_slices();
    if (more_.empty()) build_steps();
    return std::move(plan_);
  }
  /// movable_slices() of the plan run() made.
  const Hints& more_hints() const { return more_; }

  /// Slices of a body tensor that could move to its producer's inputs: the
  /// tensor is read only through the slice, its producer reads only
  /// replicated tensors, and every sliced axis maps to those inputs. Moving
  /// them keeps the producer and its consumers in one step (a bias
  /// broadcast read with a sharded activation).
  Hints movable_slices() const {
    Hints more;
    for (const PendingComm& c : comms_) {
      if (c.comm.kind != CollectiveKind::Slice) continue;
      const ValueInfo& src = info_[static_cast<size_t>(c.comm.input)];
      const Expr* p = src.producer;
      if (!p) continue;
      const TensorView* t = p->out();
      if (hints_.count(t) || declared(t) || f_.is_output(t) || read_directly_.count(c.comm.input))
        continue;
      int oa = logical_of_data(t, c.comm.axis);
      if (!sliceable(p, oa)) continue;
      bool replicated_inputs = true;
      for (auto& [in, v] : inputs_of_.at(p))
        if (value(v).layout != Layout::Replicated) replicated_inputs = false;
      if (replicated_inputs) more[t] = oa;
    }
    return more;
  }

 private:
  struct ValueInfo {
    int ready = 0;                   ///< the first local step that may read it
    const Expr* producer = nullptr;  ///< the expression whose natural output it is
    int shard_logical = -1;          ///< the sharded logical axis (Reduction axes counted)
  };
  struct PendingComm {
    Communication comm;
    int ready;  ///< emitted right before local step `ready`
  };

  std::optional<ir::Sharding> declared(const TensorView* t) const {
    if (D_ == 1) return std::nullopt;  // one device: every layout is the whole tensor
    return ir::declared_sharding(t);
  }

  int64_t eval(const TensorView* t, int logical, const ir::SizeExpr& e) const {
    auto v = e.evaluate(plan_.sizes);
    user_assert(v) << "fusion '" << f_.name() << "': axis " << logical << " of " << t->describe()
                   << " has extent " << e.str() << ", which the sizes do not bind; expected "
                   << "every named size bound";
    return *v;
  }

  /// The rule on a sharded extent: a plain named size, a multiple of D.
  void check_extent(const TensorView* t, int logical) const {
    const ir::SizeExpr& e = t->logical()[static_cast<size_t>(logical)]->extent();
    user_assert(e.is_symbol()) << "fusion '" << f_.name() << "': " << t->describe() << " axis "
                               << logical << " is sharded over " << D_
                               << " devices; expected a sharded extent that is a named "
                               << "size, found " << e.str();
    int64_t v = eval(t, logical, e);
    user_assert(v % D_ == 0) << "fusion '" << f_.name() << "': " << t->describe() << " axis "
                             << logical << " is sharded over " << D_
                             << " devices; expected its extent " << e.str()
                             << " to be a multiple of " << D_ << ", found " << e.str() << " = "
                             << v;
  }

  int make_value(const TensorView* t, const Want& w, int ready, const Expr* producer,
                 int shard_logical = -1) {
    PlanValue pv;
    pv.tensor = t;
    pv.layout = w.layout;
    pv.axis = w.layout == Layout::Sharded ? w.axis : -1;
    pv.partial_op = w.op;
    pv.bytes_per_element = ir::dtype_size(t->dtype());
    if (w.layout == Layout::Sharded) {
      shard_logical = logical_of_data(t, w.axis);
      check_extent(t, shard_logical);
    }
    if (w.layout == Layout::Partial) check_extent(t, shard_logical);
    int d = 0;
    for (int i = 0; i < t->nlogical(); ++i) {
      const IterDomain* id = t->logical()[static_cast<size_t>(i)];
      if (id->is_reduction()) continue;
      int64_t n = eval(t, i, id->extent());
      if (w.layout == Layout::Sharded && d == w.axis) n /= D_;
      pv.local_shape.push_back(n);
      ++d;
    }
    plan_.values.push_back(std::move(pv));
    info_.push_back(ValueInfo{ready, producer, shard_logical});
    return static_cast<int>(plan_.values.size()) - 1;
  }

  const PlanValue& value(int v) const { return plan_.values[static_cast<size_t>(v)]; }
  Want want_of(int v) const {
    const PlanValue& pv = value(v);
    return Want{pv.layout, pv.axis, pv.partial_op};
  }
  int64_t local_bytes(int v) const {
    int64_t n = value(v).bytes_per_element;
    for (int64_t s : value(v).local_shape) n *= s;
    return n;
  }
  /// The first step that may read a communication's result from `v`.
  int comm_ready(int v) const {
    const ValueInfo& i = info_[static_cast<size_t>(v)];
    return i.producer ? level_.at(i.producer) + 1 : i.ready;
  }
  int ready_for(const Expr* e, int v) const {
    const ValueInfo& i = info_[static_cast<size_t>(v)];
    (void)e;
    return i.producer ? level_.at(i.producer) : i.ready;
  }

  /// One collective from `v` to layout `w` (deduplicated).
  int collective(int v, CollectiveKind kind, const Want& w) {
    auto key = std::make_tuple(v, static_cast<int>(w.layout), w.axis);
    if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
    const PlanValue src = value(v);
    int ready = comm_ready(v);
    int out = make_value(src.tensor, w, ready, nullptr);
    Communication c;
    c.kind = kind;
    c.input = v;
    c.output = out;
    c.op = src.partial_op;
    c.axis = (kind == CollectiveKind::Allgather) ? src.axis : w.axis;
    c.bytes_per_rank = kind == CollectiveKind::Slice ? 0 : local_bytes(v);
    comms_.push_back(PendingComm{c, ready});
    comm_cache_[key] = out;
    return out;
  }

  /// The communications from `v` to layout `w`.
  int convert(int v, const Want& w) {
    Want from = want_of(v);
    if (from == w) return v;
    switch (from.layout) {
      case Layout::Partial:
        return w.layout == Layout::Replicated ? collective(v, CollectiveKind::Allreduce, w)
                                              : collective(v, CollectiveKind::ReduceScatter, w);
      case Layout::Replicated:
        internal_assert(w.layout == Layout::Sharded) << "replicated to partial";
        return collective(v, CollectiveKind::Slice, w);
      case Layout::Sharded: {
        int r = collective(v, CollectiveKind::Allgather, Want{});
        return w.layout == Layout::Replicated ? r : collective(r, CollectiveKind::Slice, w);
      }
    }
    return v;
  }

  /// The output logical axis that data axis `a` of tensor input `in` of `e`
  /// becomes (the view/permute rule).
  int to_output(const Expr* e, const TensorView* in, int a) const {
    const TensorView* out = e->out();
    if (const auto* b = e->as<ir::BroadcastOp>()) {
      int seen = 0;
      for (size_t k = 0; k < b->is_broadcast_dim().size(); ++k)
        if (!b->is_broadcast_dim()[k] && seen++ == a) return static_cast<int>(k);
      internal_error << "broadcast of " << in->describe() << " has no axis " << a;
    }
    if (const auto* p = e->as<ir::PermuteOp>()) {
      int k = static_cast<int>(std::find(p->new2old().begin(), p->new2old().end(), a) -
                               p->new2old().begin());
      user_assert(k == a) << "fusion '" << f_.name() << "': permute moves sharded axis " << a
                          << " of " << in->describe() << " (shape " << ir::shape_str(in)
                          << ") to axis " << k << " of " << out->describe()
                          << "; expected a sharded axis to stay in place";
      return k;
    }
    if (const auto* v = e->as<ir::ViewOp>()) {
      const IterDomain* r = out->root()[static_cast<size_t>(a)];
      auto it = std::find(out->logical().begin(), out->logical().end(), r);
      int k = it == out->logical().end() ? -1 : static_cast<int>(it - out->logical().begin());
      user_assert(k == a) << "fusion '" << f_.name() << "': " << v->fn() << " "
                          << (k < 0 ? "splits or merges" : "moves") << " sharded axis " << a
                          << " of " << in->describe() << " (shape " << ir::shape_str(in)
                          << ") into " << out->describe() << " (shape " << ir::shape_str(out)
                          << "); expected a sharded axis to stay whole and in place";
      return k;
    }
    return a;  // pointwise, cast, where, set, reduction, mma: positional
  }

  /// The input data axis that output logical axis `oa` of `e` reads; -1
  /// where it reads none (a new Broadcast axis, a moved or reshaped axis).
  int to_input(const Expr* e, int oa) const {
    if (const auto* b = e->as<ir::BroadcastOp>()) {
      if (b->is_broadcast_dim()[static_cast<size_t>(oa)]) return -1;
      int n = 0;
      for (int k = 0; k < oa; ++k) n += b->is_broadcast_dim()[static_cast<size_t>(k)] ? 0 : 1;
      return n;
    }
    if (e->is<ir::PermuteOp>() || e->is<ir::ViewOp>()) return -1;
    return oa;
  }

  /// Whether `e` can make its output sharded on `oa` from sliced inputs.
  bool sliceable(const Expr* e, int oa) const {
    if (e->is<ir::PermuteOp>() || e->is<ir::ViewOp>() || e->is<ir::MmaOp>()) return false;
    if (e->out()->logical()[static_cast<size_t>(oa)]->is_reduction()) return false;
    if (const auto* b = e->as<ir::BroadcastOp>())
      return !b->is_broadcast_dim()[static_cast<size_t>(oa)];
    return true;
  }

  void plan_expr(const Expr* e) {
    const TensorView* out = e->out();
    // Partials are combined before anyone reads them.
    std::vector<std::pair<const TensorView*, int>> ins;  // tensor input, value
    for (const ir::Val* v : e->inputs()) {
      const TensorView* t = v->as<TensorView>();
      if (!t) continue;
      int val = canonical_.at(t);
      if (value(val).layout == Layout::Partial) val = convert(val, Want{});
      ins.emplace_back(t, val);
    }
    // The sharded producers must agree on the output axis.
    int oa = -1;
    const TensorView* first = nullptr;
    int first_axis = -1;
    for (auto& [t, v] : ins) {
      if (value(v).layout != Layout::Sharded) continue;
      int k = to_output(e, t, value(v).axis);
      if (oa >= 0 && k != oa)
        user_error << "fusion '" << f_.name() << "': " << e->op_name() << " into "
                   << out->describe() << " reads " << first->describe() << " sharded on axis "
                   << first_axis << " and " << t->describe() << " sharded on axis " << value(v).axis
                   << "; expected its sharded producers to agree on one axis "
                   << "of " << out->describe() << ", found axes " << oa << " and " << k;
      if (oa < 0) {
        oa = k;
        first = t;
        first_axis = value(v).axis;
      }
    }
    if (oa < 0)
      if (auto h = hints_.find(out); h != hints_.end()) oa = h->second;
    // A replicated operand read with a sharded one is sliced, unless it is
    // broadcast along that axis.
    if (oa >= 0) {
      for (auto& [t, v] : ins) {
        if (value(v).layout != Layout::Replicated) continue;
        int ia = to_input(e, oa);
        if (ia < 0) continue;
        auto data = t->logical_no_reductions();
        if (static_cast<size_t>(ia) >= data.size() || data[static_cast<size_t>(ia)]->is_broadcast())
          continue;
        v = convert(v, Want{Layout::Sharded, ia, {}});
      }
    }
    for (auto& [t, v] : ins) read_directly_.insert(v);
    int level = 0;
    for (auto& [t, v] : ins) level = std::max(level, ready_for(e, v));
    level_[e] = level;
    inputs_of_[e] = ins;

    Want w;
    int shard_logical = -1;
    if (oa >= 0) {
      shard_logical = oa;
      if (out->logical()[static_cast<size_t>(oa)]->is_reduction()) {
        auto acc = ir::accumulation(e);
        user_assert(acc) << "fusion '" << f_.name() << "': " << e->op_name() << " into "
                         << out->describe() << " reduces sharded axis " << oa
                         << "; expected a reduction over a sharded axis to be sum, max, min or "
                         << "prod, found " << e->op_name();
        w.layout = Layout::Partial;
        w.op = *acc;
      } else {
        w.layout = Layout::Sharded;
        w.axis = data_of_logical(out, oa);
      }
    }
    int natural = make_value(out, w, level, e, shard_logical);
    int canon = natural;
    if (auto d = declared(out)) {
      Want dw;
      if (d->sharded()) {
        dw.layout = Layout::Sharded;
        dw.axis = data_of_logical(out, d->axis);
      }
      canon = convert(natural, dw);
    }
    canonical_[out] = canon;
  }

  void build_steps() {
    int nlevels = 0;
    for (auto& [e, l] : level_) nlevels = std::max(nlevels, l + 1);
    std::vector<std::vector<const Expr*>> by_level(static_cast<size_t>(nlevels));
    for (const Expr* e : f_.exprs_for_outputs())
      by_level[static_cast<size_t>(level_.at(e))].push_back(e);
    auto emit_comms = [&](int ready) {
      for (const PendingComm& c : comms_)
        if (c.ready == ready) plan_.steps.emplace_back(c.comm);
    };
    int k = 0;
    for (int l = 0; l < nlevels; ++l) {
      emit_comms(l);
      if (by_level[static_cast<size_t>(l)].empty()) continue;
      plan_.steps.emplace_back(local_step(by_level[static_cast<size_t>(l)], k++));
    }
    for (const PendingComm& c : comms_)
      if (c.ready >= nlevels) plan_.steps.emplace_back(c.comm);
  }

  LocalStep local_step(const std::vector<const Expr*>& exprs, int index) {
    // What each tensor is in this step: its value, and which of its axes
    // have local extents.
    std::map<const TensorView*, int> in_value;
    for (const Expr* e : exprs)
      for (auto& [t, v] : inputs_of_.at(e)) {
        const ValueInfo& i = info_[static_cast<size_t>(v)];
        if (i.producer && level_.at(i.producer) == level_.at(e)) continue;  // made in this step
        auto [it, fresh] = in_value.emplace(t, v);
        if (!fresh && it->second != v) mixed_layouts(t, it->second, v, index);
      }
    LocalStep step;
    step.fusion = ir::extract(f_, exprs, f_.name() + "_l" + std::to_string(index));
    for (const TensorView* t : step.fusion.original_inputs()) {
      auto it = in_value.find(t);
      // A size carrier (extract's unused input) reads the tensor as held.
      int v = it != in_value.end() ? it->second : canonical_.at(t);
      if (it == in_value.end()) in_value.emplace(t, v);
      step.inputs.push_back(v);
    }
    std::map<const TensorView*, int> natural;
    for (const Expr* e : exprs) {
      const TensorView* out = e->out();
      for (size_t v = 0; v < info_.size(); ++v)
        if (info_[v].producer == e) natural[out] = static_cast<int>(v);
    }
    for (const TensorView* t : step.fusion.original_outputs())
      step.outputs.push_back(natural.at(t));

    // The named-size rule: sharded on every axis that has it, or on none.
    struct Use {
      const TensorView* t;
      int axis;
    };
    std::map<std::string, Use> sharded, whole;
    auto note = [&](const TensorView* t, int logical, bool is_sharded) {
      const ir::SizeExpr& e = t->logical()[static_cast<size_t>(logical)]->extent();
      if (!e.is_symbol()) return;
      (is_sharded ? sharded : whole).emplace(e.symbol_name(), Use{t, logical});
    };
    for (auto& [t, v] : in_value)
      for (int i = 0; i < t->nlogical(); ++i)
        if (!t->logical()[static_cast<size_t>(i)]->is_reduction())
          note(t, i, i == info_[static_cast<size_t>(v)].shard_logical);
    for (auto& [t, v] : natural)
      for (int i = 0; i < t->nlogical(); ++i)
        note(t, i, i == info_[static_cast<size_t>(v)].shard_logical);
    for (auto& [name, s] : sharded)
      if (auto w = whole.find(name); w != whole.end())
        user_error << "fusion '" << f_.name() << "': in local step " << index << ", size " << name
                   << " is sharded on axis " << s.axis << " of " << s.t->describe()
                   << " and whole on axis " << w->second.axis << " of " << w->second.t->describe()
                   << "; expected a named size sharded on every axis that has it or on none "
                   << "within one step (declare the other tensor sharded, or replicated)";
    // A named size used as a value may not be sharded.
    for (const Expr* e : exprs)
      for (const ir::Val* v : e->inputs()) {
        const auto* s = v->as<ir::Scalar>();
        if (!s || !s->is_size()) continue;
        std::vector<std::string> syms;
        s->size().collect_symbols(syms);
        for (const auto& n : syms)
          if (auto it = sharded.find(n); it != sharded.end())
            user_error << "fusion '" << f_.name() << "': " << e->op_name() << " into "
                       << e->out()->describe() << " uses the size " << s->size().str()
                       << " as a value, and " << n << " is sharded (axis " << it->second.axis
                       << " of " << it->second.t->describe() << ") in local step " << index
                       << "; expected a size used as a value to be whole, found it sharded over "
                       << D_ << " devices";
      }
    step.sizes = plan_.sizes;
    for (auto& [name, s] : sharded) step.sizes[name] = plan_.sizes.at(name) / D_;
    return step;
  }

  void mixed_layouts(const TensorView* t, int a, int b, int index) const {
    user_error << "fusion '" << f_.name() << "': in local step " << index << ", " << t->describe()
               << " is read both " << value(a).str() << " and " << value(b).str()
               << "; expected one layout of a tensor within one step";
  }

  const ir::Fusion& f_;
  int D_;
  Hints hints_, more_;
  std::set<int> read_directly_;  ///< values some expression reads as they are
  ShardedPlan plan_;
  std::vector<ValueInfo> info_;
  std::map<const TensorView*, int> canonical_;
  std::map<const Expr*, int> level_;
  std::map<const Expr*, std::vector<std::pair<const TensorView*, int>>> inputs_of_;
  std::map<std::tuple<int, int, int>, int> comm_cache_;
  std::vector<PendingComm> comms_;
};

}  // namespace

ShardedPlan plan_communication(const ir::Fusion& f, const ir::SizeBindings& sizes,
                               const ir::DeviceMesh& mesh) {
  // Plan; where a body tensor is sliced only to be read with a sharded one,
  // plan again with the slice moved to its producer's inputs (each round
  // moves at least one slice one expression up; fusion inputs slice free).
  Planner::Hints hints;
  for (size_t round = 0;; ++round) {
    Planner p(f, sizes, mesh, hints);
    ShardedPlan plan = p.run();
    Planner::Hints more = p.more_hints();
    if (more.empty() || round > f.tensors().size()) return plan;
    hints.insert(more.begin(), more.end());
  }
}

std::string print_plan(const ShardedPlan& plan,
                       const std::function<std::string(size_t step)>& kernel_text) {
  std::ostringstream os;
  os << "mesh " << plan.mesh.str() << "\n";
  os << "values:\n";
  for (size_t i = 0; i < plan.values.size(); ++i)
    os << "  v" << i << ": " << plan.values[i].str() << "\n";
  auto list = [&](const std::vector<int>& vs) {
    std::string s;
    for (int v : vs) s += (s.empty() ? "" : ", ") + plan.values.at(static_cast<size_t>(v)).str();
    return "(" + s + ")";
  };
  std::vector<std::string> names =
      plan.fusion ? plan.fusion->size_symbols() : std::vector<std::string>{};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    os << "step " << i << ": ";
    if (const auto* l = std::get_if<LocalStep>(&plan.steps[i])) {
      std::string sizes;
      for (auto& [k, v] : ir::ordered_sizes(l->sizes, names))
        sizes += (sizes.empty() ? "" : ", ") + k + "=" + std::to_string(v);
      os << "kernel " << l->fusion.fusion->name() << " " << list(l->inputs) << " -> "
         << list(l->outputs) << " at " << (sizes.empty() ? "(no sizes)" : sizes) << "\n";
      if (kernel_text) {
        std::istringstream in(kernel_text(i));
        for (std::string line; std::getline(in, line);) os << "    " << line << "\n";
      }
    } else {
      const auto& c = std::get<Communication>(plan.steps[i]);
      os << c.str(plan.values) << " over " << plan.mesh.str() << ", " << c.bytes_per_rank
         << " bytes per rank\n";
    }
  }
  os << "outputs: " << list(plan.outputs) << "\n";
  return os.str();
}

}  // namespace schedlab::lower
