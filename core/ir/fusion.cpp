#include "schedlab/ir/fusion.h"

#include <algorithm>
#include <unordered_set>

#include "schedlab/base/error.h"
#include "schedlab/ir/frozen.h"

namespace schedlab::ir {

namespace {

/// Graph mutators end here first: a FrozenGraph's snapshot must stay true.
void check_not_frozen(const Fusion& f, const char* what) {
  internal_assert(!FrozenGraph::of(f))
      << what << " on fusion " << f.name() << " while a FrozenGraph of it is in force";
}

}  // namespace

IterDomain* Fusion::make_iter_domain(SizeExpr extent, IterType t) {
  ids_.emplace_back(new IterDomain(static_cast<int>(ids_.size()), std::move(extent), t));
  return ids_.back().get();
}

TensorView* Fusion::make_tensor(DataType t, std::vector<IterDomain*> logical) {
  auto* tv = new TensorView(this, next_tensor_++, t, std::move(logical));
  vals_.emplace_back(tv);
  return tv;
}

TensorView* Fusion::make_tensor(DataType t, const std::vector<SizeExpr>& shape) {
  std::vector<IterDomain*> dom;
  for (const auto& e : shape) {
    bool bcast = e.is_const() && e.const_value() == 1;
    dom.push_back(make_iter_domain(e, bcast ? IterType::Broadcast : IterType::Iteration));
  }
  return make_tensor(t, std::move(dom));
}

TensorView* Fusion::make_tensor_numbered(DataType t, std::vector<IterDomain*> logical, int number) {
  // Every existing number is below next_tensor_: extract() copies tensors in
  // increasing number order mostly, and then the search is skipped.
  if (number < next_tensor_)
    for (const TensorView* tv : tensors())
      internal_assert(tv->number() != number) << "T" << number << " exists already";
  auto* tv = new TensorView(this, number, t, std::move(logical));
  vals_.emplace_back(tv);
  next_tensor_ = std::max(next_tensor_, number + 1);
  return tv;
}

Scalar* Fusion::make_scalar(double v, DataType t) {
  auto* s = new Scalar(this, t, v);
  vals_.emplace_back(s);
  return s;
}

Scalar* Fusion::make_size_scalar(SizeExpr size) {
  auto* s = new Scalar(this, std::move(size));
  vals_.emplace_back(s);
  return s;
}

void Fusion::register_expr(std::unique_ptr<Expr> e) {
  check_not_frozen(*this, "a new statement");
  for (Val* in : e->inputs()) {
    internal_assert(in && in->fusion() == this) << e->op_name() << ": operand from another fusion";
    in->uses_.push_back(e.get());
  }
  for (Val* out : e->outputs()) {
    internal_assert(out && out->fusion() == this) << e->op_name() << ": output from another fusion";
    internal_assert(out->definition_ == nullptr)
        << out->str() << " already has a definition (" << out->definition_->op_name() << ")";
    out->definition_ = e.get();
  }
  exprs_.push_back(std::move(e));
}

void Fusion::add_input(TensorView* t) {
  user_assert(t->definition() == nullptr)
      << "fusion input " << t->describe() << " must not have a definition, found "
      << t->definition()->op_name();
  user_assert(!is_input(t)) << t->describe() << " is already a fusion input";
  inputs_.push_back(t);
  t->set_memory_type(MemoryType::Global);
}

void Fusion::add_output(TensorView* t) {
  check_not_frozen(*this, "add_output");
  user_assert(!is_output(t)) << t->describe() << " is listed twice as a fusion output";
  outputs_.push_back(t);
  t->set_memory_type(MemoryType::Global);
}

bool Fusion::is_input(const Val* v) const {
  return std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end();
}
bool Fusion::is_output(const Val* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

std::vector<TensorView*> Fusion::tensors() const {
  std::vector<TensorView*> r;
  for (const auto& v : vals_)
    if (auto* t = v->as<TensorView>()) r.push_back(t);
  return r;
}

std::vector<Expr*> Fusion::exprs() const {
  // Stable topological order: creation order, except that an expression
  // waits for the definitions of its inputs (cache_after and rfactor insert
  // producers after their consumers were created).
  if (const FrozenGraph* g = FrozenGraph::of(*this)) return g->exprs();
  std::vector<Expr*> order;
  std::unordered_set<const Expr*> placed;
  std::vector<Expr*> pending;
  for (const auto& e : exprs_) pending.push_back(e.get());
  while (!pending.empty()) {
    std::vector<Expr*> next;
    for (Expr* e : pending) {
      bool ready = true;
      for (Val* in : e->inputs())
        if (in->definition() && !placed.count(in->definition())) ready = false;
      if (ready) {
        order.push_back(e);
        placed.insert(e);
      } else {
        next.push_back(e);
      }
    }
    internal_assert(next.size() < pending.size()) << "cycle in the expression graph";
    pending = std::move(next);
  }
  return order;
}

std::pair<IterDomain*, IterDomain*> Fusion::split(IterDomain* in, int64_t factor,
                                                  bool inner_split) {
  internal_assert(factor > 0) << "split factor " << factor;
  SizeExpr f = SizeExpr::constant(factor);
  SizeExpr rest = SizeExpr::ceil_div(in->extent(), f);
  IterDomain* outer = make_iter_domain(inner_split ? rest : f, in->iter_type());
  IterDomain* inner = make_iter_domain(inner_split ? f : rest, in->iter_type());
  id_exprs_.push_back(std::make_unique<Split>(in, outer, inner, factor, inner_split));
  outer->definition_ = inner->definition_ = id_exprs_.back().get();
  return {outer, inner};
}

IterDomain* Fusion::merge(IterDomain* outer, IterDomain* inner) {
  // Broadcast merged with a real axis is that axis; Reduction wins over
  // Broadcast (both were checked compatible by the caller).
  IterType t = outer->iter_type();
  if (t == IterType::Broadcast) t = inner->iter_type();
  IterDomain* out = make_iter_domain(SizeExpr::mul(outer->extent(), inner->extent()), t);
  id_exprs_.push_back(std::make_unique<Merge>(outer, inner, out));
  out->definition_ = id_exprs_.back().get();
  return out;
}

std::vector<IterDomainExpr*> Fusion::id_exprs() const {
  std::vector<IterDomainExpr*> r;
  for (const auto& e : id_exprs_) r.push_back(e.get());
  return r;
}

void Fusion::replace_input(Expr* e, Val* old, Val* with) {
  check_not_frozen(*this, "replace_input");
  // uses() lists an expression once per operand slot, as register_expr does.
  int replaced = 0;
  for (Val*& in : e->inputs_) {
    if (in != old) continue;
    in = with;
    ++replaced;
  }
  internal_assert(replaced > 0) << old->str() << " is not an input of " << e->op_name();
  auto& u = old->uses_;
  u.erase(std::remove(u.begin(), u.end(), e), u.end());
  for (int i = 0; i < replaced; ++i) with->uses_.push_back(e);
}

void Fusion::replace_output(Expr* e, Val* old, Val* with) {
  check_not_frozen(*this, "replace_output");
  bool found = false;
  for (Val*& out : e->outputs_) {
    if (out != old) continue;
    out = with;
    found = true;
  }
  internal_assert(found) << old->str() << " is not an output of " << e->op_name();
  internal_assert(with->definition_ == nullptr) << with->str() << " already has a definition";
  old->definition_ = nullptr;
  with->definition_ = e;
}

void Fusion::replace_fusion_output(TensorView* old, TensorView* with) {
  check_not_frozen(*this, "replace_fusion_output");
  auto it = std::find(outputs_.begin(), outputs_.end(), old);
  internal_assert(it != outputs_.end()) << old->str() << " is not a fusion output";
  *it = with;
  with->set_memory_type(MemoryType::Global);
}

std::vector<Expr*> Fusion::exprs_for_outputs() const {
  if (const FrozenGraph* g = FrozenGraph::of(*this)) return g->exprs_for_outputs();
  std::vector<Expr*> order;
  std::unordered_set<const Expr*> done, on_stack;
  // Iterative post-order DFS; fusions from text can be deep chains.
  struct Frame {
    Expr* e;
    size_t next;
  };
  for (TensorView* out : outputs_) {
    Expr* root = out->definition();
    if (root == nullptr || done.count(root)) continue;
    std::vector<Frame> stack{{root, 0}};
    on_stack.insert(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.e->inputs().size()) {
        Expr* d = f.e->inputs()[f.next++]->definition();
        if (d == nullptr || done.count(d)) continue;
        internal_assert(!on_stack.count(d)) << "cycle through " << d->op_name();
        on_stack.insert(d);
        stack.push_back({d, 0});
        continue;
      }
      done.insert(f.e);
      on_stack.erase(f.e);
      order.push_back(f.e);
      stack.pop_back();
    }
  }
  return order;
}

bool Fusion::is_live(const Expr* e) const {
  // Forward search from e's result to an output, O(size) each: computing it
  // on demand keeps Fusion free of caches to invalidate. A pass that asks per
  // tensor freezes the graph (FrozenGraph) and gets O(1) answers.
  if (const FrozenGraph* g = FrozenGraph::of(*this)) return g->is_live(e);
  std::vector<const Val*> work(e->outputs().begin(), e->outputs().end());
  std::unordered_set<const Val*> seen(work.begin(), work.end());
  while (!work.empty()) {
    const Val* v = work.back();
    work.pop_back();
    if (is_output(v)) return true;
    for (const Expr* u : v->uses())
      for (const Val* o : u->outputs())
        if (seen.insert(o).second) work.push_back(o);
  }
  return false;
}

std::vector<Expr*> Fusion::live_uses(const Val* v) const {
  std::vector<Expr*> r;
  for (Expr* e : v->uses())
    if (is_live(e)) r.push_back(e);
  return r;
}

std::vector<std::string> Fusion::size_symbols() const {
  std::vector<std::string> syms;
  for (TensorView* in : inputs_)
    for (IterDomain* id : in->logical()) id->extent().collect_symbols(syms);
  return syms;
}

}  // namespace schedlab::ir
