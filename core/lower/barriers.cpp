// Barrier insertion for Shared buffers.
#include "barriers.h"

#include <set>

namespace schedlab::lower {

namespace {

using Buffers = std::set<const kir::Buffer*>;

void reads_of(const kir::ExprP& e, Buffers& out) {
  if (!e) return;
  if (e->kind == kir::Expr::Kind::Load && e->buffer->memory == ir::MemoryType::Shared)
    out.insert(e->buffer);
  for (const auto& a : e->args) reads_of(a, out);
}

void effects(const kir::Stmt& s, Buffers& reads, Buffers& writes) {
  reads_of(s.cond, reads);
  reads_of(s.index, reads);
  reads_of(s.value, reads);
  if (s.kind == kir::Stmt::Kind::Store && s.buffer->memory == ir::MemoryType::Shared)
    writes.insert(s.buffer);
  for (const auto& c : s.body) effects(*c, reads, writes);
  for (const auto& c : s.else_body) effects(*c, reads, writes);
}

bool intersects(const Buffers& a, const Buffers& b) {
  for (const auto* x : a)
    if (b.count(x)) return true;
  return false;
}

/// Whether s is or contains a block reduction (which synchronizes the block).
bool has_block_reduce(const kir::Stmt& s) {
  if (s.kind == kir::Stmt::Kind::BlockReduce) return true;
  for (const auto& c : s.body)
    if (has_block_reduce(*c)) return true;
  for (const auto& c : s.else_body)
    if (has_block_reduce(*c)) return true;
  return false;
}

bool place(kir::Stmt& s) {
  bool any = false;
  if (s.kind != kir::Stmt::Kind::Block && s.kind != kir::Stmt::Kind::For) return false;
  std::vector<kir::StmtP> out;
  Buffers pending;  // written since the last barrier
  for (auto& c : s.body) {
    any |= place(*c);
    Buffers r, w;
    effects(*c, r, w);
    if (intersects(r, pending)) {
      out.push_back(kir::Stmt::sync());
      pending.clear();
      any = true;
    }
    pending.insert(w.begin(), w.end());
    out.push_back(std::move(c));
  }
  if (s.kind == kir::Stmt::Kind::For) {
    Buffers r, w;
    for (const auto& c : out) effects(*c, r, w);
    if (intersects(r, w)) {
      out.push_back(kir::Stmt::sync());
      any = true;
    }
  }
  s.body = std::move(out);
  return any;
}

}  // namespace

void insert_barriers(kir::Kernel& kernel) {
  bool synced = place(*kernel.body);
  kernel.has_barrier = synced || has_block_reduce(*kernel.body);
}

}  // namespace schedlab::lower
