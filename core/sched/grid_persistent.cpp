// grid_persistent: the scheduling primitive and its rule.
#include "schedlab/sched/grid_persistent.h"

#include <string>

#include "schedlab/base/error.h"

namespace schedlab::sched {

void grid_persistent(ir::TensorView* tv, bool on) {
  user_assert(tv->definition() != nullptr && tv->definition()->is<ir::ReductionOp>())
      << "grid_persistent: " << tv->describe() << " is "
      << (tv->definition() ? "defined by " + tv->definition()->op_name()
                           : std::string("a fusion input"))
      << "; expected a tensor defined by a reduction (sum, max, min, prod), whose grid "
         "reduction the kernel then reads through a grid-wide barrier";
  tv->set_grid_persistent(on);
}

}  // namespace schedlab::sched
