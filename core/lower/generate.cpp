// Statements from the loop tree.
#include "generate.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "mma_tile.h"

#include "schedlab/base/error.h"

namespace schedlab::lower {

using kir::Expr;
using kir::ExprP;
using kir::Stmt;
using kir::StmtP;
using ir::TensorView;

namespace {

/// A reduction with reduction axes bound to thread indices (a block
/// reduction) and/or to block indices (a grid reduction).
struct BlockReduction {
  int first = 0;               ///< the tensor's first reduction loop axis
  std::array<bool, 3> dims{};  ///< the reduced thread dimensions (x, y, z)
  /// Grid reduction: the reduction loop axes bound to blockIdx.x/y/z (-1: none)
  /// and its workspaces (partials, semaphores).
  std::array<int, 3> grid_axis{-1, -1, -1};
  const kir::Buffer* partials = nullptr;
  const kir::Buffer* semaphores = nullptr;
  bool block() const { return dims[0] || dims[1] || dims[2]; }
  bool grid() const { return partials != nullptr; }
  /// Where each thread accumulates its partial: the tensor's own buffer when
  /// it is in registers, else a register accumulator with a slot per
  /// iteration of its serial non-reduction loops past `first`.
  const kir::Buffer* acc = nullptr;
};

/// The block reductions of the kernel, each with its accumulator; reserves
/// the shared workspace they use (one slot per thread, of the widest type).
std::map<const TensorView*, BlockReduction> plan_block_reductions(
    const LoopNode& node, const std::map<const TensorView*, const kir::Buffer*>& buffers,
    kir::Kernel& kernel, std::map<const TensorView*, BlockReduction> plan = {}) {
  for (const LoopItem& it : node.items) {
    if (it.kind == LoopItem::Kind::Loop) {
      plan = plan_block_reductions(*it.loop, buffers, kernel, std::move(plan));
      continue;
    }
    if (it.kind != LoopItem::Kind::Expr || !ir::accumulation(it.expr)) continue;
    const TensorView* t = it.expr->out();
    BlockReduction br;
    bool block = false;
    br.first = -1;
    for (int k = 0; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (!id->is_reduction()) continue;
      if (br.first < 0) br.first = k;
      ir::ParallelType p = id->parallel_type();
      if (ir::is_block_dim(p)) {
        block = true;
        br.grid_axis[p == ir::ParallelType::BIDx ? 0 : p == ir::ParallelType::BIDy ? 1 : 2] = k;
      }
      if (!ir::is_thread_dim(p)) continue;
      block = true;
      br.dims[p == ir::ParallelType::TIDx ? 0 : p == ir::ParallelType::TIDy ? 1 : 2] = true;
    }
    if (!block) continue;
    const kir::Buffer* own = buffers.at(t);
    if (own->is_param || own->memory != ir::MemoryType::Local) {
      // Threads of a row must not accumulate into one shared element: each
      // keeps its partial in registers, and all of them store the result.
      int64_t n = 1;
      for (int k = br.first + 1; k < t->nloop(); ++k) {
        const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
        if (id->is_reduction() || id->parallel_type() != ir::ParallelType::Serial) continue;
        user_assert(id->extent().is_const())
            << "lowering: " << t->describe() << " is a block or grid reduction into "
            << ir::memory_type_name(t->memory_type()) << " memory with loop axis " << k << " ("
            << id->str()
            << ") of symbolic extent inside its reduction loops; its partials are "
               "kept in registers, which need constant extents: expected the reduction axes "
               "innermost (reorder), or a constant split of that axis";
        n *= id->extent().const_value();
      }
      auto b = std::make_unique<kir::Buffer>();
      b->name = own->name + "_acc";
      b->dtype = t->dtype();
      b->memory = ir::MemoryType::Local;
      b->size = n;
      b->tv = t;
      br.acc = b.get();
      kernel.buffers.push_back(std::move(b));
    } else {
      br.acc = own;
    }
    if (br.grid_axis != std::array<int, 3>{-1, -1, -1}) {
      internal_assert(t->grid_persistent() || (own->is_param && br.acc != own))
          << "a grid reduction into " << own->name;
      std::array<bool, 3> gdims{};
      for (size_t d = 0; d < 3; ++d) gdims[d] = br.grid_axis[d] >= 0;
      auto workspace = [&](const std::string& suffix, ir::DataType dt, bool semaphore) {
        auto b = std::make_unique<kir::Buffer>();
        b->name = own->name + suffix;
        b->dtype = dt;
        b->memory = ir::MemoryType::Global;
        b->is_param = true;
        b->rank = 1;
        b->tv = t;
        const kir::Buffer* raw = b.get();
        kernel.buffers.push_back(std::move(b));
        kernel.params.push_back({kir::Param::Source::GridWorkspace, 0, t, raw, gdims, semaphore});
        return raw;
      };
      br.partials = workspace("_grid_partials", t->dtype(), false);
      if (!t->grid_persistent()) {
        br.semaphores = workspace("_grid_semaphores", ir::DataType::I32, true);
      } else if (!kernel.grid_sync) {
        // One grid barrier for the kernel: every persistent reduction's
        // allreduce waits at it (a generation barrier: it resets itself).
        kernel.grid_sync = true;
        workspace("_grid_barrier", ir::DataType::I32, true);
        kernel.params.back().barrier = true;
      }
    }
    if (br.block()) {
      if (kernel.reduce_workspace_bytes == 0)
        kernel.reduce_workspace_offset = (kernel.shared_bytes + 15) / 16 * 16;
      kernel.reduce_workspace_bytes =
          std::max<int64_t>(kernel.reduce_workspace_bytes, ir::dtype_size(t->dtype()));
    }
    plan[t] = br;
  }
  return plan;
}

ir::BinaryOpType combine_op(ir::ReductionOpType op) {
  switch (op) {
    case ir::ReductionOpType::Sum: return ir::BinaryOpType::Add;
    case ir::ReductionOpType::Prod: return ir::BinaryOpType::Mul;
    case ir::ReductionOpType::Max: return ir::BinaryOpType::Max;
    case ir::ReductionOpType::Min: return ir::BinaryOpType::Min;
  }
  internal_error << "lowering: unknown reduction " << static_cast<int>(op);
}

class Generator {
 public:
  Generator(const Indexer& ix, const std::map<const TensorView*, const kir::Buffer*>& buffers,
            kir::Kernel& kernel, std::map<const TensorView*, BlockReduction> block)
      : ix_(ix), buffers_(buffers), kernel_(kernel), block_(std::move(block)) {}

  void emit(const LoopNode& node, std::vector<StmtP>& out) {
    for (const LoopItem& it : node.items) {
      switch (it.kind) {
        case LoopItem::Kind::Loop:
          emit_loop(*it.loop, out);
          // A block reduction combines the partials once its loops are done.
          if (auto b = block_.find(it.loop->key.owner);
              b != block_.end() && b->second.first == it.loop->key.pos)
            out.push_back(finish(b->first->definition()));
          break;
        case LoopItem::Kind::Expr: out.push_back(store(it.expr)); break;
        case LoopItem::Kind::Init: out.push_back(init(it.expr)); break;
      }
    }
  }

 private:
  /// Emits a loop, or only its body for a bound loop; returns where the body goes.
  std::vector<StmtP>* open(const ir::IterDomain* id, const std::string& var,
                           std::vector<StmtP>& out) {
    if (id->parallel_type() != ir::ParallelType::Serial) {
      kernel_.launch_extents[id->parallel_type()].push_back(id->extent());
      return &out;
    }
    bool unroll = id->loop_transform() == ir::LoopTransform::Unroll ||
                  id->loop_transform() == ir::LoopTransform::Vectorize;
    auto loop = kir::For::make(var, ix_.size(id->extent()), unroll);
    loop->unswitch = id->loop_transform() == ir::LoopTransform::Unswitch;
    std::vector<StmtP>* body = &loop->body;
    out.push_back(std::move(loop));
    return body;
  }

  void emit_loop(const LoopNode& node, std::vector<StmtP>& out) {
    const ir::IterDomain* id = node.key.id();
    if (id->loop_transform() == ir::LoopTransform::Vectorize) {
      internal_assert(node.items.size() == 1 && node.items[0].kind == LoopItem::Kind::Expr)
          << "a vectorized loop holds exactly its own copy";
      out.push_back(vector_copy(node.items[0].expr, node.key));
      return;
    }
    if (is_mma_fragment_loop(node.key)) {
      const ir::Expr* e = node.key.owner->definition();
      internal_assert(e->is<ir::MmaOp>() && node.items.size() == 1 &&
                      node.items[0].kind == LoopItem::Kind::Loop)
          << "an mma tile's fragment loop holds exactly its k loop";
      out.push_back(mma_tile(e->as<ir::MmaOp>(), ix_, buffers_,
                             [](const TensorView* tv, int k) { return Indexer::loop_var(loop_owner(tv, k)); }));
      return;
    }
    emit(node, *open(id, Indexer::loop_var_name(node.key), out));
  }

  /// One w-wide copy: offsets at the first element, predicate at the last.
  StmtP vector_copy(const ir::Expr* e, const LoopKey& vec) {
    const TensorView* t = e->out();
    int64_t w = vec.id()->extent().const_value();
    auto at = [&](int64_t lane) {
      return ix_.write_index(t, [&](const TensorView* tv, int k) {
        LoopKey key = loop_owner(tv, k);
        return key == vec ? Expr::integer(lane) : Indexer::loop_var(key);
      });
    };
    TensorIndex first = at(0), last = at(w - 1);
    const TensorView* p = e->inputs()[0]->as<TensorView>();
    ExprP src =
        Expr::load(buffers_.at(p), ix_.offset(p, ix_.operand_index(e, p, first)), cache_of(e));
    auto s = kir::Store::make(buffers_.at(t), out_offset(t, first), src);
    s->vector = w;
    return in_tile(e, last, guarded(last.predicate, std::move(s)));
  }

  ExprP operand(const ir::Expr* e, const ir::Val* v, const TensorIndex& out_idx, ir::DataType t) {
    if (auto* s = v->as<ir::Scalar>()) {
      if (s->is_size()) return Expr::cast(ix_.size(s->size()), t);
      if (t == ir::DataType::Bool) return Expr::boolean(s->value() != 0.0);
      if (ir::is_float(t)) return Expr::floating(s->value(), t);
      return Expr::integer(static_cast<int64_t>(s->value()));
    }
    auto* p = v->as<TensorView>();
    return Expr::load(buffers_.at(p), ix_.offset(p, ix_.operand_index(e, p, out_idx)), cache_of(e));
  }

  /// The cache policy of e's load: a LoadStoreOp's (cache_after; lowerable()
  /// checked that it reads global memory), Unspecified for any other.
  static ir::CacheOp cache_of(const ir::Expr* e) {
    const auto* ls = e->as<ir::LoadStoreOp>();
    return ls ? ls->cache_op() : ir::CacheOp::Unspecified;
  }

  /// The dtype a scalar operand of e takes: that of e's tensor operands.
  static ir::DataType operand_dtype(const ir::Expr* e) {
    for (size_t i = e->is<ir::WhereOp>() ? 1 : 0; i < e->inputs().size(); ++i)
      if (e->inputs()[i]->is<TensorView>()) return e->inputs()[i]->dtype();
    return e->out()->dtype();
  }

  ExprP value(const ir::Expr* e, const TensorIndex& idx) {
    ir::DataType t = operand_dtype(e);
    auto arg = [&](size_t i) { return operand(e, e->inputs()[i], idx, t); };
    ir::DataType out = e->out()->dtype();
    switch (e->kind()) {
      case ir::Expr::Kind::Unary: return Expr::unary(e->as<ir::UnaryOp>()->op(), arg(0), out);
      case ir::Expr::Kind::Binary: return Expr::binary(e->as<ir::BinaryOp>()->op(), arg(0), arg(1), out);
      case ir::Expr::Kind::Where:
        return Expr::select(operand(e, e->inputs()[0], idx, ir::DataType::Bool), arg(1), arg(2), out);
      case ir::Expr::Kind::Cast: return Expr::cast(operand(e, e->inputs()[0], idx, out), out);
      case ir::Expr::Kind::Reduction:
      case ir::Expr::Kind::Broadcast:
      case ir::Expr::Kind::LoadStore:
      case ir::Expr::Kind::Permute:
      case ir::Expr::Kind::View: return arg(0);
      case ir::Expr::Kind::Mma:  // on CUDA cores: one product of the sum, in f32
        return Expr::binary(ir::BinaryOpType::Mul, Expr::cast(arg(0), out), Expr::cast(arg(1), out),
                            out);
    }
    internal_error << "lowering: no value for " << e->op_name();
  }

  /// A cp.async copy's destination bounds (TensorIndex::in_tile) as a branch
  /// around its guarded store: a thread past the tile's copies issues none
  /// (async_copy turns the inner guard's other conjuncts into a zero fill).
  StmtP in_tile(const ir::Expr* e, const TensorIndex& idx, StmtP s) {
    const auto* ls = e->as<ir::LoadStoreOp>();
    if (!ls || ls->op() != ir::LoadStoreOpType::CpAsync) return s;
    return guarded(idx.in_tile, std::move(s));
  }

  StmtP guarded(ExprP pred, StmtP s) {
    if (pred->is_true()) return s;
    auto g = kir::If::make(pred);
    g->then_body.push_back(std::move(s));
    return g;
  }

  ExprP out_offset(const TensorView* t, const TensorIndex& idx) {
    std::vector<ExprP> logical;
    for (const ir::IterDomain* id : t->logical_no_reductions()) logical.push_back(idx.index.at(id));
    return ix_.offset(t, logical);
  }

  StmtP store(const ir::Expr* e) {
    const TensorView* t = e->out();
    TensorIndex idx = ix_.write_index(t, [](const TensorView* tv, int k) {
      return Indexer::loop_var(loop_owner(tv, k));
    });
    ExprP v = value(e, idx);
    const kir::Buffer* b = buffers_.at(t);
    ExprP off = out_offset(t, idx);
    if (std::optional<ir::ReductionOpType> op = ir::accumulation(e)) {
      std::tie(b, off) = accumulator(
          t, idx, [](const TensorView* tv, int k) { return Indexer::loop_var(loop_owner(tv, k)); });
      v = Expr::binary(combine_op(*op), Expr::load(b, off), v, t->dtype());
    }
    return in_tile(e, idx, guarded(idx.predicate, kir::Store::make(b, off, v)));
  }

  /// Where the reduction t accumulates the element at idx: t's buffer, or
  /// for a block reduction its accumulator (at the loop indices `index`).
  std::pair<const kir::Buffer*, ExprP> accumulator(const TensorView* t, const TensorIndex& idx,
                                                   const LoopIndexFn& index) {
    auto b = block_.find(t);
    if (b == block_.end() || b->second.acc == buffers_.at(t))
      return {buffers_.at(t), out_offset(t, idx)};
    ExprP off = Expr::integer(0);
    for (int k = b->second.first + 1; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (id->is_reduction() || id->parallel_type() != ir::ParallelType::Serial) continue;
      off = off * Expr::integer(id->extent().const_value()) + index(t, k);
    }
    return {b->second.acc, off};
  }

  /// The identity an accumulating expression starts from.
  static double init_of(const ir::Expr* r) { return ir::reduction_init(*ir::accumulation(r)); }

  static int first_reduction(const TensorView* t) {
    int first = 0;
    while (!t->loop()[static_cast<size_t>(first)]->is_reduction()) ++first;
    return first;
  }

  /// Opens loops over t's non-reduction axes after `first` (a serial one as
  /// j<id>); returns where their body goes.
  std::vector<StmtP>* open_after(const TensorView* t, int first, std::vector<StmtP>& out) {
    std::vector<StmtP>* at = &out;
    for (int k = first + 1; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (!id->is_reduction()) at = open(id, "j" + std::to_string(id->id()), *at);
    }
    return at;
  }

  /// The loop indices under open_after: loops before `first` as they are,
  /// reduction loops at 0.
  static LoopIndexFn after_index(int first) {
    return [first](const TensorView* tv, int k) -> ExprP {
      const ir::IterDomain* id = tv->loop()[static_cast<size_t>(k)];
      if (k < first) return Indexer::loop_var(loop_owner(tv, k));
      if (id->is_reduction()) return Expr::integer(0);
      if (id->parallel_type() != ir::ParallelType::Serial) return Indexer::loop_var({tv, k});
      return Expr::var("j" + std::to_string(id->id()));
    };
  }

  /// acc = init, over t's non-reduction axes after its first reduction axis
  /// (r accumulates: a ReductionOp or an MmaOp).
  StmtP init(const ir::Expr* r) {
    const TensorView* t = r->out();
    int first = first_reduction(t);
    auto block = kir::Block::make();
    std::vector<StmtP>* at = open_after(t, first, block->body);
    LoopIndexFn index = after_index(first);
    TensorIndex idx = ix_.write_index(t, index, /*root_predicates=*/false);
    auto [b, off] = accumulator(t, idx, index);
    at->push_back(
        guarded(idx.predicate, kir::Store::make(b, off, Expr::floating(init_of(r), t->dtype()))));
    return block;
  }

  /// After a block reduction's loops: every thread of the block combines the
  /// partials of its row (unpredicated: the call synchronizes the block; a
  /// thread outside the tensor contributes the identity), and a tensor not in
  /// registers is then stored by every thread of the row, so that each reads
  /// back its own write.
  StmtP finish(const ir::Expr* r) {
    const TensorView* t = r->out();
    const BlockReduction& br = block_.at(t);
    auto block = kir::Block::make();
    std::vector<StmtP>* at = open_after(t, br.first, block->body);
    LoopIndexFn index = after_index(br.first);
    TensorIndex idx = ix_.write_index(t, index, /*root_predicates=*/false);
    auto [b, off] = accumulator(t, idx, index);
    if (br.block())
      at->push_back(kir::BlockReduce::make(b, off, *ir::accumulation(r),
                                           Expr::floating(init_of(r), t->dtype()), idx.predicate,
                                           br.dims, kernel_.reduce_workspace_offset));
    if (br.grid()) {
      at->push_back(grid_reduce(r, br, idx, b, off));
      // Grid-persistent: every thread now holds the result; a parameter is
      // stored by every thread of the row below, as for a block reduction.
      if (!t->grid_persistent()) return block;
    }
    if (b != buffers_.at(t))
      at->push_back(guarded(idx.predicate,
                            kir::Store::make(buffers_.at(t), out_offset(t, idx), Expr::load(b, off))));
    return block;
  }

  /// The grid step after the block step: one thread per group (the first
  /// along the reduced thread dimensions) of each block within the reduced
  /// axes' extents hands its partial to sl_grid_reduce, indexed by the output
  /// element's linear logical index and the block's index along the reduced
  /// blockIdx dimensions (x fastest).
  StmtP grid_reduce(const ir::Expr* r, const BlockReduction& br, const TensorIndex& idx,
                    const kir::Buffer* acc, const ExprP& acc_off) {
    const TensorView* t = r->out();
    ExprP participate = idx.predicate;
    static constexpr ir::ParallelType kTid[] = {ir::ParallelType::TIDx, ir::ParallelType::TIDy,
                                                ir::ParallelType::TIDz};
    static constexpr ir::ParallelType kBid[] = {ir::ParallelType::BIDx, ir::ParallelType::BIDy,
                                                ir::ParallelType::BIDz};
    auto index = [](ir::ParallelType p) { return Expr::launch_index(p); };
    for (size_t d = 0; d < 3; ++d)
      if (br.dims[d]) participate = participate && (index(kTid[d]) < Expr::integer(1));
    ExprP block = Expr::integer(0), nblocks = Expr::integer(1);
    for (size_t d = 3; d-- > 0;) {
      if (br.grid_axis[d] < 0) continue;
      ExprP ext = ix_.size(t->loop()[static_cast<size_t>(br.grid_axis[d])]->extent());
      participate = participate && (index(kBid[d]) < ext);
      block = block * ext + index(kBid[d]);
      nblocks = nblocks * ext;
    }
    ExprP elem = Expr::integer(0);
    for (const ir::IterDomain* id : t->logical_no_reductions())
      elem = elem * ix_.size(id->extent()) + idx.index.at(id);
    if (t->grid_persistent()) {
      auto g = kir::GridReduce::make_persistent(
          acc, acc_off, *ir::accumulation(r), Expr::floating(init_of(r), t->dtype()), participate,
          idx.predicate, br.partials, grid_barrier(), {elem, block, nblocks});
      g->barrier_index = kernel_.grid_barriers++;
      return g;
    }
    return kir::GridReduce::make(acc, acc_off, buffers_.at(t), out_offset(t, idx),
                                 *ir::accumulation(r), Expr::floating(init_of(r), t->dtype()),
                                 participate, br.partials,
                                 br.semaphores, {elem, block, nblocks});
  }

  /// The kernel's grid barrier workspace (plan_block_reductions made it).
  const kir::Buffer* grid_barrier() const {
    for (const kir::Param& p : kernel_.params)
      if (p.barrier) return p.buffer;
    internal_error << "lowering: a grid-persistent reduction but no grid barrier workspace";
  }

  const Indexer& ix_;
  const std::map<const TensorView*, const kir::Buffer*>& buffers_;
  kir::Kernel& kernel_;
  std::map<const TensorView*, BlockReduction> block_;
};

}  // namespace

std::unique_ptr<kir::Block> generate(const LoopNode& root, const Indexer& indexer,
               const std::map<const TensorView*, const kir::Buffer*>& buffers, kir::Kernel& kernel) {
  auto block = plan_block_reductions(root, buffers, kernel);
  auto body = kir::Block::make();
  for (const auto& b : kernel.buffers)
    if (!b->is_param) body->body.push_back(kir::Allocate::make(b.get()));
  Generator(indexer, buffers, kernel, std::move(block)).emit(root, body->body);
  return body;
}

}  // namespace schedlab::lower
