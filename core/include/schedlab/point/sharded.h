// schedlab/point/sharded: one point of a fusion on a device mesh, run as one
// rank (docs/multi-device.md, "Ranks"). Every rank plans the fusion
// (lower::plan_communication), makes the same global inputs (the same seed),
// keeps its chunk of each sharded input, and runs the plan's steps in order:
// a local step is a point::Point over the step's fusion at local sizes
// (scheduled by the caller's SchedulerRef, stages Schedule to Run, Sanitize
// when asked, never validated alone), a communication goes through the
// Communicator. The outputs are gathered to rank 0, which validates them
// against the unsharded reference as a one-device point would be.
//
// Owns: the order of a sharded point's parts (plan, inputs, steps, gather,
// validation, the verdict's broadcast) and how findings and times of the
// ranks meet. The stages of each local step are Point's (no copy of them).
// May depend on: point, lower (the plan), runtime (the communicator), ref.
// Invariants:
//   - Every rank calls the communicator in the same order (SPMD). Planning
//     and scheduling are deterministic, so a user error or a refusal
//     happens on every rank alike; a rank that fails alone (a crash) ends
//     the job through the launcher.
//   - Only rank 0 evaluates the reference; the others make the inputs only.
//   - The verdict is the same on every rank, so every rank exits alike.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/lower/communication.h"
#include "schedlab/point/point.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/sweep/pipeline/mutate.h"

namespace schedlab::point {

/// A deliberate fault for mutation self-tests of the sharded path: after
/// plan step `step` on rank `rank`, `mutation` is applied to the values the
/// step produced (a wrong local kernel, or a wrong collective). Validation
/// on rank 0 must then fail.
struct ShardedFault {
  size_t step = 0;
  int rank = 0;
  sweep::Mutation mutation;
};

struct ShardedOptions {
  /// The options of each local step's Point (device, kernel options,
  /// sanitize, tolerance, cache directory, observer); first and last are
  /// set by run_sharded (Schedule..Run, or ..Sanitize).
  Options point;
  uint64_t seed = 1;
  bool fast_math = false;
  std::optional<ShardedFault> fault;
  /// The steady state, after the validating run (which is never timed into
  /// `times`): `warmup` untimed repetitions, then `repetitions` timed ones.
  /// A repetition runs every local step's kernels (the Run stage of its
  /// compiled Point, on the inputs of the validating run) and every
  /// communication once, in plan order, after a barrier (Communicator::all)
  /// that aligns the ranks. 0 repetitions: `times` is the validating run's.
  int warmup = 0;
  int repetitions = 0;
  /// Rank 0 profiles each local step's kernels on this model after the run
  /// (Options::profile_backend traces them; the point's backend when null):
  /// ShardedResult::prediction. Null: no prediction.
  const model::DeviceModel* profile_device = nullptr;
};

/// One local step of the plan as a Point: the step's fusion copied and
/// bound to the local sizes, scheduled by the caller's reference.
struct StepRun {
  size_t step = 0;  ///< its index in ShardedPlan::steps
  /// The step's Point (its kernels, plugin runs, launch dimensions, the
  /// sanitizer's findings on this rank); its fusion is the step's copy.
  std::unique_ptr<Point> point;
  /// The PlanValue of each input and output of the point's fusion, in order.
  std::vector<int> inputs, outputs;
};

/// The Point of local step `step` of `plan` (not run): `path` names the
/// fusion file in diagnostics. `show --mesh` lowers it; run_sharded runs it.
StepRun make_step_point(const lower::ShardedPlan& plan, size_t step, const SchedulerRef& ref,
                        runtime::Backend* backend, Options options, const std::string& path);

struct ShardedResult {
  /// The fusion the plan refers to (unscheduled) and the plan.
  sweep::BoundFusion fusion;
  lower::ShardedPlan plan;
  int rank = 0, ranks = 1;
  std::vector<StepRun> steps;  ///< every local step, in plan order
  /// Rank 0: the gathered outputs (a replicated one rank 0's copy), the
  /// reference and the validation (with rank 0's own findings): of rank
  /// 0's outputs, or, when they pass, of the first other rank whose copies
  /// of the replicated outputs differ and fail (named "..., rank r's copy").
  /// Other ranks: empty.
  std::vector<ref::HostTensor> outputs;
  std::shared_ptr<const Reference> reference;
  std::optional<sweep::Validation> validation;
  /// The sanitizer's findings of every rank, "rank r: <message>", in rank
  /// order, on every rank.
  std::vector<std::string> findings;
  /// The same on every rank: Ok, WrongResult or Racy (or Rejected when a
  /// step's scheduler declined it, with reject_reason).
  Verdict verdict = Verdict::Pending;
  std::string reject_reason;
  /// This rank's wall time in its local steps' Run stages and its
  /// communications (no scheduling, lowering or compiling).
  double seconds = 0;
  /// Every rank's `seconds`, in rank order, on every rank; the slowest's.
  std::vector<double> rank_seconds;
  double max_seconds = 0;
  int slowest_rank = 0;
  /// Per timed repetition (ShardedOptions::repetitions), on every rank: the
  /// slowest rank's time (s) and the largest communication time of any rank
  /// (s; the collectives' wall time, waiting for the other ranks included).
  /// With repetitions, `rank_seconds` is each rank's median, `max_seconds`
  /// the median of `times` and `slowest_rank` the rank of the largest
  /// median; without, `times` is {max_seconds} of the validating run.
  std::vector<double> times, comm_times;
  /// The parameters each local step's scheduler applied (sharded_config).
  report::ConfigList config;
  /// Bytes one rank's kernels read and write at least: sweep::io_bytes of
  /// every local step's fusion at its local sizes, summed (every rank's are
  /// the same), so GB/s and the fraction of peak are per device.
  int64_t bytes_moved = 0;
  /// Rank 0 with ShardedOptions::profile_device: every local step's kernels
  /// profiled (sharded_prediction). Other ranks: unset.
  std::optional<report::Prediction> prediction;
};

/// The scheduler's parameters of the plan's local steps, as a record's
/// config: with one kernel in the whole plan its parameters as they are
/// ("block=128"); with more, each key prefixed by its plan step, and by the
/// segment within a segmented step: "s0.block=128,s2.block=64",
/// "s0.1.vector=4". A step that an unscheduled kernel runs adds nothing.
report::ConfigList sharded_config(const lower::ShardedPlan& plan,
                                  const std::vector<StepRun>& steps);

/// The prediction of a sharded point: `profiles[i]` are local step i's
/// kernels' profiles (in plan order of the local steps), `comm_us` the
/// communications' (model::communication_us). predicted_us, flops and
/// tensor_us are the sums; the limiter is the biggest term's (a kernel's, or
/// "interconnect" when the communications cost more than any kernel);
/// bandwidth_fraction is `bytes_moved` over the predicted time at the
/// device's peak, compute_fraction the kernels' weighted by their times;
/// the profile is every kernel's.
report::Prediction sharded_prediction(const std::vector<std::vector<model::KernelProfile>>& profiles,
                                      double comm_us, int64_t bytes_moved,
                                      const model::DeviceModel& device);

/// Every rank's `lines` (no line holding a newline), in rank order, on
/// every rank: how the sanitizer's findings of the ranks meet.
std::vector<std::vector<std::string>> all_lines(runtime::Communicator& comm,
                                                const std::vector<std::string>& lines);

/// Runs `bf` (unscheduled) on `mesh` as rank comm.rank() of comm.size()
/// (which must equal mesh.size(): internal error otherwise; the CLI checks
/// the launcher's world size as a user error first), each local step
/// scheduled by `ref`. User errors (a sharding rule, a scheduler's refusal,
/// a schedule error) propagate on every rank.
ShardedResult run_sharded(sweep::BoundFusion bf, const SchedulerRef& ref,
                          const ir::DeviceMesh& mesh, runtime::Backend* backend,
                          runtime::Communicator& comm, const ShardedOptions& options);

}  // namespace schedlab::point
