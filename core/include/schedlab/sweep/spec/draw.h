// schedlab/sweep/spec: the random draw of a scheduler's space, a pure
// function of the spec: the `random` strategy proposes it (search), and the
// loader checks with it that a space too large to scan yields a point that
// passes the constraints (spec), before anything runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/ir/size_expr.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

/// The seed of one search: the sweep's strategy seed mixed with a stable
/// hash (FNV-1a) of (scheduler, fusion, sizes by name), so that different
/// searches draw independently and a sweep draws the same points every run.
uint64_t search_seed(uint64_t strategy_seed, const std::string& scheduler,
                     const std::string& fusion, const ir::SizeBindings& sizes);

/// Up to `n` distinct points of `s`'s space that its constraints admit at
/// `sizes`, uniformly without replacement, in space order. A space of at
/// most kMaxGridPoints: a partial Fisher-Yates shuffle of the admissible
/// points over a 64-bit Mersenne Twister seeded with `seed` (whose output
/// the standard fixes, unlike its distributions), so the first k draws do
/// not depend on n. A larger space: rejection sampling by index with a
/// bounded number of tries, so a space the constraints make sparse yields
/// fewer points.
std::vector<Config> draw_admissible(const SchedulerSpec& s, const ir::SizeBindings& sizes,
                                    uint64_t seed, uint64_t n);

}  // namespace schedlab::sweep
