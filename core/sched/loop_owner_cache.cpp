// The loop-owner memo's scopes; see loop_owner_cache.h (sched::loop_owner,
// in inline.cpp, reads and fills the memo).
#include "schedlab/sched/loop_owner_cache.h"

namespace schedlab::sched {

namespace {

/// The innermost LoopOwnerCache on this thread; each links to the one it hides.
thread_local LoopOwnerCache* innermost_cache = nullptr;

}  // namespace

LoopOwnerCache::LoopOwnerCache(const ir::Fusion& f) : graph_(f) {
  if (of(f)) return;
  fusion_ = &f;
  outer_ = innermost_cache;
  innermost_cache = this;
}

LoopOwnerCache::~LoopOwnerCache() {
  if (fusion_) innermost_cache = outer_;
}

LoopOwnerCache* LoopOwnerCache::of(const ir::Fusion& f) {
  for (LoopOwnerCache* c = innermost_cache; c; c = c->outer_)
    if (c->fusion_ == &f) return c;
  return nullptr;
}

}  // namespace schedlab::sched
