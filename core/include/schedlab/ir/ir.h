// schedlab/ir: the fusion IR.
//
// Owns: Fusion, the values it holds (TensorView, Scalar), their IterDomains,
// and one small node type per math expression, after Halide's IR.h. The
// vocabulary and semantics follow nvFuser: a TensorView has a logical domain
// (its shape, reduction axes included) and a loop domain (how it is iterated
// once scheduled); intermediates live in Local memory, fusion inputs and
// outputs in Global.
// May depend on: schedlab/base only.
// Invariants: every node is owned by exactly one Fusion and is never shared
// between fusions; an expression's outputs have that expression as their
// definition, and its inputs list it among their uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedlab/ir/dtype.h"
#include "schedlab/ir/size_expr.h"

namespace schedlab::ir {

class Fusion;
class Expr;

/// How an axis is traversed by the expression that defines its tensor.
enum class IterType {
  Iteration,  ///< an ordinary data-parallel axis
  Reduction,  ///< reduced by the defining ReductionOp; absent from the result's shape
  Broadcast,  ///< extent 1, stretched to match the other operand
};

/// Hardware binding of a loop axis. Serial means not bound. Loop transforms
/// (Vectorize, Unroll, ...) are a separate enum, introduced with scheduling.
enum class ParallelType { Serial, DIDx, BIDx, BIDy, BIDz, TIDx, TIDy, TIDz };

/// How a loop is emitted, independent of its hardware binding (the plugin ABI
/// keeps the two enums apart). Serial is the plain loop.
enum class LoopTransform {
  Serial,     ///< an ordinary loop
  Vectorize,  ///< one vector load/store; innermost, constant extent
  Unroll,     ///< fully unrolled
  Unswitch,   ///< predicates hoisted out of the loop nest below
  Bulk,       ///< moved as one bulk (TMA) copy
};

/// Where a tensor lives.
enum class MemoryType { Local, Shared, Global };

std::string_view iter_type_name(IterType t);
std::string_view parallel_type_name(ParallelType t);
std::string_view memory_type_name(MemoryType t);
std::string_view loop_transform_name(LoopTransform t);
/// TIDx, TIDy, TIDz: threads of one block.
bool is_thread_dim(ParallelType t);
/// BIDx, BIDy, BIDz: blocks of the grid.
bool is_block_dim(ParallelType t);
/// The CUDA index a binding reads: "threadIdx.x" ... "blockIdx.z"; "" for
/// Serial and DIDx (no CUDA index).
std::string_view cuda_index_name(ParallelType t);

class IterDomainExpr;

/// One axis of a tensor.
class IterDomain {
 public:
  /// Fusion-unique number; printed as the suffix of iS3, rS4, bS5.
  int id() const { return id_; }
  /// Symbolic extent; constant 1 for Broadcast axes.
  const SizeExpr& extent() const { return extent_; }
  IterType iter_type() const { return iter_type_; }
  ParallelType parallel_type() const { return parallel_type_; }
  bool is_reduction() const { return iter_type_ == IterType::Reduction; }
  bool is_broadcast() const { return iter_type_ == IterType::Broadcast; }
  LoopTransform loop_transform() const { return loop_transform_; }
  /// Sets the binding with no checks; TensorView::parallelize is the checked form.
  void parallelize(ParallelType p) { parallel_type_ = p; }
  void set_loop_transform(LoopTransform t) { loop_transform_ = t; }
  /// The Split or Merge that produced this axis; null for axes made by math.
  IterDomainExpr* definition() const { return definition_; }
  /// "iS3{N}", "rS4{K}", "bS5{1}", "iblockIdx.x7{ceilDiv(N, 128)}", with a
  /// suffix for a loop transform: "iS9{4}_vect".
  std::string str() const;

 private:
  friend class Fusion;
  IterDomain(int id, SizeExpr extent, IterType t) : id_(id), extent_(std::move(extent)), iter_type_(t) {}
  int id_;
  SizeExpr extent_;
  IterType iter_type_;
  ParallelType parallel_type_ = ParallelType::Serial;
  LoopTransform loop_transform_ = LoopTransform::Serial;
  IterDomainExpr* definition_ = nullptr;
};

/// A transform between IterDomains, recorded so that indexing can replay it
/// backward from loop indices to logical ones.
class IterDomainExpr {
 public:
  enum class Kind { Split, Merge };
  virtual ~IterDomainExpr() = default;
  Kind kind() const { return kind_; }
  const std::vector<IterDomain*>& inputs() const { return inputs_; }
  const std::vector<IterDomain*>& outputs() const { return outputs_; }
  /// "Split: iS2{N} by factor 128 -> iS5{ceilDiv(N, 128)}, iS6{128}".
  virtual std::string str() const = 0;
  template <typename T>
  const T* as() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  IterDomainExpr(Kind k, std::vector<IterDomain*> in, std::vector<IterDomain*> out)
      : kind_(k), inputs_(std::move(in)), outputs_(std::move(out)) {}

 private:
  Kind kind_;
  std::vector<IterDomain*> inputs_;
  std::vector<IterDomain*> outputs_;
};

/// in -> (outer, inner). inner_split: inner has extent `factor` and
/// in = outer * factor + inner; otherwise outer has extent `factor` and
/// in = outer * ceilDiv(ext(in), factor) + inner. A factor that does not
/// divide the extent leaves a remainder that lowering predicates away.
class Split final : public IterDomainExpr {
 public:
  static constexpr Kind kKind = Kind::Split;
  Split(IterDomain* in, IterDomain* outer, IterDomain* inner, int64_t factor, bool inner_split)
      : IterDomainExpr(kKind, {in}, {outer, inner}), factor_(factor), inner_split_(inner_split) {}
  IterDomain* in() const { return inputs()[0]; }
  IterDomain* outer() const { return outputs()[0]; }
  IterDomain* inner() const { return outputs()[1]; }
  int64_t factor() const { return factor_; }
  bool inner_split() const { return inner_split_; }
  /// in = outer * stride() + inner: the inner axis's extent (factor, or
  /// ceilDiv(ext(in), factor)). Every index computation reads it here.
  const SizeExpr& stride() const;
  std::string str() const override;

 private:
  int64_t factor_;    ///< the constant extent of the split-off axis
  bool inner_split_;  ///< true: the inner axis has extent factor
};

/// (outer, inner) -> out with out = outer * ext(inner) + inner.
class Merge final : public IterDomainExpr {
 public:
  static constexpr Kind kKind = Kind::Merge;
  Merge(IterDomain* outer, IterDomain* inner, IterDomain* out)
      : IterDomainExpr(kKind, {outer, inner}, {out}) {}
  IterDomain* outer() const { return inputs()[0]; }
  IterDomain* inner() const { return inputs()[1]; }
  IterDomain* out() const { return outputs()[0]; }
  std::string str() const override;
};

/// Anything an expression consumes or produces: a tensor or a scalar.
class Val {
 public:
  enum class Kind { Tensor, Scalar };
  virtual ~Val() = default;
  Val(const Val&) = delete;
  Val& operator=(const Val&) = delete;

  Kind kind() const { return kind_; }
  DataType dtype() const { return dtype_; }
  Fusion* fusion() const { return fusion_; }
  /// The expression that produces this value; null for fusion inputs and constants.
  Expr* definition() const { return definition_; }
  /// Expressions that read this value, once per operand slot (in the order
  /// they were wired, which rewiring by cache_after may change).
  const std::vector<Expr*>& uses() const { return uses_; }
  /// Printed form: "T3" for tensors, the literal for scalars.
  virtual std::string str() const = 0;

  template <typename T>
  bool is() const {
    return kind_ == T::kKind;
  }
  template <typename T>
  T* as() {
    return is<T>() ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* as() const {
    return is<T>() ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  Val(Kind k, Fusion* f, DataType t) : kind_(k), fusion_(f), dtype_(t) {}

 private:
  friend class Fusion;
  Kind kind_;
  Fusion* fusion_;
  DataType dtype_;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
};

/// A scalar operand: a compile-time constant, or a named size (an extent
/// expression such as K) whose value is known only at launch. Constants are
/// held in double, exactly for every dtype the IR has (i64 constants are
/// limited to 2^53 in magnitude).
class Scalar final : public Val {
 public:
  static constexpr Kind kKind = Kind::Scalar;
  /// The constant; internal error for a size scalar.
  double value() const;
  /// True for a named size (value known at launch).
  bool is_size() const { return size_.has_value(); }
  /// The size expression of a size scalar.
  const SizeExpr& size() const { return *size_; }
  /// The value under `sizes` (constants ignore them).
  std::optional<double> evaluate(const SizeBindings& sizes) const;
  std::string str() const override;

 private:
  friend class Fusion;
  Scalar(Fusion* f, DataType t, double v) : Val(kKind, f, t), value_(v) {}
  Scalar(Fusion* f, SizeExpr size) : Val(kKind, f, DataType::I64), value_(0), size_(std::move(size)) {}
  double value_;                  ///< the constant, when not a size
  std::optional<SizeExpr> size_;  ///< the size expression, when a size
};

/// A tensor. Named T0, T1, ... in creation order, so printed IR is stable.
class TensorView final : public Val {
 public:
  static constexpr Kind kKind = Kind::Tensor;
  /// The N of "TN".
  int number() const { return number_; }
  std::string str() const override { return "T" + std::to_string(number_); }
  /// The name the user gave in fusion text or the builder ("x", "m"); may be empty.
  const std::string& user_name() const { return user_name_; }
  void set_user_name(std::string n) { user_name_ = std::move(n); }
  /// "T3 (m)" when there is a user name, "T3" otherwise: for messages.
  std::string describe() const;

  /// The shape, with Reduction axes in place (they are not part of the data).
  const std::vector<IterDomain*>& logical() const { return logical_; }
  /// The logical domain without Reduction axes: the shape of the data.
  std::vector<IterDomain*> logical_no_reductions() const;
  /// The loop domain; equal to logical until scheduling transforms it.
  const std::vector<IterDomain*>& loop() const { return loop_; }
  /// The domain the defining expression indexes: equal to logical except for
  /// the producer made by rfactor, whose logical domain is derived from its
  /// root by the rfactored splits and merges.
  const std::vector<IterDomain*>& root() const { return root_.empty() ? logical_ : root_; }
  bool has_root() const { return !root_.empty(); }
  /// Number of logical axes, reductions included.
  int nlogical() const { return static_cast<int>(logical_.size()); }
  /// Number of loop axes.
  int nloop() const { return static_cast<int>(loop_.size()); }
  /// Loop axis i; negative counts from the end. user_error if out of range.
  IterDomain* axis(int i) const;

  // ---- loop transforms (checked at the call; see core/ir/transforms.cpp) ---
  /// Splits loop axis `axis` by a constant factor: inner_split puts `factor`
  /// on the inner axis. The factor need not divide the extent.
  TensorView* split(int axis, int64_t factor, bool inner_split = true);
  /// Merges loop axes axis_o and axis_i into one at axis_o's position
  /// (axis_i is removed). Reduction axes merge only with reduction axes.
  TensorView* merge(int axis_o, int axis_i);
  TensorView* merge(int axis_o) { return merge(axis_o, axis_o + 1); }
  /// Permutes the loop domain: each (old, new) pair moves loop axis old to
  /// position new; axes not named keep their relative order in the free slots.
  TensorView* reorder(const std::vector<std::pair<int, int>>& old2new);
  /// Binds loop axis `axis` to a hardware index.
  TensorView* parallelize(int axis, ParallelType p);
  /// Sets how loop axis `axis` is emitted.
  TensorView* parallelize(int axis, LoopTransform t);
  /// Why the elements along loop axis `id` are not adjacent in memory, or ""
  /// when they are: id is the innermost non-reduction logical axis, or the
  /// inner part of an inner split of it (possibly merged with outer axes, as
  /// the inner side). The one home of the Vectorize rule: parallelize and
  /// lowering both ask it.
  /// Chains of inner splits are adjacent when each enclosing chunk's extent is
  /// a multiple of the vector width w.
  std::string why_not_adjacent(const IterDomain* id, int64_t w) const;
  /// The splits and merges from logical to loop, in the order applied.
  std::vector<IterDomainExpr*> loop_history() const;
  /// The splits and merges from root to loop (for an rfactor producer, its
  /// root -> logical transforms come first), in the order applied.
  std::vector<IterDomainExpr*> root_history() const;
  /// Replaces the loop domain; for scheduling utilities that build it whole.
  void set_loop(std::vector<IterDomain*> loop) { loop_ = std::move(loop); }
  /// Replaces root and logical (rfactor, cache_before). Loop is reset to logical.
  void set_domains(std::vector<IterDomain*> root, std::vector<IterDomain*> logical);

  MemoryType memory_type() const { return memory_type_; }
  void set_memory_type(MemoryType m) { memory_type_ = m; }
  /// Elements of padding after each row of a Shared buffer: the innermost
  /// allocation axis's pitch is its extent plus this (0: dense). Set with no
  /// checks; sched::pad_shared is the checked form.
  int64_t shared_pad() const { return shared_pad_; }
  void set_shared_pad(int64_t elements) { shared_pad_ = elements; }
  /// The XOR swizzle of a Shared buffer's rows (sched::swizzle): the column
  /// unit of each row is XORed with the row index modulo this width (a power
  /// of two; 1: none). Set with no checks; sched::swizzle is the checked form.
  int64_t shared_swizzle() const { return shared_swizzle_; }
  /// The bytes of the unit the swizzle moves whole: 4 (a bank word) or 16
  /// (an ldmatrix row chunk).
  int64_t shared_swizzle_bytes() const { return shared_swizzle_bytes_; }
  void set_shared_swizzle(int64_t width, int64_t bytes = 4) {
    shared_swizzle_ = width;
    shared_swizzle_bytes_ = bytes;
  }
  /// Circular buffering (sched::circular_buffer): the buffer holds `stages`
  /// copies of its tile, each loaded `prefetch` iterations of its loop ahead
  /// (1 and 0: none). Set with no checks; sched::circular_buffer checks.
  /// sched::mma_tile: this MmaOp output's innermost loop axes [lane 32
  /// (TIDx), fragment 4, k 16] are one warp's mma.sync m16n8k16; mma_k() is
  /// the k axis (nullptr: no tile). Set with no checks; lowering checks.
  const IterDomain* mma_k() const { return mma_k_; }
  void set_mma_k(const IterDomain* k) { mma_k_ = k; }
  int64_t circular_stages() const { return circular_stages_; }
  int64_t circular_prefetch() const { return circular_prefetch_; }
  void set_circular_buffer(int64_t stages, int64_t prefetch) {
    circular_stages_ = stages;
    circular_prefetch_ = prefetch;
  }
  /// Grid persistence (sched::grid_persistent): this tensor's grid reduction
  /// (a Reduction bound to BIDx/BIDy) is an allreduce through a grid-wide
  /// barrier, so the kernel may read its result; the launch needs every block
  /// resident at once (lowering rule 8). Set with no checks.
  bool grid_persistent() const { return grid_persistent_; }
  void set_grid_persistent(bool on) { grid_persistent_ = on; }
  /// Compute-at (inline) position into its consumers' loop nests; 0 = not inlined.
  int compute_at_pos() const { return compute_at_pos_; }
  void set_compute_at_pos(int p) { compute_at_pos_ = p; }
  bool has_reduction() const;

 private:
  friend class Fusion;
  TensorView(Fusion* f, int number, DataType t, std::vector<IterDomain*> logical)
      : Val(kKind, f, t), number_(number), logical_(logical), loop_(std::move(logical)) {}
  int number_;
  std::string user_name_;
  std::vector<IterDomain*> root_;  ///< empty unless it differs from logical
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> loop_;
  MemoryType memory_type_ = MemoryType::Local;
  int64_t shared_pad_ = 0;  ///< row padding of a Shared buffer, in elements
  int64_t shared_swizzle_ = 1;  ///< XOR width of a Shared buffer's rows; 1: none
  int64_t shared_swizzle_bytes_ = 4;  ///< bytes of the XORed unit
  const IterDomain* mma_k_ = nullptr;  ///< the k axis of an mma tile (mma_k())
  int64_t circular_stages_ = 1;    ///< circular-buffer stages; 1: none
  int64_t circular_prefetch_ = 0;  ///< iterations loaded ahead
  bool grid_persistent_ = false;   ///< grid reduction read in the kernel (grid_persistent())
  int compute_at_pos_ = 0;
};

// ---------------------------------------------------------------------------
// Expressions. One small class per kind; fields are public-read through
// accessors and fixed at construction (Fusion::create).

enum class UnaryOpType { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Erf, Reciprocal, Not };
enum class BinaryOpType { Add, Sub, Mul, Div, Max, Min, Pow, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
enum class ReductionOpType { Sum, Max, Min, Prod };
/// How a LoadStoreOp moves data. Only Set is lowered so far; the others name
/// the hardware paths cache_after can pick.
enum class LoadStoreOpType { Set, CpAsync, LdMatrix, Tma };
/// Cache policy of a load, as in nvFuser (and PTX's ld cache operators).
enum class CacheOp {
  Unspecified,  ///< the compiler's choice
  AllLevels,    ///< ld.ca: cache in L1 and L2
  Streaming,    ///< ld.cs: evict first
  Global,       ///< ld.cg: cache in L2 only
};

std::string_view unary_op_name(UnaryOpType t);
std::string_view binary_op_name(BinaryOpType t);
std::string_view reduction_op_name(ReductionOpType t);
std::string_view load_store_op_name(LoadStoreOpType t);
std::string_view cache_op_name(CacheOp c);
/// True for Lt..Ne: the result is bool.
bool is_comparison(BinaryOpType t);
/// True for And, Or: bool operands only.
bool is_logical(BinaryOpType t);
/// The identity of a reduction: 0, -inf, +inf, 1.
double reduction_init(ReductionOpType t);

class Expr {
 public:
  enum class Kind { Unary, Binary, Where, Cast, Reduction, Broadcast, LoadStore, Permute, Mma, View };
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  Kind kind() const { return kind_; }
  /// Operands, in the order the node documents.
  const std::vector<Val*>& inputs() const { return inputs_; }
  const std::vector<Val*>& outputs() const { return outputs_; }
  /// The single output every current node has.
  TensorView* out() const { return outputs_.front()->as<TensorView>(); }
  /// Name in printed IR: "exp", "add", "reduction", "broadcast", ...
  virtual std::string op_name() const = 0;

  template <typename T>
  bool is() const {
    return kind_ == T::kKind;
  }
  template <typename T>
  const T* as() const {
    return is<T>() ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  Expr(Kind k, std::vector<Val*> in, std::vector<Val*> out)
      : kind_(k), inputs_(std::move(in)), outputs_(std::move(out)) {}

 private:
  friend class Fusion;
  Kind kind_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
};

/// out = op(in), elementwise.
class UnaryOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Unary;
  UnaryOp(UnaryOpType op, TensorView* out, Val* in) : Expr(kKind, {in}, {out}), op_(op) {}
  UnaryOpType op() const { return op_; }
  Val* in() const { return inputs()[0]; }
  std::string op_name() const override { return std::string(unary_op_name(op_)); }

 private:
  UnaryOpType op_;  ///< which function
};

/// out = op(lhs, rhs), elementwise; operands have the output's rank, or are scalars.
class BinaryOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Binary;
  BinaryOp(BinaryOpType op, TensorView* out, Val* lhs, Val* rhs)
      : Expr(kKind, {lhs, rhs}, {out}), op_(op) {}
  BinaryOpType op() const { return op_; }
  Val* lhs() const { return inputs()[0]; }
  Val* rhs() const { return inputs()[1]; }
  std::string op_name() const override { return std::string(binary_op_name(op_)); }

 private:
  BinaryOpType op_;  ///< which function
};

/// out = cond ? lhs : rhs, elementwise.
class WhereOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Where;
  WhereOp(TensorView* out, Val* cond, Val* lhs, Val* rhs) : Expr(kKind, {cond, lhs, rhs}, {out}) {}
  Val* cond() const { return inputs()[0]; }
  Val* lhs() const { return inputs()[1]; }
  Val* rhs() const { return inputs()[2]; }
  std::string op_name() const override { return "where"; }
};

/// out = (out.dtype) in. Float to integer truncates toward zero; to bool tests != 0.
class CastOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Cast;
  CastOp(TensorView* out, Val* in) : Expr(kKind, {in}, {out}) {}
  Val* in() const { return inputs()[0]; }
  std::string op_name() const override { return "cast"; }
};

/// Reduces `in` over the axes that are Reduction in out's logical domain.
/// out has in's rank; the reduced axes stay as Reduction IterDomains.
class ReductionOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Reduction;
  ReductionOp(ReductionOpType op, TensorView* out, TensorView* in)
      : Expr(kKind, {in}, {out}), op_(op) {}
  ReductionOpType op() const { return op_; }
  TensorView* in() const { return inputs()[0]->as<TensorView>(); }
  /// The identity the accumulator starts from.
  double init() const { return reduction_init(op_); }
  std::string op_name() const override { return "reduction"; }

 private:
  ReductionOpType op_;  ///< which combiner
};

/// Inserts Broadcast axes. out's rank is in's (non-reduction) rank plus the
/// number of true entries of is_broadcast_dim.
class BroadcastOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Broadcast;
  BroadcastOp(TensorView* out, TensorView* in, std::vector<bool> is_broadcast_dim)
      : Expr(kKind, {in}, {out}), is_broadcast_dim_(std::move(is_broadcast_dim)) {}
  TensorView* in() const { return inputs()[0]->as<TensorView>(); }
  /// One entry per output axis: true where the axis is new.
  const std::vector<bool>& is_broadcast_dim() const { return is_broadcast_dim_; }
  std::string op_name() const override { return "broadcast"; }

 private:
  std::vector<bool> is_broadcast_dim_;
};

/// out = in, a copy; the node cache_after/cache_before insert.
class LoadStoreOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::LoadStore;
  LoadStoreOp(LoadStoreOpType op, TensorView* out, TensorView* in,
              CacheOp cache_op = CacheOp::Unspecified)
      : Expr(kKind, {in}, {out}), op_(op), cache_op_(cache_op) {}
  LoadStoreOpType op() const { return op_; }
  CacheOp cache_op() const { return cache_op_; }
  TensorView* in() const { return inputs()[0]->as<TensorView>(); }
  std::string op_name() const override { return "set"; }

 private:
  LoadStoreOpType op_;  ///< the data path
  CacheOp cache_op_;    ///< the cache policy of the load
};

/// out[i_0, ..., i_n] = in[i_{new2old^-1}...]: axis k of out is axis new2old[k] of in.
class PermuteOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Permute;
  PermuteOp(TensorView* out, TensorView* in, std::vector<int> new2old)
      : Expr(kKind, {in}, {out}), new2old_(std::move(new2old)) {}
  TensorView* in() const { return inputs()[0]->as<TensorView>(); }
  /// Output axis k reads input axis new2old[k] (over non-reduction axes).
  const std::vector<int>& new2old() const { return new2old_; }
  std::string op_name() const override { return "permute"; }

 private:
  std::vector<int> new2old_;
};

/// out = the sum over out's Reduction axes of f32(a) * f32(b): a fused
/// multiply-sum, nvFuser's MmaOp. a and b have out's rank (Broadcast where
/// they do not vary: a [M, K, 1] and b [1, K, N] for out [M, rK, N]), and
/// the same dtype, bf16, f16 or f32; out is f32. sched::fuse_mma makes it
/// from a matmul's multiply and sum (ir::matmul); it lowers to CUDA cores as
/// a sum of products, and to mma.sync where the schedule maps its innermost
/// axes to an instruction tile.
class MmaOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::Mma;
  MmaOp(TensorView* out, TensorView* a, TensorView* b) : Expr(kKind, {a, b}, {out}) {}
  TensorView* a() const { return inputs()[0]->as<TensorView>(); }
  TensorView* b() const { return inputs()[1]->as<TensorView>(); }
  std::string op_name() const override { return "mma"; }
};

/// reshape, view, flatten, squeeze, unsqueeze and expand (core/ir/reshape.cpp),
/// nvFuser's ViewOp. out's root domain starts with one axis per
/// non-reduction logical axis of `in` (1:1, by position; then the axes out
/// adds: unsqueezed Broadcast axes and the Iteration axes an expand widens a
/// Broadcast axis to), and its logical domain derives from that root by
/// splits and merges of the Iteration axes. in's Broadcast axes are not in
/// out's logical domain unless kept (squeeze drops them; a reshape drops
/// them and makes new ones where the shape says 1). A reshape is a
/// row-major reinterpretation of the data; an expand reads its Broadcast
/// axis's one element at every index of the widened axis.
class ViewOp final : public Expr {
 public:
  static constexpr Kind kKind = Kind::View;
  /// `fn` is the user's function ("reshape", "flatten", ...), for messages;
  /// `expand` selects the expand semantics.
  ViewOp(TensorView* out, TensorView* in, std::string fn, bool expand)
      : Expr(kKind, {in}, {out}), fn_(std::move(fn)), expand_(expand) {}
  TensorView* in() const { return inputs()[0]->as<TensorView>(); }
  const std::string& fn() const { return fn_; }
  bool is_expand() const { return expand_; }
  /// "expand" or "reshape" (view, flatten, squeeze and unsqueeze are reshapes).
  std::string op_name() const override { return expand_ ? "expand" : "reshape"; }

 private:
  std::string fn_;  ///< the function the user called
  bool expand_;     ///< expand semantics instead of a row-major reshape
};

/// The combiner of an expression that accumulates over its output's
/// Reduction axes: a ReductionOp's op, Sum for an MmaOp; nullopt otherwise.
std::optional<ReductionOpType> accumulation(const Expr* e);

}  // namespace schedlab::ir
