// FrozenGraph: a per-thread snapshot of a fusion's graph. See
// schedlab/ir/frozen.h.
#include "schedlab/ir/frozen.h"

namespace schedlab::ir {

namespace {

/// The innermost snapshot on this thread; each links to the one it hides.
thread_local const FrozenGraph* innermost = nullptr;

}  // namespace

FrozenGraph::FrozenGraph(const Fusion& f) {
  if (of(f)) return;  // already frozen: this scope adds nothing
  exprs_ = f.exprs();
  live_ = f.exprs_for_outputs();
  info_.reserve(exprs_.size());
  for (size_t i = 0; i < exprs_.size(); ++i) info_[exprs_[i]] = {static_cast<int>(i), false};
  for (const Expr* e : live_) info_.at(e).second = true;
  fusion_ = &f;
  outer_ = innermost;
  innermost = this;
}

FrozenGraph::~FrozenGraph() {
  if (fusion_) innermost = outer_;
}

const FrozenGraph* FrozenGraph::of(const Fusion& f) {
  for (const FrozenGraph* g = innermost; g; g = g->outer_)
    if (g->fusion_ == &f) return g;
  return nullptr;
}

bool FrozenGraph::is_live(const Expr* e) const {
  auto it = info_.find(e);
  return it != info_.end() && it->second.second;
}

int FrozenGraph::position(const Expr* e) const {
  auto it = info_.find(e);
  return it == info_.end() ? -1 : it->second.first;
}

}  // namespace schedlab::ir
