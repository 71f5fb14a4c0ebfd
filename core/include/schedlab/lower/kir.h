// schedlab/lower: lowering a scheduled fusion to kernel IR.
//
// Owns: the kernel IR (this file) and the passes that build it (lower.h
// lists them in order). Kernel IR is a small imperative tree: loops,
// predicated stores, allocations and barriers over scalar expressions.
// May depend on: schedlab/base, schedlab/ir, schedlab/sched.
// Invariants: kernel IR never refers back to scheduling decisions; codegen
// prints it without consulting the fusion. Every expression node is
// immutable and may be shared. Walk it with kir_visitor.h.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::kir {

struct Buffer;

/// Index arithmetic operators (IndexOp): integer math on loop variables and
/// sizes, and the predicates over them. Xor is the bitwise exclusive or of two
/// non-negative indices (a swizzled Shared buffer's column, sched::swizzle).
enum class IndexOpType { Add, Mul, Div, Mod, Lt, And, CeilDiv, Xor };
/// "+", "*", "/", "%", "<", "&&", "ceilDiv", "^": the one spelling of each,
/// used by both printers.
std::string_view index_op_symbol(IndexOpType op);
/// The PTX load qualifier of a cache policy: "ca" (AllLevels), "cg" (Global),
/// "cs" (Streaming); "" for Unspecified (a plain load).
std::string_view cache_qualifier(ir::CacheOp c);

/// A scalar expression: index math, loaded values and elementwise math. One
/// final node type per kind below; `as<T>()` is the checked downcast (null
/// when the kind differs). Every node is immutable and may be shared.
struct Expr;
using ExprP = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    Int, Float, Bool, Var, Builtin, TensorDim, Unary, Binary, Select, Cast, Load, Index
  };
  const Kind kind;
  const ir::DataType dtype;  ///< value type

  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  /// An integer literal of value v.
  bool is_int(int64_t v) const;
  /// The literal true (a predicate that always holds).
  bool is_true() const;

  static ExprP integer(int64_t v);
  static ExprP boolean(bool v);
  static ExprP floating(double v, ir::DataType t);
  static ExprP var(std::string name, ir::DataType t = ir::DataType::I64);
  /// The index of this thread or block along a thread or block dimension
  /// (TIDx..BIDz), and the launch's extent along it (Builtin).
  static ExprP launch_index(ir::ParallelType p);
  static ExprP launch_extent(ir::ParallelType p);
  /// Parameter b's size along `axis`, divided by `divisor` (TensorDim).
  static ExprP tensor_size(const Buffer* b, int axis, int64_t divisor = 1);
  static ExprP tensor_stride(const Buffer* b, int axis);
  static ExprP unary(ir::UnaryOpType op, ExprP a, ir::DataType t);
  static ExprP binary(ir::BinaryOpType op, ExprP a, ExprP b, ir::DataType t);
  static ExprP select(ExprP c, ExprP a, ExprP b, ir::DataType t);
  static ExprP cast(ExprP a, ir::DataType t);
  /// A load of b[index]; `cache`: the cache policy of a load from global
  /// memory (ir::CacheOp, from cache_after), Unspecified for every other.
  static ExprP load(const Buffer* b, ExprP index, ir::CacheOp cache = ir::CacheOp::Unspecified);
  /// Index arithmetic with constant folding of the trivial cases (x*1, x+0,
  /// x/1, x%1, ...) so generated indices stay readable.
  static ExprP index_op(IndexOpType op, ExprP a, ExprP b);
  static ExprP ceil_div(ExprP a, ExprP b) { return index_op(IndexOpType::CeilDiv, a, b); }

 protected:
  Expr(Kind k, ir::DataType t) : kind(k), dtype(t) {}
};

/// An integer literal (of type I64).
struct IntImm final : Expr {
  static constexpr Kind kKind = Kind::Int;
  const int64_t value;
  explicit IntImm(int64_t v) : Expr(kKind, ir::DataType::I64), value(v) {}
};
/// A floating literal of its dtype.
struct FloatImm final : Expr {
  static constexpr Kind kKind = Kind::Float;
  const double value;
  FloatImm(double v, ir::DataType t) : Expr(kKind, t), value(v) {}
};
/// true or false.
struct BoolImm final : Expr {
  static constexpr Kind kKind = Kind::Bool;
  const bool value;
  explicit BoolImm(bool v) : Expr(kKind, ir::DataType::Bool), value(v) {}
};
/// A named value: a loop variable ("i5"), or in launch terms
/// (Kernel::launch_shared_bytes, Buffer::dynamic_elements) a size symbol ("K").
/// Thread and block indices and tensor sizes have nodes of their own.
struct Var final : Expr {
  static constexpr Kind kKind = Kind::Var;
  const std::string name;
  Var(std::string n, ir::DataType t) : Expr(kKind, t), name(std::move(n)) {}
};
/// A value the launch gives each thread: its index along a thread or block
/// dimension, or the launch's extent along that dimension. Only codegen and
/// the CPU runtime spell these in CUDA (threadIdx.x is {TIDx, Index},
/// blockDim.x {TIDx, Extent}, blockIdx.y {BIDy, Index}, gridDim.y {BIDy,
/// Extent}); the kernel-IR text prints TIDx and dim(TIDx). Of type I64.
struct Builtin final : Expr {
  static constexpr Kind kKind = Kind::Builtin;
  enum class Of { Index, Extent };
  const ir::ParallelType parallel;  ///< TIDx, TIDy, TIDz, BIDx, BIDy or BIDz
  const Of of;                      ///< the index, or the extent
  Builtin(ir::ParallelType p, Of o) : Expr(kKind, ir::DataType::I64), parallel(p), of(o) {}
};
/// A tensor parameter's size or stride along one axis, read at run time
/// (Tensor<T, N>::size[axis], ::stride[axis]). With divisor > 1, the exact
/// quotient size / divisor of a size the kernel assumes a multiple of it
/// (Kernel::divisible, lower/size_variable.h): an opaque variable to the
/// simplifier. Of type I64.
struct TensorDim final : Expr {
  static constexpr Kind kKind = Kind::TensorDim;
  enum class Field { Size, Stride };
  const Buffer* const buffer;  ///< a parameter
  const int axis;              ///< in [0, buffer->rank)
  const Field field;           ///< size or stride
  const int64_t divisor;       ///< 1, or the size's assumed divisor
  TensorDim(const Buffer* b, int a, Field f, int64_t d)
      : Expr(kKind, ir::DataType::I64), buffer(b), axis(a), field(f), divisor(d) {}
  /// k when divisor is 2^k (k > 0): sizes are >= 0, so the quotient is a
  /// shift (a signed `/` costs more); -1 otherwise.
  int shift() const;
};
/// op(a), elementwise math.
struct Unary final : Expr {
  static constexpr Kind kKind = Kind::Unary;
  const ir::UnaryOpType op;
  const ExprP a;
  Unary(ir::UnaryOpType o, ExprP x, ir::DataType t) : Expr(kKind, t), op(o), a(std::move(x)) {}
};
/// op(a, b), elementwise math.
struct Binary final : Expr {
  static constexpr Kind kKind = Kind::Binary;
  const ir::BinaryOpType op;
  const ExprP a, b;
  Binary(ir::BinaryOpType o, ExprP x, ExprP y, ir::DataType t)
      : Expr(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
/// cond ? true_value : false_value.
struct Select final : Expr {
  static constexpr Kind kKind = Kind::Select;
  const ExprP cond, true_value, false_value;
  Select(ExprP c, ExprP x, ExprP y, ir::DataType t)
      : Expr(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
};
/// value converted to dtype.
struct Cast final : Expr {
  static constexpr Kind kKind = Kind::Cast;
  const ExprP value;
  Cast(ExprP v, ir::DataType t) : Expr(kKind, t), value(std::move(v)) {}
};
/// buffer[index], of the buffer's dtype.
/// buffer[index]. `cache`: the load qualifier of a load from global memory
/// (AllLevels .ca, Global .cg, Streaming .cs; Unspecified: a plain load).
struct Load final : Expr {
  static constexpr Kind kKind = Kind::Load;
  const Buffer* const buffer;
  const ExprP index;
  const ir::CacheOp cache;
  Load(const Buffer* buf, ExprP i, ir::DataType t, ir::CacheOp c = ir::CacheOp::Unspecified)
      : Expr(kKind, t), buffer(buf), index(std::move(i)), cache(c) {}
};
/// Index arithmetic: a op b (I64, or Bool for Lt and And).
struct IndexOp final : Expr {
  static constexpr Kind kKind = Kind::Index;
  const IndexOpType op;
  const ExprP a, b;
  IndexOp(IndexOpType o, ExprP x, ExprP y, ir::DataType t)
      : Expr(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

ExprP operator+(ExprP a, ExprP b);
ExprP operator*(ExprP a, ExprP b);
ExprP operator/(ExprP a, ExprP b);
ExprP operator%(ExprP a, ExprP b);
ExprP operator<(ExprP a, ExprP b);
ExprP operator&&(ExprP a, ExprP b);
ExprP operator^(ExprP a, ExprP b);

/// Storage of one tensor in the kernel.
struct Buffer {
  std::string name;            ///< "T3"
  ir::DataType dtype;          ///< element type
  ir::MemoryType memory;       ///< Global (a parameter), Local or Shared
  bool is_param = false;       ///< passed as Tensor<T, N> (fusion I/O and workspaces);
                               ///< a workspace may hold a Local tensor too large for registers
  int rank = 0;                ///< parameter rank (number of sizes/strides)
  int64_t size = 0;            ///< elements, for Local and Shared (-1: dynamic_elements)
  int64_t shared_offset = 0;   ///< byte offset into dynamic shared memory
  /// A Shared buffer over symbolic extents (Kernel::dynamic_shared): its
  /// element count in launch terms (Vars named by size symbols), and its
  /// byte offset in kernel terms (TensorDim sizes, the block's launch
  /// extents); null otherwise.
  ExprP dynamic_elements;
  ExprP dynamic_offset;
  const ir::TensorView* tv = nullptr;  ///< the tensor it stores (for messages)
};

/// A statement: one final node type per kind below, owned by its parent's
/// statement list; `as<T>()` is the checked downcast. Passes rewrite
/// statements in place (StmtMutator, kir_visitor.h).
struct Stmt;
using StmtP = std::unique_ptr<Stmt>;

struct Stmt {
  enum class Kind {
    Block, For, If, Store, Allocate, Sync, Comment, BlockReduce, GridReduce, AsyncGroup, MmaTile
  };
  const Kind kind;

  virtual ~Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }
  /// A deep copy (expressions are shared: they are immutable).
  virtual StmtP clone() const = 0;

 protected:
  explicit Stmt(Kind k) : kind(k) {}
};

/// Statements in order.
struct Block final : Stmt {
  static constexpr Kind kKind = Kind::Block;
  std::vector<StmtP> body;
  Block() : Stmt(kKind) {}
  static std::unique_ptr<Block> make() { return std::make_unique<Block>(); }
  StmtP clone() const override;
};

/// for (var = 0; var < extent; ++var) body
struct For final : Stmt {
  static constexpr Kind kKind = Kind::For;
  std::string var;
  ExprP extent;
  bool unroll = false;    ///< #pragma unroll
  bool unswitch = false;  ///< hoist the nest's predicates (the unswitch pass)
  std::vector<StmtP> body;
  For() : Stmt(kKind) {}
  static std::unique_ptr<For> make(std::string var, ExprP extent, bool unroll);
  StmtP clone() const override;
};

/// if (cond) then_body else else_body
struct If final : Stmt {
  static constexpr Kind kKind = Kind::If;
  ExprP cond;
  std::vector<StmtP> then_body;
  std::vector<StmtP> else_body;
  If() : Stmt(kKind) {}
  static std::unique_ptr<If> make(ExprP cond);
  StmtP clone() const override;
};

/// buffer[index] = value; or, with vector > 1, a copy of that many adjacent
/// elements (value is then a Load at the first one).
/// async: a cp.async (LoadStoreOpType::CpAsync) of `vector` elements from
/// the Global Load `value` into a Shared buffer; it lands at a later
/// AsyncGroup's wait. src_valid (null: always): when it does not hold, the
/// copy reads no byte and zero-fills (src_bytes 0), the source index already
/// clamped in bounds by lowering (lower/async_copy.cpp).
struct Store final : Stmt {
  static constexpr Kind kKind = Kind::Store;
  const Buffer* buffer = nullptr;
  ExprP index;
  ExprP value;
  int64_t vector = 1;
  bool async = false;
  ExprP src_valid;
  Store() : Stmt(kKind) {}
  static std::unique_ptr<Store> make(const Buffer* b, ExprP index, ExprP value);
  StmtP clone() const override;
};

/// Declares a Local buffer (Shared ones are carved from dynamic shared memory).
struct Allocate final : Stmt {
  static constexpr Kind kKind = Kind::Allocate;
  const Buffer* buffer = nullptr;
  Allocate() : Stmt(kKind) {}
  static std::unique_ptr<Allocate> make(const Buffer* b);
  StmtP clone() const override;
};

/// __syncthreads()
struct Sync final : Stmt {
  static constexpr Kind kKind = Kind::Sync;
  Sync() : Stmt(kKind) {}
  static std::unique_ptr<Sync> make() { return std::make_unique<Sync>(); }
  StmtP clone() const override;
};

/// cp.async group bookkeeping of this thread (PTX cp.async.commit_group /
/// cp.async.wait_group): with commit, closes its copies not yet in a group
/// into a new group; then, with wait >= 0, waits until at most `wait` of its
/// newest committed groups are pending. No barrier: other threads see the
/// landed copies after a Sync.
struct AsyncGroup final : Stmt {
  static constexpr Kind kKind = Kind::AsyncGroup;
  bool commit = true;
  int64_t wait = -1;
  AsyncGroup() : Stmt(kKind) {}
  static std::unique_ptr<AsyncGroup> make(bool commit, int64_t wait);
  StmtP clone() const override;
};

/// One warp's mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 (T = dtype,
/// bf16 or f16): acc[acc_index[i]] += the C fragment element i of this lane,
/// from the A fragment elements a[0..7] and the B ones b[0..3] of this lane,
/// in the PTX ISA's fragment orders (docs/tensor-cores.md); an a/b element
/// whose a_valid/b_valid is false (past its operand's end) is 0. A warp collective:
/// every lane of the warp reaches it, never under a branch.
struct MmaTile final : Stmt {
  static constexpr Kind kKind = Kind::MmaTile;
  const Buffer* acc = nullptr;  ///< the f32 accumulator, a Local buffer
  std::array<ExprP, 4> acc_index;
  std::array<ExprP, 4> acc_valid;  ///< whether C element i exists (else not read nor written)
  std::array<ExprP, 8> a;        ///< loads of the A fragment's elements
  std::array<ExprP, 8> a_valid;  ///< whether each exists (else it is 0)
  std::array<ExprP, 4> b;
  std::array<ExprP, 4> b_valid;
  ir::DataType dtype = ir::DataType::BF16;
  /// ldmatrix reads of an operand in Shared memory (lower/mma_tile.h): the
  /// load of the first element of the 16-byte row this lane passes (null:
  /// the element reads above only), A by ldmatrix.x4, B by ldmatrix.x2
  /// (.trans when B's n, not its k, is the row); the *_full predicate (the
  /// same for every lane) says that the whole operand tile is in range, else
  /// the lanes take the element reads, which zero what is past the end.
  ExprP a_row, a_full;
  ExprP b_row, b_full;
  bool b_trans = false;
  /// Why an operand keeps element reads (empty when it uses ldmatrix), for
  /// the kernel-IR text.
  std::string a_why, b_why;
  /// A warp tile (lower/mma_tile.h hoist_mma_fragments): the serial loops
  /// over the warp's instruction tiles folded into the statement, `m_var`
  /// (m_trips iterations; A's exprs may read it, B's do not) and `n_var`
  /// (B's, not A's); "" for none (1 trip). Each A fragment is read once per
  /// m and each B fragment once per n, into registers, before the m_trips x
  /// n_trips mma.sync: as many mma.sync, m_trips + n_trips fragment reads.
  std::string m_var, n_var;
  int64_t m_trips = 1, n_trips = 1;
  MmaTile() : Stmt(kKind) {}
  StmtP clone() const override;
};

/// A line of text for readers.
struct Comment final : Stmt {
  static constexpr Kind kKind = Kind::Comment;
  std::string text;
  Comment() : Stmt(kKind) {}
  static std::unique_ptr<Comment> make(std::string text);
  StmtP clone() const override;
};

/// buffer[index] = sl_block_reduce(buffer[index]) over the thread dimensions
/// in dims, an allreduce: every thread of a group gets the result. identity
/// is the op's identity, participate whether this thread's element exists
/// (else it contributes the identity, and does not store the result: its
/// slot may be a real element's). Contains barriers: it is reached by every
/// thread of the block, never under a branch.
struct BlockReduce final : Stmt {
  static constexpr Kind kKind = Kind::BlockReduce;
  const Buffer* buffer = nullptr;  ///< a Local buffer
  ExprP index;
  ir::ReductionOpType op = ir::ReductionOpType::Sum;
  ExprP identity;
  ExprP participate;
  std::array<bool, 3> dims{};  ///< whether threadIdx.x/y/z are reduced
  int64_t workspace = 0;       ///< byte offset of its workspace in dynamic shared memory
                               ///< (Kernel::reduce_workspace_*)
  BlockReduce() : Stmt(kKind) {}
  static std::unique_ptr<BlockReduce> make(const Buffer* b, ExprP index, ir::ReductionOpType op,
                                           ExprP identity, ExprP participate,
                                           std::array<bool, 3> dims, int64_t workspace);
  StmtP clone() const override;
};

/// A grid reduction's last step (sl_grid_reduce): if participate, this thread
/// stores its block's partial buffer[index] in slot element * blocks + block
/// of partials (output element `element`, block `block` of `blocks` along the
/// reduced block dimensions), fences, and counts its arrival on
/// semaphores[element]; the last block to arrive combines the partials in
/// block order from identity, stores the result at out[out_index] and resets
/// the counter to 0. No block waits on another; no barrier.
///
/// Grid-persistent (barrier set; sched::grid_persistent): an allreduce
/// (sl_grid_allreduce). Every thread of every block reaches it (it is never
/// under a branch: it contains a grid-wide barrier); if participate, the
/// thread stores its block's partial in its slot, then the grid waits at the
/// barrier (barrier: the kernel's two grid-sync counters), and every thread
/// whose element exists (valid) combines the element's partials in block
/// order into buffer[index] (the same bits in every block). out and
/// semaphores are null: a parameter is stored after it, by every thread.
struct GridReduce final : Stmt {
  static constexpr Kind kKind = Kind::GridReduce;
  const Buffer* buffer = nullptr;  ///< the Local partial
  ExprP index;
  const Buffer* out = nullptr;     ///< a parameter
  ExprP out_index;
  ir::ReductionOpType op = ir::ReductionOpType::Sum;
  ExprP identity;
  ExprP participate;
  const Buffer* partials = nullptr;
  const Buffer* semaphores = nullptr;
  ExprP element, block, blocks;
  const Buffer* barrier = nullptr;  ///< grid-persistent: the grid-sync counters
  ExprP valid;                      ///< grid-persistent: the element exists
  int barrier_index = 0;            ///< grid-persistent: the kernel's n-th grid barrier site
  GridReduce() : Stmt(kKind) {}
  struct Grid {
    ExprP element, block, blocks;
  };
  static std::unique_ptr<GridReduce> make(const Buffer* b, ExprP index, const Buffer* out,
                                          ExprP out_index, ir::ReductionOpType op, ExprP identity,
                                          ExprP participate, const Buffer* partials,
                                          const Buffer* semaphores, Grid grid);
  /// The grid-persistent form (see above).
  static std::unique_ptr<GridReduce> make_persistent(const Buffer* b, ExprP index,
                                                     ir::ReductionOpType op, ExprP identity,
                                                     ExprP participate, ExprP valid,
                                                     const Buffer* partials,
                                                     const Buffer* barrier, Grid grid);
  bool persistent() const { return barrier != nullptr; }
  StmtP clone() const override;
};

/// e with every Var named in `values` replaced, index arithmetic refolded.
ExprP substitute(const ExprP& e, const std::map<std::string, ExprP>& values);

/// Which host value a kernel parameter is bound to.
struct Param {
  /// GridWorkspace: a grid reduction's rank-1 buffer, allocated and zeroed
  /// per launch: its partials (numel(tv) times the launch's blocks along
  /// grid_dims, of the buffer's dtype) or its semaphores (numel(tv) int32
  /// counters, when semaphore).
  enum class Source { Input, Output, Workspace, GridWorkspace };
  Source source;                      ///< where the host finds the memory
  int index = 0;                      ///< fusion input/output number
  const ir::TensorView* tv = nullptr; ///< the tensor (shape for workspaces)
  const Buffer* buffer = nullptr;     ///< the kernel-side buffer
  std::array<bool, 3> grid_dims{};    ///< GridWorkspace: the reduced blockIdx dimensions
  bool semaphore = false;             ///< GridWorkspace: the counters, not the partials
  /// GridWorkspace: the grid barrier's two int32 counters (arrivals and
  /// generation; sched::grid_persistent), not a reduction's workspace.
  bool barrier = false;
};

/// A lowered kernel: parameters, launch extents and body.
struct Kernel {
  std::vector<std::unique_ptr<Buffer>> buffers;  ///< every buffer, params first
  std::vector<Param> params;                     ///< in signature order
  /// For each bound parallel type, the extents of the loops bound to it; the
  /// launch uses the largest (evaluated under the sizes).
  std::map<ir::ParallelType, std::vector<ir::SizeExpr>> launch_extents;
  /// How each named size is read in the kernel, e.g. K -> T0.size[1].
  std::map<std::string, std::pair<const Buffer*, int>> size_sources;
  /// A size read through an axis of extent ceilDiv(size, c) (a view's -1,
  /// exact by ir::check_view_sizes): size = that axis's extent * c.
  std::map<std::string, int64_t> size_scale;
  int64_t shared_bytes = 0;  ///< dynamic shared memory per block (the Shared buffers)
  /// Block reductions share one workspace in dynamic shared memory, at this
  /// byte offset past the Shared buffers, of reduce_workspace_bytes per
  /// thread of the block (the launch adds blockDim.x*y*z times that to
  /// shared_bytes); 0 bytes: no block reduction.
  int64_t reduce_workspace_offset = 0;
  int64_t reduce_workspace_bytes = 0;
  /// Shared buffers sized at launch (Buffer::dynamic_elements), in this order
  /// after the block-reduction workspace (or the constant Shared buffers),
  /// each at the next 16-byte boundary.
  std::vector<const Buffer*> dynamic_shared;
  /// The dynamic shared memory per block in launch terms: an index expression
  /// over Vars named by size symbols and the block's launch extents (Builtin
  /// of Extent), which the launch substitutes (runtime::launch_value: the
  /// same formula that placed dynamic_shared). Null: the constant layout above.
  ExprP launch_shared_bytes;
  /// The sizes compiled into the kernel as constants (size specialization,
  /// the default); empty for a dynamic kernel, which reads every size from
  /// its parameters. A launch checks its sizes are these.
  std::map<std::string, int64_t> specialized;
  /// Divisibility specialization of a dynamic kernel (Triton's
  /// `tt.divisibility`): each size here is assumed a multiple of its value
  /// (16), and its index math folds as if it were one: K = 16 q makes
  /// ceilDiv(K, 4) = 4 q, and a 4-wide vector's elements share its bounds
  /// check. A launch checks its sizes are such multiples.
  std::map<std::string, int64_t> divisible;
  /// blockDim.x/y/z when constant (or specialized) launch extents fix them,
  /// else 0: the block reductions and __launch_bounds__ are compiled for them.
  std::array<int64_t, 3> static_block{};
  /// f32 math through the hardware approximations (runtime::KernelOptions::
  /// fast_math): exp, log, division, reciprocal, rsqrt and sigmoid print
  /// as the runtime header's sl_fast_* (__expf, __logf, __fdividef,
  /// rsqrtf); the validation's error bounds follow (ref::EvalOptions).
  bool fast_math = false;
  /// Half ops (ir::half_op_is_native: +, -, *, neg, abs of f16/bf16) through
  /// the CUDA Math API's intrinsics (runtime::KernelOptions::native_half_math):
  /// __hmul, and __hmul2 for two iterations of a loop whose only statement
  /// it is; the same bits as computing in f32 (the default), other
  /// instructions.
  bool native_half_math = false;
  int index_bits = 32;       ///< 32 or 64
  bool has_barrier = false;  ///< any Sync or BlockReduce
  /// Grid-wide barriers (grid-persistent grid reductions): the launch needs
  /// every block resident at once (a cooperative launch on CUDA; the CPU
  /// backend runs every block's threads as resident fibers).
  bool grid_sync = false;
  int grid_barriers = 0;  ///< grid barrier sites in the body
  /// A Global parameter read or written with `width`-wide vector accesses:
  /// the launch checks its innermost stride is 1, its innermost extent and
  /// other strides are multiples of width, and its pointer is aligned.
  struct VectorAccess {
    const Buffer* buffer;
    int64_t width;
  };
  std::vector<VectorAccess> vector_accesses;
  std::unique_ptr<Block> body;  ///< the kernel body
};

}  // namespace schedlab::kir
