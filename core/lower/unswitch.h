// Pass: unswitch. A loop marked Unswitch becomes
//   if (every predicate of the nest holds at the last iteration) { nest, unpredicated }
//   else { nest, predicated }
// so that full tiles run without per-element checks (nvFuser's unswitch).
//
// Needs: predicates of the form (index < extent) combined with &&. Guarantees:
// hoisting happens only when every predicate index is non-decreasing in the
// nest's loop variables (built from +, *, / and ceilDiv, with no % or
// division by a loop variable), so holding at the last iteration implies
// holding at every iteration; otherwise, and for nests that touch Shared
// memory or contain a block reduction (a barrier under a thread-dependent
// branch would deadlock), the loop stays as it was. Runs before barrier insertion.
#pragma once

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

void unswitch_loops(kir::Kernel& kernel);

}  // namespace schedlab::lower
