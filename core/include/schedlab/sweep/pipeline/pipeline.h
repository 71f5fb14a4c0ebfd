// schedlab/sweep/pipeline: the steps one point goes through (docs/architecture.md,
// "A kernel's journey") as plain functions, shared by the CLI's `show`/`exec` and by
// the sweep runner: bind a fusion to sizes, pick a backend, schedule with a
// plugin, and validate a kernel's outputs against the reference.
//
// Owns: nothing stateful; every function is a step over values the caller holds.
// May depend on: frontend, ref, runtime, segment, plugin.
// Invariants: the reference always evaluates an *unscheduled* copy of the
// fusion (scheduling rewrites the math with caches and rfactor; the oracle
// must not depend on it), and a plugin's settings always override its own
// compute_params choice, never the other way round.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/compare.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/runtime/kernel.h"
#include "schedlab/runtime/sanitizer.h"
#include "schedlab/segment/segment.h"

namespace schedlab::sweep {

struct TunedFile;

/// A fusion file loaded, verified and bound to concrete sizes.
struct BoundFusion {
  std::string path;                ///< the resolved file
  frontend::FusionDefinition def;  ///< scheduled in place by the later steps
  ir::SizeBindings sizes;          ///< every named size, bound
};

/// Resolves `name_or_path` in `dirs` (frontend::resolve_fusion), loads it,
/// verifies it and binds `sizes` over the file's defaults.
BoundFusion bind_fusion(const std::string& name_or_path, const std::vector<std::string>& dirs,
                        const ir::SizeBindings& sizes);

/// The backend for `kind` (auto|cuda|cpu): auto is CUDA when a device
/// answers and the CPU emulation otherwise. `cache_dir` as runtime::cache_dir.
std::unique_ptr<runtime::Backend> make_backend(const std::string& kind,
                                               const std::string& cache_dir = "");
/// True for the CUDA backend (plugins then schedule for the real device).
bool is_cuda(const runtime::Backend& backend);

/// What scheduling with a plugin did.
struct PluginRun {
  bool accepted = false;       ///< false: can_schedule said no (nothing was scheduled)
  std::string reason;          ///< can_schedule's reason when rejected
  plugin::ParamValues params;  ///< the values applied: compute_params, then `settings`
  plugin::ParamValues own;     ///< compute_params' choice alone, before `settings`
  std::string params_str;      ///< plugin.format(params): "block=128, vector=4"
  std::string device_name;     ///< the device the plugin scheduled for
  /// "plugin pointwise 1.0 (plugin ABI 1.0) on schedlab-model-sm90: block=128"
  std::string log_line;
  /// The schedule as data: every primitive schedule() applied, in order
  /// (plugin/transform_log.h), for a host that replays it (`--isolate`).
  plugin::TransformLog transforms;
  /// The tuned configuration's source (TunedOffer::source) when one was
  /// offered and compute_params chose exactly it; "" otherwise.
  std::string tuned;
  /// The offer's source whether or not the plugin served it; "" when none.
  std::string tuned_offered;
  /// "tuned: SOURCE", or "tuned: SOURCE offered; the plugin kept its own
  /// choice"; "" when nothing was offered.
  std::string tuned_note() const;
};

/// Asks `p` whether it takes the whole fusion and, if so, schedules it in
/// place with its own choice of parameters overridden by `settings`
/// ("key=value"). `device`: the device to schedule for; the model device when
/// empty. Errors from the plugin's schedule call propagate (user errors for
/// invalid schedules, with the plugin's message intact).
/// `tuned`: a tuned configuration to offer compute_params (ABI 1.4), or null.
PluginRun schedule_with_plugin(const plugin::Plugin& p, BoundFusion& bf,
                               const std::optional<runtime::DeviceProperties>& device,
                               const std::vector<std::string>& settings,
                               const plugin::TunedOffer* tuned = nullptr);

/// The first of builtin_candidates(registry) that accepts the whole of
/// `bf`, or null; `reasons` gets "name: reason" for each that did not (and
/// each file on the search path that failed to load).
std::shared_ptr<const plugin::Plugin> pick_builtin(
    plugin::Registry& registry, BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons);
/// The plugins a sweep's `auto` scheduler offers the whole fusion to: every
/// plugin on `registry`'s search path that Plugin::offered_by_auto() (a
/// positive priority), in priority order (Registry::by_priority), so the
/// most specific comes first and no plugin is named here. The built-ins
/// declare normalization 40, reduction 30, transpose 20, pointwise 10: a
/// persistent normalization is not scheduled as a plain reduction, nor a
/// transpose as a plain pointwise fusion; autosched (0) and script (never
/// offered) are not candidates. `reasons` gets the message of each file on
/// the path that failed to load (loading isolated: why it failed in its
/// child). The path is loaded once per registry, so calling this for every
/// point costs a directory listing.
std::vector<std::shared_ptr<const plugin::Plugin>> builtin_candidates(
    plugin::Registry& registry, std::vector<std::string>* reasons);
/// The first of `candidates` whose can_schedule (at its defaults) accepts the
/// whole of `bf`, or null; `reasons` gets "name: reason" for each that did
/// not. pick_builtin over the installed built-ins; an isolated worker's pick.
std::shared_ptr<const plugin::Plugin> first_accepting(
    const std::vector<std::shared_ptr<const plugin::Plugin>>& candidates, BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons);

/// One output's check.
struct OutputCheck {
  std::string name;       ///< the output, as the fusion describes it
  ref::Tolerance tol;     ///< the tolerance applied
  ref::Comparison cmp;    ///< the verdict and the error
};
/// All outputs' checks.
struct Validation {
  bool ok = true;
  double max_abs_error = 0.0;  ///< over every output
  /// The largest |got - want| / allowed over every output (ref::Comparison::
  /// max_ratio: 1 at the limit), and where: "output 0 (T5 (y)) element ...".
  double max_ratio = 0.0;
  std::string max_ratio_at;
  std::vector<OutputCheck> outputs;
  /// What the sanitizer found when the kernels ran under it (empty: clean,
  /// or not sanitized). Any finding makes the validation fail as `racy`.
  std::vector<runtime::SanitizerFinding> findings;
  /// True when the sanitizer found something (the point's status is racy).
  bool racy() const { return !findings.empty(); }
  /// Adds findings; any makes the validation fail.
  void add_findings(const std::vector<runtime::SanitizerFinding>& f);
  /// "racy: <first finding> (and N more findings)", "wrong_result: output 0
  /// (T5 (out)): 3 mismatches, max abs error 0.5, first at element 2 [0, 2]:
  /// got 0, expected 0.5, allowed 1.2e-07 (2 x error bound 6e-08 + floor
  /// 1.18e-38)" or "ok".
  std::string summary() const;
};

/// Compares `got` with `want` (the reference of the unscheduled `plain`
/// fusion, with its error bounds) output by output. The tolerance is `tol`
/// when given (a user's: ref::Tolerance::user), otherwise the default
/// criterion ref::Tolerance::error_bound for each output's dtype
/// (docs/validation.md). `sizes` is unused by the default criterion.
Validation validate(const ir::Fusion& plain, const ir::SizeBindings& sizes,
                    const std::vector<ref::HostTensor>& got,
                    const std::vector<ref::HostTensor>& want,
                    std::optional<ref::Tolerance> tol = {});

/// Runs `prepared` once under the emulation sanitizer
/// (runtime::execute_sanitized): on `backend` when it is the CPU backend,
/// otherwise on this process's CPU backend for `cache_dir` (the sanitizer
/// emulates every thread; a GPU run cannot be traced). `name` names the
/// kernel in reports.
runtime::SanitizedRun sanitize_kernel(runtime::Backend& backend,
                                      const runtime::PreparedKernel& prepared,
                                      const std::vector<ref::HostTensor>& inputs,
                                      const ir::SizeBindings& sizes, const std::string& name,
                                      const std::string& cache_dir = "");

/// Bytes a kernel of f must move at least: every input read once and every
/// output written once, under `sizes` (the numerator of GB/s).
int64_t io_bytes(const ir::Fusion& f, const ir::SizeBindings& sizes);

/// "N=4, K=8" in f's declaration order, or "(none)".
std::string sizes_str(const ir::Fusion& f, const ir::SizeBindings& sizes);
/// "K=8, N=4" by name, or "(none)" (when no fusion is at hand).
std::string sizes_str(const ir::SizeBindings& sizes);


// ---- Segmented fusions (docs/segments.md): the segmenter picks -----------
// When no plugin is named, the loaded plugins are the segmenter's schedulers:
// each segment is scheduled by the plugin that accepted it, with that
// plugin's own parameters, and runs as its own kernel, in segment order.
// Tensors that cross segments go through host memory: this first version
// hands them from one runtime::execute to the next as ref::HostTensor. On
// the CPU backend that is the global memory anyway; on CUDA it costs a round
// trip through the host per crossing tensor (timings of segmented fusions
// would include it; keeping them on the device is the next step).

/// The plugins the segmenter offers segments to, in priority order. With
/// `only` empty: every plugin on the registry's search path that volunteers,
/// by the priority each declares (plugin::Registry::by_priority; the most
/// specific first: a persistent normalization kernel beats a reduction plus
/// a pointwise one), equal priorities by name; never one with a negative
/// priority (`script`, which needs a schedule text). Files that
/// fail to load are skipped, with their messages in *load_errors. With
/// `only`: exactly those plugins, in that order (user_error for an unknown one).
std::vector<std::shared_ptr<const plugin::Plugin>> segmenter_plugins(
    plugin::Registry& registry, const std::vector<std::string>& only = {},
    std::vector<std::string>* load_errors = nullptr);

/// The segmenter's view of each plugin: can_schedule with the plugin's
/// default parameters, for `device` (the model device when empty). A user
/// error raised inside can_schedule counts as that plugin's rejection, with
/// the error's message as the reason: a broken plugin must not stop the
/// others from taking the segment.
std::vector<segment::Scheduler> plugin_schedulers(
    const std::vector<std::shared_ptr<const plugin::Plugin>>& plugins,
    const std::optional<runtime::DeviceProperties>& device);

/// schedule_with_plugin for any fusion (a segment's): asks `p`, and if it
/// accepts, schedules `f` in place.
PluginRun schedule_fusion_with_plugin(const plugin::Plugin& p, ir::Fusion& f,
                                      const ir::SizeBindings& sizes,
                                      const std::optional<runtime::DeviceProperties>& device,
                                      const std::vector<std::string>& settings,
                                      const plugin::TunedOffer* tuned = nullptr);

/// A fusion cut into segments, each scheduled by the plugin that accepted it.
struct SegmentedFusion {
  segment::Segmentation segmentation;  ///< each segment's fusion is scheduled in place
  std::vector<PluginRun> runs;         ///< per segment: how its plugin scheduled it
};

/// Segments `bf`'s fusion for `plugins` (plugin_schedulers) and schedules
/// every segment with its plugin's own parameters. `bf` is not modified, so
/// it stays the unscheduled reference. user_error (segment::require_complete)
/// when some part is left that no plugin accepts. `tuned`: a tuned file
/// whose entry for the fusion is offered to the plugin when one segment is
/// the whole fusion (entries are per fusion; a part of one is not served).
SegmentedFusion segment_and_schedule(const BoundFusion& bf,
                                     const std::vector<std::shared_ptr<const plugin::Plugin>>& plugins,
                                     const std::optional<runtime::DeviceProperties>& device,
                                     const TunedFile* tuned = nullptr);

/// One segment's kernel, lowered and compiled.
struct SegmentKernel {
  runtime::PreparedKernel prepared;
  std::shared_ptr<runtime::CompiledKernel> compiled;
  runtime::LaunchDims dims;  ///< at the sizes it was compiled for
};

/// Lowers and compiles each segment's (scheduled or not) fusion.
std::vector<SegmentKernel> compile_segments(runtime::Backend& backend,
                                            const segment::Segmentation& s,
                                            const ir::SizeBindings& sizes,
                                            const runtime::KernelOptions& options = {});

/// Runs the segments' kernels in order. `inputs`: one per input of the
/// original fusion (s.fusion); returns its outputs, in order. With
/// `findings`, each kernel runs under the sanitizer instead (sanitize_kernel,
/// `cache_dir` as there; its outputs feed the next segment) and what it
/// finds is appended, the kernel named "<fusion> segment <i>".
std::vector<ref::HostTensor> run_segments(runtime::Backend& backend, const segment::Segmentation& s,
                                          std::vector<SegmentKernel>& kernels,
                                          const std::vector<ref::HostTensor>& inputs,
                                          const ir::SizeBindings& sizes,
                                          std::vector<runtime::SanitizerFinding>* findings = nullptr,
                                          const std::string& cache_dir = "");

}  // namespace schedlab::sweep
