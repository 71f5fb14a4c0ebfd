// Pass: check that lowering supports every construct of the schedule.
//
// Needs: a verified fusion. Guarantees: on return, bindings of inlined axes
// agree with their consumers', every reduction axis is serial, and no
// construct reserved for later work (Bulk, cp.async, ldmatrix, TMA loads) is
// used; otherwise a user_error naming the tensor, the axis and the construct.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::lower {

void check_lowerable(const ir::Fusion& f);

}  // namespace schedlab::lower
