// --isolate in the sweep runner: the worker's side (serve) and the host's
// (isolate, pick_isolated). The class is in sweep_run.h.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "schedlab/base/error.h"
#include "schedlab/plugin/transform_log.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "sweep_run.h"

namespace schedlab::sweep::detail {

// ---- --isolate: the worker's side and the host's ----
//
// A request is a JSON object: {"kind": "pick" or "point", "i": the point,
// "plugins": the loaded files (the registry's shadow copies) of the
// candidates (pick) or of the point's plugin, "record": the record so far}.
// The worker is a copy of this object from the round it was forked in, so
// points_ and spec_ are current there; everything identify() decided since
// travels in the request.

/// A record travelling between the host and a worker. One that is not final
/// yet has status ok and no times, which the file format rightly rejects;
/// it travels with a placeholder sample, taken off on arrival.
std::string in_flight_json(report::Record r) {
  if (r.status == report::Status::Ok && r.times_us.empty()) r.times_us = {0.0};
  return report::to_json(r);
}
report::Record from_in_flight(const std::string& json, bool final, const char* where) {
  report::Record r = report::record_from_json(json, SourceLoc{where, 1, 1});
  if (!final) r.times_us.clear();
  return r;
}

std::shared_ptr<const plugin::Plugin> SweepRun::child_plugin(const std::string& loaded_path) {
  auto& p = child_plugins_[loaded_path];
  if (!p) p = plugin::load_plugin(loaded_path);  // the shadow copy itself: no copy of a copy
  return p;
}

std::string SweepRun::serve(const std::string& request) {
  const nlohmann::json req = nlohmann::json::parse(request);
  const size_t i = req.at("i").get<size_t>();
  const std::vector<std::string> paths = req.at("plugins").get<std::vector<std::string>>();
  const Point& p = points_.at(i);
  if (req.at("kind") == "pick") {
    // pick_builtin, over the candidates the host found.
    BoundFusion bf = bind_fusion(spec_.fusions[p.fusion].path, options_.fusion_dirs,
                                 spec_.fusions[p.fusion].sizes[p.sizes]);
    std::vector<std::shared_ptr<const plugin::Plugin>> candidates;
    for (const std::string& path : paths) candidates.push_back(child_plugin(path));
    std::vector<std::string> reasons;
    auto picked = first_accepting(candidates, bf, target_, &reasons);
    const auto at = std::find(candidates.begin(), candidates.end(), picked);
    nlohmann::json out = {{"pick", picked ? at - candidates.begin() : -1}, {"reasons", reasons}};
    return out.dump();
  }
  PointState& s = states_.at(i);
  s = PointState();
  s.rec = from_in_flight(req.at("record").get<std::string>(), false, "(isolation request)");
  s.plugin = child_plugin(paths.at(0));
  const bool fast_math = spec_.schedulers[p.scheduler].fast_math;
  // The host's reference as of the fork (it computed the point's before its
  // first request, and forks holding ref_mu_: run()), else the worker's own.
  const auto key = std::tuple{p.fusion, p.sizes, fast_math};
  const auto host = references_.find(key);
  s.reference = host != references_.end() && host->second
                    ? host->second
                    : compute_reference(child_references_[key], p, fast_math);
  const bool launches = launches_in_workers();
  if (launches && !child_backend_) child_backend_ = make_backend("cpu", options_.cache_dir);
  run_point(i, launches ? *child_backend_ : backend_, /*in_child=*/true, point::Stage::Schedule,
            launches ? point::Stage::Validate : point::Stage::Schedule, /*may_reuse=*/true);
  return nlohmann::json{{"final", s.final},
                        {"validated", launches},
                        {"record", in_flight_json(s.rec)},
                        // A reused measurement still gets profiled in the host.
                        {"transforms", s.final && !s.rec.reused ? "[]"
                                                                : plugin::serialize(s.transforms)}}
      .dump();
}

std::shared_ptr<const plugin::Plugin> SweepRun::pick_isolated(size_t i, isolate::Worker& worker,
                                                              std::vector<std::string>& reasons) {
  std::vector<std::shared_ptr<const plugin::Plugin>> candidates;
  {
    std::lock_guard lock(plugin_mu_);
    candidates = builtin_candidates(registry_, &reasons);  // descriptions here
  }
  std::vector<std::string> paths;
  for (const auto& c : candidates) paths.push_back(c->loaded_path());
  const isolate::Outcome out = worker.call(
      nlohmann::json{{"kind", "pick"}, {"i", i}, {"plugins", paths}}.dump());
  isolate::rethrow_error(out);  // the worker's own error (the fusion's, or a plugin's), as is
  user_assert(out.ok()) << "auto: a built-in plugin failed while choosing, in an isolated worker: "
                        << isolate::report(out);
  const nlohmann::json answer = nlohmann::json::parse(out.payload);
  for (const auto& why : answer.at("reasons")) reasons.push_back(why.get<std::string>());
  const int64_t pick = answer.at("pick").get<int64_t>();
  return pick < 0 ? nullptr : candidates.at(static_cast<size_t>(pick));
}

void SweepRun::isolate(size_t i, isolate::Worker& worker) {
  PointState& s = states_[i];
  const isolate::Outcome out = worker.call(nlohmann::json{{"kind", "point"},
                                                          {"i", i},
                                                          {"plugins", {s.plugin->loaded_path()}},
                                                          {"record", in_flight_json(s.rec)}}
                                               .dump());
  if (out.status == isolate::Outcome::Status::Crashed ||
      out.status == isolate::Outcome::Status::Timeout) {
    std::string tail = out.stderr_tail;
    if (tail.size() > 500) tail = "..." + tail.substr(tail.size() - 500);
    return fail(s,
                out.status == isolate::Outcome::Status::Crashed ? report::Status::Crashed
                                                                : report::Status::Timeout,
                isolate::describe(out) + (tail.empty() ? "" : ": " + tail));
  }
  if (!out.ok()) return fail(s, report::Status::Crashed, isolate::report(out));
  const nlohmann::json answer = nlohmann::json::parse(out.payload);
  const bool final = answer.at("final").get<bool>();
  s.rec = from_in_flight(answer.at("record").get<std::string>(), final, "(isolated worker)");
  // Scheduled (and validated, unless on CUDA) in the worker: replay its
  // schedule here and compile it (the worker's compile left it in the
  // cache) for the benchmark. The kernel must come out the same, byte for
  // byte.
  const std::string worker_kernel = s.rec.kernel_hash;
  auto replay_here = [&] {
    const FusionSpec& f = spec_.fusions[points_[i].fusion];
    s.transforms = plugin::parse_log(answer.at("transforms").get<std::string>(),
                                     "the isolated worker's schedule");
    BoundFusion bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[points_[i].sizes]);
    try {
      plugin::replay(*bf.def.fusion, s.transforms);
    } catch (const UserError& e) {
      internal_error << "the schedule made in the isolated worker does not replay in the host: "
                     << e.what();
    }
    // Scheduled already: the point starts at Lower.
    const SchedulerSpec& sched = spec_.schedulers[points_[i].scheduler];
    s.point = point::Point(std::move(bf), point::PluginRef{s.plugin, sched.settings(points_[i].config), {}},
                           &backend_, {});
  };
  if (final) {
    s.final = true;
    s.cached = !s.rec.times_us.empty();
    // A measurement reused from the previous results: its kernel, for the
    // profile (predictions are not carried over: the device model may have
    // changed since).
    if (s.rec.reused && options_.profile_device) {
      replay_here();
      s.point.options() = point_options(i, /*in_child=*/false, /*may_reuse=*/false);
      s.point.run(point::Stage::Lower, point::Stage::Lower);
      const std::string here = s.point.kernel().prepared.source.hash();
      internal_assert(here == worker_kernel)
          << "the schedule replayed in the host gives kernel " << here
          << ", the isolated worker's was " << worker_kernel;
    }
    return;
  }
  const bool validated = answer.at("validated").get<bool>();
  replay_here();
  if (!validated) {
    // On CUDA: compiled and validated here, as without isolation.
    run_point(i, backend_, /*in_child=*/false, point::Stage::Lower, point::Stage::Validate,
              /*may_reuse=*/true);
    return;
  }
  if (!run_point(i, backend_, /*in_child=*/false, point::Stage::Lower, point::Stage::Compile,
                 /*may_reuse=*/false))
    return;
  internal_assert(s.rec.kernel_hash == worker_kernel)
      << "the schedule replayed in the host gives kernel " << s.rec.kernel_hash
      << ", the isolated worker's was " << worker_kernel;
}

}  // namespace schedlab::sweep::detail
