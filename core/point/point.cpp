// One point through the pipeline: see schedlab/point/point.h.
#include "schedlab/point/point.h"

#include <fmt/core.h>

#include <filesystem>
#include <future>

#include "schedlab/base/error.h"
#include "schedlab/point/trace.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/executor.h"

namespace schedlab::point {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

/// The lock for `mu`, or none.
std::unique_lock<std::mutex> maybe_lock(std::mutex* mu) {
  return mu ? std::unique_lock<std::mutex>(*mu) : std::unique_lock<std::mutex>();
}

}  // namespace

std::string describe(const SchedulerRef& ref) {
  return std::visit(
      Overloaded{
          [](const PluginRef& p) { return "plugin " + (p.plugin ? p.plugin->name() : "?"); },
          [](const ScriptRef& s) {
            return "script " + std::filesystem::path(s.path).filename().string();
          },
          [](const SegmenterRef&) { return std::string("segmenter"); },
          [](const AutoRef&) { return std::string("auto"); },
          [](const UnscheduledRef&) { return std::string("unscheduled"); },
          [](const ManualRef& m) { return "manual " + m.by; },
      },
      ref);
}

std::shared_ptr<const plugin::Plugin> resolve_auto(
    const AutoRef& ref, sweep::BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons) {
  return sweep::first_accepting(ref.candidates, bf, device, reasons);
}

std::shared_ptr<const Reference> make_reference(frontend::FusionDefinition plain,
                                                const ir::SizeBindings& sizes, uint64_t seed,
                                                bool fast_math,
                                                std::optional<std::vector<ref::HostTensor>> inputs) {
  auto r = std::make_shared<Reference>();
  r->inputs = inputs ? std::move(*inputs)
                     : ref::make_inputs(*plain.fusion, sizes, seed, plain.input_ranges);
  r->want = ref::evaluate(*plain.fusion, r->inputs, sizes, {fast_math});
  r->plain = std::move(plain.fusion);
  return r;
}

std::string_view stage_name(Stage s) {
  switch (s) {
    case Stage::Schedule: return "schedule";
    case Stage::Lower: return "lower";
    case Stage::Compile: return "compile";
    case Stage::Run: return "run";
    case Stage::Sanitize: return "sanitize";
    case Stage::Validate: return "validate";
    case Stage::Profile: return "profile";
  }
  return "?";
}

Point::Point(sweep::BoundFusion bf, SchedulerRef ref, runtime::Backend* backend, Options options)
    : bf_(std::move(bf)), ref_(std::move(ref)), backend_(backend), options_(std::move(options)) {}

const std::shared_ptr<const Reference>& Point::reference() {
  if (!reference_ && reference_source_) reference_ = reference_source_();
  internal_assert(reference_ != nullptr) << "point: no reference for " << bf_.def.fusion->name();
  return reference_;
}

void Point::run() { run(options_.first, options_.last); }

void Point::run(Stage first, Stage last) {
  // Each stage in order; a stage that decides the point (a rejection) or an
  // observer that stops it ends the run.
  static constexpr Stage kOrder[] = {Stage::Schedule, Stage::Lower,    Stage::Compile,
                                     Stage::Run,      Stage::Sanitize, Stage::Validate,
                                     Stage::Profile};
  for (Stage s : kOrder) {
    if (s < first || s > last) continue;
    if ((s == Stage::Sanitize && !sanitizes()) ||
        (s == Stage::Run && sanitizes() && options_.sanitized_run_validates &&
         !sweep::is_cuda(*backend_)))
      continue;  // not sanitized; or the sanitized run is the validating run
    stage_ = s;
    if (!notify(s, true)) return;
    switch (s) {
      case Stage::Schedule: schedule(); break;
      case Stage::Lower: lower(); break;
      case Stage::Compile: compile(last >= Stage::Sanitize && sanitizes()); break;
      case Stage::Run: execute(); break;
      case Stage::Sanitize: sanitize(); break;
      case Stage::Validate: validate(); break;
      case Stage::Profile: profile(); break;
    }
    if (result_.verdict == Verdict::Rejected) {
      notify(s, false);
      return;
    }
    if (!notify(s, false)) return;
  }
  if (result_.verdict == Verdict::Pending && last < Stage::Validate)
    result_.verdict = Verdict::Scheduled;
}

bool Point::notify(Stage s, bool begin, size_t kernel) {
  const Event e{s, begin, kernel};
  trace_event(e, *this);
  return !options_.observer || options_.observer(e, *this) || begin;
}

ir::Fusion& Point::kernel_fusion(size_t i) const {
  if (segmented_) return *segmented_->segmentation.segments.at(i).fusion.fusion;
  return *bf_.def.fusion;
}

std::string Point::kernel_label(size_t i) const {
  const std::string name = bf_.def.fusion->name();
  if (!segmented_ || segmented_->segmentation.segments.size() == 1) return name;
  return fmt::format("{} segment {} ({})", name, i,
                     segmented_->segmentation.segments[i].scheduler);
}

// ---- Stages ---------------------------------------------------------------

void Point::schedule_plugin(const plugin::Plugin& p, const std::vector<std::string>& settings,
                            const plugin::TunedOffer* tuned) {
  sweep::PluginRun run;
  {
    auto lock = maybe_lock(options_.plugin_mu);
    run = sweep::schedule_with_plugin(p, bf_, options_.device, settings, tuned);
  }
  if (!run.accepted) {
    result_.verdict = Verdict::Rejected;
    result_.reject_reason = run.reason;
  } else {
    result_.schedule_log.push_back(run.log_line);
    if (!run.tuned_offered.empty()) result_.tuned_lines.push_back(run.tuned_note());
  }
  result_.runs.push_back(std::move(run));
}

void Point::schedule() {
  std::visit(
      Overloaded{
          [&](const PluginRef& r) {
            schedule_plugin(*r.plugin, r.settings, r.tuned ? &*r.tuned : nullptr);
          },
          [&](const ScriptRef& r) {
            result_.schedule_log =
                r.text ? frontend::apply_schedule_text(*r.text, r.path, bf_.def, r.params)
                       : frontend::apply_schedule_file(r.path, bf_.def, r.params);
          },
          [&](const SegmenterRef& r) {
            {
              auto lock = maybe_lock(options_.plugin_mu);
              segmented_ = sweep::segment_and_schedule(bf_, r.plugins, options_.device, r.tuned);
            }
            result_.runs = segmented_->runs;
            for (const sweep::PluginRun& run : result_.runs)
              if (!run.tuned_offered.empty()) result_.tuned_lines.push_back(run.tuned_note());
          },
          [&](const AutoRef& r) {
            std::vector<std::string> reasons;
            std::shared_ptr<const plugin::Plugin> p;
            {
              auto lock = maybe_lock(options_.plugin_mu);
              p = resolve_auto(r, bf_, options_.device, &reasons);
            }
            if (p) return schedule_plugin(*p, {}, nullptr);
            std::string why;
            for (const std::string& x : reasons) why += (why.empty() ? "" : "; ") + x;
            result_.verdict = Verdict::Rejected;
            result_.reject_reason = "no built-in plugin takes it: " + why;
          },
          [](const UnscheduledRef&) {},
          [](const ManualRef&) {},
      },
      ref_);
}

void Point::lower() {
  result_.kernels.clear();
  const size_t n = segmented_ ? segmented_->segmentation.segments.size() : 1;
  for (size_t i = 0; i < n; ++i) {
    notify(Stage::Lower, true, i);
    sweep::SegmentKernel k;
    k.prepared = runtime::prepare(kernel_fusion(i), bf_.sizes, options_.passes, options_.kernel);
    result_.kernels.push_back(std::move(k));
    notify(Stage::Lower, false, i);
  }
}

void Point::compile(bool traced_too) {
  // The traced builds sanitize() runs (on a CUDA backend, it makes a CPU
  // backend of its own), compiled beside the plain ones: the backend keeps
  // their units loaded, so sanitize() finds them compiled.
  std::vector<std::future<std::shared_ptr<runtime::CompiledKernel>>> traced;
  if (traced_too && !sweep::is_cuda(*backend_))
    for (const sweep::SegmentKernel& k : result_.kernels)
      traced.push_back(std::async(std::launch::async, [this, &k] {
        return backend_->compile(runtime::traced_source(k.prepared));
      }));
  for (sweep::SegmentKernel& k : result_.kernels) k.compiled = backend_->compile(k.prepared.source);
  for (auto& t : traced) t.get();
}

void Point::execute() {
  const std::vector<ref::HostTensor>& inputs = reference()->inputs;
  {
    auto lock = maybe_lock(options_.launch_mu);
    if (segmented_) {
      result_.outputs = sweep::run_segments(*backend_, segmented_->segmentation, result_.kernels,
                                            inputs, bf_.sizes);
    } else {
      const sweep::SegmentKernel& k = result_.kernels.at(0);
      result_.outputs = runtime::execute(*backend_, *k.compiled, k.prepared, inputs, bf_.sizes);
    }
  }
  for (sweep::SegmentKernel& k : result_.kernels)
    k.dims = runtime::launch_dims(k.prepared.kernel, bf_.sizes);
}

bool Point::sanitizes() const {
  if (!options_.sanitize) return false;
  if (!options_.sanitized_run_validates) return true;
  // Beyond the traced budget (work_estimate.h) a sweep validates without it.
  for (const sweep::SegmentKernel& k : result_.kernels)
    if (!runtime::traced_run_fits(k.prepared, bf_.sizes)) return false;
  return true;
}

void Point::sanitize() {
  const std::vector<ref::HostTensor>& inputs = reference()->inputs;
  auto lock = maybe_lock(options_.launch_mu);
  std::vector<ref::HostTensor> outputs;
  if (segmented_) {
    outputs = sweep::run_segments(*backend_, segmented_->segmentation, result_.kernels, inputs,
                                  bf_.sizes, &result_.findings, options_.cache_dir);
  } else {
    runtime::SanitizedRun run = sweep::sanitize_kernel(
        *backend_, result_.kernels.at(0).prepared, inputs, bf_.sizes,
        options_.sanitize_name.value_or(bf_.def.fusion->name()), options_.cache_dir);
    result_.findings = std::move(run.findings);
    outputs = std::move(run.outputs);
  }
  // The traced run's outputs are the validated ones when there was no plain
  // run (a sweep on the CPU backend).
  if (result_.outputs.empty() && !sweep::is_cuda(*backend_)) {
    result_.outputs = std::move(outputs);
    for (sweep::SegmentKernel& k : result_.kernels)
      k.dims = runtime::launch_dims(k.prepared.kernel, bf_.sizes);
  }
}

void Point::validate() {
  const Reference& r = *reference();
  sweep::Validation v =
      sweep::validate(*r.plain, bf_.sizes, result_.outputs, r.want, options_.tolerance);
  v.add_findings(result_.findings);
  result_.verdict = v.racy() ? Verdict::Racy : v.ok ? Verdict::Ok : Verdict::WrongResult;
  result_.validation = std::move(v);
}

void Point::profile() {
  internal_assert(options_.profile_device != nullptr) << "point: profile without a device model";
  runtime::Backend& cpu = options_.profile_backend ? *options_.profile_backend : *backend_;
  auto lock = maybe_lock(options_.launch_mu);
  result_.profiles.clear();
  for (size_t i = 0; i < result_.kernels.size(); ++i) {
    const ir::Fusion& f = kernel_fusion(i);
    result_.profiles.push_back(model::profile_kernel(
        cpu, result_.kernels[i].prepared, f, bf_.sizes, sweep::io_bytes(f, bf_.sizes),
        *options_.profile_device, options_.profile, kernel_label(i)));
  }
}

}  // namespace schedlab::point
