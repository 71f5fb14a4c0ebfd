// cp.async copies: rules and the pass.
#include "async_copy.h"

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::lower {

using kir::Expr;
using kir::ExprP;

namespace {

const ir::LoadStoreOp* async_def(const ir::TensorView* t) {
  if (t == nullptr || t->definition() == nullptr) return nullptr;
  const auto* ls = t->definition()->as<ir::LoadStoreOp>();
  return ls && ls->op() == ir::LoadStoreOpType::CpAsync ? ls : nullptr;
}

/// Whether c is the bound of a thread index (Indexer::write_index's
/// `threadIdx < extent` when the block may be wider than the axis): it keeps
/// a thread past the tile from a destination outside the buffer, so it stays
/// a branch. Every other conjunct only says whether the source element
/// exists (serial loop indices stay within their extents, and so do thread
/// indices under their bounds): a zero fill there writes inside the tile.
bool bounds_thread_index(const ExprP& c) {
  const auto* lt = c->as<kir::IndexOp>();
  const auto* b = lt && lt->op == kir::IndexOpType::Lt ? lt->a->as<kir::Builtin>() : nullptr;
  return b && b->of == kir::Builtin::Of::Index && ir::is_thread_dim(b->parallel);
}

ExprP all_of(const std::vector<ExprP>& cs) {
  ExprP r = Expr::boolean(true);
  for (const ExprP& c : cs) r = r->is_true() ? c : r && c;
  return r;
}

/// Makes s (a Store into a CpAsync cache) asynchronous: its copy reads the
/// source only where `valid` holds (null: always), else zero-fills from a
/// source index clamped to 0.
void make_async(kir::Store& s, const ExprP& valid) {
  const auto* src = s.value->as<kir::Load>();
  internal_assert(src) << "lowering: the cp.async into " << s.buffer->name << " copies no load";
  const int64_t bytes = s.vector * ir::dtype_size(s.buffer->dtype);
  ir::CacheOp cache = src->cache;
  if (cache == ir::CacheOp::Unspecified)
    cache = bytes == 16 ? ir::CacheOp::Global : ir::CacheOp::AllLevels;
  ExprP index = src->index;
  if (valid) index = Expr::select(valid, index, Expr::integer(0), index->dtype);
  s.value = Expr::load(src->buffer, index, cache);
  s.async = true;
  s.src_valid = valid;
}

class AsyncCopies : public kir::IRMutator {
 protected:
  using kir::IRMutator::visit;
  void visit(kir::Store& s) override {
    if (async_def(s.buffer->tv) && !s.async) make_async(s, nullptr);
  }
  void mutate_body(std::vector<kir::StmtP>& body) override {
    for (auto& c : body) {
      auto* g = c->as<kir::If>();
      kir::Store* s = g && g->else_body.empty() && g->then_body.size() == 1
                          ? g->then_body[0]->as<kir::Store>()
                          : nullptr;
      if (s == nullptr || !async_def(s->buffer->tv)) {
        mutate(*c);
        continue;
      }
      std::vector<ExprP> atoms, branch, source;
      kir::conjuncts(g->cond, atoms);
      for (const ExprP& a : atoms) (bounds_thread_index(a) ? branch : source).push_back(a);
      make_async(*s, source.empty() ? nullptr : all_of(source));
      if (branch.empty()) {
        kir::StmtP copy = std::move(g->then_body[0]);
        c = std::move(copy);
      } else {
        g->cond = all_of(branch);
      }
    }
  }
};

}  // namespace

int64_t async_copy_bytes(const ir::TensorView* t) {
  int64_t width = 1;
  if (t->nloop() > 0) {
    const ir::IterDomain* inner = t->loop().back();
    if (inner->loop_transform() == ir::LoopTransform::Vectorize && inner->extent().is_const())
      width = inner->extent().const_value();
  }
  return width * ir::dtype_size(t->dtype());
}

void check_async_copy(const ir::TensorView* t, const ir::LoadStoreOp* ls) {
  const ir::TensorView* in = ls->in();
  const std::string what = "lowering: " + t->describe() + " is a cp.async copy (cache_after with " +
                           "LoadStoreOpType::CpAsync) of " + in->describe();
  user_assert(t->memory_type() == ir::MemoryType::Shared)
      << what << " into " << ir::memory_type_name(t->memory_type())
      << " memory; cp.async writes shared memory only: expected " << t->describe()
      << " Shared (set_memory_type), or LoadStoreOpType::Set";
  user_assert(in->memory_type() == ir::MemoryType::Global)
      << what << ", which is in " << ir::memory_type_name(in->memory_type())
      << " memory; cp.async reads global memory only: expected a Global operand (a fusion "
         "input or a Global tensor), or LoadStoreOpType::Set";
  const int64_t bytes = async_copy_bytes(t);
  user_assert(bytes == 4 || bytes == 8 || bytes == 16)
      << what << " of " << bytes << " bytes per copy (" << ir::dtype_name(t->dtype())
      << " elements, innermost axis " << t->loop().back()->str()
      << "); cp.async copies 4, 8 or 16 bytes: expected the innermost axis vectorized "
         "(split and vectorize) to a width of 4, 8 or 16 bytes";
  user_assert(ls->cache_op() != ir::CacheOp::Streaming)
      << what << " with cache_op = Streaming; cp.async has only .ca (AllLevels) and .cg "
         "(Global): expected one of them, or Unspecified (.cg for 16 bytes, .ca otherwise)";
  user_assert(ls->cache_op() != ir::CacheOp::Global || bytes == 16)
      << what << " with cache_op = Global (.cg) of " << bytes
      << " bytes per copy; cp.async.cg copies 16 bytes only: expected a 16-byte vector, or "
         "cache_op = AllLevels";
}

void lower_async_copies(kir::Kernel& kernel) {
  AsyncCopies pass;
  pass.mutate(*kernel.body);
}

}  // namespace schedlab::lower
