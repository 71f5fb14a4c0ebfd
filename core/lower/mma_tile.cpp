#include "mma_tile.h"

#include <tuple>
#include <utility>

#include "schedlab/base/error.h"

namespace schedlab::lower {

using kir::Expr;
using kir::ExprP;

bool is_mma_fragment_loop(const LoopKey& key) {
  const ir::TensorView* t = key.owner;
  return t->mma_k() != nullptr && t->nloop() >= 3 && key.pos == t->nloop() - 2 &&
         t->loop().back() == t->mma_k();
}

bool is_mma_tile_operand(const ir::TensorView* t) {
  for (const ir::Expr* use : t->fusion()->live_uses(t))
    if (use->is<ir::MmaOp>() && use->out()->mma_k() != nullptr) return true;
  return false;
}

namespace {

/// The in-range predicate of operand p at its logical index.
ExprP in_range(const Indexer& ix, const ir::TensorView* p, const std::vector<ExprP>& index) {
  ExprP ok = Expr::boolean(true);
  const auto dom = p->logical_no_reductions();
  for (size_t i = 0; i < dom.size(); ++i)
    if (!dom[i]->is_broadcast()) ok = ok && (index.at(i) < ix.size(dom[i]->extent()));
  return ok;
}

}  // namespace

void check_mma_tile(const ir::Fusion& f, const ir::TensorView* t) {
  const std::string what = "lowering: the mma tile of " + t->describe();
  const int n = t->nloop();
  auto axis = [&](int k) { return t->loop()[static_cast<size_t>(k)]; };
  user_assert(n >= 3 && axis(n - 1) == t->mma_k() &&
              axis(n - 3)->parallel_type() == ir::ParallelType::TIDx &&
              axis(n - 3)->extent().is_const() && axis(n - 3)->extent().const_value() == 32 &&
              axis(n - 2)->parallel_type() == ir::ParallelType::Serial &&
              axis(n - 2)->extent().is_const() && axis(n - 2)->extent().const_value() == 4 &&
              axis(n - 2)->loop_transform() == ir::LoopTransform::Serial &&
              axis(n - 1)->loop_transform() == ir::LoopTransform::Serial)
      << what << " is no longer its innermost loop axes [lane 32 bound to TIDx, fragment 4, k 16]: "
      << "found ["
      << (n >= 3 ? axis(n - 3)->str() + ", " + axis(n - 2)->str() + ", " + axis(n - 1)->str() : "")
      << "]; expected no reorder, split, parallelize or unroll of them after mma_tile";
  user_assert(t->memory_type() == ir::MemoryType::Local)
      << what << " accumulates in " << ir::memory_type_name(t->memory_type())
      << " memory; expected Local (the accumulator fragments are registers)";
  const auto* mma = t->definition()->as<ir::MmaOp>();
  for (const ir::TensorView* p : {mma->a(), mma->b()}) {
    const bool shared_or_global = p->memory_type() != ir::MemoryType::Local || f.is_input(p);
    user_assert(shared_or_global)
        << what << " reads " << p->describe()
        << ", which is Local; the lanes of a warp read each other's operand elements, expected it "
           "in Shared memory (set_memory_type) or read from Global memory";
    user_assert(f.is_input(p) || p->compute_at_pos() <= n - 3)
        << what << " reads " << p->describe() << ", computed at position " << p->compute_at_pos()
        << ", inside the tile's loops (from " << n - 3
        << "); expected it computed outside them (inline_at " << n - 3 << " or before)";
  }
  for (const ir::Expr* e : f.exprs_for_outputs())
    for (const ir::IterDomain* id : e->out()->loop())
      user_assert(id->parallel_type() != ir::ParallelType::TIDx ||
                  (id->extent().is_const() && id->extent().const_value() == 32))
          << what << " needs the x thread index to be the lane, but " << e->out()->describe() << " binds "
          << id->str()
          << " to TIDx; expected every TIDx axis of the kernel to span "
             "32 (warps on TIDy/TIDz)";
}

kir::StmtP mma_tile(const ir::MmaOp* e, const Indexer& ix,
                    const std::map<const ir::TensorView*, const kir::Buffer*>& buffers,
                    const LoopIndexFn& index) {
  const ir::TensorView* t = e->out();
  const int lane_pos = t->nloop() - 3, frag_pos = lane_pos + 1, k_pos = lane_pos + 2;
  const ExprP lane = index(t, lane_pos);
  auto i = [](int64_t v) { return Expr::integer(v); };
  // Out's index with the tile's three loops at (lane, fragment, k).
  auto at = [&](ExprP l, ExprP frag, ExprP k, bool root_predicates) {
    return ix.write_index(
        t,
        [&](const ir::TensorView* tv, int pos) -> ExprP {
          if (tv == t && pos == lane_pos) return l;
          if (tv == t && pos == frag_pos) return frag;
          if (tv == t && pos == k_pos) return k;
          return index(tv, pos);
        },
        root_predicates);
  };
  // The load of operand p at out's index `idx`, and whether it is in range.
  auto value = [&](const ir::TensorView* p, const TensorIndex& idx) {
    std::vector<ExprP> logical = ix.operand_index(e, p, idx);
    return std::pair{Expr::load(buffers.at(p), ix.offset(p, logical)), in_range(ix, p, logical)};
  };
  auto tile = std::make_unique<kir::MmaTile>();
  tile->acc = buffers.at(t);
  tile->dtype = e->a()->dtype();
  const ExprP quad = lane % i(4);  // the lane's thread in its group of 4
  for (int64_t j = 0; j < 8; ++j) {
    // A: the lane's own rows (ml = lane / 4, mh = (j / 2) % 2). Along N, A is
    // Broadcast: n = 0 (nh = nl = 0), where a producer predicated on its
    // Broadcast axes wrote it.
    ExprP k = quad * i(2) + i(j % 2 + 8 * (j / 4));
    std::tie(tile->a[static_cast<size_t>(j)], tile->a_valid[static_cast<size_t>(j)]) =
        value(e->a(), at((lane / i(4)) * i(4), i(2 * ((j / 2) % 2)), k, false));
  }
  for (int64_t j = 0; j < 4; ++j) {
    // B: column n = lane / 4 = 2 nh + nl, so nh = lane / 8 (lane 4 * 0 + nh)
    // and nl = (lane / 4) % 2 (fragment 2 * 0 + nl); along M, B is Broadcast
    // (m = 0: ml = mh = 0).
    ExprP k = quad * i(2) + i(j % 2 + 8 * (j / 2));
    std::tie(tile->b[static_cast<size_t>(j)], tile->b_valid[static_cast<size_t>(j)]) =
        value(e->b(), at(lane / i(8), (lane / i(4)) % i(2), k, false));
  }
  for (int64_t c = 0; c < 4; ++c) {
    TensorIndex idx = at(lane, i(c), i(0), true);
    std::vector<ExprP> logical;
    for (const ir::IterDomain* id : t->logical_no_reductions()) logical.push_back(idx.index.at(id));
    tile->acc_index[static_cast<size_t>(c)] = ix.offset(t, logical);
    tile->acc_valid[static_cast<size_t>(c)] = idx.predicate;
  }
  return tile;
}

}  // namespace schedlab::lower
