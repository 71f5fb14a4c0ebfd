// The schedule-script primitives and queries (schedule_primitives.cpp): the
// table the script applier looks each statement up in. Private to
// core/frontend.
#pragma once

#include <vector>

#include "schedule_args.h"

namespace schedlab::frontend::script {

/// Every primitive but params(...), in the order the docs list them.
const std::vector<Primitive>& primitives();

}  // namespace schedlab::frontend::script
