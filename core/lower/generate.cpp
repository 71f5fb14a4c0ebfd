// Statements from the loop tree.
#include "generate.h"

#include "schedlab/base/error.h"

namespace schedlab::lower {

using kir::Expr;
using kir::ExprP;
using kir::Stmt;
using kir::StmtP;
using ir::TensorView;

namespace {

class Generator {
 public:
  Generator(const Indexer& ix, const std::map<const TensorView*, const kir::Buffer*>& buffers,
            kir::Kernel& kernel)
      : ix_(ix), buffers_(buffers), kernel_(kernel) {}

  void emit(const LoopNode& node, Stmt& out) {
    for (const LoopItem& it : node.items) {
      switch (it.kind) {
        case LoopItem::Kind::Loop: emit_loop(*it.loop, out); break;
        case LoopItem::Kind::Expr: out.body.push_back(store(it.expr)); break;
        case LoopItem::Kind::Init: out.body.push_back(init(it.expr->as<ir::ReductionOp>())); break;
      }
    }
  }

 private:
  /// Emits a loop, or only its body for a bound loop; returns where the body goes.
  Stmt* open(const ir::IterDomain* id, const std::string& var, Stmt& out) {
    if (id->parallel_type() != ir::ParallelType::Serial) {
      kernel_.launch_extents[id->parallel_type()].push_back(id->extent());
      return &out;
    }
    bool unroll = id->loop_transform() == ir::LoopTransform::Unroll ||
                  id->loop_transform() == ir::LoopTransform::Vectorize;
    out.body.push_back(Stmt::for_loop(var, ix_.size(id->extent()), unroll));
    out.body.back()->unswitch = id->loop_transform() == ir::LoopTransform::Unswitch;
    return out.body.back().get();
  }

  void emit_loop(const LoopNode& node, Stmt& out) {
    const ir::IterDomain* id = node.key.id();
    if (id->loop_transform() == ir::LoopTransform::Vectorize) {
      internal_assert(node.items.size() == 1 && node.items[0].kind == LoopItem::Kind::Expr)
          << "a vectorized loop holds exactly its own copy";
      out.body.push_back(vector_copy(node.items[0].expr, node.key));
      return;
    }
    emit(node, *open(id, Indexer::loop_var(node.key)->name, out));
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
    ExprP src = Expr::load(buffers_.at(p), ix_.offset(p, ix_.operand_index(e, p, first)));
    StmtP s = Stmt::store(buffers_.at(t), out_offset(t, first), src);
    s->vector = w;
    return guarded(last.predicate, std::move(s));
  }

  ExprP operand(const ir::Expr* e, const ir::Val* v, const TensorIndex& out_idx, ir::DataType t) {
    if (auto* s = v->as<ir::Scalar>()) {
      if (s->is_size()) return Expr::cast(ix_.size(s->size()), t);
      if (t == ir::DataType::Bool) return Expr::boolean(s->value() != 0.0);
      if (ir::is_float(t)) return Expr::floating(s->value(), t);
      return Expr::integer(static_cast<int64_t>(s->value()));
    }
    auto* p = v->as<TensorView>();
    return Expr::load(buffers_.at(p), ix_.offset(p, ix_.operand_index(e, p, out_idx)));
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
      case ir::Expr::Kind::Permute: return arg(0);
    }
    return nullptr;
  }

  StmtP guarded(ExprP pred, StmtP s) {
    if (pred->kind == Expr::Kind::Bool && pred->i) return s;
    StmtP g = Stmt::if_then(pred);
    g->body.push_back(std::move(s));
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
    if (auto* r = e->as<ir::ReductionOp>()) {
      ir::BinaryOpType op = ir::BinaryOpType::Add;
      switch (r->op()) {
        case ir::ReductionOpType::Sum: op = ir::BinaryOpType::Add; break;
        case ir::ReductionOpType::Prod: op = ir::BinaryOpType::Mul; break;
        case ir::ReductionOpType::Max: op = ir::BinaryOpType::Max; break;
        case ir::ReductionOpType::Min: op = ir::BinaryOpType::Min; break;
      }
      v = Expr::binary(op, Expr::load(b, off), v, t->dtype());
    }
    return guarded(idx.predicate, Stmt::store(b, off, v));
  }

  /// acc = init, over t's non-reduction axes after its first reduction axis.
  StmtP init(const ir::ReductionOp* r) {
    const TensorView* t = r->out();
    int first = 0;
    while (!t->loop()[static_cast<size_t>(first)]->is_reduction()) ++first;
    StmtP block = Stmt::block();
    Stmt* at = block.get();
    for (int k = first + 1; k < t->nloop(); ++k) {
      const ir::IterDomain* id = t->loop()[static_cast<size_t>(k)];
      if (!id->is_reduction()) at = open(id, "j" + std::to_string(id->id()), *at);
    }
    TensorIndex idx = ix_.write_index(t, [&](const TensorView* tv, int k) -> ExprP {
      const ir::IterDomain* id = tv->loop()[static_cast<size_t>(k)];
      if (k < first) return Indexer::loop_var(loop_owner(tv, k));
      if (id->is_reduction()) return Expr::integer(0);
      if (id->parallel_type() != ir::ParallelType::Serial) return Indexer::loop_var({tv, k});
      return Expr::var("j" + std::to_string(id->id()));
    }, /*root_predicates=*/false);
    at->body.push_back(guarded(idx.predicate, Stmt::store(buffers_.at(t), out_offset(t, idx),
                                                          Expr::floating(r->init(), t->dtype()))));
    return block;
  }

  const Indexer& ix_;
  const std::map<const TensorView*, const kir::Buffer*>& buffers_;
  kir::Kernel& kernel_;
};

}  // namespace

StmtP generate(const LoopNode& root, const Indexer& indexer,
               const std::map<const TensorView*, const kir::Buffer*>& buffers, kir::Kernel& kernel) {
  StmtP body = Stmt::block();
  for (const auto& b : kernel.buffers)
    if (!b->is_param) body->body.push_back(Stmt::allocate(b.get()));
  Generator(indexer, buffers, kernel).emit(root, *body);
  return body;
}

}  // namespace schedlab::lower
