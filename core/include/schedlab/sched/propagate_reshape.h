// propagate_reshape: nvFuser's scheduler_utils::propagateReshapeTransforms.
#pragma once

#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Replays each view's (reshape's) transforms onto every tensor upstream of
/// it: the view's output is the reference of propagate_transformation over
/// its producers, so their loop domains become the view's logical domain
/// (its splits and merges applied to them) and map to it. Views are taken
/// in statement order, so a tensor upstream of two views ends in the later
/// one's shape. One reference schedule on a tensor past the views then
/// propagates across them (propagate_transformation crosses a view itself;
/// this makes the producers' loops line up for schedules written by hand
/// and for inline_most). Inlined tensors are an error, as for
/// propagate_transformation. Returns the number of views.
int propagate_reshape(ir::Fusion& f);

/// The tensors of f in a statement order (nvFuser's StmtSort): inputs first,
/// then each expression's output after its operands (Fusion::exprs_for_outputs).
std::vector<ir::TensorView*> statement_sort(const ir::Fusion& f);

}  // namespace schedlab::sched
