// Barrier insertion for Shared buffers.
#include "barriers.h"

#include <set>

#include "schedlab/lower/kir_visitor.h"

namespace schedlab::lower {

namespace {

using Buffers = std::set<const kir::Buffer*>;

/// The Shared buffers a statement (with everything nested in it) reads and
/// writes.
class Effects : public kir::IRVisitor {
 public:
  Buffers reads, writes;
  Buffers async_writes;  ///< by cp.async copies (lower/async_copy.h)

 protected:
  using kir::IRVisitor::visit;
  void visit(const kir::Load& e) override {
    if (e.buffer->memory == ir::MemoryType::Shared) reads.insert(e.buffer);
    kir::IRVisitor::visit(e);
  }
  void visit(const kir::Store& s) override {
    if (s.buffer->memory == ir::MemoryType::Shared) writes.insert(s.buffer);
    if (s.async) async_writes.insert(s.buffer);
    kir::IRVisitor::visit(s);
  }
};

Effects effects_of(const kir::Stmt& s) {
  Effects e;
  e.include(s);
  return e;
}

bool intersects(const Buffers& a, const Buffers& b) {
  for (const auto* x : a)
    if (b.count(x)) return true;
  return false;
}

/// Inserts a barrier before a statement that reads a Shared buffer written
/// since the last barrier in the same list, and at the end of a loop body
/// that reads what it writes (the next iteration would overwrite it).
class PlaceBarriers : public kir::IRMutator {
 public:
  bool any = false;

 protected:
  using kir::IRMutator::visit;
  void visit(kir::If&) override {}  // a barrier under a branch would diverge
  void visit(kir::For& s) override {
    kir::IRMutator::visit(s);
    Buffers r, w;
    for (const auto& c : s.body) {
      Effects e = effects_of(*c);
      r.insert(e.reads.begin(), e.reads.end());
      w.insert(e.writes.begin(), e.writes.end());
    }
    if (intersects(r, w)) {
      s.body.push_back(kir::Sync::make());
      any = true;
    }
  }
  void mutate_body(std::vector<kir::StmtP>& body) override {
    std::vector<kir::StmtP> out;
    Buffers pending;  // written since the last barrier
    Buffers copying;  // written by cp.async copies since the last wait
    for (auto& c : body) {
      mutate(*c);
      Effects e = effects_of(*c);
      if (intersects(e.reads, pending)) {
        // The copies land at a wait of their own thread; the barrier then
        // shows them to the others (PTX: cp.async.wait_group, then bar.sync).
        // A barrier for other buffers lands no copy: those still in flight
        // stay pending until a read of theirs gets its wait and barrier (fuzz
        // seed 2026 case 49: a cp.async tile read after the barrier another
        // tile's plain load had, with no wait_group).
        const bool wait = intersects(e.reads, copying);
        if (wait) out.push_back(kir::AsyncGroup::make(true, 0));
        out.push_back(kir::Sync::make());
        pending = wait ? Buffers{} : copying;
        if (wait) copying.clear();
        any = true;
      }
      pending.insert(e.writes.begin(), e.writes.end());
      copying.insert(e.async_writes.begin(), e.async_writes.end());
      out.push_back(std::move(c));
    }
    body = std::move(out);
  }
};

}  // namespace

void insert_barriers(kir::Kernel& kernel) {
  PlaceBarriers place;
  place.mutate(*kernel.body);
  // cp.async kernels run on fibers on the CPU too (core/codegen/mma.cuh's
  // per-block state).
  // A grid barrier waits for the whole block too (fibers on the CPU).
  kernel.has_barrier = place.any || kernel.grid_sync ||
                       kir::any_stmt(*kernel.body, [](const kir::Stmt& s) {
                         const auto* st = s.as<kir::Store>();
                         return s.kind == kir::Stmt::Kind::BlockReduce || (st && st->async);
                       });
}

}  // namespace schedlab::lower
