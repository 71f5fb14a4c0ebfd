// propagate_reshape: a view's transforms replayed on its producers.
#include "schedlab/sched/propagate_reshape.h"

#include <algorithm>
#include <set>

#include "schedlab/ir/reshape.h"
#include "schedlab/sched/propagate.h"
#include "schedlab/sched/queries.h"

namespace schedlab::sched {

int propagate_reshape(ir::Fusion& f) {
  const auto views = ir::view_ops(f);
  for (const ir::ViewOp* v : views) {
    // The view's output and every tensor it depends on.
    std::vector<ir::TensorView*> selected;
    for (ir::TensorView* t : f.tensors())
      if (t != v->out() && is_dependency_of(t, v->out())) selected.push_back(t);
    selected.push_back(v->out());
    propagate_transformation(v->out(), selected);
  }
  return static_cast<int>(views.size());
}

std::vector<ir::TensorView*> statement_sort(const ir::Fusion& f) {
  std::vector<ir::TensorView*> r(f.inputs().begin(), f.inputs().end());
  std::set<const ir::TensorView*> seen(r.begin(), r.end());
  for (const ir::Expr* e : f.exprs_for_outputs())
    if (seen.insert(e->out()).second) r.push_back(e->out());
  return r;
}

}  // namespace schedlab::sched
