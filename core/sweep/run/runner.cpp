// The sweep runner: see schedlab/sweep/run/runner.h. SweepRun (sweep_run.h) is
// split by role: here the rounds, the plugins and the records; a point's
// identity and its run through core/point in runner_point.cpp; --isolate's
// worker and host sides in runner_isolate.cpp; phase 2's timing in
// runner_measure.cpp.
// Timing itself is in measure.cpp, the pipeline steps in pipeline.cpp and
// their order in core/point.
#include "schedlab/sweep/run/runner.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include "schedlab/base/error.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/run/measure.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "sweep_run.h"

namespace schedlab::sweep {

namespace detail {

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return report::hash_hex(ss.str());
}

namespace {

/// What names the sweep a record belongs to (`schedlab merge` checks that
/// parts agree): the sweep file's contents; a sweep made without a file, its
/// name.
std::string sweep_hash(const SweepSpec& spec) {
  std::error_code ec;
  return std::filesystem::is_regular_file(spec.path, ec) ? file_hash(spec.path)
                                                         : report::hash_hex(spec.name);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown cpu";
}

/// What a search learns of a finished record: its status, median, and the
/// performance model's prediction and profile figures when it was profiled.
Outcome outcome_of(const report::Record& r) {
  Outcome o{std::string(report::status_name(r.status)), 0, std::nullopt, {}, r.own_choice};
  if (r.status == report::Status::Ok && !r.times_us.empty()) o.median_s = r.summary().median * 1e-6;
  if (!r.prediction) return o;
  o.predicted_s = r.prediction->predicted_us * 1e-6;
  // The first kernel's figures (a sweep point is one kernel).
  const nlohmann::json profile = nlohmann::json::parse(r.prediction->profile, nullptr, false);
  if (profile.is_array() && !profile.empty()) {
    for (const char* f : kProfileFeatures) {
      const auto it = profile[0].find(f);
      if (it == profile[0].end() || !it->is_number()) {
        o.profile.clear();
        break;
      }
      o.profile.push_back(it->get<double>());
    }
  }
  return o;
}

}  // namespace

void fail(PointState& s, report::Status status, std::string error) {
  s.rec.status = status;
  s.rec.error = std::move(error);
  s.final = true;
}

}  // namespace detail

report::ConfigList own_choice(const SchedulerSpec& sched, const plugin::Plugin& plugin,
                              const plugin::ParamValues& own) {
  report::ConfigList r;
  if (sched.uses_heuristic()) return r;
  if (sched.kind == SchedulerKind::Script) {
    for (const auto& [name, v] : sched.script_defaults.values) r.emplace_back(name, v.str());
    return r;
  }
  for (size_t k = 0; k < plugin.schema().size() && k < own.size(); ++k)
    r.emplace_back(plugin.schema()[k].name, plugin.format_value(k, own[k]));
  return r;
}

report::Device describe_device(runtime::Backend& backend) {
  report::Device d;
  if (is_cuda(backend)) {
    runtime::DeviceProperties p =
        runtime::cuda_device_properties().value_or(runtime::DeviceProperties{});
    d.name = p.name;
    d.backend = "cuda";
    d.peak_gbps = p.peak_bandwidth_bytes_per_s / 1e9;
    d.fingerprint = report::hash_hex(
        fmt::format("cuda|{}|{}|{}|{}", p.name, p.arch, p.sm_count, p.memory_clock_khz));
  } else {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    d.name = fmt::format("CPU emulation ({}, {} cores)", detail::cpu_model(), cores);
    d.backend = "cpu";
    d.emulated = true;
    d.fingerprint = report::hash_hex(fmt::format("cpu|{}|{}", detail::cpu_model(), cores));
  }
  return d;
}

namespace detail {

SweepRun::SweepRun(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
                   const RunOptions& options)
    : spec_(spec),
      registry_(registry),
      backend_(backend),
      options_(options),
      device_(describe_device(backend)),
      sweep_hash_(sweep_hash(spec)),
      host_(host_name()),
      seed_(spec.measure.seed.value_or(fresh_seed())),
      run_nonce_(fmt::format("{:016x}", fresh_seed())) {
  user_assert(!options.output.empty()) << "run: no output file for the records";
  if (is_cuda(backend)) target_ = runtime::cuda_device_properties();
  if (const std::string& t = options.tuned.empty() ? spec.tuned : options.tuned; !t.empty())
    tuned_ = load_tuned_file(t);
  const StrategySpec& st = spec.strategy;
  if (st.objective == StrategySpec::Objective::Predicted && !options.profile_device)
    user_error_at(st.objective_loc)
        << "strategy objective: predicted needs the performance model, but this run profiles "
        << "no point (--device none); expected a device model (--device h200) or objective "
        << "measured";
  if (st.objective == StrategySpec::Objective::Cpu && is_cuda(backend))
    user_error_at(st.objective_loc)
        << "strategy objective: cpu is the CPU emulation's time, but this run times on CUDA; "
        << "expected --backend cpu or objective measured";
  plan_searches();
  // --resume before the file exists (a first run, or a requeued job that
  // never wrote a record) starts fresh.
  if (options.resume && std::filesystem::exists(options.output)) {
    report::drop_truncated_tail(options.output);
    for (report::Record& r : report::read_records(options.output).records)
      done_.emplace(r.key, std::move(r));
  }
  load_plugins();
}

void SweepRun::plan_searches() {
  // The searches of one scheduler share what they learn (strategy.h); under
  // --shard, those of the shard.
  std::vector<std::shared_ptr<SearchFamily>> families;
  for (size_t k = 0; k < spec_.schedulers.size(); ++k) families.push_back(make_search_family());
  for (size_t f = 0; f < spec_.fusions.size(); ++f)
    for (size_t z = 0; z < spec_.fusions[f].sizes.size(); ++z)
      for (size_t k = 0; k < spec_.schedulers.size(); ++k) {
        const SchedulerSpec& sched = spec_.schedulers[k];
        if (!sched.applies_to(spec_.fusions[f].name) ||
            (!options_.only_schedulers.empty() && !options_.only_schedulers.count(sched.name)) ||
            (options_.shard && !options_.shard->has_group(spec_, f, z)))
          continue;
        SearchProblem problem{&sched, &spec_.fusions[f], &spec_.fusions[f].sizes[z]};
        searches_.push_back({f, z, k,
                             options_.strategy ? options_.strategy(problem)
                                               : make_strategy(spec_.strategy, problem,
                                                               families[k])});
      }
}

void SweepRun::load_plugins() {
  for (const SchedulerSpec& s : spec_.schedulers) {
    std::shared_ptr<const plugin::Plugin> p;
    if (s.kind == SchedulerKind::Auto) {
      // Chosen per point (pick_builtin); nothing to load up front.
    } else if (!s.load_failure.empty()) {
      // Failed to load in its worker (--isolate): its points record that.
      plugin_hashes_.push_back(std::filesystem::is_regular_file(s.plugin) ? file_hash(s.plugin)
                                                                          : "");
      plugins_.push_back(nullptr);
      continue;
    } else if (s.plugin.find('/') == std::string::npos && !s.plugin.ends_with(".so")) {
      p = registry_.get(s.plugin);
    } else {
      // A path: the plugin already serving that file (the spec loader read
      // its schema), else load it.
      std::error_code ec;
      for (const auto& [name, file] : registry_.files())
        if (std::filesystem::equivalent(file, s.plugin, ec)) p = registry_.find(name);
      if (!p) p = registry_.add(s.plugin);
    }
    plugin_hashes_.push_back(p ? file_hash(p->path()) : "");
    plugins_.push_back(std::move(p));
  }
  for (const FusionSpec& f : spec_.fusions) fusion_hashes_.push_back(file_hash(f.path));
}

void SweepRun::record(PointState& st) {
  std::lock_guard lock(out_mu_);
  report::Record& r = st.rec;
  if (r.timestamp.empty()) r.timestamp = report::now_timestamp();
  r.strategy = strategy_name(spec_.strategy.kind);
  r.objective = objective_name(spec_.strategy.objective);
  r.evaluation = st.evaluation;
  if (!done_.count(r.key)) report::append_record(options_.output, r);
  ++finished_;
  if (options_.on_record) options_.on_record(r, finished_, total_);
}

RunResult SweepRun::run() {
  for (;;) {
    // The round's points: every search's next proposals.
    points_.clear();
    point_search_.clear();
    for (size_t k = 0; k < searches_.size(); ++k)
      for (Config& c : searches_[k].strategy->propose()) {
        Point p{searches_[k].fusion, searches_[k].sizes, searches_[k].scheduler, std::move(c)};
        // Another shard's point (grid and random shard by point; the others
        // by group, in plan_searches, so an adaptive search is never cut).
        if (options_.shard && !options_.shard->has_point(spec_, p)) continue;
        points_.push_back(std::move(p));
        point_search_.push_back(k);
      }
    if (points_.empty()) break;
    const size_t round = points_.size();
    total_ += round;
    states_ = std::vector<PointState>(round);
    // Each point's evaluation number in its search (the best-so-far
    // curve's x); a configuration proposed again keeps its first one.
    for (size_t i = 0; i < round; ++i) {
      const Search& search = searches_[point_search_[i]];
      auto it = search.evaluated.find(points_[i].config.str());
      size_t before = 0;
      for (size_t j = 0; j < i; ++j)
        before += point_search_[j] == point_search_[i] &&
                  !search.evaluated.count(points_[j].config.str());
      states_[i].evaluation =
          it != search.evaluated.end()
              ? result_.records[it->second].evaluation
              : static_cast<int64_t>(search.evaluated.size() + before + 1);
    }

    // Phase 1 on a pool: every failure is final (and written) as it happens.
    const size_t jobs = std::min<size_t>(
        round, options_.jobs > 0 ? static_cast<size_t>(options_.jobs)
                                : std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    // --isolate: a worker per thread, forked on its first point; one that
    // dies is forked again on the next.
    if (options_.isolate) {
      isolate::Options io;
      io.timeout = std::chrono::milliseconds(static_cast<int64_t>(options_.timeout_s * 1000));
      // A plugin's log lines show as they would in this process; the end of
      // a dying worker's stderr is in its record as well.
      io.forward_stderr = true;
      // A worker reads the references this process had computed when it
      // was forked (serve): fork while no thread is writing them.
      io.before_fork = [this] { ref_mu_.lock(); };
      io.after_fork = [this] { ref_mu_.unlock(); };
      for (size_t t = 0; t < jobs; ++t)
        workers_.push_back(std::make_unique<isolate::Worker>(
            [this](const std::string& request) { return serve(request); }, io));
    }
    for (size_t t = 0; t < jobs; ++t)
      pool.emplace_back([&, t] {
        isolate::Worker* worker = options_.isolate ? workers_[t].get() : nullptr;
        for (size_t i; (i = next++) < round;) {
          try {
            phase1(i, worker);
            profile(i);
          } catch (const std::exception& e) {
            // A bug in schedlab (InternalError or worse): the point is marked,
            // the sweep goes on, and the run reports it.
            fail(states_[i], report::Status::Crashed, std::string("internal error: ") + e.what());
          }
          if (states_[i].final) {
            {
              std::lock_guard lock(out_mu_);
              result_.resumed += done_.count(states_[i].rec.key);
              result_.cached += states_[i].cached;
            }
            record(states_[i]);
          }
        }
      });
    for (std::thread& t : pool) t.join();
    workers_.clear();

    // Phase 2: time the validated points, group by group.
    measure();

    // Tell each search how its points did, then keep the round's records.
    for (size_t i = 0; i < round; ++i) {
      PointState& s = states_[i];
      if (!s.final) continue;  // filtered out by --benchmark_filter: never timed
      Search& search = searches_[point_search_[i]];
      const Outcome outcome = outcome_of(s.rec);
      search.strategy->observe(points_[i].config, outcome);
      // A configuration proposed again (halving re-times its survivors):
      // its latest record stands.
      auto [at, fresh] = search.evaluated.emplace(points_[i].config.str(), result_.records.size());
      if (fresh)
        result_.records.push_back(std::move(s.rec));
      else
        result_.records[at->second] = std::move(s.rec);
    }
  }

  report_benchmarks();
  return std::move(result_);
}

}  // namespace detail

RunResult run_sweep(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
                    const RunOptions& options) {
  return detail::SweepRun(spec, registry, backend, options).run();
}

}  // namespace schedlab::sweep
