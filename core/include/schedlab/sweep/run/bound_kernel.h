// schedlab/sweep/run/bound_kernel: a validated point's kernel bound to its
// inputs and timed the way `schedlab run` times it (docs/sweeps.md, "How
// points are timed"), for every front end that times a point: the sweep
// runner's phase 2 (runner_measure.cpp) and the Python module's pytest
// fixture (python/src/bench.cpp).
//
// Owns: the binding of a point's compiled kernel to the reference's inputs
// for timing, the launch label a record names ("grid=4x1x1 block=128x1x1
// smem=0"), and the TimedKernel (measure.h) whose launches time it.
// May depend on: runtime (the backend's timed launches), sweep/pipeline (the
// point's kernel), sweep/run/measure.
// Invariants: the TimedKernel refers to this object's arguments: it must not
// outlive it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "schedlab/sweep/run/measure.h"

namespace schedlab::sweep {

class BoundKernel {
 public:
  /// Binds `kernel` (compiled) to `inputs` at `sizes` on `backend`.
  BoundKernel(runtime::Backend& backend, const SegmentKernel& kernel,
              const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes);

  /// The launch configuration as records name it (Record::launch).
  std::string launch() const;
  /// Warm-up and timed launches of this kernel with these arguments, for
  /// time_kernels (measure.h).
  TimedKernel timed() const;

 private:
  runtime::Backend& backend_;
  runtime::CompiledKernel* compiled_;
  std::unique_ptr<runtime::BoundArgs> args_;
};

}  // namespace schedlab::sweep
