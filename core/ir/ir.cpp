#include "schedlab/ir/ir.h"

#include <cmath>
#include <limits>

#include "schedlab/base/error.h"
#include "schedlab/ir/scalar_format.h"

namespace schedlab::ir {

std::string_view iter_type_name(IterType t) {
  switch (t) {
    case IterType::Iteration: return "Iteration";
    case IterType::Reduction: return "Reduction";
    case IterType::Broadcast: return "Broadcast";
  }
  return "?";
}

std::string_view parallel_type_name(ParallelType t) {
  switch (t) {
    case ParallelType::Serial: return "Serial";
    case ParallelType::DIDx: return "DIDx";
    case ParallelType::BIDx: return "BIDx";
    case ParallelType::BIDy: return "BIDy";
    case ParallelType::BIDz: return "BIDz";
    case ParallelType::TIDx: return "TIDx";
    case ParallelType::TIDy: return "TIDy";
    case ParallelType::TIDz: return "TIDz";
  }
  return "?";
}

std::string_view memory_type_name(MemoryType t) {
  switch (t) {
    case MemoryType::Local: return "Local";
    case MemoryType::Shared: return "Shared";
    case MemoryType::Global: return "Global";
  }
  return "?";
}

bool is_thread_dim(ParallelType t) {
  return t == ParallelType::TIDx || t == ParallelType::TIDy || t == ParallelType::TIDz;
}

bool is_block_dim(ParallelType t) {
  return t == ParallelType::BIDx || t == ParallelType::BIDy || t == ParallelType::BIDz;
}

std::string_view cuda_index_name(ParallelType t) {
  switch (t) {
    case ParallelType::BIDx: return "blockIdx.x";
    case ParallelType::BIDy: return "blockIdx.y";
    case ParallelType::BIDz: return "blockIdx.z";
    case ParallelType::TIDx: return "threadIdx.x";
    case ParallelType::TIDy: return "threadIdx.y";
    case ParallelType::TIDz: return "threadIdx.z";
    case ParallelType::Serial:
    case ParallelType::DIDx: return "";
  }
  return "";
}

std::string IterDomain::str() const {
  // nvFuser's spelling: iteration/reduction/broadcast, then the binding.
  char t = iter_type_ == IterType::Reduction ? 'r' : iter_type_ == IterType::Broadcast ? 'b' : 'i';
  std::string p = parallel_type_ == ParallelType::Serial ? "S"
                  : parallel_type_ == ParallelType::DIDx ? "deviceIdx.x"
                                                          : std::string(cuda_index_name(parallel_type_));
  std::string s = std::string(1, t) + p + std::to_string(id_) + "{" + extent_.str() + "}";
  switch (loop_transform_) {
    case LoopTransform::Serial: break;
    case LoopTransform::Vectorize: s += "_vect"; break;
    case LoopTransform::Unroll: s += "_unroll"; break;
    case LoopTransform::Unswitch: s += "_unswitch"; break;
    case LoopTransform::Bulk: s += "_bulk"; break;
  }
  return s;
}

double Scalar::value() const {
  internal_assert(!size_) << "value() of the size scalar " << size_->str();
  return value_;
}

std::optional<double> Scalar::evaluate(const SizeBindings& sizes) const {
  if (!size_) return value_;
  auto v = size_->evaluate(sizes);
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::string Scalar::str() const { return size_ ? size_->str() : format_scalar(value_, dtype()); }

std::string TensorView::describe() const {
  return user_name_.empty() ? str() : str() + " (" + user_name_ + ")";
}

std::vector<IterDomain*> TensorView::logical_no_reductions() const {
  std::vector<IterDomain*> r;
  for (IterDomain* id : logical_)
    if (!id->is_reduction()) r.push_back(id);
  return r;
}

bool TensorView::has_reduction() const {
  for (IterDomain* id : logical_)
    if (id->is_reduction()) return true;
  return false;
}

std::string_view unary_op_name(UnaryOpType t) {
  switch (t) {
    case UnaryOpType::Neg: return "neg";
    case UnaryOpType::Abs: return "abs";
    case UnaryOpType::Exp: return "exp";
    case UnaryOpType::Log: return "log";
    case UnaryOpType::Sqrt: return "sqrt";
    case UnaryOpType::Rsqrt: return "rsqrt";
    case UnaryOpType::Tanh: return "tanh";
    case UnaryOpType::Sigmoid: return "sigmoid";
    case UnaryOpType::Relu: return "relu";
    case UnaryOpType::Erf: return "erf";
    case UnaryOpType::Reciprocal: return "reciprocal";
    case UnaryOpType::Not: return "logical_not";
  }
  return "?";
}

std::string_view binary_op_name(BinaryOpType t) {
  switch (t) {
    case BinaryOpType::Add: return "add";
    case BinaryOpType::Sub: return "sub";
    case BinaryOpType::Mul: return "mul";
    case BinaryOpType::Div: return "div";
    case BinaryOpType::Max: return "maximum";
    case BinaryOpType::Min: return "minimum";
    case BinaryOpType::Pow: return "pow";
    case BinaryOpType::Lt: return "lt";
    case BinaryOpType::Le: return "le";
    case BinaryOpType::Gt: return "gt";
    case BinaryOpType::Ge: return "ge";
    case BinaryOpType::Eq: return "eq";
    case BinaryOpType::Ne: return "ne";
    case BinaryOpType::And: return "logical_and";
    case BinaryOpType::Or: return "logical_or";
  }
  return "?";
}

std::string_view reduction_op_name(ReductionOpType t) {
  switch (t) {
    case ReductionOpType::Sum: return "sum";
    case ReductionOpType::Max: return "max";
    case ReductionOpType::Min: return "min";
    case ReductionOpType::Prod: return "prod";
  }
  return "?";
}

std::string_view load_store_op_name(LoadStoreOpType t) {
  switch (t) {
    case LoadStoreOpType::Set: return "Set";
    case LoadStoreOpType::CpAsync: return "CpAsync";
    case LoadStoreOpType::LdMatrix: return "LdMatrix";
    case LoadStoreOpType::Tma: return "Tma";
  }
  return "?";
}

std::string_view cache_op_name(CacheOp c) {
  switch (c) {
    case CacheOp::Unspecified: return "Unspecified";
    case CacheOp::AllLevels: return "AllLevels";
    case CacheOp::Streaming: return "Streaming";
    case CacheOp::Global: return "Global";
  }
  return "?";
}

bool is_comparison(BinaryOpType t) {
  return t == BinaryOpType::Lt || t == BinaryOpType::Le || t == BinaryOpType::Gt ||
         t == BinaryOpType::Ge || t == BinaryOpType::Eq || t == BinaryOpType::Ne;
}
bool is_logical(BinaryOpType t) { return t == BinaryOpType::And || t == BinaryOpType::Or; }

std::optional<ReductionOpType> accumulation(const Expr* e) {
  if (const auto* r = e->as<ReductionOp>()) return r->op();
  if (e->is<MmaOp>()) return ReductionOpType::Sum;
  return std::nullopt;
}

double reduction_init(ReductionOpType t) {
  switch (t) {
    case ReductionOpType::Sum: return 0.0;
    case ReductionOpType::Max: return -std::numeric_limits<double>::infinity();
    case ReductionOpType::Min: return std::numeric_limits<double>::infinity();
    case ReductionOpType::Prod: return 1.0;
  }
  return 0.0;
}

}  // namespace schedlab::ir
