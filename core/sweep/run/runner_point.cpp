// A sweep point's identity and its run through core/point (the sweep runner,
// schedlab/sweep/run/runner.h; the class is in sweep_run.h).
#include <fmt/core.h>

#include <filesystem>

#include "schedlab/base/error.h"
#include "schedlab/model/profile.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "sweep_run.h"

namespace schedlab::sweep::detail {

namespace {

/// Whether `old` (an earlier run's record) is of `now`'s kernel
/// (report::same_kernel), generated for the same fusion, sizes and device.
bool same_point_kernel(const report::Record& old, const report::Record& now) {
  return report::same_kernel(old, now) && old.fusion == now.fusion &&
         old.size_key() == now.size_key() && old.device.fingerprint == now.device.fingerprint;
}

/// Whether `old` stands for `now`, whose kernel is generated: the same
/// kernel, and an ok record timed with the repetitions asked now, or a
/// wrong result.
bool reusable(const report::Record& old, const report::Record& now, int64_t repetitions) {
  if (!same_point_kernel(old, now)) return false;
  return (old.status == report::Status::Ok &&
          static_cast<int64_t>(old.times_us.size()) == repetitions) ||
         old.status == report::Status::WrongResult || old.status == report::Status::Racy;
}

/// Whether `old`'s verdict stands for `now` (RunOptions::validated): an ok,
/// validated and (when profiles are asked for) profiled record of the same
/// kernel. The inputs are generated deterministically and the emulation is
/// exact, so validating again would give the same verdict; timing is
/// another matter, and is done again.
bool still_valid(const report::Record& old, const report::Record& now,
                 const std::optional<model::DeviceModel>& profile_device) {
  return same_point_kernel(old, now) && old.status == report::Status::Ok &&
         old.max_abs_error.has_value() &&
         (!profile_device || (old.prediction && old.prediction->device == profile_device->name));
}

}  // namespace

std::shared_ptr<const point::Reference> SweepRun::reference_of(const Point& p) {
  std::lock_guard lock(ref_mu_);
  const bool fast_math = spec_.schedulers[p.scheduler].fast_math;
  std::shared_ptr<const point::Reference>& slot = references_[{p.fusion, p.sizes, fast_math}];
  if (!slot && options_.references) {
    // Kept from an earlier run of the same fusion file at the same sizes.
    std::string key = fusion_hashes_[p.fusion];
    for (const auto& [name, value] : spec_.fusions[p.fusion].sizes[p.sizes])
      key += fmt::format(",{}={}", name, value);
    key += fast_math ? ",fast_math" : "";
    std::lock_guard kept_lock(options_.references->mu);
    slot = compute_reference(options_.references->entries[key], p, fast_math);
  }
  return compute_reference(slot, p, fast_math);
}

std::shared_ptr<const point::Reference> SweepRun::compute_reference(
    std::shared_ptr<const point::Reference>& slot, const Point& p, bool fast_math) const {
  if (!slot) {
    const FusionSpec& f = spec_.fusions[p.fusion];
    slot = point::make_reference(frontend::load_fusion_file(f.path), f.sizes[p.sizes], 1,
                                 fast_math);
  }
  return slot;
}

bool SweepRun::identify(size_t i, isolate::Worker* worker) {
  const Point& p = points_[i];
  PointState& s = states_[i];
  const FusionSpec& f = spec_.fusions[p.fusion];
  const SchedulerSpec& sched = spec_.schedulers[p.scheduler];
  const std::vector<std::string> settings = sched.settings(p.config);
  report::Record& r = s.rec;
  r.sweep = spec_.name;
  r.sweep_hash = sweep_hash_;
  r.host = host_;
  r.fusion = f.name;
  r.sizes = ir::ordered_sizes(f.sizes[p.sizes], f.size_names);
  r.mesh = f.mesh_of(p.sizes);
  if (r.mesh == 1) r.comm_us = 0;  // one rank: nothing to communicate
  r.scheduler = sched.name;
  r.device = device_;
  r.baseline = spec_.baseline;
  r.min_effect = spec_.measure.min_effect;
  // Who asks, in every key: two schedulers of one sweep may run the same
  // binary with the same settings (twins, fast math on and off, `auto` and
  // the plugin it picks), and --resume must not take one's record for the
  // other's.
  const std::string asker =
      "scheduler=" + sched.name + ";" + (sched.fast_math ? "fast_math;" : "") +
      (sched.native_half_math ? "math=native;" : "");
  if (!sched.load_failure.empty()) {
    r.plugin = sched.plugin;
    r.key = report::record_key(plugin_hashes_[p.scheduler], report::hash_hex(asker),
                               f.name + "@" + fusion_hashes_[p.fusion], r.key_sizes(),
                               device_.fingerprint);
    fail(s, report::parse_status(sched.load_failure_status).value_or(report::Status::Crashed),
         sched.load_failure);
    return false;
  }
  s.plugin = plugins_[p.scheduler];
  if (sched.kind == SchedulerKind::Auto) {
    // `auto`: the first built-in that takes the fusion, as `exec` without
    // --plugin would pick.
    try {
      std::vector<std::string> reasons;
      if (worker) {
        s.plugin = pick_isolated(i, *worker, reasons);  // the worker binds the fusion itself
      } else {
        BoundFusion bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[p.sizes]);
        std::lock_guard lock(plugin_mu_);
        s.plugin = point::resolve_auto({builtin_candidates(registry_, &reasons)}, bf, target_,
                                       &reasons);
      }
      if (!s.plugin) {
        r.plugin = kAutoSpelling;
        r.key = report::record_key(kAutoSpelling, report::hash_hex(asker),
                                   f.name + "@" + fusion_hashes_[p.fusion], r.key_sizes(),
                                   device_.fingerprint);
        std::string why;
        for (const std::string& x : reasons) why += (why.empty() ? "" : "; ") + x;
        fail(s, report::Status::Rejected, "no built-in plugin takes it: " + why);
        return false;
      }
    } catch (const plugin::PluginFault& e) {
      r.plugin = kAutoSpelling;
      fail(s, report::Status::PluginError, e.what());
      return false;
    } catch (const UserError& e) {
      r.plugin = kAutoSpelling;
      fail(s, report::Status::ScheduleError, e.what());
      return false;
    }
  }
  bool swapped = false;
  if (auto it = options_.plugin_swaps.find(sched.name);
      it != options_.plugin_swaps.end() && it->second->name() == s.plugin->name()) {
    s.plugin = it->second;
    swapped = true;
  }
  const plugin::Plugin& plugin = *s.plugin;
  r.plugin = plugin.name();
  r.plugin_version = plugin.version();
  r.plugin_hash = swapped ? "" : plugin_hashes_[p.scheduler];
  if (r.plugin_hash.empty()) {
    std::lock_guard lock(hash_mu_);
    auto& h = auto_hashes_[plugin.path()];
    if (h.empty()) h = file_hash(plugin.path());
    r.plugin_hash = h;
  }
  std::string requested = asker;
  for (const std::string& kv : settings) requested += kv + ";";
  // A strategy that times a batch more briefly (halving's early rungs) asks
  // for another measurement of the same configuration: --resume must find
  // each rung's record, not the first one for every rung.
  if (const int64_t reps =
          searches_[point_search_[i]].strategy->repetitions(spec_.measure.repetitions);
      reps != spec_.measure.repetitions)
    requested += "repetitions=" + std::to_string(reps) + ";";
  // A tuned configuration on offer changes what was asked for.
  std::string offer_error;
  try {
    if (auto offer = tuned_offer(i, plugin)) requested += "tuned=" + plugin.format(offer->values);
  } catch (const UserError& e) {
    offer_error = e.what();
  }
  r.key = report::record_key(r.plugin_hash, report::hash_hex(requested),
                             f.name + "@" + fusion_hashes_[p.fusion], r.key_sizes(),
                             device_.fingerprint);
  // What was asked for; replaced by every parameter's value once scheduled.
  // A script shows its file name and placeholder values, not its full path.
  if (sched.kind == SchedulerKind::Script) {
    r.config.emplace_back("script", std::filesystem::path(sched.script).filename().string());
    for (const auto& [k, v] : p.config.values) r.config.emplace_back(k, v.str());
  } else {
    for (const std::string& kv : settings) {
      auto eq = kv.find('=');
      r.config.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    }
  }
  r.config_hash = report::config_hash(r.config);
  if (!offer_error.empty()) {
    fail(s, report::Status::ScheduleError, offer_error);
    return false;
  }
  if (auto it = done_.find(r.key); it != done_.end()) {
    r = it->second;
    s.final = true;
    return false;
  }
  return true;
}

std::optional<plugin::TunedOffer> SweepRun::tuned_offer(size_t i,
                                                       const plugin::Plugin& plugin) const {
  const Point& p = points_[i];
  const SchedulerSpec& sched = spec_.schedulers[p.scheduler];
  if (!tuned_ || !sched.uses_heuristic() || sched.kind == SchedulerKind::Script)
    return std::nullopt;
  const FusionSpec& f = spec_.fusions[p.fusion];
  return tuned_->offer(plugin, f.name, f.sizes[p.sizes]);
}

point::Options SweepRun::point_options(size_t i, bool in_child, bool may_reuse) {
  const SchedulerSpec& sched = spec_.schedulers[points_[i].scheduler];
  point::Options o;
  o.device = target_;
  o.kernel = runtime::KernelOptions{spec_.dynamic_sizes, sched.fast_math, true,
                                    sched.native_half_math};
  // Under the sanitizer by default: on the CPU backend its traced run is
  // the validating run; on CUDA it runs beside the GPU's. Beyond the traced
  // budget (work_estimate.h) the point is validated without it, as with
  // `validation: {sanitize: false}`.
  o.sanitize = spec_.validation.sanitize;
  o.sanitized_run_validates = true;
  if (spec_.validation.rtol || spec_.validation.atol)
    o.tolerance = ref::Tolerance::user(spec_.validation.rtol.value_or(0),
                                       spec_.validation.atol.value_or(0));
  o.cache_dir = options_.cache_dir;
  // A child process (--isolate) takes no locks: it is alone in its address
  // space, and a lock another thread held at the fork would never be
  // released there.
  o.plugin_mu = in_child ? nullptr : &plugin_mu_;
  o.launch_mu = in_child ? nullptr : &launch_mu_;
  // The record follows the stages.
  o.observer = [this, i, may_reuse](const point::Event& e, const point::Point& pt) {
    if (e.begin || e.kernel != point::Event::kWhole) return true;
    PointState& s = states_[i];
    report::Record& r = s.rec;
    if (e.stage == point::Stage::Schedule && !pt.result().runs.empty()) {
      const PluginRun& run = pt.result().runs.back();
      r.tuned = run.tuned;
      s.transforms = run.transforms;
      if (!run.accepted) return true;
      const SchedulerSpec& sched = spec_.schedulers[points_[i].scheduler];
      const plugin::Plugin& plugin = *s.plugin;
      if (sched.kind != SchedulerKind::Script) {
        r.config.clear();
        for (size_t k = 0; k < plugin.schema().size(); ++k)
          r.config.emplace_back(plugin.schema()[k].name, plugin.format_value(k, run.params[k]));
        r.config_hash = report::config_hash(r.config);
      }
      r.own_choice = own_choice(sched, plugin, run.own);  // a search's warm start
    }
    if (e.stage == point::Stage::Lower) {
      r.kernel_hash = pt.kernel().prepared.source.hash();
      // An unchanged kernel at the same sizes on the same device: its
      // earlier verdict and times stand (the inputs are generated
      // deterministically).
      for (const report::Record& old : options_.measured)
        if (may_reuse && reusable(old, r, spec_.measure.repetitions)) {
          r.status = old.status;
          r.error = old.error;
          r.times_us = old.times_us;
          r.max_abs_error = old.max_abs_error;
          r.tolerance = old.tolerance;
          r.launch = old.launch;
          r.group = old.group;
          r.seed = old.seed;
          r.same_kernel_as = old.same_kernel_as;
          r.reused = r.status == report::Status::Ok;
          s.final = s.cached = true;
          return false;
        }
      for (const report::Record& old : options_.validated)
        if (may_reuse && still_valid(old, r, options_.profile_device)) {
          r.max_abs_error = old.max_abs_error;
          r.tolerance = old.tolerance;
          r.launch = old.launch;
          r.prediction = old.prediction;
          s.validated_before = true;
          return false;  // to be timed: phase 2 compiles it (cached) in this process
        }
    }
    if (e.stage == point::Stage::Validate) {
      const Validation& v = *pt.result().validation;
      r.max_abs_error = v.max_abs_error;
      if (!v.outputs.empty()) r.tolerance = record_tolerance(v.outputs[0].tol);
    }
    return true;
  };
  return o;
}

bool SweepRun::run_point(size_t i, runtime::Backend& be, bool in_child, point::Stage first,
                         point::Stage last, bool may_reuse) {
  const Point& p = points_[i];
  PointState& s = states_[i];
  const FusionSpec& f = spec_.fusions[p.fusion];
  const SchedulerSpec& sched = spec_.schedulers[p.scheduler];
  using point::Stage;
  try {
    if (first == Stage::Schedule) {
      BoundFusion bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[p.sizes]);
      s.rec.bytes_moved = io_bytes(*bf.def.fusion, bf.sizes);
      point::PluginRef ref{s.plugin, sched.settings(p.config), tuned_offer(i, *s.plugin)};
      s.point = point::Point(std::move(bf), std::move(ref), &be,
                             point_options(i, in_child, may_reuse));
    } else {
      s.point.options() = point_options(i, in_child, may_reuse);
    }
    s.point.set_reference(s.reference);
    s.point.run(first, last);
  } catch (const plugin::PluginFault& e) {
    // The plugin broke the ABI: its failure, not the schedule's.
    fail(s, report::Status::PluginError, e.what());
    return false;
  } catch (const UserError& e) {
    // Launch-time checks (vector alignment, block size) reject the schedule.
    const Stage at = s.point.stage();
    fail(s,
         at == Stage::Lower || at == Stage::Compile ? report::Status::CompileError
                                                    : report::Status::ScheduleError,
         e.what());
    return false;
  }
  if (s.final) return false;  // an earlier verdict stands
  const point::Result& r = s.point.result();
  switch (r.verdict) {
    case point::Verdict::Rejected:
      fail(s, report::Status::Rejected, r.reject_reason);
      return false;
    case point::Verdict::Racy:
      fail(s, report::Status::Racy, r.validation->summary());
      return false;
    case point::Verdict::WrongResult:
      fail(s, report::Status::WrongResult, r.validation->summary());
      return false;
    default:
      return true;
  }
}

// The performance model's prediction of a validated point, traced on a CPU
// backend (this one, or one made for it when the sweep runs on CUDA). Traced
// launches take launch_mu_ like every other launch of phase 1.
void SweepRun::profile(size_t i) {
  PointState& s = states_[i];
  if (!options_.profile_device || s.rec.status != report::Status::Ok || s.rec.prediction ||
      s.rec.mesh > 1 ||
      s.point.result().kernels.empty() || s.point.kernel().prepared.source.source.empty())
    return;
  {
    std::lock_guard lock(launch_mu_);
    if (is_cuda(backend_) && !profile_cpu_) profile_cpu_ = make_backend("cpu", options_.cache_dir);
  }
  point::Options& o = s.point.options();
  o.profile_device = &*options_.profile_device;
  o.profile_backend = is_cuda(backend_) ? profile_cpu_.get() : &backend_;
  o.profile.cache_dir = options_.cache_dir;
  try {
    s.point.run(point::Stage::Profile, point::Stage::Profile);
    s.rec.prediction = model::record_prediction(s.point.result().profiles.at(0));
  } catch (const UserError& e) {
    // The point stays ok (it validated); its record says why it has no prediction.
    s.rec.error = std::string("no prediction: ") + e.what();
  }
}

void SweepRun::run_mesh(size_t i) {
  const Point& p = points_[i];
  PointState& s = states_[i];
  const FusionSpec& f = spec_.fusions[p.fusion];
  const SchedulerSpec& sched = spec_.schedulers[p.scheduler];
  if (!options_.run_mesh_point)
    return fail(s, report::Status::Crashed,
                fmt::format("mesh {}: a point on more than one rank runs its ranks as "
                            "`schedlab exec --mesh {}` processes, which only `schedlab run` "
                            "starts",
                            s.rec.mesh, s.rec.mesh));
  MeshPointRequest q;
  q.fusion_path = f.path;
  q.sizes = f.sizes[p.sizes];
  q.mesh = s.rec.mesh;
  q.scheduler = &sched;
  q.settings = sched.settings(p.config);
  q.sanitize = spec_.validation.sanitize;
  q.rtol = spec_.validation.rtol;
  q.atol = spec_.validation.atol;
  q.cache_dir = options_.cache_dir;
  q.device = options_.profile_device ? &*options_.profile_device : nullptr;
  q.warmup = spec_.measure.warmup;
  q.repetitions = spec_.measure.repetitions;
  MeshPointOutcome o;
  try {
    o = options_.run_mesh_point(q);
  } catch (const UserError& e) {
    return fail(s, report::Status::ScheduleError, e.what());
  } catch (const std::exception& e) {
    // A bug (in schedlab, or a launcher that could not start): this point's, not the sweep's.
    return fail(s, report::Status::Crashed, std::string("internal error: ") + e.what());
  }
  s.rec.comm_us = o.comm_us;
  s.rec.comm_measured_us = o.comm_measured_us;
  s.rec.max_abs_error = o.max_abs_error;
  if (!o.plugin.empty() && sched.kind == SchedulerKind::Auto) s.rec.plugin = o.plugin;
  if (!o.config.empty()) {
    s.rec.config = o.config;
    s.rec.config_hash = report::config_hash(o.config);
  }
  s.rec.bytes_moved = o.bytes_moved;
  if (o.tolerance) s.rec.tolerance = *o.tolerance;
  s.rec.prediction = o.prediction;
  if (o.status != report::Status::Ok) return fail(s, o.status, o.error);
  internal_assert(o.seconds.has_value()) << "mesh point " << s.rec.size_label() << ": ok without a time";
  // Per timed repetition the slowest rank's time (the ranks aligned by a
  // barrier before each); one, the slowest rank's, from an exec that gave no list.
  s.rec.times_us = o.times_us.empty() ? std::vector<double>{*o.seconds * 1e6} : o.times_us;
  s.rec.status = report::Status::Ok;
  s.final = true;
}

void SweepRun::phase1(size_t i, isolate::Worker* worker) {
  if (!identify(i, worker)) return;
  PointState& s = states_[i];
  // More than one rank: the point's ranks are other processes, started in
  // phase 2 (measure), one point at a time as every timing is.
  if (s.rec.mesh > 1) return;
  s.reference = reference_of(points_[i]);  // in the parent: a child takes no locks
  if (worker) return isolate(i, *worker);
  if (run_point(i, backend_, /*in_child=*/false, point::Stage::Schedule, point::Stage::Validate,
                /*may_reuse=*/true) &&
      s.validated_before)
    run_point(i, backend_, /*in_child=*/false, point::Stage::Compile, point::Stage::Compile,
              /*may_reuse=*/false);
}

}  // namespace schedlab::sweep::detail

namespace schedlab::sweep {

report::Tolerance record_tolerance(const ref::Tolerance& t) {
  report::Tolerance r;
  if (t.is_user()) {
    r.mode = report::Tolerance::Mode::User;
    r.rtol = t.rtol(), r.atol = t.atol();
  } else {
    r.factor = t.factor(), r.floor = t.floor();
  }
  return r;
}

}  // namespace schedlab::sweep
