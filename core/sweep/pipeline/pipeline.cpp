// The shared steps of a point: see schedlab/sweep/pipeline/pipeline.h.
#include "schedlab/sweep/pipeline/pipeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "schedlab/base/error.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/tuned/tuned.h"

namespace schedlab::sweep {

namespace {
/// What a plugin is asked about: `f` at `sizes`, for `device` (the model
/// device, plugin::model_device(), when empty).
plugin::HostSegment host_segment(ir::Fusion& f, const ir::SizeBindings& sizes,
                                 const std::optional<runtime::DeviceProperties>& device) {
  plugin::HostSegment seg;
  seg.fusion = &f;
  seg.sizes = sizes;
  if (device) seg.device = *device;
  return seg;
}

/// Every plugin on `registry`'s search path (loaded once, however often
/// asked: Registry::add_directory), in priority order; each file that fails
/// to load adds its message to *errors.
std::vector<std::shared_ptr<const plugin::Plugin>> plugins_on_path(
    plugin::Registry& registry, std::vector<std::string>* errors) {
  std::vector<std::string> e = registry.add_search_path();
  if (errors) errors->insert(errors->end(), e.begin(), e.end());
  return registry.by_priority();
}
}  // namespace

BoundFusion bind_fusion(const std::string& name_or_path, const std::vector<std::string>& dirs,
                        const ir::SizeBindings& sizes) {
  BoundFusion bf;
  bf.path = frontend::resolve_fusion(name_or_path, dirs);
  bf.def = frontend::load_fusion_file(bf.path);
  bf.sizes = frontend::bind_sizes(bf.def, sizes);
  ir::verify(*bf.def.fusion);
  return bf;
}

std::unique_ptr<runtime::Backend> make_backend(const std::string& kind,
                                               const std::string& cache_dir) {
  user_assert(kind == "auto" || kind == "cuda" || kind == "cpu")
      << "backend: expected auto, cuda or cpu, found '" << kind << "'";
  if (kind == "cuda" || (kind == "auto" && runtime::cuda_available()))
    return runtime::make_cuda_backend(cache_dir);
  return runtime::make_cpu_backend(plugin::model_device(), cache_dir);
}

bool is_cuda(const runtime::Backend& backend) {
  return backend.name().find("cuda") != std::string::npos;
}

runtime::SanitizedRun sanitize_kernel(runtime::Backend& backend,
                                      const runtime::PreparedKernel& prepared,
                                      const std::vector<ref::HostTensor>& inputs,
                                      const ir::SizeBindings& sizes, const std::string& name,
                                      const std::string& cache_dir) {
  if (backend.name() == "cpu")
    return runtime::execute_sanitized(backend, prepared, inputs, sizes, name);
  // One CPU backend per cache directory for the process: its worker pool
  // and loaded units outlive the call.
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<runtime::Backend>> cpu;
  runtime::Backend* b;
  {
    std::lock_guard lock(mu);
    auto& slot = cpu[cache_dir];
    if (!slot) slot = runtime::make_cpu_backend(plugin::model_device(), cache_dir);
    b = slot.get();
  }
  return runtime::execute_sanitized(*b, prepared, inputs, sizes, name);
}

PluginRun schedule_with_plugin(const plugin::Plugin& p, BoundFusion& bf,
                               const std::optional<runtime::DeviceProperties>& device,
                               const std::vector<std::string>& settings,
                               const plugin::TunedOffer* tuned) {
  return schedule_fusion_with_plugin(p, *bf.def.fusion, bf.sizes, device, settings, tuned);
}

std::vector<std::shared_ptr<const plugin::Plugin>> builtin_candidates(
    plugin::Registry& registry, std::vector<std::string>* reasons) {
  std::vector<std::shared_ptr<const plugin::Plugin>> r;
  for (const auto& p : plugins_on_path(registry, reasons))
    if (p->offered_by_auto()) r.push_back(p);
  return r;
}

std::shared_ptr<const plugin::Plugin> pick_builtin(
    plugin::Registry& registry, BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons) {
  return first_accepting(builtin_candidates(registry, reasons), bf, device, reasons);
}

std::shared_ptr<const plugin::Plugin> first_accepting(
    const std::vector<std::shared_ptr<const plugin::Plugin>>& candidates, BoundFusion& bf,
    const std::optional<runtime::DeviceProperties>& device, std::vector<std::string>* reasons) {
  for (const auto& p : candidates) {
    plugin::HostSegment seg = host_segment(*bf.def.fusion, bf.sizes, device);
    plugin::Verdict v = p->can_schedule(seg, p->defaults());
    if (v.accepted) return p;
    if (reasons) reasons->push_back(p->name() + ": " + v.reason);
  }
  return nullptr;
}

void Validation::add_findings(const std::vector<runtime::SanitizerFinding>& f) {
  findings.insert(findings.end(), f.begin(), f.end());
  if (!findings.empty()) ok = false;
}

std::string Validation::summary() const {
  if (racy())
    return "racy: " + findings.front().message() +
           (findings.size() > 1
                ? fmt::format(" (and {} more finding{})", findings.size() - 1,
                              findings.size() == 2 ? "" : "s")
                : "");
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].cmp.ok)
      return fmt::format("wrong_result: output {} ({}): {} mismatches, max abs error {:.3g}, "
                         "first at {}",
                         i, outputs[i].name, outputs[i].cmp.mismatches,
                         outputs[i].cmp.max_abs_error, outputs[i].cmp.first_mismatch);
  return "ok";
}

Validation validate(const ir::Fusion& plain, const ir::SizeBindings&,
                    const std::vector<ref::HostTensor>& got,
                    const std::vector<ref::HostTensor>& want, std::optional<ref::Tolerance> tol) {
  internal_assert(got.size() == want.size() && want.size() == plain.outputs().size())
      << "validate: " << got.size() << " results for " << plain.outputs().size() << " outputs";
  Validation v;
  for (size_t i = 0; i < want.size(); ++i) {
    const ir::TensorView* out = plain.outputs()[i];
    OutputCheck c;
    c.name = out->describe();
    // A tolerance the user gave is the whole tolerance; the default follows
    // the reference's error bound of every element (docs/validation.md).
    c.tol = tol ? *tol : ref::Tolerance::error_bound(out->dtype());
    c.cmp = ref::compare(got[i], want[i], c.tol);
    v.ok &= c.cmp.ok;
    v.max_abs_error = std::max(v.max_abs_error, c.cmp.max_abs_error);
    if (c.cmp.max_ratio > v.max_ratio) {
      v.max_ratio = c.cmp.max_ratio;
      v.max_ratio_at = fmt::format("output {} ({}) {}", i, c.name, c.cmp.max_ratio_at);
    }
    v.outputs.push_back(std::move(c));
  }
  return v;
}

int64_t io_bytes(const ir::Fusion& f, const ir::SizeBindings& sizes) {
  int64_t bytes = 0;
  auto add = [&](const ir::TensorView* tv) {
    int64_t n = 1;
    for (int64_t e : ref::concrete_shape(tv, sizes)) n *= e;
    bytes += n * ir::dtype_size(tv->dtype());
  };
  for (const ir::TensorView* in : f.inputs()) add(in);
  for (const ir::TensorView* out : f.outputs()) add(out);
  return bytes;
}

std::string sizes_str(const ir::Fusion& f, const ir::SizeBindings& sizes) {
  std::string bound;
  for (const auto& [k, v] : ir::ordered_sizes(sizes, f.size_symbols()))
    bound += fmt::format("{}{}={}", bound.empty() ? "" : ", ", k, v);
  return bound.empty() ? "(none)" : bound;
}

std::string sizes_str(const ir::SizeBindings& sizes) {
  std::string bound;
  for (const auto& [k, v] : sizes) bound += fmt::format("{}{}={}", bound.empty() ? "" : ", ", k, v);
  return bound.empty() ? "(none)" : bound;
}


// ---- Segmented fusions ----------------------------------------------------

PluginRun schedule_fusion_with_plugin(const plugin::Plugin& p, ir::Fusion& f,
                                      const ir::SizeBindings& sizes,
                                      const std::optional<runtime::DeviceProperties>& device,
                                      const std::vector<std::string>& settings,
                                      const plugin::TunedOffer* tuned) {
  plugin::HostSegment seg = host_segment(f, sizes, device);
  PluginRun run;
  run.device_name = seg.device.name;
  // Whatever any of the three calls applies is logged.
  seg.log = &run.transforms;
  // Settings are checked before the plugin is asked anything: a misspelt
  // --set is the user's mistake whatever the plugin would have answered.
  p.with_settings(p.defaults(), settings);
  plugin::Verdict v = p.can_schedule(seg, p.with_settings(p.defaults(), settings));
  if (!v.accepted) {
    run.reason = v.reason;
    return run;
  }
  run.accepted = true;
  seg.tuned = tuned;  // offered to compute_params only
  plugin::ParamValues chosen = p.compute_params(seg);
  seg.tuned = nullptr;
  if (tuned != nullptr) run.tuned_offered = tuned->source;
  if (tuned != nullptr && p.format(chosen) == p.format(tuned->values)) run.tuned = tuned->source;
  run.own = chosen;
  run.params = p.with_settings(std::move(chosen), settings);
  run.params_str = p.format(run.params);
  p.schedule(seg, run.params);
  run.log_line = fmt::format("plugin {} {} (plugin ABI {}) on {}: {}{}", p.name(), p.version(),
                             p.abi_str(), seg.device.name, run.params_str,
                             tuned ? " (" + run.tuned_note() + ")" : "");
  return run;
}

std::string PluginRun::tuned_note() const {
  if (tuned_offered.empty()) return "";
  return tuned.empty() ? "tuned: " + tuned_offered + " offered; the plugin kept its own choice"
                       : "tuned: " + tuned;
}

std::vector<std::shared_ptr<const plugin::Plugin>> segmenter_plugins(
    plugin::Registry& registry, const std::vector<std::string>& only,
    std::vector<std::string>* load_errors) {
  std::vector<std::shared_ptr<const plugin::Plugin>> r;
  if (!only.empty()) {
    for (const std::string& name : only) r.push_back(registry.get(name));
    return r;
  }
  if (load_errors) load_errors->clear();
  // Each plugin's own priority decides (the most specific first; see the
  // header); one that never volunteers (`script`) is never offered a segment.
  for (const auto& p : plugins_on_path(registry, load_errors))
    if (p->volunteers()) r.push_back(p);
  return r;
}

std::vector<segment::Scheduler> plugin_schedulers(
    const std::vector<std::shared_ptr<const plugin::Plugin>>& plugins,
    const std::optional<runtime::DeviceProperties>& device) {
  std::vector<segment::Scheduler> r;
  for (const auto& p : plugins)
    r.push_back({p->name(), [p, device](ir::Fusion& f, const ir::SizeBindings& sizes) {
                   plugin::HostSegment seg = host_segment(f, sizes, device);
                   seg.from_segmenter = true;  // a refusal cuts, not fails
                   try {
                     plugin::Verdict v = p->can_schedule(seg, p->defaults());
                     return segment::Verdict{v.accepted, v.reason};
                   } catch (const UserError& e) {
                     return segment::Verdict{false, "can_schedule failed: " + e.message()};
                   }
                 }});
  return r;
}

SegmentedFusion segment_and_schedule(
    const BoundFusion& bf, const std::vector<std::shared_ptr<const plugin::Plugin>>& plugins,
    const std::optional<runtime::DeviceProperties>& device, const TunedFile* tuned) {
  SegmentedFusion sf;
  sf.segmentation = segment::segment(*bf.def.fusion, bf.sizes, plugin_schedulers(plugins, device));
  segment::require_complete(sf.segmentation);
  for (size_t i = 0; i < sf.segmentation.segments.size(); ++i) {
    segment::SegmentedGroup& seg = sf.segmentation.segments[i];
    auto p = std::find_if(plugins.begin(), plugins.end(),
                          [&](const auto& q) { return q->name() == seg.scheduler; });
    internal_assert(p != plugins.end()) << "segment " << i << ": no plugin " << seg.scheduler;
    std::optional<plugin::TunedOffer> offer;
    if (tuned && sf.segmentation.segments.size() == 1)
      offer = tuned->offer(**p, bf.def.fusion->name(), bf.sizes);
    PluginRun run = schedule_fusion_with_plugin(**p, *seg.fusion.fusion, bf.sizes, device, {},
                                                offer ? &*offer : nullptr);
    user_assert(run.accepted) << "plugin '" << seg.scheduler << "' accepted segment " << i
                              << " of fusion '" << bf.def.fusion->name()
                              << "' and then rejected it: " << run.reason;
    sf.runs.push_back(std::move(run));
  }
  return sf;
}

std::vector<SegmentKernel> compile_segments(runtime::Backend& backend,
                                            const segment::Segmentation& s,
                                            const ir::SizeBindings& sizes,
                                            const runtime::KernelOptions& options) {
  std::vector<SegmentKernel> r;
  for (const segment::SegmentedGroup& seg : s.segments) {
    SegmentKernel k;
    k.prepared = runtime::prepare(*seg.fusion.fusion, sizes, {}, options);
    k.compiled = backend.compile(k.prepared.source);
    k.dims = runtime::launch_dims(k.prepared.kernel, sizes);
    r.push_back(std::move(k));
  }
  return r;
}

std::vector<ref::HostTensor> run_segments(runtime::Backend& backend, const segment::Segmentation& s,
                                          std::vector<SegmentKernel>& kernels,
                                          const std::vector<ref::HostTensor>& inputs,
                                          const ir::SizeBindings& sizes,
                                          std::vector<runtime::SanitizerFinding>* findings,
                                          const std::string& cache_dir) {
  const ir::Fusion& f = *s.fusion;
  internal_assert(inputs.size() == f.inputs().size() && kernels.size() == s.segments.size())
      << "run_segments: " << inputs.size() << " inputs for " << f.inputs().size() << ", "
      << kernels.size() << " kernels for " << s.segments.size() << " segments";
  // Every tensor that exists between kernels: the fusion's inputs, then
  // each segment's outputs as it finishes.
  std::map<const ir::TensorView*, ref::HostTensor> global;
  for (size_t i = 0; i < inputs.size(); ++i) global[f.inputs()[i]] = inputs[i];
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const ir::Extraction& x = s.segments[i].fusion;
    std::vector<ref::HostTensor> args;
    for (const ir::TensorView* t : x.original_inputs()) args.push_back(global.at(t));
    std::vector<ref::HostTensor> outs;
    if (findings != nullptr) {
      runtime::SanitizedRun run =
          sanitize_kernel(backend, kernels[i].prepared, args, sizes,
                          f.name() + " segment " + std::to_string(i), cache_dir);
      findings->insert(findings->end(), run.findings.begin(), run.findings.end());
      outs = std::move(run.outputs);
    } else {
      outs = runtime::execute(backend, *kernels[i].compiled, kernels[i].prepared, args, sizes);
    }
    std::vector<const ir::TensorView*> produced = x.original_outputs();
    for (size_t k = 0; k < produced.size(); ++k) global[produced[k]] = std::move(outs[k]);
  }
  std::vector<ref::HostTensor> r;
  for (const ir::TensorView* t : f.outputs()) r.push_back(global.at(t));
  return r;
}

}  // namespace schedlab::sweep
