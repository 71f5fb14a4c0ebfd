// Loop transforms on TensorView: split, merge, reorder and the two kinds of
// binding. Every rule is checked here, at the call, and reported as a user
// error naming the tensor, the axis and the rule, so that nothing is left to
// fail later in lowering.
#include <algorithm>
#include <map>
#include <set>

#include "schedlab/base/error.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

namespace {

std::string axis_desc(const TensorView* t, int axis) {
  return t->describe() + " axis " + std::to_string(axis) + " (" +
         t->loop()[static_cast<size_t>(axis)]->str() + ")";
}

int norm_loop_axis(std::string_view op, const TensorView* t, int axis) {
  int n = t->nloop();
  user_assert(axis >= -n && axis < n)
      << op << ": axis " << axis << " is out of range for " << t->describe() << " with " << n
      << " loop axes; expected an axis in [" << -n << ", " << n - 1 << "]";
  return axis < 0 ? axis + n : axis;
}

/// Axes left of the compute-at position are shared with a consumer's loop
/// nest; transforming them would silently change the consumer's loops.
void check_not_inlined(std::string_view op, const TensorView* t, int axis) {
  user_assert(axis >= t->compute_at_pos())
      << op << ": " << axis_desc(t, axis) << " is inside the compute-at position "
      << t->compute_at_pos() << "; expected an axis at or after it (transform before inlining)";
  // A producer inlined into t shares t's first loops too (nvFuser's "max
  // producer position").
  if (const Expr* d = t->definition())
    for (const Val* in : d->inputs())
      if (const auto* p = in->as<TensorView>())
        user_assert(axis >= p->compute_at_pos())
            << op << ": " << axis_desc(t, axis) << " is inside the inline position "
            << p->compute_at_pos() << " of its producer " << p->describe()
            << "; expected an axis at or after it (transform before inlining)";
}

void check_serial(std::string_view op, const TensorView* t, int axis) {
  const IterDomain* id = t->loop()[static_cast<size_t>(axis)];
  user_assert(id->parallel_type() == ParallelType::Serial &&
              id->loop_transform() == LoopTransform::Serial)
      << op << ": " << axis_desc(t, axis) << " is already bound to "
      << (id->parallel_type() != ParallelType::Serial ? parallel_type_name(id->parallel_type())
                                                      : loop_transform_name(id->loop_transform()))
      << "; expected a Serial axis (transform before binding)";
}

}  // namespace

std::string TensorView::why_not_adjacent(const IterDomain* id, int64_t w) const {
  auto dom = logical_no_reductions();
  if (dom.empty()) return "it has no non-Reduction logical axis";
  const IterDomain* innermost = dom.back();
  if (id == innermost) return "";
  const auto* s = id->definition() ? id->definition()->as<Split>() : nullptr;
  if (s == nullptr)
    return id->definition() ? "it is made by a merge"
                            : "it is logical axis " + id->str() + ", not the innermost one";
  if (s->inner() != id) return "it is the outer part of " + s->str();
  if (!s->inner_split()) return "it is the inner part of an outer split (" + s->str() + ")";
  const IterDomain* x = s->in();
  for (;;) {
    while (const auto* m = x->definition() ? x->definition()->as<Merge>() : nullptr) x = m->inner();
    // Nested inner splits (split by 1024, then by 4, as nvFuser's var_mean
    // user schedule does): the vector stays adjacent and aligned inside each
    // enclosing chunk whose extent is a multiple of it.
    const auto* up = x->definition() ? x->definition()->as<Split>() : nullptr;
    if (up == nullptr || up->inner() != x || !up->inner_split()) break;
    if (w <= 0 || up->factor() % w != 0)
      return "it splits " + x->str() + ", the inner part of " + up->str() + ", whose extent " +
             std::to_string(up->factor()) + " is not a multiple of " +
             (w > 0 ? "the vector width " + std::to_string(w) : std::string("the vector width")) +
             " (vectors would straddle its chunks)";
    x = up->in();
  }
  if (x != innermost)
    return "it splits " + x->str() + ", which is not the innermost logical axis " +
           innermost->str();
  return "";
}

namespace {

/// The rules of a vector copy that no later primitive can change: a tensor's
/// definition stays (cache_before refuses a bound tensor), and so do its
/// logical domain and the history of an axis. What later calls can change
/// (the loop order, the operand's buffer layout after propagation and
/// inlining) is checked again by lowering (core/lower/vectorize.cpp) and the
/// alignment at launch.
void check_vectorizable(const TensorView* t, int a, int64_t w) {
  const IterDomain* id = t->loop()[static_cast<size_t>(a)];
  if (const Expr* d = t->definition()) {
    const bool reduction = accumulation(d).has_value();
    user_assert(d->is<LoadStoreOp>())
        << "parallelize: cannot vectorize " << axis_desc(t, a) << ": " << t->describe()
        << " is defined by " << d->op_name()
        << (reduction ? " (it is the result of a reduction, written once per output element "
                        "after its reduction loops)"
                      : "")
        << "; expected a copy: vectorize the cache that cache_after or cache_before makes"
        << (reduction ? " (cache_before on the unscheduled reduction output, then vectorize the "
                        "output copy)"
                      : "");
  }
  auto dom = t->logical_no_reductions();
  user_assert(!dom.empty()) << "parallelize: cannot vectorize " << axis_desc(t, a) << ": "
                            << t->describe() << " has no non-Reduction logical axis";
  const IterDomain* innermost = dom.back();
  const std::string found = t->why_not_adjacent(id, w);
  user_assert(found.empty())
      << "parallelize: cannot vectorize " << axis_desc(t, a) << ": " << found
      << "; expected the inner part of split(innermost, " << w << ") of the innermost logical axis "
      << innermost->str() << ", so that the " << w << " elements are adjacent in memory";
  // A broadcast or size-1 innermost axis (an [N, 1] cache) has no w adjacent
  // elements: the launch would reject every size.
  const bool constant = innermost->extent().is_const();
  user_assert(w == 1 || (!innermost->is_broadcast() &&
                         !(constant && innermost->extent().const_value() % w != 0)))
      << "parallelize: cannot vectorize " << axis_desc(t, a) << " by " << w << ": the innermost "
      << "logical axis of " << t->describe() << " is " << innermost->str() << " ("
      << (innermost->is_broadcast() ? "a broadcast" : "constant extent " +
                                                          innermost->extent().str())
      << "); expected an innermost extent that is a multiple of " << w
      << " (vectorize a tensor whose innermost axis is not size 1 or broadcast)";
}

}  // namespace

std::string_view loop_transform_name(LoopTransform t) {
  switch (t) {
    case LoopTransform::Serial: return "Serial";
    case LoopTransform::Vectorize: return "Vectorize";
    case LoopTransform::Unroll: return "Unroll";
    case LoopTransform::Unswitch: return "Unswitch";
    case LoopTransform::Bulk: return "Bulk";
  }
  return "?";
}

const SizeExpr& Split::stride() const { return inner()->extent(); }

std::string Split::str() const {
  return "Split: " + in()->str() + " by factor " + std::to_string(factor_) +
         (inner_split_ ? "" : " (outer)") + " -> " + outer()->str() + ", " + inner()->str();
}

std::string Merge::str() const {
  return "Merge: " + outer()->str() + " and " + inner()->str() + " -> " + out()->str();
}

IterDomain* TensorView::axis(int i) const {
  return loop_[static_cast<size_t>(norm_loop_axis("axis", this, i))];
}

TensorView* TensorView::split(int axis, int64_t factor, bool inner_split) {
  int a = norm_loop_axis("split", this, axis);
  user_assert(factor > 0) << "split: factor must be positive, got " << factor << " ("
                          << axis_desc(this, a) << ")";
  check_not_inlined("split", this, a);
  check_serial("split", this, a);
  auto [outer, inner] = fusion()->split(loop_[static_cast<size_t>(a)], factor, inner_split);
  loop_[static_cast<size_t>(a)] = outer;
  loop_.insert(loop_.begin() + a + 1, inner);
  return this;
}

TensorView* TensorView::merge(int axis_o, int axis_i) {
  int o = norm_loop_axis("merge", this, axis_o);
  int i = norm_loop_axis("merge", this, axis_i);
  user_assert(o != i) << "merge: cannot merge " << axis_desc(this, o)
                      << " with itself; expected two different axes";
  check_not_inlined("merge", this, std::min(o, i));
  check_serial("merge", this, o);
  check_serial("merge", this, i);
  IterDomain* io = loop_[static_cast<size_t>(o)];
  IterDomain* ii = loop_[static_cast<size_t>(i)];
  // Mixing a reduced axis with a kept one would make one loop both reduce and
  // not reduce; nvFuser forbids it for the same reason.
  bool mixed = (io->is_reduction() && ii->iter_type() == IterType::Iteration) ||
               (ii->is_reduction() && io->iter_type() == IterType::Iteration);
  user_assert(!mixed) << "merge: cannot merge " << iter_type_name(io->iter_type()) << " "
                      << axis_desc(this, o) << " with " << iter_type_name(ii->iter_type())
                      << " axis " << i << " (" << ii->str()
                      << "); expected both Reduction or both non-Reduction";
  IterDomain* m = fusion()->merge(io, ii);
  loop_[static_cast<size_t>(o)] = m;
  loop_.erase(loop_.begin() + i);
  return this;
}

TensorView* TensorView::reorder(const std::vector<std::pair<int, int>>& old2new) {
  int n = nloop();
  std::vector<IterDomain*> result(static_cast<size_t>(n), nullptr);
  std::map<int, int> olds;  // normalized old axis -> new position as given
  std::vector<int> moved_from(static_cast<size_t>(n), -1);
  for (auto [from, to] : old2new) {
    int f = norm_loop_axis("reorder", this, from);
    int t = norm_loop_axis("reorder", this, to);
    auto [prev, fresh] = olds.emplace(f, to);
    user_assert(fresh) << "reorder: " << axis_desc(this, f) << " is moved twice (to positions "
                       << prev->second << " and " << to
                       << "); expected each loop axis at most once in the map";
    int other = moved_from[static_cast<size_t>(t)];
    user_assert(other < 0) << "reorder: axes " << other << " and " << f << " of " << describe()
                           << " are both moved to position " << to
                           << "; expected distinct new positions";
    moved_from[static_cast<size_t>(t)] = f;
    result[static_cast<size_t>(t)] = loop_[static_cast<size_t>(f)];
  }
  size_t slot = 0;
  for (int k = 0; k < n; ++k) {
    if (olds.count(k)) continue;
    while (result[slot] != nullptr) ++slot;
    result[slot] = loop_[static_cast<size_t>(k)];
  }
  for (int k = 0; k < compute_at_pos(); ++k)
    if (result[static_cast<size_t>(k)] != loop_[static_cast<size_t>(k)]) check_not_inlined("reorder", this, k);
  loop_ = std::move(result);
  return this;
}

TensorView* TensorView::parallelize(int axis, ParallelType p) {
  int a = norm_loop_axis("parallelize", this, axis);
  if (p != ParallelType::Serial) {
    for (int k = 0; k < nloop(); ++k)
      user_assert(k == a || loop_[static_cast<size_t>(k)]->parallel_type() != p)
          << "parallelize: " << parallel_type_name(p) << " is already bound to "
          << axis_desc(this, k) << "; cannot also bind " << axis_desc(this, a)
          << " (one axis per parallel type in a tensor)";
  }
  loop_[static_cast<size_t>(a)]->parallelize(p);
  return this;
}

TensorView* TensorView::parallelize(int axis, LoopTransform t) {
  int a = norm_loop_axis("parallelize", this, axis);
  IterDomain* id = loop_[static_cast<size_t>(a)];
  if (t == LoopTransform::Vectorize) {
    user_assert(a == nloop() - 1) << "parallelize: cannot vectorize " << axis_desc(this, a)
                                  << "; expected the innermost loop axis (" << nloop() - 1
                                  << ")";
    user_assert(id->extent().is_const())
        << "parallelize: cannot vectorize " << axis_desc(this, a) << " of symbolic extent "
        << id->extent().str() << "; expected a constant extent (split by the vector width first)";
    int64_t w = id->extent().const_value();
    int64_t bytes = w * dtype_size(dtype());
    user_assert(w > 0 && (w & (w - 1)) == 0 && bytes <= 16)
        << "parallelize: cannot vectorize " << axis_desc(this, a) << ": width " << w << " x "
        << dtype_size(dtype()) << " bytes; expected a power of two of at most 16 bytes";
    user_assert(!id->is_reduction()) << "parallelize: cannot vectorize Reduction "
                                     << axis_desc(this, a) << "; expected a non-Reduction axis";
    // A vector's lanes are one thread's consecutive elements; an axis bound
    // to threads or blocks spreads them over many (its Local buffer would hold
    // one lane while the access writes w).
    user_assert(!is_thread_dim(id->parallel_type()) && !is_block_dim(id->parallel_type()))
        << "parallelize: cannot vectorize " << axis_desc(this, a) << ": it is bound to "
        << parallel_type_name(id->parallel_type())
        << ", and a vector's lanes are one thread's; expected an axis bound to no thread or "
           "block (parallelize it Serial first)";
    check_vectorizable(this, a, w);
  }
  if (t == LoopTransform::Bulk) {
    auto* ls = definition() ? definition()->as<LoadStoreOp>() : nullptr;
    user_assert(ls && ls->op() == LoadStoreOpType::Tma)
        << "parallelize: cannot make " << axis_desc(this, a)
        << " Bulk; expected a tensor defined by a Tma load (cache_after with LoadStoreOpType::Tma)";
  }
  id->set_loop_transform(t);
  return this;
}

namespace {
/// The recorded splits and merges between `base` and t's loop domain, in the
/// order they were applied.
std::vector<IterDomainExpr*> history_between(const TensorView* t,
                                             const std::vector<IterDomain*>& base_domain) {
  std::set<IterDomainExpr*> seen;
  std::set<const IterDomain*> base(base_domain.begin(), base_domain.end());
  std::vector<IterDomain*> stack(t->loop().begin(), t->loop().end());
  while (!stack.empty()) {
    IterDomain* id = stack.back();
    stack.pop_back();
    if (base.count(id) || id->definition() == nullptr) continue;
    if (!seen.insert(id->definition()).second) continue;
    for (IterDomain* in : id->definition()->inputs()) stack.push_back(in);
  }
  // In creation order, without walking the fusion's every transform (that
  // made lowering a long chain quadratic): Fusion::split and merge create
  // the outputs just before the transform, so its first output's number
  // orders transforms as their creation does.
  std::vector<IterDomainExpr*> r(seen.begin(), seen.end());
  std::sort(r.begin(), r.end(), [](const IterDomainExpr* a, const IterDomainExpr* b) {
    return a->outputs().front()->id() < b->outputs().front()->id();
  });
  return r;
}
}  // namespace

std::vector<IterDomainExpr*> TensorView::loop_history() const {
  return history_between(this, logical_);
}

std::vector<IterDomainExpr*> TensorView::root_history() const {
  return history_between(this, root());
}

void TensorView::set_domains(std::vector<IterDomain*> root, std::vector<IterDomain*> logical) {
  root_ = std::move(root);
  logical_ = std::move(logical);
  loop_ = logical_;
}

}  // namespace schedlab::ir
