// Lowering's admission check: one place that says what is not supported yet.
#include "lowerable.h"

#include <map>
#include <set>

#include "allocation.h"
#include "async_copy.h"
#include "circular_buffer.h"
#include "indexing.h"
#include "mma_tile.h"
#include "loop_tree.h"

#include "schedlab/base/error.h"
#include "schedlab/sched/id_map.h"
#include "schedlab/sched/inline.h"

namespace schedlab::lower {

namespace {

/// A consumer thread may only read what its own thread (or, through Shared
/// memory and a barrier, its own block) computed: no grid-wide sync exists.
void check_thread_consistency(const ir::Fusion& f) {
  sched::LoopMap exact(f, sched::LoopMap::Mode::Exact);
  for (const ir::Expr* e : f.exprs_for_outputs()) {
    const ir::TensorView* c = e->out();
    for (const ir::Val* v : e->inputs()) {
      const auto* p = v->as<ir::TensorView>();
      if (!p || f.is_input(p)) continue;
      for (int k = p->compute_at_pos(); k < p->nloop(); ++k) {
        const ir::IterDomain* id = p->loop()[static_cast<size_t>(k)];
        ir::ParallelType pt = id->parallel_type();
        if (pt == ir::ParallelType::Serial || id->is_reduction()) continue;
        if (ir::is_thread_dim(pt) && p->memory_type() == ir::MemoryType::Shared) continue;  // barrier
        // A Local block broadcast (nvFuser's, mb = broadcast(m) of a block
        // reduction m; indexing.h's is_local_block_broadcast): each thread
        // along pt below the axis's extent computes the whole element in its
        // own registers, so a consumer thread that ran that loop, one bound to
        // pt with the same extent, reads its own copy: no shared slot, no barrier.
        bool own_copy = id->is_broadcast() && ir::is_thread_dim(pt) && is_local_block_broadcast(p);
        // A consumer inlined into broadcast-widened loops has no thread of
        // its own per element: the loops it runs in (its consumers') decide
        // which thread reads which element.
        bool widened = inlined_into_widened_loops(c);
        bool same = false;
        for (int j = 0; j < c->nloop(); ++j) {
          const ir::IterDomain* cid =
              widened ? loop_owner(c, j).id() : c->loop()[static_cast<size_t>(j)];
          same |= cid->parallel_type() == pt && (own_copy || exact.mapped(id, cid)) &&
                  cid->extent().same_as(id->extent());
        }
        user_assert(same)
            << "lowering: " << c->describe() << " reads elements of "
            << ir::memory_type_name(p->memory_type()) << " " << p->describe()
            << " computed by other " << (ir::is_thread_dim(pt) ? "threads" : "blocks") << ": its axis " << k
            << " (" << id->str() << ") is bound to " << ir::parallel_type_name(pt)
            << " but no axis of the consumer bound to " << ir::parallel_type_name(pt)
            << " iterates exactly the same elements; expected it inlined (inline_most), or "
            << (ir::is_thread_dim(pt) ? "made Shared (set_memory_type) so a barrier can order the access"
                           : "the same block mapping on both (parallelize_all_like)");
      }
    }
  }
}

/// Threads along a launch dimension that a tensor's loops do not bind all
/// run every one of its loops. For a Local tensor that is redundant work in
/// private registers. In Global memory (or Shared memory, for the threads of
/// one block) they all store to the same elements: a plain store writes the
/// same value from every thread (each computed it from the same operands,
/// and check_thread_consistency saw that it reads only what it computed),
/// which is a benign race, but a reduction's read-modify-write of its
/// accumulator interleaves with the others' (and their re-initialisation),
/// so an accumulator outside registers must have exactly one owner.
void check_unique_writers(const ir::Fusion& f) {
  auto exprs = f.exprs_for_outputs();
  std::map<ir::ParallelType, const ir::TensorView*> launched;  // a tensor that binds it
  for (const ir::Expr* e : exprs)
    for (int k = 0; k < e->out()->nloop(); ++k) {
      const ir::IterDomain* id = loop_owner(e->out(), k).id();
      if (id->parallel_type() != ir::ParallelType::Serial &&
          !(id->extent().is_const() && id->extent().const_value() == 1))
        launched.emplace(id->parallel_type(), e->out());
    }
  for (const ir::Expr* e : exprs) {
    if (!ir::accumulation(e)) continue;
    const ir::TensorView* t = e->out();
    bool global = stored_in_global(t);
    if (!global && t->memory_type() != ir::MemoryType::Shared) continue;
    std::set<ir::ParallelType> bound;
    for (int k = 0; k < t->nloop(); ++k) bound.insert(loop_owner(t, k).id()->parallel_type());
    for (auto [pt, by] : launched) {
      if (bound.count(pt) || (!global && ir::is_block_dim(pt))) continue;
      std::string where =
          t->memory_type() == ir::MemoryType::Local
              ? "Global memory (a workspace: a Local tensor whose buffer spans a symbolic extent)"
              : std::string(ir::memory_type_name(t->memory_type())) + " memory";
      user_error << "lowering: " << t->describe() << " is stored in " << where
                 << " but none of the loops it runs in is bound to " << ir::parallel_type_name(pt)
                 << ", which the kernel launches (" << by->describe() << " binds it): every "
                 << (ir::is_block_dim(pt) ? "block" : "thread") << " along " << ir::parallel_type_name(pt)
                 << " would initialise and accumulate into the same "
                 << "elements of " << t->describe()
                 << " with no order between them (a race: partial sums are reset and counted "
                    "more than once); expected "
                 << t->describe()
                 << " scheduled like its consumers (propagate_transformation, "
                    "parallelize_all_like), or inlined into them (inline_most)";
    }
  }
}

bool is_grid(ir::ParallelType p) {
  return p == ir::ParallelType::BIDx || p == ir::ParallelType::BIDy;
}

/// A grid reduction (t's axis k is a Reduction bound to BIDx/BIDy): only the
/// last block to finish holds the result, so nothing in the kernel may read
/// it, unless t is grid_persistent (sched::grid_persistent): then every block
/// combines the partials after a grid-wide barrier and may read the result.
void check_grid_reduction(const ir::Fusion& f, const ir::TensorView* t, int k) {
  const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
  std::string what = "lowering: " + t->describe() + " axis " + std::to_string(k) + " (" +
                     id->str() + ") is a grid reduction (a Reduction bound to " +
                     std::string(ir::parallel_type_name(id->parallel_type())) + ")";
  ir::DataType dt = t->dtype();
  user_assert(dt == ir::DataType::F32 || dt == ir::DataType::F64 || dt == ir::DataType::I32 ||
              dt == ir::DataType::I64)
      << what << " of " << ir::dtype_name(dt)
      << " values; grid reductions support f32, f64, i32 and i64, expected the reduction in one "
         "of them (cast before reducing)";
  if (t->grid_persistent()) {
    // Its accumulator: registers, or a parameter (stored by every thread
    // of a row after the allreduce). Not Shared or Global memory.
    user_assert(f.is_output(t) || t->memory_type() == ir::MemoryType::Local)
        << what << " and grid_persistent, in " << ir::memory_type_name(t->memory_type())
        << " memory; expected it in registers (Local) or a fusion output: every thread "
           "receives the grid's result in its own registers";
    return;
  }
  for (const ir::Expr* e : f.exprs_for_outputs())
    for (const ir::Val* v : e->inputs())
      user_assert(v != t) << what << ", and " << e->out()->describe()
                          << " reads it; a grid reduction's result is read inside the same "
                             "kernel; expected it to be a fusion output (segmentation comes "
                             "later), or the reduction grid_persistent (sched::grid_persistent, "
                             "the script's grid_persistent(t): a grid-wide barrier, with every "
                             "block resident at once)";
  user_assert(f.is_output(t)) << what << "; expected the grid-reduced tensor to be a fusion output";
}

/// A grid_persistent tensor must have a grid reduction to make persistent.
void check_grid_persistent(const ir::TensorView* t) {
  if (!t->grid_persistent()) return;
  bool grid = false;
  for (const ir::IterDomain* id : t->loop())
    grid |= id->is_reduction() && is_grid(id->parallel_type());
  user_assert(grid) << "lowering: " << t->describe()
                    << " is grid_persistent but none of its Reduction axes is bound to BIDx or "
                       "BIDy; expected a grid reduction (a reduction axis parallelized on "
                       "BIDx/BIDy), or no grid_persistent (a block reduction's result is "
                       "every thread's already)";
}

}  // namespace

void check_lowerable(const ir::Fusion& f) {
  sched::validate_bindings(f);
  // Grid reductions first: reading one's result elsewhere in the kernel is
  // also a read of other blocks' elements, and this says why.
  for (const ir::TensorView* t : f.tensors())
    for (int k = 0; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (id->is_reduction() && is_grid(id->parallel_type())) check_grid_reduction(f, t, k);
    }
  for (const ir::TensorView* t : f.tensors()) check_grid_persistent(t);
  check_thread_consistency(f);
  check_unique_writers(f);
  for (const ir::TensorView* t : f.tensors()) {
    for (int k = 0; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (id->is_reduction() && id->parallel_type() != ir::ParallelType::Serial) {
        user_assert(ir::is_thread_dim(id->parallel_type()) || is_grid(id->parallel_type()))
            << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
            << ") is a Reduction bound to " << ir::parallel_type_name(id->parallel_type())
            << "; expected a serial, thread-bound (TIDx/TIDy/TIDz: a block reduction) or "
               "BIDx/BIDy-bound (a grid reduction) reduction axis";
        user_assert(!ir::is_half(t->dtype()))
            << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
            << ") is a block reduction of " << ir::dtype_name(t->dtype())
            << " values; block reductions of half types are not supported, expected the "
               "reduction in f32 (cast before reducing)";
      }
      user_assert(!(id->loop_transform() == ir::LoopTransform::Unswitch &&
                    id->parallel_type() != ir::ParallelType::Serial))
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is Unswitch but bound to " << ir::parallel_type_name(id->parallel_type())
          << "; expected Unswitch on a serial loop (a bound axis has no loop to unswitch)";
      user_assert(id->loop_transform() != ir::LoopTransform::Bulk)
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is Bulk; TMA bulk copies are not supported yet";
      user_assert(id->parallel_type() != ir::ParallelType::DIDx)
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is bound to DIDx; multi-device fusions are not supported";
    }
    if (t->circular_stages() > 1) check_circular_buffer(t);
    if (t->mma_k() != nullptr) check_mma_tile(f, t);
    if (auto* ls = t->definition() ? t->definition()->as<ir::LoadStoreOp>() : nullptr) {
      user_assert(ls->op() == ir::LoadStoreOpType::Set || ls->op() == ir::LoadStoreOpType::CpAsync)
          << "lowering: " << t->describe() << " is defined by a "
          << ir::load_store_op_name(ls->op())
          << " load; only Set and CpAsync are supported yet (use cache_after with "
             "LoadStoreOpType::Set or CpAsync; an mma tile reads its Shared operands with "
             "ldmatrix itself, lowering rule 16)";
      if (ls->op() == ir::LoadStoreOpType::CpAsync) check_async_copy(t, ls);
      // A cache operator qualifies a load from global memory (ld.global.ca,
      // .cg, .cs), as in nvFuser, which gives them to global -> register or
      // shared loads only.
      const ir::TensorView* in = ls->in();
      user_assert(ls->cache_op() == ir::CacheOp::Unspecified ||
                  (in->memory_type() == ir::MemoryType::Global &&
                   t->memory_type() != ir::MemoryType::Global))
          << "lowering: " << t->describe() << " loads " << in->describe()
          << " with cache_op = " << ir::cache_op_name(ls->cache_op()) << " from "
          << ir::memory_type_name(in->memory_type()) << " into "
          << ir::memory_type_name(t->memory_type())
          << " memory; expected a load from Global memory (a fusion input or a Global tensor) "
             "into Local or Shared memory: a cache policy qualifies only global loads (or use "
             "cache_op = Unspecified)";
    }
  }
}

}  // namespace schedlab::lower
