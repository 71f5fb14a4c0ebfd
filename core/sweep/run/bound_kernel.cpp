// A point's kernel bound for timing: see schedlab/sweep/run/bound_kernel.h.
#include "schedlab/sweep/run/bound_kernel.h"

#include <fmt/core.h>

namespace schedlab::sweep {

BoundKernel::BoundKernel(runtime::Backend& backend, const SegmentKernel& kernel,
                         const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes)
    : backend_(backend),
      compiled_(kernel.compiled.get()),
      args_(std::make_unique<runtime::BoundArgs>(backend, kernel.prepared, inputs, sizes)) {}

std::string BoundKernel::launch() const {
  const runtime::LaunchDims& d = args_->dims();
  return fmt::format("grid={}x{}x{} block={}x{}x{} smem={}", d.grid[0], d.grid[1], d.grid[2],
                     d.block[0], d.block[1], d.block[2], d.shared_bytes);
}

TimedKernel BoundKernel::timed() const {
  runtime::Backend* be = &backend_;
  runtime::CompiledKernel* compiled = compiled_;
  const runtime::BoundArgs* args = args_.get();
  return {[=](int n) { be->time(*compiled, args->dims(), args->args(), n, 0); },
          [=] { return be->time(*compiled, args->dims(), args->args(), 0, 1).seconds.at(0); }};
}

}  // namespace schedlab::sweep
