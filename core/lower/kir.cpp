#include "schedlab/lower/kir.h"

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::kir {

std::string_view index_op_symbol(IndexOpType op) {
  switch (op) {
    case IndexOpType::Add: return "+";
    case IndexOpType::Mul: return "*";
    case IndexOpType::Div: return "/";
    case IndexOpType::Mod: return "%";
    case IndexOpType::Lt: return "<";
    case IndexOpType::And: return "&&";
    case IndexOpType::CeilDiv: return "ceilDiv";
    case IndexOpType::Xor: return "^";
  }
  internal_error << "kir: unknown index operator " << static_cast<int>(op);
}

std::string_view cache_qualifier(ir::CacheOp c) {
  switch (c) {
    case ir::CacheOp::Unspecified: return "";
    case ir::CacheOp::AllLevels: return "ca";
    case ir::CacheOp::Global: return "cg";
    case ir::CacheOp::Streaming: return "cs";
  }
  internal_error << "kir: unknown cache policy " << static_cast<int>(c);
}

bool Expr::is_int(int64_t v) const {
  const auto* i = as<IntImm>();
  return i && i->value == v;
}

bool Expr::is_true() const {
  const auto* b = as<BoolImm>();
  return b && b->value;
}

int TensorDim::shift() const {
  int k = 0;
  while ((int64_t{1} << k) < divisor) ++k;
  return k > 0 && (int64_t{1} << k) == divisor ? k : -1;
}

ExprP Expr::integer(int64_t v) { return std::make_shared<IntImm>(v); }
ExprP Expr::boolean(bool v) { return std::make_shared<BoolImm>(v); }
ExprP Expr::floating(double v, ir::DataType t) { return std::make_shared<FloatImm>(v, t); }
ExprP Expr::var(std::string name, ir::DataType t) {
  return std::make_shared<Var>(std::move(name), t);
}
ExprP Expr::launch_index(ir::ParallelType p) {
  internal_assert(ir::is_thread_dim(p) || ir::is_block_dim(p))
      << "kir: no thread or block index along " << ir::parallel_type_name(p);
  return std::make_shared<Builtin>(p, Builtin::Of::Index);
}
ExprP Expr::launch_extent(ir::ParallelType p) {
  internal_assert(ir::is_thread_dim(p) || ir::is_block_dim(p))
      << "kir: no launch extent along " << ir::parallel_type_name(p);
  return std::make_shared<Builtin>(p, Builtin::Of::Extent);
}
ExprP Expr::tensor_size(const Buffer* b, int axis, int64_t divisor) {
  internal_assert(b->is_param && axis >= 0 && axis < b->rank && divisor >= 1)
      << "kir: no size " << axis << " / " << divisor << " of " << b->name;
  return std::make_shared<TensorDim>(b, axis, TensorDim::Field::Size, divisor);
}
ExprP Expr::tensor_stride(const Buffer* b, int axis) {
  internal_assert(b->is_param && axis >= 0 && axis < b->rank)
      << "kir: no stride " << axis << " of " << b->name;
  return std::make_shared<TensorDim>(b, axis, TensorDim::Field::Stride, 1);
}
ExprP Expr::unary(ir::UnaryOpType op, ExprP a, ir::DataType t) {
  return std::make_shared<Unary>(op, std::move(a), t);
}
ExprP Expr::binary(ir::BinaryOpType op, ExprP a, ExprP b, ir::DataType t) {
  return std::make_shared<Binary>(op, std::move(a), std::move(b), t);
}
ExprP Expr::select(ExprP c, ExprP a, ExprP b, ir::DataType t) {
  return std::make_shared<Select>(std::move(c), std::move(a), std::move(b), t);
}
ExprP Expr::cast(ExprP a, ir::DataType t) { return std::make_shared<Cast>(std::move(a), t); }
ExprP Expr::load(const Buffer* b, ExprP index, ir::CacheOp cache) {
  return std::make_shared<Load>(b, std::move(index), b->dtype, cache);
}

ExprP Expr::index_op(IndexOpType op, ExprP a, ExprP b) {
  const auto *ai = a->as<IntImm>(), *bi = b->as<IntImm>();
  switch (op) {
    case IndexOpType::Add:
      if (ai && bi) return integer(ai->value + bi->value);
      if (a->is_int(0)) return b;
      if (b->is_int(0)) return a;
      break;
    case IndexOpType::Mul:
      if (ai && bi) return integer(ai->value * bi->value);
      if (a->is_int(0) || b->is_int(0)) return integer(0);
      if (a->is_int(1)) return b;
      if (b->is_int(1)) return a;
      break;
    case IndexOpType::Div:
      if (ai && bi) return integer(ai->value / bi->value);
      if (b->is_int(1) || a->is_int(0)) return a;
      break;
    case IndexOpType::Mod:
      if (ai && bi) return integer(ai->value % bi->value);
      if (b->is_int(1) || a->is_int(0)) return integer(0);
      break;
    case IndexOpType::Lt:
      if (ai && bi) return boolean(ai->value < bi->value);
      break;
    case IndexOpType::And:
      if (const auto* ab = a->as<BoolImm>()) return ab->value ? b : a;
      if (const auto* bb = b->as<BoolImm>()) return bb->value ? a : b;
      break;
    case IndexOpType::CeilDiv:
      if (ai && bi) return integer((ai->value + bi->value - 1) / bi->value);
      if (b->is_int(1)) return a;
      break;
    case IndexOpType::Xor:
      if (ai && bi) return integer(ai->value ^ bi->value);
      if (a->is_int(0)) return b;
      if (b->is_int(0)) return a;
      break;
  }
  const bool predicate = op == IndexOpType::Lt || op == IndexOpType::And;
  return std::make_shared<IndexOp>(op, std::move(a), std::move(b),
                                   predicate ? ir::DataType::Bool : ir::DataType::I64);
}

ExprP operator+(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Add, std::move(a), std::move(b)); }
ExprP operator*(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Mul, std::move(a), std::move(b)); }
ExprP operator/(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Div, std::move(a), std::move(b)); }
ExprP operator%(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Mod, std::move(a), std::move(b)); }
ExprP operator<(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Lt, std::move(a), std::move(b)); }
ExprP operator&&(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::And, std::move(a), std::move(b)); }
ExprP operator^(ExprP a, ExprP b) { return Expr::index_op(IndexOpType::Xor, std::move(a), std::move(b)); }

namespace {
std::vector<StmtP> clone_all(const std::vector<StmtP>& body) {
  std::vector<StmtP> out;
  for (const StmtP& s : body) out.push_back(s->clone());
  return out;
}
}  // namespace

StmtP Block::clone() const {
  auto s = make();
  s->body = clone_all(body);
  return s;
}

std::unique_ptr<For> For::make(std::string var, ExprP extent, bool unroll) {
  auto s = std::make_unique<For>();
  s->var = std::move(var);
  s->extent = std::move(extent);
  s->unroll = unroll;
  return s;
}
StmtP For::clone() const {
  auto s = make(var, extent, unroll);
  s->unswitch = unswitch;
  s->body = clone_all(body);
  return s;
}

std::unique_ptr<If> If::make(ExprP cond) {
  auto s = std::make_unique<If>();
  s->cond = std::move(cond);
  return s;
}
StmtP If::clone() const {
  auto s = make(cond);
  s->then_body = clone_all(then_body);
  s->else_body = clone_all(else_body);
  return s;
}

std::unique_ptr<Store> Store::make(const Buffer* b, ExprP index, ExprP value) {
  auto s = std::make_unique<Store>();
  s->buffer = b;
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}
StmtP Store::clone() const {
  auto s = make(buffer, index, value);
  s->vector = vector;
  s->async = async;
  s->src_valid = src_valid;
  return s;
}

std::unique_ptr<Allocate> Allocate::make(const Buffer* b) {
  auto s = std::make_unique<Allocate>();
  s->buffer = b;
  return s;
}
StmtP Allocate::clone() const { return make(buffer); }

StmtP Sync::clone() const { return make(); }

std::unique_ptr<AsyncGroup> AsyncGroup::make(bool commit, int64_t wait) {
  auto s = std::make_unique<AsyncGroup>();
  s->commit = commit;
  s->wait = wait;
  return s;
}
StmtP AsyncGroup::clone() const { return make(commit, wait); }

StmtP MmaTile::clone() const {
  auto s = std::make_unique<MmaTile>();
  s->acc = acc;
  s->acc_index = acc_index;
  s->acc_valid = acc_valid;
  s->a = a;
  s->a_valid = a_valid;
  s->b = b;
  s->b_valid = b_valid;
  s->dtype = dtype;
  s->a_row = a_row;
  s->a_full = a_full;
  s->b_row = b_row;
  s->b_full = b_full;
  s->b_trans = b_trans;
  s->a_why = a_why;
  s->b_why = b_why;
  s->m_var = m_var;
  s->n_var = n_var;
  s->m_trips = m_trips;
  s->n_trips = n_trips;
  return s;
}

std::unique_ptr<Comment> Comment::make(std::string text) {
  auto s = std::make_unique<Comment>();
  s->text = std::move(text);
  return s;
}
StmtP Comment::clone() const { return make(text); }

namespace {
/// The fields a block and a grid reduction share.
template <typename R>
std::unique_ptr<R> reduce_stmt(const Buffer* b, ExprP index, ir::ReductionOpType op,
                               ExprP identity, ExprP participate) {
  auto s = std::make_unique<R>();
  s->buffer = b;
  s->index = std::move(index);
  s->op = op;
  s->identity = std::move(identity);
  s->participate = std::move(participate);
  return s;
}
/// The fields a grid reduction has in both forms (make, make_persistent).
std::unique_ptr<GridReduce> grid_reduce_common(const Buffer* b, ExprP index,
                                               ir::ReductionOpType op, ExprP identity,
                                               ExprP participate, const Buffer* partials,
                                               GridReduce::Grid grid) {
  auto s = reduce_stmt<GridReduce>(b, std::move(index), op, std::move(identity),
                                   std::move(participate));
  s->partials = partials;
  s->element = std::move(grid.element);
  s->block = std::move(grid.block);
  s->blocks = std::move(grid.blocks);
  return s;
}
}  // namespace

std::unique_ptr<BlockReduce> BlockReduce::make(const Buffer* b, ExprP index,
                                               ir::ReductionOpType op, ExprP identity,
                                               ExprP participate, std::array<bool, 3> dims,
                                               int64_t workspace) {
  internal_assert(b->memory == ir::MemoryType::Local && !b->is_param)
      << "a block reduction works on a register buffer, not " << b->name;
  auto s = reduce_stmt<BlockReduce>(b, std::move(index), op, std::move(identity),
                                    std::move(participate));
  s->dims = dims;
  s->workspace = workspace;
  return s;
}
StmtP BlockReduce::clone() const {
  return make(buffer, index, op, identity, participate, dims, workspace);
}

std::unique_ptr<GridReduce> GridReduce::make(const Buffer* b, ExprP index, const Buffer* out,
                                             ExprP out_index, ir::ReductionOpType op,
                                             ExprP identity, ExprP participate,
                                             const Buffer* partials, const Buffer* semaphores,
                                             Grid grid) {
  internal_assert(b->memory == ir::MemoryType::Local && !b->is_param && out->is_param &&
                  grid.element && grid.block && grid.blocks)
      << "a grid reduction combines a register partial into a parameter, not " << b->name;
  auto s = grid_reduce_common(b, std::move(index), op, std::move(identity),
                              std::move(participate), partials, std::move(grid));
  s->out = out;
  s->out_index = std::move(out_index);
  s->semaphores = semaphores;
  return s;
}
std::unique_ptr<GridReduce> GridReduce::make_persistent(const Buffer* b, ExprP index,
                                                        ir::ReductionOpType op, ExprP identity,
                                                        ExprP participate, ExprP valid,
                                                        const Buffer* partials,
                                                        const Buffer* barrier, Grid grid) {
  internal_assert(b->memory == ir::MemoryType::Local && !b->is_param && barrier && partials &&
                  valid && grid.element && grid.block && grid.blocks)
      << "a grid-persistent reduction combines a register partial in place, not " << b->name;
  auto s = grid_reduce_common(b, std::move(index), op, std::move(identity),
                              std::move(participate), partials, std::move(grid));
  s->valid = std::move(valid);
  s->barrier = barrier;
  return s;
}
StmtP GridReduce::clone() const {
  if (persistent()) {
    auto s = make_persistent(buffer, index, op, identity, participate, valid, partials, barrier,
                             {element, block, blocks});
    s->barrier_index = barrier_index;
    return s;
  }
  return make(buffer, index, out, out_index, op, identity, participate, partials, semaphores,
              {element, block, blocks});
}

namespace {
class Substitute : public IRMutator {
 public:
  explicit Substitute(const std::map<std::string, ExprP>& values) : values_(values) {}

 protected:
  using IRMutator::visit;
  ExprP visit(const Var& v, const ExprP& self) override {
    auto it = values_.find(v.name);
    return it == values_.end() ? self : it->second;
  }

 private:
  const std::map<std::string, ExprP>& values_;
};
}  // namespace

ExprP substitute(const ExprP& e, const std::map<std::string, ExprP>& values) {
  return Substitute(values).mutate(e);
}

}  // namespace schedlab::kir
