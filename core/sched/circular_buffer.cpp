// circular_buffer: the scheduling primitive and its rules.
#include "schedlab/sched/circular_buffer.h"

#include "schedlab/base/error.h"

namespace schedlab::sched {

void check_circular_buffer_args(const ir::TensorView* tv, int64_t stages, int64_t prefetch,
                                std::string_view who) {
  user_assert(stages >= 2 && stages <= kMaxCircularStages)
      << who << ": stages of " << tv->describe() << " must be in [2, " << kMaxCircularStages
      << "], got " << stages;
  user_assert(prefetch >= 1 && prefetch < stages)
      << who << ": prefetch of " << tv->describe() << " must be in [1, " << stages - 1
      << "] (fewer than its " << stages << " stages), got " << prefetch;
  const auto* ls = tv->definition() ? tv->definition()->as<ir::LoadStoreOp>() : nullptr;
  user_assert(ls != nullptr)
      << who << ": " << tv->describe() << " is "
      << (tv->definition() ? "defined by " + tv->definition()->op_name() : std::string("an input"))
      << "; expected a cache (a LoadStoreOp: cache_after) to circular-buffer";
  user_assert(tv->memory_type() == ir::MemoryType::Shared ||
              tv->memory_type() == ir::MemoryType::Local)
      << who << ": " << tv->describe() << " is in " << ir::memory_type_name(tv->memory_type())
      << " memory; expected Shared or Local (a circular buffer is a tile per stage)";
  user_assert(stages <= 2 || ls->op() == ir::LoadStoreOpType::CpAsync)
      << who << ": " << tv->describe() << " has " << stages << " stages but is loaded with "
      << ir::load_store_op_name(ls->op())
      << "; more than 2 stages need asynchronous loads: expected cache_after with "
         "LoadStoreOpType::CpAsync, or 2 stages";
}

void circular_buffer(ir::TensorView* tv, int64_t stages, int64_t prefetch) {
  check_circular_buffer_args(tv, stages, prefetch, "circular_buffer");
  tv->set_circular_buffer(stages, prefetch);
}

}  // namespace schedlab::sched
