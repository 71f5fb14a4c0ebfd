// Pass helper: index math. Every access goes through logical indices:
//  * a written tensor's root/logical index comes from its loop indices by
//    replaying its splits and merges backward (split: in = outer * f + inner;
//    merge: outer = m / ext(inner), inner = m % ext(inner)), with an in-range
//    predicate for every split that may not divide evenly;
//  * a tensor inlined into loops that iterate a broadcast-widened domain
//    (the permissive map) instead takes its index from its consumer's, through
//    the producer-consumer axis pairs, a Broadcast axis reading index 0;
//  * an operand's logical index comes from the consumer's root index through
//    the same pairs;
//  * a Global tensor's offset is sum(index * stride); a Local or Shared one is
//    laid out row-major over its allocation axes, reached by replaying
//    forward; a Shared one padded by pad_shared has the row pitch of its
//    innermost allocation axis widened by the padding (row_pad); a Shared
//    one swizzled by sched::swizzle has the column of each row XORed, in
//    units of a bank word, with its row number modulo the width
//    (row_swizzle).
#pragma once

#include <functional>
#include <map>

#include "loop_tree.h"
#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// A block broadcast kept Local: t = broadcast(in) in Local memory with a
/// Broadcast loop axis bound to a thread dimension, whose input every thread
/// along each such dimension holds (`in` binds it to no axis but a Reduction:
/// a block reduction is an allreduce, sl_block_reduce returns the result to
/// every thread). Every thread then computes t's element in its own
/// registers: indexing does not guard t on its split Broadcast axes, and
/// check_thread_consistency (lowerable.cpp) lets a consumer bound the same
/// way, with the same extent, read its own copy.
bool is_local_block_broadcast(const ir::TensorView* t);

/// The index of loop k of tensor t at the point of emission.
using LoopIndexFn = std::function<kir::ExprP(const ir::TensorView* t, int k)>;

/// An index per IterDomain of a tensor, and the predicate guarding it.
struct TensorIndex {
  std::map<const ir::IterDomain*, kir::ExprP> index;
  kir::ExprP predicate;
  /// The conjuncts of predicate that bound a split of a merged tile axis: a
  /// loop domain wider than the merged axis (threads past a cp.async tile's
  /// copies) reaches positions outside it, which are no element of the
  /// buffer; they are destination bounds, never zero-fill (issue 36).
  kir::ExprP in_tile = kir::Expr::boolean(true);
};

class Indexer {
 public:
  /// buffers: the kernel buffer of every tensor; sizes: how each named size is read.
  Indexer(const std::map<const ir::TensorView*, const kir::Buffer*>& buffers,
          const std::map<std::string, kir::ExprP>& sizes)
      : buffers_(buffers), sizes_(sizes) {}

  /// A SizeExpr as a kernel expression.
  kir::ExprP size(const ir::SizeExpr& e) const;
  /// The variable of a loop: the thread index (kir::Builtin) for a TIDx
  /// loop, the block index for a BIDx one, the Var i<id> for a serial one.
  static kir::ExprP loop_var(const LoopKey& key);
  /// A serial loop's variable name, "i<id>".
  static std::string loop_var_name(const LoopKey& key);
  /// Root and logical indices of t where it is written, and its predicate.
  /// root_predicates = false leaves out the predicates of the splits between
  /// root and logical (an rfactor producer's reduction side): initialising
  /// its partials, every slot is an accumulator, even one no element reaches.
  TensorIndex write_index(const ir::TensorView* t, const LoopIndexFn& loop_index,
                          bool root_predicates = true) const;
  /// Logical (non-reduction) indices of operand p of e, given e's output index.
  std::vector<kir::ExprP> operand_index(const ir::Expr* e, const ir::TensorView* p,
                                        const TensorIndex& out) const;
  /// The element offset of p's buffer at a non-reduction logical index.
  kir::ExprP offset(const ir::TensorView* p, const std::vector<kir::ExprP>& logical) const;
  /// Allocation axes of a Local/Shared tensor and their extents; -1 marks a
  /// symbolic extent (a Local tensor then lives in a global workspace, a
  /// Shared one is sized at launch).
  static std::vector<std::pair<int, int64_t>> allocation_axes(const ir::TensorView* t);
  /// The elements after each row of t's buffer (sched::pad_shared): the pitch
  /// of the innermost allocation axis is its extent plus this. offset and the
  /// buffer sizes (allocation.cpp) both read it here; 0 unless t is Shared.
  static int64_t row_pad(const ir::TensorView* t);
  /// The XOR swizzle of t's rows (sched::swizzle): width 1 when none.
  struct RowSwizzle {
    int64_t width = 1;  ///< the row number modulo this is XORed into the column
    int64_t unit = 1;   ///< elements per XORed unit (sched::swizzle_unit)
    /// 16-byte units over rows (innermost allocation axis) of at most one
    /// unit, a whole number of them per unit (a cp.async stage: [..., lane,
    /// vector 8]): the buffer's flat offset is
    /// cut into lines of width * unit elements, and unit c of line L goes to
    /// c ^ (g(L) % width), g(L) = L ^ (L / 2) (the Gray code of the line, so
    /// that eight rows 32 bytes apart (2 lines) and eight rows 256 bytes
    /// apart (every other line) both fall in eight distinct 16-byte bank
    /// groups: ldmatrix of A by m and of B by k, conflict-free). A vector of
    /// w elements, w dividing the unit, stays whole.
    bool flat = false;
  };
  /// t's swizzle, checked against its buffer: a user error naming t unless
  /// its rows (innermost allocation axis) hold a constant multiple of
  /// width * unit elements and it has another allocation axis to number them,
  /// or (flat, 16-byte units) its rows divide the unit and its buffer holds a
  /// whole number of width * unit lines.
  /// offset reads it here; plan_vectorization has already refused vector
  /// copies into or out of swizzled buffers by then.
  static RowSwizzle row_swizzle(const ir::TensorView* t);

 private:
  const std::map<const ir::TensorView*, const kir::Buffer*>& buffers_;
  const std::map<std::string, kir::ExprP>& sizes_;
};

}  // namespace schedlab::lower
