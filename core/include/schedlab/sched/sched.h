// schedlab/sched: the scheduling vocabulary, with nvFuser's semantics in
// snake_case names (docs/schedule-scripts.md, "Primitives").
//
// Owns: the primitives that rewrite a fusion's tensors (cache_*, rfactor),
// the ones that relate tensors (propagate_transformation,
// parallelize_all_like, inline_*), queries a heuristic asks, and the debug
// printers. The per-tensor loop transforms (split, merge, reorder,
// parallelize) are TensorView methods in schedlab/ir, because the IR records
// them. May depend on: schedlab/base and schedlab/ir.
// Invariants: every primitive checks its rules at the call and raises a
// user_error naming the tensor, the axis and the rule; after any primitive
// returns, ir::verify(fusion) holds.
#pragma once

#include "schedlab/sched/cache.h"
#include "schedlab/sched/circular_buffer.h"
#include "schedlab/sched/grid_persistent.h"
#include "schedlab/sched/debug_print.h"
#include "schedlab/sched/id_map.h"
#include "schedlab/sched/index_replay.h"
#include "schedlab/sched/inline.h"
#include "schedlab/sched/mma.h"
#include "schedlab/sched/propagate.h"
#include "schedlab/sched/propagate_reshape.h"
#include "schedlab/sched/queries.h"
#include "schedlab/sched/rfactor.h"
