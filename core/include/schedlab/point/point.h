// schedlab/point: one point run through the pipeline (docs/architecture.md,
// "A kernel's journey"; docs/point.md): a bound fusion and a typed scheduler reference go through
// schedule, lower, compile, run, sanitize, validate and profile, each stage
// observable, the outcome a typed result. `schedlab exec` and `show`, the
// sweep runner (one Point per point of a sweep) and the fuzzer all drive
// this class; nothing else orchestrates a point.
//
// Owns: the order of a point's stages and their single-kernel/segmented
// branches; which outputs are validated (the plain run's, or the sanitized
// run's); the stage observer and its trace ($SCHEDLAB_POINT_TRACE).
// May depend on: sweep/pipeline (the steps as functions), frontend (schedule
// scripts), plugin, segment, runtime, ref, model (profiles), lower (the pass
// observer's type).
// Invariants:
//   - Stages run in the order of `Stage`, each at most once per run(); a
//     stage that throws leaves stage() naming it, so a caller classifies
//     the failure by where it happened (the sweep's status, the fuzzer's
//     "lower: ..." prefix) without the point knowing any caller's policy.
//   - The reference is computed from an unscheduled copy of the fusion
//     (sweep/pipeline/pipeline.h), never from the fusion the point schedules.
//   - Plugin calls take Options::plugin_mu and launches Options::launch_mu
//     when given (the sweep's threads); a forked child gives neither.
//   - No string names a scheduler kind: the reference is a std::variant;
//     the YAML and CLI spellings (`plugin: auto`, `script:`, --plugin,
//     --schedule, --unscheduled) are parsed into it by their callers.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/lower.h"
#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::point {

// ---- The scheduler reference ------------------------------------------------

/// A plugin with its settings (`--set` style "key=value", over its own
/// compute_params choice) and a tuned configuration to offer it, if any.
/// A sweep's script schedulers are this too: the `script` plugin with
/// "script=FILE" and "args=k=v,..." (its records name it; --isolate replays
/// its transform log).
struct PluginRef {
  std::shared_ptr<const plugin::Plugin> plugin;
  std::vector<std::string> settings;
  std::optional<plugin::TunedOffer> tuned;
};
/// A schedule script applied by the frontend (`exec --schedule`, the
/// fuzzer): from `path`, or from `text` (then `path` only names it in
/// diagnostics), with `params` for its {placeholders}.
struct ScriptRef {
  std::string path;
  std::optional<std::string> text;
  frontend::ScheduleParams params;
};
/// The segmenter (docs/segments.md): `plugins` in priority order, each
/// segment scheduled by the first that accepts it with its own parameters.
/// `tuned` is offered when one segment is the whole fusion.
struct SegmenterRef {
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins;
  const sweep::TunedFile* tuned = nullptr;
};
/// The first of `candidates` (the built-ins, sweep::builtin_candidates)
/// that accepts the whole fusion, with its own parameters.
struct AutoRef {
  std::vector<std::shared_ptr<const plugin::Plugin>> candidates;
};
/// No schedule: one serial kernel (`exec --unscheduled`).
struct UnscheduledRef {};
/// A schedule the caller applied to the fusion in place before the point
/// (the Python module's hand schedules, `by` "python"): its point starts at
/// Lower; Schedule does nothing.
struct ManualRef {
  std::string by;
};

using SchedulerRef =
    std::variant<PluginRef, ScriptRef, SegmenterRef, AutoRef, UnscheduledRef, ManualRef>;

/// "plugin normalization", "script softmax.sched", "segmenter", "auto",
/// "unscheduled", "manual python": the trace's and diagnostics' name of a
/// reference.
std::string describe(const SchedulerRef& ref);

/// AutoRef's choice: the first candidate that accepts `bf` (sweep::
/// first_accepting), or null with "name: reason" for each in `reasons`.
std::shared_ptr<const plugin::Plugin> resolve_auto(
    const AutoRef& ref, sweep::BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons);

// ---- The reference --------------------------------------------------------

/// The oracle of one (fusion, sizes): the unscheduled fusion, its inputs and
/// the reference outputs (with their error bounds).
struct Reference {
  std::unique_ptr<ir::Fusion> plain;
  std::vector<ref::HostTensor> inputs, want;
};
/// Evaluates `plain` (an unscheduled copy of the point's fusion) on
/// `inputs`, or on generated inputs (ref::make_inputs with `seed` and the
/// file's input ranges) when none are given.
std::shared_ptr<const Reference> make_reference(frontend::FusionDefinition plain,
                                                const ir::SizeBindings& sizes, uint64_t seed,
                                                bool fast_math,
                                                std::optional<std::vector<ref::HostTensor>> inputs = {});

// ---- Stages and their observer --------------------------------------------

enum class Stage { Schedule, Lower, Compile, Run, Sanitize, Validate, Profile };
std::string_view stage_name(Stage s);

class Point;
/// One stage's begin or end, for the whole point (kernel == kWhole) or one
/// of its kernels (a segment's lowering).
struct Event {
  static constexpr size_t kWhole = static_cast<size_t>(-1);
  Stage stage;
  bool begin;
  size_t kernel = kWhole;
};
/// Called at every event; returning false at a stage's end stops the point
/// there (the sweep stops a point whose kernel's earlier verdict stands).
using Observer = std::function<bool(const Event&, const Point&)>;

struct Options {
  /// The device plugins schedule for; the model device when unset.
  std::optional<runtime::DeviceProperties> device;
  runtime::KernelOptions kernel;
  /// Called after every lowering pass (`show --print-after`).
  lower::PassObserver passes;
  /// The first and last stages to run. From Lower: the fusion arrives
  /// scheduled (a schedule replayed from an isolated worker).
  Stage first = Stage::Schedule, last = Stage::Validate;
  /// Run the kernels once more under the emulation sanitizer.
  bool sanitize = false;
  /// A sweep's sanitizing: on the CPU backend the sanitized run is the
  /// validating run (no plain run), and a kernel beyond the traced budget
  /// (runtime::traced_run_fits) is validated without the sanitizer.
  bool sanitized_run_validates = false;
  /// The name the sanitizer gives a single kernel; unset: the fusion's.
  std::optional<std::string> sanitize_name;
  /// A user's tolerance; unset: each output's default (docs/validation.md).
  std::optional<ref::Tolerance> tolerance;
  std::string cache_dir;
  /// Profile stage: the device model and the CPU backend that traces the
  /// kernels (the point's own backend when null).
  const model::DeviceModel* profile_device = nullptr;
  model::ProfileOptions profile;
  runtime::Backend* profile_backend = nullptr;
  std::mutex* plugin_mu = nullptr;
  std::mutex* launch_mu = nullptr;
  Observer observer;
};

/// What the point came to (the record's figures are read off it).
enum class Verdict {
  Pending,    ///< not run to its last stage, or stopped by the observer
  Rejected,   ///< the scheduler declined the fusion (reject_reason)
  Scheduled,  ///< ran to its last stage, before validation
  Ok,         ///< validated
  WrongResult,
  Racy,
};

struct Result {
  Verdict verdict = Verdict::Pending;
  std::string reject_reason;
  /// The plugin runs: one for a plugin or auto, one per segment.
  std::vector<sweep::PluginRun> runs;
  std::vector<std::string> schedule_log;  ///< a script's log, or each plugin run's log line
  std::vector<std::string> tuned_lines;   ///< PluginRun::tuned_note of each run with an offer
  /// From the Lower stage on: one kernel, or one per segment (their launch
  /// dimensions are set by the Run stage).
  std::vector<sweep::SegmentKernel> kernels;
  std::vector<ref::HostTensor> outputs;   ///< from the Run (or Sanitize) stage
  std::vector<runtime::SanitizerFinding> findings;
  std::optional<sweep::Validation> validation;
  std::vector<model::KernelProfile> profiles;
};

/// One point. Construct it, set its reference (or a source for it), run().
class Point {
 public:
  Point() = default;
  Point(sweep::BoundFusion bf, SchedulerRef ref, runtime::Backend* backend, Options options);

  /// Runs the stages from options().first to options().last (or the range
  /// given); user errors propagate with stage() naming where.
  void run();
  void run(Stage first, Stage last);

  /// The reference, needed from the Validate stage on (the Run stage's
  /// inputs come from it): set it, or a source computing it on demand.
  void set_reference(std::shared_ptr<const Reference> r) { reference_ = std::move(r); }
  void set_reference_source(std::function<std::shared_ptr<const Reference>()> f) {
    reference_source_ = std::move(f);
  }
  const std::shared_ptr<const Reference>& reference();

  Stage stage() const { return stage_; }  ///< the stage running, or the last one run
  const sweep::BoundFusion& fusion() const { return bf_; }
  sweep::BoundFusion& fusion() { return bf_; }
  const SchedulerRef& scheduler() const { return ref_; }
  const Options& options() const { return options_; }
  Options& options() { return options_; }
  const Result& result() const { return result_; }
  Result& result() { return result_; }
  /// The segmentation when the segmenter scheduled the point.
  const std::optional<sweep::SegmentedFusion>& segmented() const { return segmented_; }
  /// Single-kernel points: the kernel (after Lower).
  const sweep::SegmentKernel& kernel() const { return result_.kernels.at(0); }
  /// What kernel i is lowered from: the fusion, or segment i's.
  ir::Fusion& kernel_fusion(size_t i) const;
  /// Kernel i's name in profiles: the fusion's, or "f segment 1 (reduction)"
  /// when there are several segments.
  std::string kernel_label(size_t i) const;
  runtime::Backend& backend() const { return *backend_; }

 private:
  bool notify(Stage s, bool begin, size_t kernel = Event::kWhole);
  void schedule();
  void schedule_plugin(const plugin::Plugin& p, const std::vector<std::string>& settings,
                       const plugin::TunedOffer* tuned);
  void lower();
  /// With `traced_too`, the sanitizer's traced builds as well, at the same
  /// time (on the CPU backend both are host compiles).
  void compile(bool traced_too);
  void execute();
  void sanitize();
  void validate();
  void profile();
  bool sanitizes() const;

  sweep::BoundFusion bf_;
  SchedulerRef ref_ = UnscheduledRef{};
  runtime::Backend* backend_ = nullptr;
  Options options_;
  Stage stage_ = Stage::Schedule;
  std::shared_ptr<const Reference> reference_;
  std::function<std::shared_ptr<const Reference>()> reference_source_;
  std::optional<sweep::SegmentedFusion> segmented_;
  Result result_;
};

}  // namespace schedlab::point
