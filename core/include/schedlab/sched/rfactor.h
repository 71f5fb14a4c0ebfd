// rfactor: splits one reduction into two, as nvFuser's TensorView::rFactor.
#pragma once

#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// tv is a reduction output whose loop domain splits its reduction axes.
/// `axes` (loop positions, negative allowed) name reduction loop axes to
/// reduce first. Returns the new producer P: it reduces over `axes` only and
/// keeps the other reduction loop axes as Iteration (per-thread partials);
/// tv then reduces P over the remaining ones. P's logical domain is its root
/// with the reduction-side splits and merges applied; both tensors keep tv's
/// loop order and bindings. Errors: tv not a reduction, an axis that is not a
/// reduction, all reduction axes selected, a repeated axis, tv inlined.
ir::TensorView* rfactor(ir::TensorView* tv, std::vector<int> axes);

}  // namespace schedlab::sched
