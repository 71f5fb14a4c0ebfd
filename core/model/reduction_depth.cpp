// Reduction tree depth from the kernel IR (reduction_depth.h).
#include "schedlab/model/reduction_depth.h"

#include <algorithm>
#include <array>

#include "schedlab/lower/kir_equality.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/runtime/executor.h"

namespace schedlab::model {
namespace {

class Walker : public kir::IRVisitor {
 public:
  explicit Walker(const runtime::LaunchDims& dims)
      : block_(dims.block), values_(runtime::launch_bindings(dims)) {}
  ReductionDepth depth;

 protected:
  using kir::IRVisitor::visit;
  void visit(const kir::For& s) override {
    const double outer = times_;
    const kir::ExprP e = kir::substitute(s.extent, values_);
    const auto* n = e->as<kir::IntImm>();
    times_ *= n ? double(std::max<int64_t>(n->value, 0)) : 1.0;
    include(s.body);
    times_ = outer;
  }
  void visit(const kir::BlockReduce& s) override {
    int64_t group = 1;
    for (size_t i = 0; i < 3; ++i)
      if (s.dims[i]) group *= block_[i];
    depth.shuffle_levels += times_ * block_reduce_levels(group);
  }
  void visit(const kir::GridReduce& s) override {
    (s.persistent() ? depth.grid_barriers : depth.grid_reductions) += times_;
  }

 private:
  std::array<int64_t, 3> block_;
  kir::ExprMap<kir::ExprP> values_;  ///< the launch extents (blockDim, gridDim) as values
  double times_ = 1.0;
};

}  // namespace

int block_reduce_levels(int64_t group) {
  const int64_t warps = (group + 31) / 32;
  if (warps <= 1) return 5;
  return group % 32 == 0 ? 10 : 5 + int(warps - 1);
}

ReductionDepth reduction_depth(const kir::Kernel& kernel, const runtime::LaunchDims& dims) {
  Walker w(dims);
  if (kernel.body) w.include(*kernel.body);
  return w.depth;
}

}  // namespace schedlab::model
