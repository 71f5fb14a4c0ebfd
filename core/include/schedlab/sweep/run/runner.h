// schedlab/sweep/runner: runs a sweep (docs/sweeps.md, "Running a sweep"). Every point goes
// through segment (the whole fusion, offered to the point's scheduler),
// schedule, lower, generate, compile, validate and benchmark, and yields one
// report::Record, appended to a JSONL file the moment it is final.
//
// Owns: the rounds of a search, the compile thread pool, the per-point
// status and record, resume and the measurement cache, and the registration
// of validated points with Google Benchmark. The order of a point's stages
// is core/point's (one point::Point per point; docs/point.md).
// May depend on: sweep (spec, strategy, pipeline), point, plugin, runtime,
// ref, report (the record), isolate.
// Invariants:
//   - Only validated points are timed; a point that fails gets its status
//     and error and never a time.
//   - A record is written once, whole, when its point is final (a failure
//     right after the failing step, an ok point after its benchmark), so a
//     sweep killed at any moment resumes (--resume) without losing or
//     duplicating a record: a point whose key is in the file is not re-run.
//   - The resume key (report::record_key) covers the plugin binary, the
//     requested settings, the fusion file's contents, the sizes and the
//     device; the measurement cache reuses the times of an earlier record
//     with the same kernel hash, sizes, device and measurement settings.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schedlab/model/device.h"
#include "schedlab/ref/compare.h"
#include "schedlab/report/record.h"
#include "schedlab/runtime/kernel.h"
#include "schedlab/sweep/run/shard.h"
#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/search/strategy.h"

namespace schedlab::plugin {
class Registry;
class Plugin;
}

namespace schedlab::point {
struct Reference;
}

namespace schedlab::sweep {

/// References (the evaluator's outputs and their error bounds) kept across
/// runs of the same fusions at the same sizes: `watch` re-runs its points
/// after every edit, and the reference does not change with the plugin.
/// Keyed by the fusion file's content hash, the sizes and fast math.
struct ReferenceCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const point::Reference>> entries;
};

/// A point of a mesh dimension on more than one rank (docs/multi-device.md,
/// docs/sweeps.md "Meshes"): the sweep runner is one process, so such a
/// point runs elsewhere (the CLI: `schedlab exec F --mesh N` under
/// the launcher) through RunOptions::run_mesh_point.
struct MeshPointRequest {
  std::string fusion_path;  ///< the fusion file, resolved
  ir::SizeBindings sizes;   ///< the global sizes
  int mesh = 2;             ///< the ranks
  const SchedulerSpec* scheduler = nullptr;
  std::vector<std::string> settings;  ///< SchedulerSpec::settings of the point's config
  bool sanitize = true;                   ///< the sweep's validation: sanitize
  std::optional<double> rtol, atol;       ///< the sweep's user tolerance, if any
  std::string cache_dir;
  /// The device model comm_us is predicted on (RunOptions::profile_device,
  /// else null: the runner of the request picks the default device, and
  /// the point has no prediction).
  const model::DeviceModel* device = nullptr;
  /// The sweep's `measure:`: untimed, then timed repetitions of the plan
  /// after the validating run (point::ShardedOptions).
  int64_t warmup = 1, repetitions = 10;
};

/// What a mesh point gave: its record's status, error, times (per
/// repetition the slowest rank's) and the validation's largest error (rank
/// 0's), the predicted time of its communications, and what its record
/// takes from the point (config, bytes, tolerance, prediction).
struct MeshPointOutcome {
  report::Status status = report::Status::Ok;
  std::string error;
  std::optional<double> seconds;  ///< the median of times_us (s), Ok only
  std::vector<double> times_us;   ///< per timed repetition, the slowest rank's; Ok only
  int slowest_rank = 0;
  std::optional<double> max_abs_error;
  std::optional<double> comm_us;
  /// The median over the repetitions of the largest communication time of
  /// any rank (us), measured; unset when not timed.
  std::optional<double> comm_measured_us;
  std::string plugin;  ///< the plugin that scheduled it, when known
  report::ConfigList config;  ///< point::sharded_config
  int64_t bytes_moved = 0;    ///< one rank's kernels' (point::ShardedResult::bytes_moved)
  std::optional<report::Tolerance> tolerance;
  std::optional<report::Prediction> prediction;  ///< with a device model
};

struct RunOptions {
  std::string output;          ///< the JSONL file records are appended to (required)
  bool resume = false;         ///< skip points whose key is already in `output`
  /// Earlier records whose times may be reused when a point's kernel, sizes,
  /// device and measurement settings are unchanged (e.g. the previous run of
  /// `watch`). Empty: always measure.
  std::vector<report::Record> measured;
  /// Earlier records whose verdict (not their times) stands for the same
  /// kernel at the same sizes on the same device: `watch`'s A/B reruns, whose
  /// old build's kernels the rerun before validated and profiled. Such a
  /// point skips its compile, validation and profile, keeps the record's
  /// error, tolerance and prediction, and is timed afresh. Empty: none.
  std::vector<report::Record> validated;
  int jobs = 0;                ///< compile threads; 0: one per core
  std::vector<std::string> fusion_dirs;  ///< where fusion names resolve
  /// Only the schedulers with these display names (watch re-runs only the
  /// points a changed plugin affects); empty: all.
  std::set<std::string> only_schedulers;
  /// Run plugin calls (and, see isolate_launches, the compile and the
  /// validating launch) in worker processes (isolate module) with this
  /// limit per point; crashes and hangs become records. No plugin code runs
  /// in this process then: the workers send back the schedule as data.
  bool isolate = false;
  /// With isolate: the workers compile and validate too, so a kernel that
  /// crashes costs its point. Never on CUDA, which a forked child of a
  /// process that initialized it cannot use: there the workers schedule
  /// only, and this process compiles, validates and times.
  bool isolate_launches = true;
  double timeout_s = 120;
  /// The kernel cache the backends use (children make their own backend).
  std::string cache_dir;
  /// Arguments for Google Benchmark (--benchmark_*), argv[0] first.
  std::vector<std::string> benchmark_args;
  /// Makes each search's strategy; empty: make_strategy(spec.strategy, ...).
  /// How a model-guided search plugs in (and how tests drive an adaptive one).
  std::function<std::unique_ptr<SearchStrategy>(const SearchProblem&)> strategy;
  /// A/B runs (ab.h): scheduler display name -> a plugin that stands in for
  /// the one the scheduler resolves to (or `auto` picks) when the two have
  /// the same plugin name: the old build of a plugin, loaded beside the new.
  std::map<std::string, std::shared_ptr<const plugin::Plugin>> plugin_swaps;
  /// Profile every validated point on this device model (model/profile.h):
  /// its record then carries the prediction. Unset: no profiles.
  std::optional<model::DeviceModel> profile_device;
  /// --shard: run only this part of the sweep (shard.h); unset: all of it.
  std::optional<ShardPlan> shard;
  /// Called with each record as it becomes final (progress, live output).
  std::function<void(const report::Record&, size_t done, size_t total)> on_record;
  /// A tuned file (`run --tuned`; tuned.h) whose entries are offered to the
  /// plugins of the heuristic rows (schedulers without a space), over the
  /// sweep's own `tuned:`; "" keeps the sweep's.
  std::string tuned;
  /// Where references are kept beyond this run (watch); unset: this run's own.
  std::shared_ptr<ReferenceCache> references;
  /// Runs a point of a mesh dimension on more than one rank (MeshPointRequest).
  /// Unset: such points fail (crashed) saying that only `schedlab run` runs
  /// them. Points of mesh 1 run here as any point (the fusion unsharded).
  std::function<MeshPointOutcome(const MeshPointRequest&)> run_mesh_point;
};

struct RunResult {
  std::vector<report::Record> records;  ///< one per point, in point order
  size_t resumed = 0;                   ///< records taken from the file (--resume)
  size_t cached = 0;                    ///< points whose times were reused
};

/// What `sched` would choose itself (report::Record::own_choice), given the
/// values compute_params chose for one of its points (PluginRun::own, in
/// `plugin`'s schema order): those, formatted, for a plugin; its script's
/// params(...) defaults for a script; empty for a heuristic row.
report::ConfigList own_choice(const SchedulerSpec& sched, const plugin::Plugin& plugin,
                              const plugin::ParamValues& own);

/// The device a backend runs on, as records name it.
report::Device describe_device(runtime::Backend& backend);

/// The criterion a point's outputs passed, as its record stores it.
report::Tolerance record_tolerance(const ref::Tolerance& t);

/// Runs every point of `spec` (or of the selected schedulers) on `backend`
/// with plugins from `registry`.
RunResult run_sweep(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
                    const RunOptions& options);

}  // namespace schedlab::sweep
