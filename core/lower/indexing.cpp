// Index math for lowering; see indexing.h for the scheme.
#include "indexing.h"

#include <algorithm>
#include <set>

#include "mma_tile.h"

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/sched/cache.h"
#include "schedlab/sched/id_map.h"

namespace schedlab::lower {

using ir::IterDomain;
using ir::TensorView;
using kir::Expr;
using kir::ExprP;

namespace {

/// The name standing for a loop variable that is not in scope.
constexpr const char* kOutOfScope = "<loop not in scope>";

/// The conjunction p without its conjuncts that read `var`.
ExprP drop_conjuncts_naming(const ExprP& p, const std::string& var) {
  const auto* op = p->as<kir::IndexOp>();
  if (op && op->op == kir::IndexOpType::And)
    return drop_conjuncts_naming(op->a, var) && drop_conjuncts_naming(op->b, var);
  return kir::reads_var(p, var) ? Expr::boolean(true) : p;
}

bool divides(const ir::SizeExpr& ext, int64_t f) {
  return ext.is_const() && ext.const_value() % f == 0;
}

/// Whether a thread-bound loop axis of t merges a Broadcast piece with an
/// iterated one (an mma tile's lane, sched::mma_tile): the thread index then
/// holds a broadcast position that a guard on it would leave unwritten for
/// threads that read t.
bool merges_broadcast_into_threads(const TensorView* t) {
  for (const ir::IterDomainExpr* e : t->loop_history())
    if (const auto* m = e->as<ir::Merge>())
      if (m->outer()->is_broadcast() != m->inner()->is_broadcast() &&
          ir::is_thread_dim(m->out()->parallel_type()))
        return true;
  return false;
}

}  // namespace

bool is_local_block_broadcast(const TensorView* t) {
  const auto* b = t->definition() ? t->definition()->as<ir::BroadcastOp>() : nullptr;
  if (!b || t->memory_type() != ir::MemoryType::Local) return false;
  bool any = false;
  for (const IterDomain* id : t->loop()) {
    if (!id->is_broadcast() || !ir::is_thread_dim(id->parallel_type())) continue;
    any = true;
    // An input computed by some threads only along it (an Iteration axis, or
    // a Broadcast one it is guarded on: fuzz seed 1 case 273, a max over a
    // Broadcast axis split onto TIDx) is not every thread's.
    for (const IterDomain* in : b->in()->loop())
      if (in->parallel_type() == id->parallel_type() && !in->is_reduction()) return false;
  }
  return any;
}

ExprP Indexer::size(const ir::SizeExpr& e) const {
  // A compound extent read whole (allocation.cpp: a view's (H * W)).
  if (!e.is_const() && !e.is_symbol())
    if (auto it = sizes_.find(e.str()); it != sizes_.end()) return it->second;
  switch (e.kind()) {
    case ir::SizeExpr::Kind::Const:
      return Expr::integer(e.const_value());
    case ir::SizeExpr::Kind::Symbol: {
      auto it = sizes_.find(e.symbol_name());
      internal_assert(it != sizes_.end()) << "no kernel source for size " << e.symbol_name();
      return it->second;
    }
    case ir::SizeExpr::Kind::Mul:
      return size(e.lhs()) * size(e.rhs());
    case ir::SizeExpr::Kind::CeilDiv:
      return Expr::ceil_div(size(e.lhs()), size(e.rhs()));
  }
  internal_error << "lowering: unknown size kind " << static_cast<int>(e.kind());
}

std::string Indexer::loop_var_name(const LoopKey& key) {
  return "i" + std::to_string(key.id()->id());
}

ExprP Indexer::loop_var(const LoopKey& key) {
  const ir::ParallelType p = key.id()->parallel_type();
  if (ir::is_thread_dim(p) || ir::is_block_dim(p)) return Expr::launch_index(p);
  return Expr::var(loop_var_name(key));
}

TensorIndex Indexer::write_index(const TensorView* t, const LoopIndexFn& loop_index,
                                 bool root_predicates) const {
  // Shared loops whose extent differs from t's own axis iterate a domain
  // widened by a broadcast: t's element is the one its consumer reads.
  if (inlined_into_widened_loops(t)) {
    user_assert(t->compute_at_pos() == t->nloop())
        << "lowering: " << t->describe() << " is inlined at position " << t->compute_at_pos()
        << " into loops that iterate a broadcast-widened domain, but keeps loops of its own; "
           "expected it fully inlined (inline_most) or not inlined past the broadcast";
    // A Shared buffer is laid out by t's own loops (allocation_axes), whose
    // elements per block are not the ones the widened loops touch: two of
    // them can land in one slot.
    user_assert(t->memory_type() != ir::MemoryType::Shared)
        << "lowering: " << t->describe() << " is Shared and inlined at position "
        << t->compute_at_pos()
        << " into loops that iterate a broadcast-widened domain; its buffer is laid out by its "
           "own loops, which do not cover the elements a block reads there; expected it Local, or "
           "not inlined past the broadcast";
    // The consumer's loops that do not enclose t (those past the loops t is
    // inlined into, e.g. a serial loop over the widened rows) are not in
    // scope where t is computed: t's element cannot depend on them (it is
    // broadcast there), and the consumer's predicate terms over them do not
    // apply to t (fuzz seed 1 case 1640: a predicate named such a loop).
    std::vector<LoopKey> enclosing;
    for (int k = 0; k < t->compute_at_pos(); ++k) enclosing.push_back(loop_owner(t, k));
    const LoopIndexFn in_scope = [&](const TensorView* tv, int k) {
      const LoopKey key = loop_owner(tv, k);
      // A bound loop is a thread or block index, in scope everywhere.
      if (key.id()->parallel_type() != ir::ParallelType::Serial) return loop_index(tv, k);
      for (const LoopKey& e : enclosing)
        if (e == key) return loop_index(tv, k);
      return Expr::var(kOutOfScope);
    };
    const ir::Expr* use = t->fusion()->live_uses(t).front();
    TensorIndex c = write_index(use->out(), in_scope);
    TensorIndex r{{}, drop_conjuncts_naming(c.predicate, kOutOfScope)};
    auto idx = operand_index(use, t, c);
    auto dom = t->logical_no_reductions();
    for (size_t i = 0; i < dom.size(); ++i) {
      user_assert(!kir::reads_var(idx[i], kOutOfScope))
          << "lowering: " << t->describe() << " is inlined into broadcast-widened loops, but its "
          << "axis " << i << " is indexed by a loop of its consumer that does not enclose it; "
          << "expected it not inlined past the broadcast";
      r.index[dom[i]] = idx[i];
    }
    return r;
  }
  TensorIndex r{{}, Expr::boolean(true)};
  for (int k = 0; k < t->nloop(); ++k) {
    const IterDomain* id = t->loop()[static_cast<size_t>(k)];
    // A Broadcast axis of an mma tile's operand bound to a block index that
    // also iterates the tile's wider axis (inlined_into_widened_loops lets
    // it): every block computes the operand's one element there, at index 0.
    // Likewise a Broadcast axis bound to a block index of a tensor kept per
    // block (Local, Shared, or a Local one in a global workspace) that is not
    // an accumulator: a guard on the block index would leave the other
    // blocks, whose consumers read the element at index 0 too, with nothing
    // written (fuzz seed 11 cases 20 and 158: an mma operand's workspace
    // written by block 0 only, read by every block). Every block computes the
    // same element; in a workspace that is the benign same-value store of
    // lowering rule 3.
    const bool per_block_broadcast =
        id->is_broadcast() && ir::is_block_dim(id->parallel_type()) &&
        t->memory_type() != ir::MemoryType::Global &&
        !(t->definition() && ir::accumulation(t->definition()));
    const bool every_block = per_block_broadcast ||
                             (id->is_broadcast() && ir::is_block_dim(id->parallel_type()) &&
                              k < t->compute_at_pos() && is_mma_tile_operand(t) &&
                              !loop_owner(t, k).id()->extent().same_as(id->extent()));
    ExprP v = every_block ? Expr::integer(0) : loop_index(t, k);
    r.index[id] = v;
    // A bound loop runs over the launch extent, which may exceed this one.
    if (id->parallel_type() != ir::ParallelType::Serial &&
        (v->as<kir::Var>() || v->as<kir::Builtin>()))
      r.predicate = r.predicate && (v < size(loop_owner(t, k).id()->extent()));
  }
  auto history = t->root_history();
  auto loop_part = t->loop_history();
  std::set<const IterDomain*> of_merge;  // merge outputs and their split pieces
  for (auto* h : history) {
    if (auto* m = h->as<ir::Merge>()) of_merge.insert(m->out());
    if (auto* s = h->as<ir::Split>(); s && of_merge.count(s->in())) {
      of_merge.insert(s->outer());
      of_merge.insert(s->inner());
    }
  }
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (auto* s = (*it)->as<ir::Split>()) {
      ExprP o = r.index.at(s->outer()), i = r.index.at(s->inner());
      ExprP stride = size(s->stride());
      ExprP in = o * stride + i;
      r.index[s->in()] = in;
      bool predicated =
          root_predicates || std::find(loop_part.begin(), loop_part.end(), s) != loop_part.end();
      // A Local tensor whose thread index holds part of a split Broadcast
      // axis (an mma tile's lane, or a block broadcast: mb = broadcast(m)
      // split and bound to TIDx) is not guarded on that axis: its value is
      // the same at every position, and each thread reads its own registers.
      // (Not an accumulator: a sum over a Broadcast axis split by f must add
      // its one element once, not f times.)
      const bool own_broadcast = s->in()->is_broadcast() &&
                                 t->memory_type() == ir::MemoryType::Local &&
                                 !(t->definition() && ir::accumulation(t->definition())) &&
                                 (merges_broadcast_into_threads(t) ||
                                  is_local_block_broadcast(t));
      if (predicated && !own_broadcast && !divides(s->in()->extent(), s->factor())) {
        r.predicate = r.predicate && (in < size(s->in()->extent()));
        if (of_merge.count(s->in())) r.in_tile = r.in_tile && (in < size(s->in()->extent()));
      }
    } else if (auto* m = (*it)->as<ir::Merge>()) {
      ExprP out = r.index.at(m->out());
      ExprP inner_ext = size(m->inner()->extent());
      r.index[m->outer()] = out / inner_ext;
      r.index[m->inner()] = out % inner_ext;
    }
  }
  return r;
}

std::vector<ExprP> Indexer::operand_index(const ir::Expr* e, const TensorView* p,
                                          const TensorIndex& out) const {
  std::map<const IterDomain*, ExprP> pidx;
  for (auto [pid, cid] : sched::producer_consumer_pairs(e, p)) {
    // A Broadcast axis reads index 0; a view's dropped one has no index.
    if (pid->is_broadcast()) {
      pidx[pid] = Expr::integer(0);
      continue;
    }
    auto it = out.index.find(cid);
    internal_assert(it != out.index.end())
        << "no index for " << cid->str() << " of " << e->out()->str();
    pidx[pid] = pid->is_broadcast() ? Expr::integer(0) : it->second;
  }
  std::vector<ExprP> r;
  for (const IterDomain* id : p->logical_no_reductions()) r.push_back(pidx.at(id));
  return r;
}

std::vector<std::pair<int, int64_t>> Indexer::allocation_axes(const TensorView* t) {
  std::vector<std::pair<int, int64_t>> axes;
  bool shared = t->memory_type() == ir::MemoryType::Shared;
  for (int k = 0; k < t->nloop(); ++k) {
    const IterDomain* id = t->loop()[static_cast<size_t>(k)];
    ir::ParallelType p = id->parallel_type();
    bool tid = ir::is_thread_dim(p), bid = ir::is_block_dim(p);
    if (id->is_reduction() || id->is_broadcast()) continue;
    bool inside = k >= t->compute_at_pos() || (shared && tid);
    if (!inside || (!shared && (tid || bid)) || (shared && bid)) continue;
    // A Local buffer over a symbolic extent is kept in a global workspace
    // instead, a Shared one is sized at launch (allocation.cpp); report it as
    // unbounded here.
    axes.emplace_back(k, id->extent().is_const() ? id->extent().const_value() : -1);
  }
  return axes;
}

int64_t Indexer::row_pad(const TensorView* t) {
  internal_assert(t->shared_pad() == 0 || t->memory_type() == ir::MemoryType::Shared)
      << t->str() << " is padded (pad_shared) but in " << ir::memory_type_name(t->memory_type())
      << " memory; sched::set_memory_type should have refused that";
  return t->shared_pad();
}

Indexer::RowSwizzle Indexer::row_swizzle(const TensorView* t) {
  const int64_t width = t->shared_swizzle();
  if (width <= 1) return {};
  internal_assert(t->memory_type() == ir::MemoryType::Shared && t->shared_pad() == 0)
      << t->str() << " is swizzled but in " << ir::memory_type_name(t->memory_type())
      << " memory or padded; sched::swizzle and sched::set_memory_type should have refused that";
  const int64_t unit = sched::swizzle_unit(t->dtype(), t->shared_swizzle_bytes());
  const auto axes = allocation_axes(t);
  const std::string what = "lowering: " + t->describe() + " is swizzled with width " +
                           std::to_string(width) + " (swizzle)";
  user_assert(axes.size() >= 2)
      << what << " but its Shared buffer has "
      << (axes.empty() ? "no allocation axes" : "one allocation axis")
      << "; expected at least two (the innermost is the row the XOR permutes, "
         "the others number the rows): inline it less deep, or bind more of its axes to threads";
  const IterDomain* row = t->loop()[static_cast<size_t>(axes.back().first)];
  const int64_t e = axes.back().second;
  if (t->shared_swizzle_bytes() == 16 && e > 0 && e <= unit && unit % e == 0) {
    int64_t total = 1;
    for (auto [k, ext] : axes) total = ext >= 0 && total >= 0 ? total * ext : -1;
    user_assert(total > 0 && total % (width * unit) == 0)
        << what << " over its flat offset (rows of " << e << " elements, within one 16-byte "
        << "chunk) but its Shared buffer holds "
        << (total > 0 ? std::to_string(total) + " elements" : std::string("a symbolic extent"))
        << "; expected a constant multiple of " << width * unit << " (whole lines of " << width
        << " 16-byte chunks)";
    return {width, unit, true};
  }
  user_assert(e >= 0 && e % (width * unit) == 0)
      << what << " but the rows of its Shared buffer, its innermost allocation axis " << row->str()
      << ", hold " << (e >= 0 ? std::to_string(e) : row->extent().str())
      << " elements; expected a constant multiple of " << width * unit << " (width " << width
      << " x " << unit << (unit == 1 ? " element" : " elements")
      << (t->shared_swizzle_bytes() == 4 ? " per bank word" : " per 16-byte chunk") << "), so that the XOR permutes each row within itself";
  return {width, unit};
}

ExprP Indexer::offset(const TensorView* p, const std::vector<ExprP>& logical) const {
  const kir::Buffer* b = buffers_.at(p);
  auto dom = p->logical_no_reductions();
  internal_assert(dom.size() == logical.size()) << p->str() << ": index rank mismatch";
  if (b->is_param) {
    // Parameters are contiguous, row-major (runtime::BoundArgs allocates
    // every one so): axis k's stride is the product of the later extents,
    // constants when the sizes are, and a merge's replay then folds back
    // ((x % K) + (x / K) * K is x, simplify.h). A broadcast axis (extent 1,
    // index 0) adds nothing.
    ExprP off = Expr::integer(0), stride = Expr::integer(1);
    for (size_t k = dom.size(); k-- > 0;) {
      if (dom[k]->is_broadcast()) continue;
      off = off + logical[k] * stride;
      stride = stride * size(dom[k]->extent());
    }
    return off;
  }
  // Forward replay from logical to loop, then row-major over allocation axes.
  std::map<const IterDomain*, ExprP> idx;
  for (size_t k = 0; k < dom.size(); ++k) idx[dom[k]] = logical[k];
  for (const IterDomain* id : p->logical())
    if (id->is_reduction()) idx[id] = Expr::integer(0);
  for (const ir::IterDomainExpr* e : p->loop_history()) {
    if (auto* s = e->as<ir::Split>()) {
      ExprP in = idx.at(s->in());
      ExprP f = size(s->stride());
      idx[s->outer()] = in / f;
      idx[s->inner()] = in % f;
    } else if (auto* m = e->as<ir::Merge>()) {
      idx[m->out()] = idx.at(m->outer()) * size(m->inner()->extent()) + idx.at(m->inner());
    }
  }
  ExprP off = Expr::integer(0);
  const auto axes = allocation_axes(p);
  const RowSwizzle swz = row_swizzle(p);
  for (size_t a = 0; a < axes.size(); ++a) {
    auto [k, ext] = axes[a];
    const IterDomain* id = p->loop()[static_cast<size_t>(k)];
    const int64_t pad = a + 1 == axes.size() ? row_pad(p) : 0;
    ExprP pitch = ext >= 0
                      ? Expr::integer(ext + pad)
                      : (pad > 0 ? size(id->extent()) + Expr::integer(pad) : size(id->extent()));
    ExprP col = idx.at(id);
    if (a + 1 == axes.size() && swz.width > 1 && !swz.flat) {
      // off is the row number here: XOR it into the column's bank-word unit.
      ExprP u = Expr::integer(swz.unit);
      ExprP turn = off % Expr::integer(swz.width);
      col = swz.unit == 1 ? col ^ turn : ((col / u) ^ turn) * u + col % u;
    }
    off = off * pitch + col;
  }
  if (swz.flat) {
    // Lines of width * unit elements; unit c of line L at c ^ (g(L) % width).
    const ExprP line_elems = Expr::integer(swz.width * swz.unit), u = Expr::integer(swz.unit);
    const ExprP line = off / line_elems, col = off % line_elems;
    const ExprP turn = (line ^ (line / Expr::integer(2))) % Expr::integer(swz.width);
    off = line * line_elems + ((col / u) ^ turn) * u + col % u;
  }
  return off;
}

}  // namespace schedlab::lower
