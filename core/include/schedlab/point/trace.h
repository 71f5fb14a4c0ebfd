// schedlab/point/trace: every point's stages written as JSON lines to the
// file $SCHEDLAB_POINT_TRACE names (docs/point.md), whichever command drives
// the point: how a test proves that `exec`, `run` and `fuzz` reach the kernel
// through the same stages, and how a person sees where a point spends its
// stages without a debugger.
//
// Owns: the trace's format (one object per stage event: "pid", "fusion",
// "sizes", "scheduler", "stage", "event" begin|end, and at a stage's end
// what it produced: "kernels" (hashes of the generated sources) after
// lower, "verdict", "max_abs_error" and "max_ratio" after validate).
// May depend on: point (the event and the point it describes).
// Invariants: nothing is written when the variable is unset or empty; each
// line is written with one append, so forked children and threads
// interleave whole lines only.
#pragma once

#include "schedlab/point/point.h"

namespace schedlab::point {

/// Appends `e` of `p` to $SCHEDLAB_POINT_TRACE, if set.
void trace_event(const Event& e, const Point& p);

}  // namespace schedlab::point
