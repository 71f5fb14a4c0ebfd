// Pass: circular buffering (sched::circular_buffer). A cache circular-
// buffered with S stages and prefetch P, computed inside its circular-buffer
// loop `for i < n` (the innermost serial loop it is inlined into), holds S tiles
// (allocate_buffers multiplies its size); iteration i's tile is stage i % S.
// The loop becomes
//
//   for s < P:  if (s < n) load tile s into stage s;  [commit]
//   for i < n:
//     if (i + P < n) load tile i + P into stage (i + P) % S
//     [commit; wait_group P]          (cp.async caches only)
//     __syncthreads()                 (Shared caches)
//     read stage i % S
//     __syncthreads()                 (Shared caches)
//
// The wait count, from the PTX ISA (cp.async.wait_group N: all but the newest
// N committed groups of the thread are complete): at iteration i's wait the
// thread has committed P + i + 1 groups, one per tile (empty past the end),
// tile i in group i; the P groups after it, of tiles i + 1 .. i + P, may stay
// pending, so wait_group P. The first barrier publishes the landed (or
// stored) stage to every thread; the last keeps iteration i + 1 from
// overwriting stage (i + 1 + P) % S, which other threads may still read when
// (i + 1 + P) % S == i % S (P = S - 1), or read next (P < S - 1) only after
// their own barrier: without it the write races with the reads.
//
// Runs after insert_barriers, which has put the loop's barrier before the
// reads (with commit + wait_group 0 before it for cp.async copies, which this
// pass relaxes to wait_group P) and the one at the end of the body.
// Needs: each circular-buffered cache's statements at the top of its loop's
// body, before any statement that reads it (inline positions order them so).
#pragma once

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Lowering's rules for a circular-buffered t (docs/lowering-rules.md, rule
/// 15): a user error naming t and its axis unless sched::circular_buffer's
/// rules still hold and t is computed inside a serial loop of constant
/// buffer size whose extent is not a constant smaller than its stages.
void check_circular_buffer(const ir::TensorView* t);

void circular_buffer(kir::Kernel& kernel);

}  // namespace schedlab::lower
