// The lowering pipeline: a scheduled fusion to a kernel (kernel IR).
//
// Needs: a fusion that passes ir::verify and whose schedule is legal
// (sched::validate_bindings). Guarantees: the kernel computes the fusion's
// outputs for every size binding, or lower() raises a user_error naming the
// construct it cannot handle yet. It never returns a wrong kernel.
#pragma once

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Lowers f. index_bits (32 or 64) is the index type of the kernel; the
/// executor picks 32 when every size and offset fits.
kir::Kernel lower(const ir::Fusion& f, int index_bits = 32);

}  // namespace schedlab::lower
