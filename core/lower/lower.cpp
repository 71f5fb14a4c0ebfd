// The lowering pipeline, pass after pass (Halide's Lower.cpp is the model).
#include "schedlab/lower/lower.h"

#include <algorithm>
#include <array>

#include "allocation.h"
#include "async_copy.h"
#include "barriers.h"
#include "circular_buffer.h"
#include "generate.h"
#include "indexing.h"
#include "loop_tree.h"
#include "lowerable.h"
#include "mma_tile.h"
#include "register_loops.h"
#include "simplify.h"
#include "unswitch.h"
#include "vectorize.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/sched/loop_owner_cache.h"

namespace schedlab::lower {

namespace {

/// The block (or grid) of a kernel whose sizes are all known: each
/// dimension's largest bound loop extent, as the launch takes it; 0s when a
/// size is not known.
std::array<int64_t, 3> static_launch(const kir::Kernel& k, const ir::SizeBindings& sizes,
                                     const std::array<ir::ParallelType, 3>& dims) {
  std::array<int64_t, 3> r{1, 1, 1};
  for (size_t d = 0; d < 3; ++d) {
    auto it = k.launch_extents.find(dims[d]);
    if (it == k.launch_extents.end()) continue;
    for (const ir::SizeExpr& e : it->second) {
      auto v = e.evaluate(sizes);
      if (!v) return {};
      r[d] = std::max(r[d], *v);
    }
  }
  return r;
}

}  // namespace

const std::vector<std::string_view>& lowering_passes() {
  static const std::vector<std::string_view> kPasses = {
      "allocate_buffers", "plan_vectorization", "generate",  "place_dynamic_shared",
      "simplify",         "lower_async_copies",    "unroll_register_loops", "unswitch_loops",
      "insert_barriers",  "circular_buffer",       "hoist_mma_fragments"};
  return kPasses;
}

kir::Kernel lower(const ir::Fusion& f, int index_bits, const PassObserver& after_pass,
                  const ir::SizeBindings& specialize, const ir::SizeBindings& divisible) {
  auto after = [&](std::string_view pass, const kir::Kernel& k) {
    if (after_pass) after_pass(pass, k);
  };
  internal_assert(index_bits == 32 || index_bits == 64) << "index_bits " << index_bits;
  // f is const here: every pass asks liveness and loop owners per tensor,
  // which the cache answers in O(1) (linear lowering of long chains).
  const sched::LoopOwnerCache frozen(f);
  ir::verify(f);
  // 1. Refuse what later passes cannot lower correctly, before doing any work.
  check_lowerable(f);
  kir::Kernel kernel;
  kernel.index_bits = index_bits;
  // 2. Buffers first: indexing needs to know which tensors are parameters and
  //    how Local/Shared ones are laid out.
  auto buffers = allocate_buffers(f, kernel);
  after("allocate_buffers", kernel);
  // A size is read from a parameter, or compiled in as a constant. A size
  // read at run time and known to be a multiple of d is d * (size / d), the
  // quotient an opaque variable: simplify then folds it as a multiple.
  std::map<std::string, kir::ExprP> sizes;
  for (const auto& [name, src] : kernel.size_sources) {
    if (auto it = specialize.find(name); it != specialize.end()) {
      kernel.specialized[name] = it->second;
      sizes[name] = kir::Expr::integer(it->second);
    } else if (auto sc = kernel.size_scale.find(name); sc != kernel.size_scale.end()) {
      sizes[name] = kir::Expr::tensor_size(src.first, src.second) * kir::Expr::integer(sc->second);
    } else if (auto d = divisible.find(name); d != divisible.end() && d->second > 1) {
      kernel.divisible[name] = d->second;
      sizes[name] = size_variable(kernel, name) * kir::Expr::integer(d->second);
    } else {
      sizes[name] = size_variable(kernel, name);
    }
  }
  Indexer indexer(buffers, sizes);
  // Vectorized copies are checked here, before any statement exists.
  plan_vectorization(f, buffers, kernel);
  after("plan_vectorization", kernel);
  // 3. The loop structure from inline positions, ordered writer-before-reader.
  auto tree = build_loop_tree(f);
  // 4. Loops and predicated stores.
  kernel.body = generate(*tree, indexer, buffers, kernel);
  after("generate", kernel);
  // 4b. Shared buffers over symbolic extents go after the block-reduction
  //     workspace, which generate has just sized.
  place_dynamic_shared(kernel, sizes);
  after("place_dynamic_shared", kernel);
  // 4c. Index math simplified with the loop, thread and size bounds. Launch
  //     extents that are constants (or specialized sizes) fix the block and
  //     grid first, so that thread and block indices are bounded exactly.
  using P = ir::ParallelType;
  kernel.static_block = static_launch(kernel, specialize, {P::TIDx, P::TIDy, P::TIDz});
  simplify(kernel, static_launch(kernel, specialize, {P::BIDx, P::BIDy, P::BIDz}));
  after("simplify", kernel);
  // 4c'. cp.async caches: their copies asynchronous, edge predicates as zero
  //      fill (after simplify, which has dropped the predicates that always hold).
  lower_async_copies(kernel);
  after("lower_async_copies", kernel);
  // 4d. Loops indexing registers unrolled, so the registers stay registers.
  unroll_register_loops(kernel);
  after("unroll_register_loops", kernel);
  // 5. Unswitch before barriers: it duplicates nests, and refuses nests that
  //    touch Shared memory or hold a block reduction, so no barrier ends up
  //    under a divergent branch.
  unswitch_loops(kernel);
  after("unswitch_loops", kernel);
  // 6. Barriers last: they depend on the final statement order.
  insert_barriers(kernel);
  after("insert_barriers", kernel);
  // 7. Circular buffers: the loads of later iterations moved ahead, around the
  //    barriers (and cp.async waits) just placed.
  circular_buffer(kernel);
  after("circular_buffer", kernel);
  // 8. Warp tiles: the loops over a warp's mma tiles folded into the tile,
  //    each operand fragment read once per row or column of tiles.
  hoist_mma_fragments(kernel);
  after("hoist_mma_fragments", kernel);
  return kernel;
}

}  // namespace schedlab::lower
