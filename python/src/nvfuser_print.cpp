// print(tv) and print(tv.axis(i)) in nvFuser's format (nvfuser_print.h).
#include "nvfuser_print.h"

#include <fmt/core.h>

#include <algorithm>

namespace schedlab::python {

namespace {

/// nvFuser's spelling of a dtype (data_type2string in csrc/type.cpp).
const char* nvfuser_dtype(ir::DataType t) {
  switch (t) {
    case ir::DataType::Bool: return "bool";
    case ir::DataType::I32: return "int";
    case ir::DataType::I64: return "int64_t";
    case ir::DataType::F16: return "__half";
    case ir::DataType::BF16: return "__bfloat";
    case ir::DataType::F32: return "float";
    case ir::DataType::F64: return "double";
  }
  return "?";
}

/// An extent as nvFuser's Val::toInlineString prints it: a derived value
/// in "( ... )", a size and a constant bare.
std::string nvfuser_extent(const ir::SizeExpr& e) {
  switch (e.kind()) {
    case ir::SizeExpr::Kind::Const: return std::to_string(e.const_value());
    case ir::SizeExpr::Kind::Symbol: return e.symbol_name();
    case ir::SizeExpr::Kind::Mul:
      return fmt::format("( {} * {} )", nvfuser_extent(e.lhs()), nvfuser_extent(e.rhs()));
    case ir::SizeExpr::Kind::CeilDiv:
      return fmt::format("( ceilDiv({}, {}) )", nvfuser_extent(e.lhs()), nvfuser_extent(e.rhs()));
  }
  return "?";
}

/// nvFuser's letters for an unbound axis (parallel_type2string): S, or the
/// loop transform's V UR US B.
const char* nvfuser_serial(ir::LoopTransform t) {
  switch (t) {
    case ir::LoopTransform::Serial: return "S";
    case ir::LoopTransform::Vectorize: return "V";
    case ir::LoopTransform::Unroll: return "UR";
    case ir::LoopTransform::Unswitch: return "US";
    case ir::LoopTransform::Bulk: return "B";
  }
  return "?";
}

/// nvFuser's memory suffix: _l (Local: registers), _s, _g.
const char* nvfuser_memory(ir::MemoryType m) {
  switch (m) {
    case ir::MemoryType::Local: return "_l";
    case ir::MemoryType::Shared: return "_s";
    case ir::MemoryType::Global: return "_g";
  }
  return "_?";
}

}  // namespace

/// nvFuser's IterDomain::toString: iteration type, parallel type (a
/// binding's CUDA index, else the loop transform: S V UR US B), number,
/// {extent}, and "rf" on an rfactor product (a logical axis of a tensor
/// whose logical domain is derived from its root).
std::string nvfuser_axis(const ir::TensorView* tv, const ir::IterDomain* id) {
  const ir::ParallelType p = id->parallel_type();
  const std::string parallel =
      p == ir::ParallelType::Serial ? nvfuser_serial(id->loop_transform())
      : p == ir::ParallelType::DIDx ? "deviceIdx.x"
                                    : std::string(ir::cuda_index_name(p));
  const auto& logical = tv->logical();
  const bool rfactor_product = tv->has_root() && id->definition() &&
                               std::find(logical.begin(), logical.end(), id) != logical.end();
  const char iter = id->is_reduction() ? 'r' : id->is_broadcast() ? 'b' : 'i';
  return fmt::format("{}{}{}{{{}}}{}", iter, parallel, id->id(), nvfuser_extent(id->extent()),
                     rfactor_product ? "rf" : "");
}

/// nvFuser's TensorView::toString: T<n>_<memory>_<dtype>[loop domain],
/// then ca_pos( n ) and produce_pos( n ) (the highest ca_pos among its
/// producers) where nonzero.
std::string nvfuser_tensor(const ir::TensorView* tv) {
  std::string s = tv->str() + nvfuser_memory(tv->memory_type()) + "_" +
                  nvfuser_dtype(tv->dtype()) + "[";
  for (size_t i = 0; i < tv->loop().size(); ++i)
    s += (i ? ", " : "") + nvfuser_axis(tv, tv->loop()[i]);
  s += "]";
  if (tv->compute_at_pos() > 0) s += fmt::format(" ca_pos( {} )", tv->compute_at_pos());
  int produce_pos = 0;
  if (const ir::Expr* def = tv->definition())
    for (const ir::Val* v : def->inputs())
      if (const auto* producer = v->as<ir::TensorView>())
        produce_pos = std::max(produce_pos, producer->compute_at_pos());
  if (produce_pos > 0) s += fmt::format(" produce_pos( {} )", produce_pos);
  return s;
}

}  // namespace schedlab::python
