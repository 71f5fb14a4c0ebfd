// schedlab/sweep/run/timed_group: validated points timed together, the way
// `schedlab run` times the points of a (fusion, sizes) group (docs/sweeps.md,
// "How points are timed"), for every front end that times points: the sweep
// runner's phase 2 (runner_measure.cpp) and the Python module's pytest
// fixture (python/src/bench.cpp).
//
// Owns: the binding of a point's compiled kernel to its inputs for timing,
// the launch label a record names ("grid=4x1x1 block=128x1x1 smem=0"), and
// a group's measurement: points with the same kernel and launch timed once
// and sharing the samples (same_kernel_as), the others in interleaved
// rounds (measure.h's time_kernels), the samples written into the records.
// May depend on: runtime (the backend's timed launches), sweep/pipeline (the
// point's kernel), report (the record), sweep/run/measure.
// Invariants: a BoundKernel refers to its kernel (it must outlive it) and
// owns its arguments; time_group's records get sample k from round k.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "schedlab/sweep/run/measure.h"

namespace schedlab::sweep {

/// A validated point's compiled kernel bound to its inputs for timing.
class BoundKernel {
 public:
  /// Binds `kernel` to `inputs` at `sizes` on `backend` (the arguments are
  /// copied; user_error from the launch checks: vector alignment, shared
  /// memory). `kernel` must outlive this object.
  BoundKernel(runtime::Backend& backend, const SegmentKernel& kernel,
              const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes);

  /// The launch configuration as records name it (Record::launch).
  std::string launch() const;
  /// Warm-up and timed launches of this kernel with these arguments.
  TimedKernel timed() const;

 private:
  runtime::Backend& backend_;
  runtime::CompiledKernel* compiled_;
  std::unique_ptr<runtime::BoundArgs> args_;
};

/// A point of a group: how to bind its kernel, and its record (kernel_hash
/// set), whose launch, times_us, group, seed and same_kernel_as time_group
/// sets.
struct GroupMember {
  std::function<std::unique_ptr<BoundKernel>()> bind;
  report::Record* rec;
};

/// Times `members` together: `warmup` launches each, then `repetitions`
/// interleaved rounds in the order of (seed, group, round) (time_kernels,
/// min_time seconds a sample at least); members with the same kernel hash
/// and launch are timed once and share the samples (only the first one's
/// arguments are kept bound). Each record's group is `group_name`.
void time_group(const std::vector<GroupMember>& members, size_t repetitions, int64_t warmup,
                double min_time, uint64_t seed, uint64_t group, const std::string& group_name);

}  // namespace schedlab::sweep
