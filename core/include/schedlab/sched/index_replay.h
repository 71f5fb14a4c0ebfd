// Concrete index replay: from loop indices back to logical indices, by
// running each split and merge backward (split: i = outer * factor + inner
// for an inner split, outer * ceilDiv(ext, factor) + inner otherwise; merge:
// outer = m / ext(inner), inner = m % ext(inner)). This is the semantics
// lowering must reproduce symbolically; tests use it to check that every
// schedule covers the logical space exactly once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Extents of tv's loop axes under `sizes`.
std::vector<int64_t> loop_extents(const ir::TensorView* tv, const ir::SizeBindings& sizes);
/// The logical index (one per logical axis, reductions included) that the
/// loop index `loop_index` addresses, or nullopt if a split predicate masks it
/// (an index past the extent of a split that does not divide evenly).
std::optional<std::vector<int64_t>> loop_to_logical(const ir::TensorView* tv,
                                                    const std::vector<int64_t>& loop_index,
                                                    const ir::SizeBindings& sizes);

}  // namespace schedlab::sched
