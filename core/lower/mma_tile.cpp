#include "mma_tile.h"

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/sched/inline.h"

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

const ir::TensorView* mma_operand_source(const ir::TensorView* t) {
  const ir::Fusion* f = t->fusion();
  if (t->memory_type() != ir::MemoryType::Shared || f->is_input(t) || f->is_output(t) ||
      t->has_root() || t->circular_stages() > 1 || t->shared_pad() > 0 ||
      t->shared_swizzle() > 1)
    return nullptr;
  const auto uses = f->live_uses(t);
  if (uses.size() != 1 || !uses.front()->is<ir::MmaOp>() || uses.front()->out()->mma_k() == nullptr)
    return nullptr;
  const ir::Expr* d = t->definition();
  if (d == nullptr) return nullptr;
  const auto* ls = d->as<ir::LoadStoreOp>();
  if (!d->is<ir::BroadcastOp>() && !(ls && ls->op() == ir::LoadStoreOpType::Set)) return nullptr;
  const auto* q = d->inputs().at(0)->as<ir::TensorView>();
  if (q == nullptr || q->memory_type() != ir::MemoryType::Shared || f->is_input(q) ||
      q->dtype() != t->dtype())
    return nullptr;
  // q's loops must all enclose t: its buffer then holds, at t's iteration,
  // every element t copies from it.
  if (q->compute_at_pos() > t->compute_at_pos()) return nullptr;
  for (int k = 0; k < q->compute_at_pos(); ++k) {
    const auto qk = sched::loop_owner(q, k);
    bool found = false;
    for (int j = 0; j < t->compute_at_pos() && !found; ++j) found = qk && sched::loop_owner(t, j) == qk;
    if (!found) return nullptr;
  }
  return q;
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

/// The value of index math `e` with every variable, thread or block index
/// and tensor size given a value by `leaf` (nullopt: e reads memory or is
/// not index math). The ldmatrix layout check below evaluates row offsets
/// with these values.
std::optional<int64_t> evaluate(const ExprP& e, const std::function<int64_t(const Expr&)>& leaf) {
  if (const auto* c = e->as<kir::IntImm>()) return c->value;
  if (e->as<kir::Var>() || e->as<kir::Builtin>() || e->as<kir::TensorDim>()) return leaf(*e);
  const auto* x = e->as<kir::IndexOp>();
  if (x == nullptr) return std::nullopt;
  const auto a = evaluate(x->a, leaf), b = evaluate(x->b, leaf);
  if (!a || !b) return std::nullopt;
  switch (x->op) {
    case kir::IndexOpType::Add: return *a + *b;
    case kir::IndexOpType::Mul: return *a * *b;
    case kir::IndexOpType::Div: return *b > 0 ? std::optional<int64_t>(*a / *b) : std::nullopt;
    case kir::IndexOpType::Mod: return *b > 0 ? std::optional<int64_t>(*a % *b) : std::nullopt;
    case kir::IndexOpType::CeilDiv:
      return *b > 0 ? std::optional<int64_t>((*a + *b - 1) / *b) : std::nullopt;
    case kir::IndexOpType::Xor: return *a ^ *b;
    case kir::IndexOpType::Lt: return *a < *b ? 1 : 0;
    case kir::IndexOpType::And: return (*a != 0 && *b != 0) ? 1 : 0;
  }
  return std::nullopt;
}

/// Values for the leaves of index math: all 0 (seed 0), or a pseudo-random
/// value in [1, 64] per leaf, the same for every occurrence of it.
int64_t leaf_value(const Expr& e, uint64_t seed) {
  if (seed == 0) return 0;
  uint64_t h = seed * 0x9e3779b97f4a7c15ULL;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
  if (const auto* v = e.as<kir::Var>()) {
    for (char ch : v->name) mix(static_cast<unsigned char>(ch));
  } else if (const auto* b = e.as<kir::Builtin>()) {
    mix(static_cast<uint64_t>(b->parallel) * 2 + (b->of == kir::Builtin::Of::Index ? 0 : 1) + 1000);
  } else if (const auto* d = e.as<kir::TensorDim>()) {
    mix(reinterpret_cast<uintptr_t>(d->buffer));
    mix(static_cast<uint64_t>(d->axis) * 2 + (d->field == kir::TensorDim::Field::Size ? 0 : 1));
  }
  return static_cast<int64_t>(h % 64) + 1;
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
  // The tensor the tile reads operand p from (p, or the Shared tensor p
  // copies: mma_operand_source) and its logical index there for out's `idx`.
  auto source = [&](const ir::TensorView* p, const TensorIndex& idx) {
    std::vector<ExprP> logical = ix.operand_index(e, p, idx);
    const ir::TensorView* q = mma_operand_source(p);
    if (q == nullptr) return std::pair{p, std::move(logical)};
    TensorIndex at_p{{}, Expr::boolean(true)};
    const auto dom = p->logical_no_reductions();
    for (size_t k = 0; k < dom.size(); ++k) at_p.index[dom[k]] = logical[k];
    return std::pair{q, ix.operand_index(p->definition(), q, at_p)};
  };
  auto buffer_of = [&](const ir::TensorView* p) {
    const ir::TensorView* q = mma_operand_source(p);
    return buffers.at(q != nullptr ? q : p);
  };
  auto value = [&](const ir::TensorView* p, const TensorIndex& idx) {
    auto [q, logical] = source(p, idx);
    return std::pair{Expr::load(buffers.at(q), ix.offset(q, logical)), in_range(ix, q, logical)};
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
  // ldmatrix where the Shared layout allows it (the header's rule).
  // A (m, k) is at the tile coordinates (lane 4 (m % 8), fragment 2 (m / 8), k);
  // B (k, n) at (lane n / 2, fragment n % 2, k).
  auto a_at = [&](ExprP m, ExprP k) { return at(m % i(8) * i(4), m / i(8) * i(2), k, false); };
  auto b_at = [&](ExprP k, ExprP n) { return at(n / i(2), n % i(2), k, false); };
  auto offset_of = [&](const ir::TensorView* p, const TensorIndex& idx) {
    auto [q, logical] = source(p, idx);
    return ix.offset(q, logical);
  };
  // Whether rows r < 16 (A: m; B: k or n) of 8 elements starting at column
  // 8 c (c < chunks) are 16 contiguous, 16-byte-aligned bytes; `elem(r, col)`
  // is the element's offset. "" if so, else why not.
  auto rows_ok = [&](const ir::TensorView* p, int rows, int chunks,
                     const std::function<ExprP(int64_t, int64_t)>& elem) -> std::string {
    for (uint64_t seed = 0; seed < 4; ++seed)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < chunks; ++c) {
          auto leaf = [&](const Expr& x) { return leaf_value(x, seed); };
          const auto first = evaluate(elem(r, 8 * c), leaf);
          if (!first) return "its offset is not index math";
          if (*first % 8 != 0)
            return fmt::format("row {} chunk {} starts at element {}, not a multiple of 8 (16 bytes)",
                               r, c, *first);
          for (int64_t x = 1; x < 8; ++x) {
            const auto o = evaluate(elem(r, 8 * c + x), leaf);
            if (!o || *o != *first + x)
              return fmt::format("row {} chunk {}: element {} is not next to element {} in {}", r, c,
                                 x, x - 1, p->describe());
          }
        }
    return "";
  };
  const bool two_bytes = ir::dtype_size(e->a()->dtype()) == 2 && ir::dtype_size(e->b()->dtype()) == 2;
  auto shared = [&](const ir::TensorView* p) -> std::string {
    if (p->memory_type() != ir::MemoryType::Shared || t->fusion()->is_input(p))
      return fmt::format("{} is in {} memory, ldmatrix reads Shared memory", p->describe(),
                         ir::memory_type_name(p->memory_type()));
    return two_bytes ? "" : "the operands are not 16-bit";
  };
  const ir::TensorView* pa = e->a();
  const ir::TensorView* pb = e->b();
  tile->a_why = shared(pa);
  if (tile->a_why.empty())
    tile->a_why = rows_ok(pa, 16, 2, [&](int64_t m, int64_t k) { return offset_of(pa, a_at(i(m), i(k))); });
  if (tile->a_why.empty()) {
    // Lane l passes row l % 8 of matrix l / 8: matrices (m 0-7, k 0-7),
    // (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15): a0..a7 in order.
    const ExprP m = lane % i(8) + (lane / i(8)) % i(2) * i(8), k = lane / i(16) * i(8);
    tile->a_row = Expr::load(buffer_of(pa), offset_of(pa, a_at(m, k)));
    tile->a_full = in_range(ix, pa, ix.operand_index(e, pa, a_at(i(15), i(15)))) &&
                   in_range(ix, pa, ix.operand_index(e, pa, a_at(i(0), i(0))));
  }
  tile->b_why = shared(pb);
  if (tile->b_why.empty()) {
    // k contiguous (an [N, K] B, linear's w): rows n of matrices k 0-7 and
    // k 8-15, plain; n contiguous (a [K, N] B, matmul's b): rows k, .trans.
    const std::string by_k =
        rows_ok(pb, 8, 2, [&](int64_t n, int64_t k) { return offset_of(pb, b_at(i(k), i(n))); });
    const std::string by_n =
        by_k.empty() ? ""
                     : rows_ok(pb, 16, 1, [&](int64_t k, int64_t n) { return offset_of(pb, b_at(i(k), i(n))); });
    if (by_k.empty() || by_n.empty()) {
      tile->b_trans = !by_k.empty();
      // Lane l < 16 passes row l % 8 of matrix l / 8 (lanes 16-31 repeat
      // lanes 0-15: their addresses are not read).
      const ExprP r = lane % i(8), mat = (lane / i(8)) % i(2);
      tile->b_row = Expr::load(buffer_of(pb), tile->b_trans ? offset_of(pb, b_at(r + mat * i(8), i(0)))
                                                             : offset_of(pb, b_at(mat * i(8), r)));
      tile->b_full = in_range(ix, pb, ix.operand_index(e, pb, b_at(i(15), i(7)))) &&
                     in_range(ix, pb, ix.operand_index(e, pb, b_at(i(0), i(0))));
    } else {
      tile->b_why = "along k: " + by_k + "; along n: " + by_n;
    }
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

namespace {

/// Whether any of `xs` (null entries skipped) reads variable `var`.
template <typename... Xs>
bool any_reads(const std::string& var, const Xs&... xs) {
  bool hit = false;
  auto one = [&](const ExprP& e) { hit = hit || (e && kir::reads_var(e, var)); };
  auto each = [&](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, ExprP>)
      one(x);
    else
      for (const ExprP& e : x) one(e);
  };
  (each(xs), ...);
  return hit;
}

class FoldWarpTiles : public kir::IRMutator {
 public:
  void mutate_body(std::vector<kir::StmtP>& body) override {
    for (kir::StmtP& s : body) {
      mutate(*s);
      auto* f = s->as<kir::For>();
      if (f == nullptr || f->unswitch || f->body.size() != 1) continue;
      auto* tile = f->body[0]->as<kir::MmaTile>();
      const auto* n = f->extent->as<kir::IntImm>();
      if (tile == nullptr || n == nullptr || n->value < 1) continue;
      // Each iteration must own its accumulators: then no two mma.sync of
      // the folded tile add into one element, whatever their order.
      if (!any_reads(f->var, tile->acc_index)) continue;
      const bool a_reads = any_reads(f->var, tile->a, tile->a_valid, tile->a_row, tile->a_full);
      const bool b_reads = any_reads(f->var, tile->b, tile->b_valid, tile->b_row, tile->b_full);
      if (!b_reads && tile->m_var.empty()) {
        tile->m_var = f->var;
        tile->m_trips = n->value;
      } else if (!a_reads && tile->n_var.empty()) {
        tile->n_var = f->var;
        tile->n_trips = n->value;
      } else {
        continue;
      }
      kir::StmtP folded = std::move(f->body[0]);
      s = std::move(folded);
    }
  }
};

}  // namespace

void hoist_mma_fragments(kir::Kernel& kernel) { FoldWarpTiles().mutate(*kernel.body); }

}  // namespace schedlab::lower
