// Static checks of vectorized copies; the dynamic ones run at launch.
#include "vectorize.h"

#include "indexing.h"

#include "schedlab/base/error.h"
#include "schedlab/sched/id_map.h"

namespace schedlab::lower {

using ir::IterDomain;
using ir::TensorView;

std::map<const TensorView*, int64_t> plan_vectorization(
    const ir::Fusion& f, const std::map<const TensorView*, const kir::Buffer*>& buffers,
    kir::Kernel& kernel) {
  std::map<const TensorView*, int64_t> plan;
  sched::LoopMap exact(f, sched::LoopMap::Mode::Exact);
  for (const ir::Expr* e : f.exprs_for_outputs()) {
    const TensorView* t = e->out();
    if (t->nloop() == 0) continue;
    // parallelize() required the innermost loop axis, but a later reorder
    // may have moved it: a vector access is the tensor's innermost loop.
    for (int k = 0; k + 1 < t->nloop(); ++k) {
      const IterDomain* id = t->loop()[static_cast<size_t>(k)];
      user_assert(id->loop_transform() != ir::LoopTransform::Vectorize)
          << "lowering: " << t->describe() << " loop axis " << k << " (" << id->str()
          << ") is vectorized but is not the innermost loop axis (" << t->nloop() - 1
          << "), found " << t->loop().back()->str()
          << " there; expected the vectorized axis innermost (reorder it back, or vectorize "
             "after reordering)";
    }
    const IterDomain* v = t->loop().back();
    if (v->loop_transform() != ir::LoopTransform::Vectorize) continue;
    int64_t w = v->extent().const_value();  // checked constant by parallelize()
    std::string what = "lowering: " + t->describe() + " is vectorized (" + v->str() + ")";
    auto* ls = e->as<ir::LoadStoreOp>();
    user_assert(ls) << what << " but defined by " << e->op_name()
                    << "; expected a copy (vectorize the cache made by cache_after or "
                       "cache_before, not the math)";
    // The rule parallelize applies (TensorView::why_not_adjacent), and a
    // split: the copy's lanes are the inner part's w iterations.
    const std::string why = v->definition() ? t->why_not_adjacent(v, w) : "it is not split";
    user_assert(why.empty())
        << what << " but that axis is not the inner part of a split by " << w
        << " of its innermost logical axis (" << why << "); expected split(innermost, " << w
        << ") then Vectorize on the inner part, so the " << w << " elements are adjacent";
    const TensorView* p = ls->in();
    if (!buffers.at(p)->is_param) {
      // The operand's buffer is row-major over its allocation axes: the w
      // elements are adjacent when its last allocation axis is the same split.
      auto axes = Indexer::allocation_axes(p);
      const IterDomain* pv = axes.empty() ? nullptr : p->loop()[static_cast<size_t>(axes.back().first)];
      user_assert(pv && exact.mapped(pv, v) && pv->extent().same_as(v->extent()))
          << what << " but its operand " << p->describe() << " ("
          << ir::memory_type_name(p->memory_type()) << ") does not keep the " << w
          << " elements adjacent: the last axis of its buffer is "
          << (pv ? pv->str() : std::string("(none)"))
          << "; expected the same split by " << w
          << ", not bound to a thread (propagate_transformation first)";
    }
    // A padded Shared buffer (pad_shared) starts each row at a multiple of its
    // pitch, extent + pad: the w-wide vectors of a row stay aligned only if
    // the pad is a multiple of w.
    for (const TensorView* g : {p, t}) {
      const int64_t pad = Indexer::row_pad(g);
      user_assert(pad % w == 0)
          << what << " by " << w << " but " << (g == t ? "it" : "its operand " + g->describe())
          << " is a Shared buffer padded by " << pad
          << " elements per row (pad_shared), which misaligns the vectors of every row after "
             "the first; expected a padding that is a multiple of "
          << w << " (or no vectorization)";
    }
    // A swizzled Shared buffer (swizzle): the vector is its innermost
    // allocation axis, the very row the XOR permutes unit by unit, so the w
    // elements would not stay adjacent (and a whole-vector unit would leave
    // the XOR nothing to permute).
    for (const TensorView* g : {p, t}) {
      // Swizzled over its flat offset (Indexer::RowSwizzle::flat): whole
      // 16-byte units move, so a vector within one unit stays whole.
      if (g->shared_swizzle() > 1 && g->memory_type() == ir::MemoryType::Shared) {
        const Indexer::RowSwizzle swz = Indexer::row_swizzle(g);
        if (swz.flat && swz.unit % w == 0) continue;
      }
      user_assert(g->shared_swizzle() <= 1)
          << what << " by " << w << " but " << (g == t ? "it" : "its operand " + g->describe())
          << " is a Shared buffer swizzled with width " << g->shared_swizzle()
          << " (swizzle), whose XOR permutes the elements of the vector's row; expected no "
             "vectorized copy into or out of a swizzled buffer (vectorize the other copies, or "
             "pad_shared instead)";
    }
    for (const TensorView* g : {p, t})
      if (buffers.at(g)->is_param) kernel.vector_accesses.push_back({buffers.at(g), w});
    plan[t] = w;
  }
  return plan;
}

}  // namespace schedlab::lower
