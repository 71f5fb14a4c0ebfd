// normalization/grid_path.cpp: the grid-persistent path (persistence=grid,
// nvFuser's grid-persistent normalization): few long rows, each split over
// blocks of grid_threads() threads that keep their part of the row in registers; every
// reduction is an allreduce over the row's blocks through a grid-wide barrier
// (ABI 1.10's grid_persistent, lowering rule 8), so the whole normalization
// is one kernel that reads the row once. Every block of the grid must be
// resident at once (the launch checks it): the split asks for one block of
// kMaxRowThreads threads per SM at most, which any SM holds.
#include <algorithm>
#include <string>

#include "normalization.h"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace normalization {

using pa::ceil_div;

int64_t grid_threads(const pa::DeviceProperties& d) {
  return std::min(kMaxRowThreads, pa::rules::max_threads_per_block(d));
}

Config grid_split(const Analysis& a, const pa::DeviceProperties& d) {
  Config c;
  c.path = Path::Grid;
  c.vector = pa::rules::dividing_vector(pa::rules::widest_vector(a.widest), a.inner_extent);
  c.rows = 1;
  c.persist = 0;
  // One block per SM: the rows' blocks are all resident, whatever their
  // registers (a block that launches at all fits an SM alone).
  const int64_t blocks = std::max(1, d.sm_count) / std::max<int64_t>(a.I, 1);
  if (blocks < 2) return c;
  const int64_t vectors = ceil_div(a.R, c.vector);
  // ceilDiv(vectors, threads * persist) <= blocks.
  for (int64_t p = ceil_div(vectors, blocks * grid_threads(d)); p <= kMaxPersist; ++p) {
    c.persist = p;
    if (Config t = cost(a, d, c); t.fits() && t.blocks >= 2) return t;
    if (p == 1 && vectors <= grid_threads(d)) break;
  }
  c.persist = 0;
  return c;
}

std::string grid_refusal(const Analysis& a, const pa::DeviceProperties& d) {
  return "persistence=grid splits few long rows over blocks, one block per SM: " +
         std::to_string(a.I) + " rows on the " + std::to_string(d.sm_count) + " SMs of " +
         d.name + " leave fewer than 2 blocks per row, or a row of " + std::to_string(a.R) +
         " elements does not fit their registers";
}

}  // namespace normalization
