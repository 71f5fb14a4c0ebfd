// The lowering pipeline: a scheduled fusion to a kernel (kernel IR).
//
// Needs: a fusion that passes ir::verify and whose schedule is legal
// (sched::validate_bindings). Guarantees: the kernel computes the fusion's
// outputs for every size binding, or lower() raises a user_error naming the
// construct it cannot handle yet. It never returns a wrong kernel.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Called after each pass that builds or rewrites the kernel IR, with the
/// pass's name (one of lowering_passes()) and the kernel so far.
using PassObserver = std::function<void(std::string_view pass, const kir::Kernel& kernel)>;

/// The passes a PassObserver sees, in order, named as the functions in
/// lower.cpp: allocate_buffers, plan_vectorization, generate,
/// place_dynamic_shared, simplify, lower_async_copies, unroll_register_loops,
/// unswitch_loops, insert_barriers, circular_buffer.
const std::vector<std::string_view>& lowering_passes();

/// Lowers f. index_bits (32 or 64) is the index type of the kernel; the
/// executor picks 32 when every size and offset fits. `after_pass`, when
/// set, sees the kernel after every pass (`show --print-after`).
/// `specialize`: sizes compiled into the kernel as constants (the kernel then
/// runs at those sizes only, kir::Kernel::specialized); the sizes it leaves
/// out are read from the parameters at run time. `divisible`: sizes read at
/// run time that the kernel may assume are multiples of the given divisor
/// (kir::Kernel::divisible); sizes also in `specialize` ignore it.
kir::Kernel lower(const ir::Fusion& f, int index_bits = 32, const PassObserver& after_pass = {},
                  const ir::SizeBindings& specialize = {},
                  const ir::SizeBindings& divisible = {});

}  // namespace schedlab::lower
