// Grid persistence (nvFuser's grid-persistent normalization): a grid
// reduction (a Reduction axis bound to BIDx/BIDy) whose result the same
// kernel reads. Its blocks hand their partials to a workspace, wait at a
// grid-wide barrier, and every block then combines all partials in block
// order (an allreduce over the grid: every block gets the bit-identical
// result). The barrier needs every block of the grid resident at once: the
// launch checks it against the device's occupancy (a cooperative launch on
// CUDA), and lowering rule 8 (docs/lowering-rules.md) says the rest.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Marks tv's grid reduction grid-persistent (see above). User errors naming
/// tv: tv must be defined by a reduction; whether one of its reduction axes
/// is bound to BIDx/BIDy is known once it is parallelized: lowering checks
/// that (a grid_persistent tensor without a grid reduction is refused there).
void grid_persistent(ir::TensorView* tv, bool on = true);

}  // namespace schedlab::sched
