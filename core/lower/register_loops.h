// Pass: register loops. A Local buffer lives in registers only if every
// access indexes it with a constant once the loops around it are unrolled
// (a dynamic index puts the array on the stack, in local memory). This pass
// marks every serial loop of constant extent whose variable indexes a Local
// buffer as unrolled (#pragma unroll), up to kMaxRegisterLoopTrips
// iterations (a longer loop indexing registers keeps its array on the stack
// either way, and unrolling it would only bloat the code).
//
// Needs: a simplified kernel (simplify.h: with the sizes compiled in, the
// indices of Local buffers are the loop indices). Guarantees: only For::unroll
// changes.
#pragma once

#include <cstdint>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

inline constexpr int64_t kMaxRegisterLoopTrips = 64;

/// Marks the loops that index registers as unrolled.
void unroll_register_loops(kir::Kernel& kernel);

}  // namespace schedlab::lower
