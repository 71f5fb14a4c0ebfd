// Queries a heuristic asks of a fusion (nvFuser's scheduler_utils).
#pragma once

#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Tensors defined by a ReductionOp, in topological order.
std::vector<ir::TensorView*> get_reduction_tvs(const ir::Fusion& f);
/// Every tensor of f except those listed, in creation order.
std::vector<ir::TensorView*> all_tvs_except(const ir::Fusion& f,
                                            const std::vector<ir::TensorView*>& except);
/// The tensor a scheduler should transform first and propagate from: the
/// fusion output with the most non-broadcast, non-reduction logical axes (the
/// first such output on ties). For a fusion with reductions, the reduction
/// tensor with the most non-broadcast logical axes, reduction axes included,
/// is used instead (the first in topological order on ties), as nvFuser's
/// reduction schedulers do. Null for a fusion with neither.
ir::TensorView* find_reference_for(const ir::Fusion& f);
/// Groups fusion inputs and outputs whose innermost logical axis maps to the
/// same LoopMap class (the transpose scheduler's grouping). Groups are in
/// first-seen order over inputs then outputs; tensors of rank 0 are skipped.
std::vector<std::vector<ir::TensorView*>> group_inputs_outputs_by_inner_dim(const ir::Fusion& f);
/// True if `of` depends on `v` (v is upstream of it, or is it).
bool is_dependency_of(const ir::Val* v, const ir::Val* of);
/// Tensors on some path from a member of `from` to a member of `to`, both
/// ends included, in topological order.
std::vector<ir::TensorView*> vals_between(const std::vector<ir::TensorView*>& from,
                                          const std::vector<ir::TensorView*>& to);

}  // namespace schedlab::sched
