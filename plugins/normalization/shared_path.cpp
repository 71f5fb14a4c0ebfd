// normalization/shared_path.cpp: the shared path (persistence=shared):
// which persistent buffers go to Shared memory and what they cost, and the
// register copies through which the schedule reads and writes them a
// vector at a time (normalization.cpp has the design).
#include <algorithm>
#include <vector>

#include "normalization.h"
#include "schedlab/plugin_api/types.hpp"

namespace normalization {

using pa::ceil_div;
using pa::dtype_bytes;

namespace {

/// The shared path's placement: every buffer Shared, then the last ones
/// (intermediates come after the inputs' caches) back in registers while
/// the Shared buffers exceed the limit.
Config place_shared(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.in_shared.assign(a.persistent.size(), true);
  c = cost(a, d, c);
  for (size_t i = a.persistent.size(); i-- > 0 && !c.fits_shared();) {
    c.in_shared[i] = false;
    c = cost(a, d, c);
  }
  return c;
}

/// Whether a Shared buffer of `c` holds vectors wider than one 16-byte
/// access (an f32 buffer of a bf16 row at vector=8): the shared path cannot
/// read it through a register copy, so it is read element by element, with
/// bank conflicts (the model: softmax_bf16 at N=256, K=32768, keeping its
/// f32 cast and e in shared memory, 8-way, 28 % of peak bandwidth).
bool shared_read_by_element(const Analysis& a, const Config& c) {
  for (size_t i = 0; i < a.persistent.size(); ++i)
    if (c.in_shared[i] && wider_than_an_access(c, a.persistent[i])) return true;
  return false;
}

}  // namespace

bool wider_than_an_access(const Config& c, const pa::TensorView& t) {
  return c.vector * dtype_bytes(t.dtype()) > kMaxVectorBytes;
}

/// The shared path: the persistent buffers placed as above; when they do
/// not fit, or would be read element by element (shared_read_by_element),
/// the intermediates recomputed by each pass and only the inputs' caches
/// kept (in their storage type: a bf16 row of K elements takes 2K bytes
/// where its f32 cast took 4K and softmax's e 4K more).
Config cost_shared(const Analysis& a, const pa::DeviceProperties& d, Config c) {
  c.recompute = false;
  Config keep = place_shared(a, d, c);
  const bool only_inputs = std::all_of(a.persistent.begin(), a.persistent.end(),
                                       [](const pa::TensorView& t) { return t.is_input(); });
  if (only_inputs || (keep.fits() && !shared_read_by_element(a, keep))) return keep;
  if (!recompute_refusal(a).empty()) return keep;
  Config r = place_shared(with_recompute(a), d, c);
  r.recompute = true;
  return r.fits() ? r : keep;
}

/// The shared path writes and reads each Shared buffer a vector at a
/// time: it reads into a register copy in every pass that reads it (recompute: one copy per
/// reader, so that none is kept across a reduction). Read element by
/// element, the [persist, threads, vector] layout puts a warp's loads
/// `vector` elements apart: 4-way bank conflicts for f32 at vector=4 and
/// for bf16 at vector=8. A vector wider than 16 bytes (an f32 buffer of a
/// bf16 row) cannot be one access, and stays read element by element.
/// Does nothing on another path or without vectors. `persistent`: the buffers (inputs replaced by
/// their caches), index by index with a.persistent; the register copies go to `vectorized`.
void stage_shared_buffers(const Analysis& a, const Config& c,
                          std::vector<pa::TensorView>& persistent,
                          std::vector<pa::TensorView>& vectorized) {
  if (c.path != Path::Shared || c.vector == 1) return;
  for (size_t i = 0; i < persistent.size(); ++i) {
    if (!c.in_shared[i] || !buffered(a.persistent[i], c) || wider_than_an_access(c, persistent[i]))
      continue;
    // An intermediate is computed in registers and stored a vector at a
    // time as well.
    if (!persistent[i].is_input() && persistent[i] == a.persistent[i]) {
      persistent[i].cache_before();
      vectorized.push_back(persistent[i]);
    }
    pa::TensorView reg = persistent[i].cache_after();
    const std::vector<pa::TensorView> readers = reg.consumers();
    vectorized.push_back(reg);
    for (size_t k = 1; k < readers.size(); ++k) vectorized.push_back(reg.recompute({readers[k]}));
  }
}

}  // namespace normalization
