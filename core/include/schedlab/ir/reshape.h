// Reshape and view ops (nvFuser's ViewOp, squeeze, unsqueeze, expand).
//
// Each builds one ir::ViewOp whose output's root domain maps 1:1 to the
// input's non-reduction logical axes and whose logical domain derives from
// that root by splits and merges (see ViewOp in ir.h). A split factor is a
// compile-time constant, as everywhere in the IR: a reshape splits a symbolic
// axis only when one side of the split is a constant ([B, S, E] -> [B, S, 8,
// -1] splits E into 8 and ceilDiv(E, 8)); the sizes a sweep binds later must
// make every such split exact (check_view_sizes).
// May depend on: schedlab/ir, schedlab/base.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

/// One entry of a target shape: an extent, or nullopt for -1 (inferred).
using ShapeEntry = std::optional<SizeExpr>;

/// The same elements in row-major order with the given shape. At most one
/// entry is -1 (nullopt); an entry of constant 1 is a new Broadcast axis; the
/// input's Broadcast axes are dropped. `fn` names the function in messages
/// ("reshape" or "view"). User errors: element counts that differ, two -1s,
/// a -1 beside a zero-size product, splits that need a symbolic factor.
TensorView* reshape(TensorView* x, const std::vector<ShapeEntry>& shape,
                    const std::string& fn = "reshape");
/// Merges axes [start, end] (inclusive; negative counts from the end) into one.
TensorView* flatten(TensorView* x, int start = 0, int end = -1);
/// Removes the given Broadcast axes (all Broadcast axes when dims is empty).
TensorView* squeeze(TensorView* x, const std::vector<int>& dims);
/// Inserts a Broadcast axis at `dim` of the result (in [-rank-1, rank]).
TensorView* unsqueeze(TensorView* x, int dim);
/// Widens Broadcast axes to the given extents; -1 (nullopt) or the axis's own
/// extent keeps an axis. Same rank as x.
TensorView* expand(TensorView* x, const std::vector<ShapeEntry>& shape);

/// Why `sizes` cannot run the views of `f`, or "": every split of a view must
/// be exact and every view must keep the element count (a reshape [E] ->
/// [8, -1] needs E a multiple of 8).
std::string check_view_sizes(const Fusion& f, const SizeBindings& sizes);

/// A view output's domains copied into `dst` (which may be its own fusion):
/// fresh root axes with the view's splits and merges from root to logical
/// replayed on them. `view_out` must be unscheduled (its history is exactly
/// the view's). Used by extract and recompute to build another ViewOp.
struct ViewDomains {
  std::vector<IterDomain*> root, logical;
};
ViewDomains copy_view_domains(Fusion& dst, const TensorView* view_out);

/// The views of f that some output needs, in statement order (get_view_ops).
std::vector<const ViewOp*> view_ops(const Fusion& f);

}  // namespace schedlab::ir
