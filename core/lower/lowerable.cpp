// Lowering's admission check: one place that says what is not supported yet.
#include "lowerable.h"

#include "schedlab/base/error.h"
#include "schedlab/sched/inline.h"

namespace schedlab::lower {

void check_lowerable(const ir::Fusion& f) {
  sched::validate_bindings(f);
  for (const ir::TensorView* t : f.tensors()) {
    for (int k = 0; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      user_assert(!(id->is_reduction() && id->parallel_type() != ir::ParallelType::Serial))
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is a Reduction bound to " << ir::parallel_type_name(id->parallel_type())
          << "; block and grid reductions are not supported yet, expected a serial reduction "
             "axis (rfactor the parallel part into a producer)";
      user_assert(id->loop_transform() != ir::LoopTransform::Bulk)
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is Bulk; TMA bulk copies are not supported yet";
      user_assert(id->parallel_type() != ir::ParallelType::DIDx)
          << "lowering: " << t->describe() << " axis " << k << " (" << id->str()
          << ") is bound to DIDx; multi-device fusions are not supported";
    }
    if (auto* ls = t->definition() ? t->definition()->as<ir::LoadStoreOp>() : nullptr)
      user_assert(ls->op() == ir::LoadStoreOpType::Set)
          << "lowering: " << t->describe() << " is defined by a "
          << ir::load_store_op_name(ls->op())
          << " load; only Set is supported yet (use cache_after with LoadStoreOpType::Set)";
  }
}

}  // namespace schedlab::lower
