// schedlab/lower: lowering a scheduled fusion to kernel IR.
//
// Owns: the kernel IR (this file) and the passes that build it (lower.h
// lists them in order). Kernel IR is a small imperative tree: loops,
// predicated stores, allocations and barriers over scalar expressions.
// May depend on: schedlab/base, schedlab/ir, schedlab/sched.
// Invariants: kernel IR never refers back to scheduling decisions; codegen
// prints it without consulting the fusion. Every expression node is
// immutable and may be shared.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::kir {

struct Buffer;

/// A scalar expression: index math, loaded values and elementwise math.
struct Expr;
using ExprP = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    Int,     ///< integer literal `i`
    Float,   ///< floating literal `f` of `dtype`
    Bool,    ///< true/false in `i`
    Var,     ///< a named value: loop variable, threadIdx.x, a tensor size
    Unary,   ///< op(a): `op` is an ir::UnaryOpType
    Binary,  ///< op(a, b): `op` is an ir::BinaryOpType
    Select,  ///< a ? b : c
    Cast,    ///< (dtype) a
    Load,    ///< buffer[a]
    IntOp,   ///< index arithmetic: `name` is one of + - * / % < && ceilDiv
  };
  Kind kind = Kind::Int;
  ir::DataType dtype = ir::DataType::I64;  ///< value type
  int64_t i = 0;                          ///< Int, Bool
  double f = 0.0;                         ///< Float
  std::string name;                       ///< Var name, IntOp symbol
  int op = 0;                             ///< Unary/Binary operator
  std::vector<ExprP> args;                ///< operands
  const Buffer* buffer = nullptr;         ///< Load

  static ExprP integer(int64_t v);
  static ExprP boolean(bool v);
  static ExprP floating(double v, ir::DataType t);
  static ExprP var(std::string name, ir::DataType t = ir::DataType::I64);
  static ExprP unary(ir::UnaryOpType op, ExprP a, ir::DataType t);
  static ExprP binary(ir::BinaryOpType op, ExprP a, ExprP b, ir::DataType t);
  static ExprP select(ExprP c, ExprP a, ExprP b, ir::DataType t);
  static ExprP cast(ExprP a, ir::DataType t);
  static ExprP load(const Buffer* b, ExprP index);
  /// Index arithmetic with constant folding of the trivial cases (x*1, x+0,
  /// x/1, x%1, ...) so generated indices stay readable.
  static ExprP int_op(const std::string& op, ExprP a, ExprP b);
  bool is_int(int64_t v) const { return kind == Kind::Int && i == v; }
};

ExprP operator+(ExprP a, ExprP b);
ExprP operator*(ExprP a, ExprP b);
ExprP operator/(ExprP a, ExprP b);
ExprP operator%(ExprP a, ExprP b);
ExprP operator<(ExprP a, ExprP b);
ExprP operator&&(ExprP a, ExprP b);

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
  /// byte offset in kernel terms (tensor sizes, blockDim); null otherwise.
  ExprP dynamic_elements;
  ExprP dynamic_offset;
  const ir::TensorView* tv = nullptr;  ///< the tensor it stores (for messages)
};

/// A statement.
struct Stmt;
using StmtP = std::unique_ptr<Stmt>;

struct Stmt {
  enum class Kind {
    Block,     ///< body in order
    For,       ///< for (var = 0; var < extent; ++var) body
    If,        ///< if (cond) body
    Store,     ///< buffer[index] = value
    Allocate,  ///< declares a Local buffer (Shared ones are carved from dynamic smem)
    Sync,      ///< __syncthreads()
    Comment,   ///< a line of text for readers
    /// buffer[index] = sl_block_reduce(buffer[index]) over the thread
    /// dimensions in reduce_dims, an allreduce: every thread of a group gets
    /// the result. value is the identity, cond whether this thread's value
    /// takes part (else it contributes the identity). Contains barriers: it is
    /// reached by every thread of the block, never under a branch.
    BlockReduce,
    /// A grid reduction's last step (sl_grid_reduce): if cond, this thread
    /// stores its block's partial buffer[index] in slot grid[0] *
    /// grid[2] + grid[1] of workspaces[0] (output element grid[0], block
    /// grid[1] of grid[2] along the reduced block dimensions), fences, and
    /// counts its arrival on workspaces[1][grid[0]]; the last block to arrive
    /// combines the grid[2] partials in block order from value (the identity),
    /// stores the result at out[out_index] and resets the counter to 0. No
    /// block waits on another; no barrier.
    GridReduce,
  };
  Kind kind = Kind::Block;
  std::vector<StmtP> body;            ///< Block/For/If children
  std::string var;                    ///< For: loop variable
  ExprP extent;                       ///< For: trip count
  bool unroll = false;                ///< For: #pragma unroll
  bool unswitch = false;              ///< For: hoist the nest's predicates (unswitch pass)
  ExprP cond;                         ///< If
  std::vector<StmtP> else_body;       ///< If: run when cond is false
  const Buffer* buffer = nullptr;     ///< Store/Allocate
  ExprP index;                        ///< Store
  ExprP value;                        ///< Store
  int64_t vector = 1;                 ///< Store: a copy of this many adjacent elements
                                      ///< (value is then a Load at the first one)
  std::string text;                   ///< Comment
  int reduce_op = 0;                  ///< BlockReduce: an ir::ReductionOpType
  std::array<bool, 3> reduce_dims{};  ///< BlockReduce: whether threadIdx.x/y/z are reduced
  int64_t workspace = 0;              ///< BlockReduce: byte offset of its workspace in
                                      ///< dynamic shared memory (Kernel::reduce_workspace_*)
  const Buffer* out = nullptr;        ///< GridReduce: where the result goes
  ExprP out_index;                    ///< GridReduce: its element in out
  std::vector<const Buffer*> workspaces;  ///< GridReduce: partials, semaphores
  std::vector<ExprP> grid;                ///< GridReduce: element, block, number of blocks

  static StmtP block();
  static StmtP for_loop(std::string var, ExprP extent, bool unroll);
  static StmtP if_then(ExprP cond);
  static StmtP store(const Buffer* b, ExprP index, ExprP value);
  static StmtP allocate(const Buffer* b);
  static StmtP sync();
  static StmtP comment(std::string text);
  /// A BlockReduce of the Local buffer b at index.
  static StmtP block_reduce(const Buffer* b, ExprP index, ir::ReductionOpType op, ExprP identity,
                            ExprP participate, std::array<bool, 3> dims, int64_t workspace);
  /// A GridReduce of the partial in the Local buffer b at index into out at
  /// out_index; grid is {element, block, number of blocks}.
  static StmtP grid_reduce(const Buffer* b, ExprP index, const Buffer* out, ExprP out_index,
                           ir::ReductionOpType op, ExprP identity, ExprP participate,
                           const Buffer* partials, const Buffer* semaphores,
                           std::vector<ExprP> grid);
  /// A deep copy (expressions are shared: they are immutable).
  StmtP clone() const;
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
  /// over Vars named by size symbols and blockDim.x/y/z, which the launch
  /// substitutes (the same formula that placed dynamic_shared). Null: the
  /// constant layout above.
  ExprP launch_shared_bytes;
  int index_bits = 32;       ///< 32 or 64
  bool has_barrier = false;  ///< any Sync or BlockReduce
  /// A Global parameter read or written with `width`-wide vector accesses:
  /// the launch checks its innermost stride is 1, its innermost extent and
  /// other strides are multiples of width, and its pointer is aligned.
  struct VectorAccess {
    const Buffer* buffer;
    int64_t width;
  };
  std::vector<VectorAccess> vector_accesses;
  StmtP body;                ///< the kernel body
};

}  // namespace schedlab::kir
