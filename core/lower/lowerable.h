// Pass: check that lowering supports every construct of the schedule.
//
// Needs: a verified fusion. Guarantees: on return, bindings of inlined axes
// agree with their consumers', every reduction axis is serial or bound to a
// thread index (a block reduction, of a non-half type), and no
// construct reserved for later work (Bulk, cp.async, ldmatrix, TMA loads) is
// used, a load with a cache policy (CacheOp) reads Global memory into Local or
// Shared memory, and every consumer reads only elements of a producer that the same
// thread computed, or (for a Shared producer) the same block: a bound axis of
// the producer outside its inline position must map exactly to an axis of
// each consumer bound the same way (for a consumer inlined into broadcast-
// widened loops: an axis of the loops it runs in); and a reduction stored in
// Global memory binds every launched dimension (in Shared memory, every thread
// dimension), so no two threads accumulate into one element. Otherwise a
// user_error naming the tensor, the axis and the construct.
// docs/lowering-rules.md lists these rules with their tests.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::lower {

void check_lowerable(const ir::Fusion& f);

}  // namespace schedlab::lower
