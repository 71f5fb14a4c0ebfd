// The sweep runner: see schedlab/sweep/runner.h.
//
// Two phases. Phase 1 runs each point's schedule, lower, codegen, compile and
// validation on a pool of threads (compiles dominate and run in parallel;
// plugin calls and kernel launches are serialized, since neither plugins nor
// the CPU backend's fiber executor promise to be re-entrant). Phase 2 times
// the validated points of each (fusion, sizes) group in interleaved rounds
// (measure.h), one launch at a time so that timings never overlap; each
// record is appended when its group is done. At the end, Google Benchmark
// reports every timed record once (--benchmark_out included).
//
// Over 600 lines, for a reason: SweepRun keeps one method per stage of a
// point over the run's shared state (the round, the locks, the output);
// splitting its methods across files would scatter that state. Timing is in
// measure.cpp, the pipeline steps it calls in pipeline.cpp.
#include "schedlab/sweep/runner.h"

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
#include "schedlab/isolate/isolate.h"
#include "schedlab/model/profile.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/measure.h"
#include "schedlab/sweep/pipeline.h"

namespace schedlab::sweep {
namespace {

/// The scheduler name that means "the built-in that takes the fusion".
constexpr const char* kAutoScheduler = "auto";

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return report::hash_hex(ss.str());
}

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

/// The reference inputs and outputs of one (fusion, sizes), computed once.
struct Reference {
  std::unique_ptr<ir::Fusion> plain;  ///< the unscheduled fusion
  std::vector<ref::HostTensor> inputs, want;
};

/// A point in flight.
struct PointState {
  report::Record rec;
  bool final = false;   ///< the record is decided (a failure, resumed, or cached)
  bool cached = false;  ///< its verdict and times come from an earlier record
  std::shared_ptr<const plugin::Plugin> plugin;  ///< the scheduler's plugin (or auto's pick)
  BoundFusion bf;                                ///< the scheduled fusion (the kernel refers to it)
  runtime::PreparedKernel kernel;
  std::shared_ptr<runtime::CompiledKernel> compiled;
  std::shared_ptr<const Reference> reference;
  plugin::TransformLog transforms;  ///< what the plugin applied (replayed under --isolate)
  int64_t evaluation = 0;           ///< its number in its search (Record::evaluation)
};

void fail(PointState& s, report::Status status, std::string error) {
  s.rec.status = status;
  s.rec.error = std::move(error);
  s.final = true;
}

/// Whether `old` (an earlier run's record) stands for `now`, whose kernel is
/// generated: the same kernel, sizes and device, and an ok record timed with
/// the repetitions asked now, or a wrong result.
bool reusable(const report::Record& old, const report::Record& now, int64_t repetitions) {
  if (old.kernel_hash.empty() || old.kernel_hash != now.kernel_hash ||
      old.size_key() != now.size_key() || old.device.fingerprint != now.device.fingerprint)
    return false;
  return (old.status == report::Status::Ok &&
          static_cast<int64_t>(old.times_us.size()) == repetitions) ||
         old.status == report::Status::WrongResult || old.status == report::Status::Racy;
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

report::ConfigList own_choice(const SchedulerSpec& sched, const plugin::Plugin& plugin,
                              const plugin::ParamValues& own) {
  report::ConfigList r;
  if (sched.uses_heuristic()) return r;
  if (!sched.script.empty()) {
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
    d.name = fmt::format("CPU emulation ({}, {} cores)", cpu_model(), cores);
    d.backend = "cpu";
    d.emulated = true;
    d.fingerprint = report::hash_hex(fmt::format("cpu|{}|{}", cpu_model(), cores));
  }
  return d;
}

namespace {

/// One run of a sweep: a small class with one method per stage of a point
/// (identify, schedule, compile, validate, isolate, profile, measure,
/// record), driven round by round by run().
class SweepRun {
 public:
  SweepRun(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
           const RunOptions& options);
  RunResult run();

 private:
  // One search per (fusion, sizes, scheduler), driven as an ask/tell loop
  // (strategy.h): each round runs every search's next proposals, then tells
  // each search how its points did. Grid and random propose everything in
  // the first round; a model-guided strategy proposes in small batches and
  // learns from observe(), with nothing to change here. The searches of one
  // scheduler share a SearchFamily: since every search proposes before any
  // observes, a round's proposals depend only on earlier rounds' outcomes.
  struct Search {
    size_t fusion, sizes, scheduler;
    std::unique_ptr<SearchStrategy> strategy;
    /// Configuration (Config::str) -> its record in result_.records.
    std::map<std::string, size_t> evaluated = {};
  };

  void plan_searches();
  void load_plugins();
  /// The reference of a point's (fusion, sizes), computed by whichever point
  /// needs it first.
  std::shared_ptr<const Reference> reference_of(const Point& p);
  /// Fills `slot` with p's reference unless it holds one; returns it.
  std::shared_ptr<const Reference> compute_reference(std::shared_ptr<const Reference>& slot,
                                                     const Point& p, bool fast_math) const;
  /// Step 1, in the process: the record's identity, and whether it is done
  /// already (--resume). False when the point needs no more work. `worker`:
  /// where `auto` asks the built-ins under --isolate.
  bool identify(size_t i, isolate::Worker* worker);
  /// The tuned configuration offered to point i's plugin (a heuristic
  /// row's, in a tuned bucket), or nullopt. User error for an entry that
  /// does not fit the plugin's schema.
  std::optional<plugin::TunedOffer> tuned_offer(size_t i, const plugin::Plugin& plugin) const;
  /// Step 2a: the plugin schedules the point's fusion. False when the
  /// record is final (rejected, or a schedule error).
  bool schedule(size_t i, bool in_child);
  /// Step 2b: lower, codegen and compile on `be` (an unchanged kernel's
  /// earlier verdict may stand when may_reuse). False when the record is
  /// final (a compile error, or a reused verdict).
  bool compile(size_t i, runtime::Backend& be, bool may_reuse);
  /// Lowers point i's scheduled fusion to its kernel (states_[i].kernel).
  void prepare_kernel(size_t i);
  /// Step 3: the validating launch on `be` (under the sanitizer by default),
  /// compared with the reference. A failure makes the record final.
  void validate(size_t i, runtime::Backend& be, bool in_child);
  /// Steps 2 and 3 the way --isolate runs them: in `worker`, a child process
  /// that loads the plugin itself. A point that validated there comes back
  /// with its transform log, which the host replays and compiles (a cache
  /// hit) for the benchmark: no plugin code runs here.
  void isolate(size_t i, isolate::Worker& worker);
  /// `auto` under --isolate: the built-ins are asked in `worker`.
  std::shared_ptr<const plugin::Plugin> pick_isolated(size_t i, isolate::Worker& worker,
                                                      std::vector<std::string>& reasons);
  /// Whether workers compile and validate (RunOptions::isolate_launches,
  /// never on CUDA).
  bool launches_in_workers() const { return options_.isolate_launches && !is_cuda(backend_); }
  /// What a worker does with a request (in the child).
  std::string serve(const std::string& request);
  /// The child's instance of the plugin mapped from `loaded_path`.
  std::shared_ptr<const plugin::Plugin> child_plugin(const std::string& loaded_path);
  /// Steps 1 to 3 for point i (phase 1).
  void phase1(size_t i, isolate::Worker* worker);
  /// The performance model's prediction of a validated point.
  void profile(size_t i);
  /// Phase 2: times this round's validated points, group by group.
  void measure();
  /// Appends a final record to the output and tells the callback.
  void record(PointState& st);
  /// Google Benchmark reports every timed record once.
  void report_benchmarks();

  /// Locks for what is not re-entrant. A child process (--isolate) takes
  /// none: it is alone in its address space, and a lock another thread held
  /// at the fork would never be released there.
  static std::unique_lock<std::mutex> maybe_lock(std::mutex& mu, bool in_child) {
    return in_child ? std::unique_lock<std::mutex>() : std::unique_lock<std::mutex>(mu);
  }

  const SweepSpec& spec_;
  plugin::Registry& registry_;
  runtime::Backend& backend_;
  const RunOptions& options_;
  const report::Device device_;
  const std::string sweep_hash_, host_;  ///< in every record
  std::optional<runtime::DeviceProperties> target_;

  std::optional<TunedFile> tuned_;  ///< RunOptions::tuned, else the sweep's `tuned:`

  std::vector<Search> searches_;
  std::vector<Point> points_;         ///< this round's points
  std::vector<size_t> point_search_;  ///< each point's search
  std::vector<PointState> states_;    ///< this round's

  /// What an earlier (killed) run already finished.
  std::map<std::string, report::Record> done_;
  /// Plugins, their binaries' hashes, and the fusion files' hashes, once each.
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins_;
  std::vector<std::string> plugin_hashes_;
  std::mutex hash_mu_;
  std::map<std::string, std::string> auto_hashes_;  ///< plugin path -> hash, for `auto`
  std::vector<std::string> fusion_hashes_;

  std::mutex ref_mu_;
  /// By (fusion, sizes, fast math): fast math widens the error bounds.
  std::map<std::tuple<size_t, size_t, bool>, std::shared_ptr<const Reference>> references_;
  std::mutex plugin_mu_, launch_mu_;
  std::unique_ptr<runtime::Backend> profile_cpu_;

  /// --isolate: one worker per phase-1 thread, for a round.
  std::vector<std::unique_ptr<isolate::Worker>> workers_;
  /// Only ever filled in a worker (a child): its plugins, backend and
  /// references. The parent's copies stay empty, so a fork never copies
  /// them half-written.
  std::map<std::string, std::shared_ptr<const plugin::Plugin>> child_plugins_;
  std::unique_ptr<runtime::Backend> child_backend_;
  std::map<std::tuple<size_t, size_t, bool>, std::shared_ptr<const Reference>> child_references_;

  std::mutex out_mu_;  ///< the output file, the callback, the counters
  size_t total_ = 0;   ///< points proposed so far, over every round
  size_t finished_ = 0;
  RunResult result_;

  const uint64_t seed_;
  const std::string run_nonce_;
  uint64_t groups_ = 0;  ///< over the whole run: a group number is never reused
};

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
    if (s.plugin == kAutoScheduler) {
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

std::shared_ptr<const Reference> SweepRun::reference_of(const Point& p) {
  std::lock_guard lock(ref_mu_);
  const bool fast_math = spec_.schedulers[p.scheduler].fast_math;
  return compute_reference(references_[{p.fusion, p.sizes, fast_math}], p, fast_math);
}

std::shared_ptr<const Reference> SweepRun::compute_reference(
    std::shared_ptr<const Reference>& slot, const Point& p, bool fast_math) const {
  if (!slot) {
    auto r = std::make_shared<Reference>();
    const FusionSpec& f = spec_.fusions[p.fusion];
    const ir::SizeBindings& sizes = f.sizes[p.sizes];
    auto def = frontend::load_fusion_file(f.path);
    r->inputs = ref::make_inputs(*def.fusion, sizes, 1, def.input_ranges);
    r->want = ref::evaluate(*def.fusion, r->inputs, sizes, {fast_math});
    r->plain = std::move(def.fusion);
    slot = std::move(r);
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
  r.sizes = ordered_sizes(f.sizes[p.sizes], f.size_names);
  r.scheduler = sched.name;
  r.device = device_;
  r.baseline = spec_.baseline;
  r.min_effect = spec_.measure.min_effect;
  // Who asks, in every key: two schedulers of one sweep may run the same
  // binary with the same settings (twins, fast math on and off, `auto` and
  // the plugin it picks), and --resume must not take one's record for the
  // other's.
  const std::string asker =
      "scheduler=" + sched.name + ";" + (sched.fast_math ? "fast_math;" : "");
  if (!sched.load_failure.empty()) {
    r.plugin = sched.plugin;
    r.key = report::record_key(plugin_hashes_[p.scheduler], report::hash_hex(asker),
                               f.name + "@" + fusion_hashes_[p.fusion], r.sizes,
                               device_.fingerprint);
    fail(s, report::parse_status(sched.load_failure_status).value_or(report::Status::Crashed),
         sched.load_failure);
    return false;
  }
  s.plugin = plugins_[p.scheduler];
  if (!s.plugin) {
    // `auto`: the first built-in that takes the fusion, as `exec` without
    // --plugin would pick.
    try {
      std::vector<std::string> reasons;
      if (worker) {
        s.plugin = pick_isolated(i, *worker, reasons);  // the worker binds the fusion itself
      } else {
        s.bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[p.sizes]);
        std::lock_guard lock(plugin_mu_);
        s.plugin = pick_builtin(registry_, s.bf, target_, &reasons);
      }
      if (!s.plugin) {
        r.plugin = kAutoScheduler;
        r.key = report::record_key(kAutoScheduler, report::hash_hex(asker),
                                   f.name + "@" + fusion_hashes_[p.fusion], r.sizes,
                                   device_.fingerprint);
        std::string why;
        for (const std::string& x : reasons) why += (why.empty() ? "" : "; ") + x;
        fail(s, report::Status::Rejected, "no built-in plugin takes it: " + why);
        return false;
      }
    } catch (const plugin::PluginFault& e) {
      r.plugin = kAutoScheduler;
      fail(s, report::Status::PluginError, e.what());
      return false;
    } catch (const UserError& e) {
      r.plugin = kAutoScheduler;
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
                             f.name + "@" + fusion_hashes_[p.fusion], r.sizes, device_.fingerprint);
  // What was asked for; replaced by every parameter's value once scheduled.
  // A script shows its file name and placeholder values, not its full path.
  if (!sched.script.empty()) {
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
  if (!tuned_ || !sched.uses_heuristic() || !sched.script.empty()) return std::nullopt;
  const FusionSpec& f = spec_.fusions[p.fusion];
  return tuned_->offer(plugin, f.name, f.sizes[p.sizes]);
}

bool SweepRun::schedule(size_t i, bool in_child) {
  const Point& p = points_[i];
  PointState& s = states_[i];
  const FusionSpec& f = spec_.fusions[p.fusion];
  const SchedulerSpec& sched = spec_.schedulers[p.scheduler];
  const plugin::Plugin& plugin = *s.plugin;
  report::Record& r = s.rec;
  try {
    s.bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[p.sizes]);
    r.bytes_moved = io_bytes(*s.bf.def.fusion, s.bf.sizes);
    const std::optional<plugin::TunedOffer> offer = tuned_offer(i, plugin);
    PluginRun run;
    {
      auto lock = maybe_lock(plugin_mu_, in_child);
      run = schedule_with_plugin(plugin, s.bf, target_, sched.settings(p.config),
                                 offer ? &*offer : nullptr);
    }
    r.tuned = run.tuned;
    s.transforms = std::move(run.transforms);
    if (!run.accepted) {
      fail(s, report::Status::Rejected, run.reason);
      return false;
    }
    if (sched.script.empty()) {
      r.config.clear();
      for (size_t k = 0; k < plugin.schema().size(); ++k)
        r.config.emplace_back(plugin.schema()[k].name, plugin.format_value(k, run.params[k]));
      r.config_hash = report::config_hash(r.config);
    }
    r.own_choice = own_choice(sched, plugin, run.own);  // a search's warm start
  } catch (const plugin::PluginFault& e) {
    // The plugin broke the ABI: its failure, not the schedule's.
    fail(s, report::Status::PluginError, e.what());
    return false;
  } catch (const UserError& e) {
    fail(s, report::Status::ScheduleError, e.what());
    return false;
  }
  return true;
}

void SweepRun::prepare_kernel(size_t i) {
  PointState& s = states_[i];
  s.kernel = runtime::prepare(
      *s.bf.def.fusion, s.bf.sizes, {},
      runtime::KernelOptions{spec_.dynamic_sizes, spec_.schedulers[points_[i].scheduler].fast_math});
}

bool SweepRun::compile(size_t i, runtime::Backend& be, bool may_reuse) {
  PointState& s = states_[i];
  report::Record& r = s.rec;
  try {
    prepare_kernel(i);
    r.kernel_hash = s.kernel.source.hash();
    // An unchanged kernel at the same sizes on the same device: its earlier
    // verdict and times stand (the inputs are generated deterministically).
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
    s.compiled = be.compile(s.kernel.source);
  } catch (const UserError& e) {
    fail(s, report::Status::CompileError, e.what());
    return false;
  }
  return true;
}

void SweepRun::validate(size_t i, runtime::Backend& be, bool in_child) {
  PointState& s = states_[i];
  report::Record& r = s.rec;
  try {
    std::vector<ref::HostTensor> got;
    std::vector<runtime::SanitizerFinding> findings;
    {
      auto lock = maybe_lock(launch_mu_, in_child);
      // Under the sanitizer by default: on the CPU backend its traced run
      // is the validating run; on CUDA it runs beside the GPU's.
      // Beyond the traced budget (work_estimate.h) the point is validated
      // without it, as with `validation: {sanitize: false}`.
      const bool cpu = !is_cuda(be);
      const bool sanitize =
          spec_.validation.sanitize && runtime::traced_run_fits(s.kernel, s.bf.sizes);
      if (!cpu || !sanitize)
        got = runtime::execute(be, *s.compiled, s.kernel, s.reference->inputs, s.bf.sizes);
      if (sanitize) {
        runtime::SanitizedRun run =
            sanitize_kernel(be, s.kernel, s.reference->inputs, s.bf.sizes,
                            s.bf.def.fusion->name(), options_.cache_dir);
        findings = std::move(run.findings);
        if (cpu) got = std::move(run.outputs);
      }
    }
    std::optional<ref::Tolerance> tol;
    if (spec_.validation.rtol || spec_.validation.atol)
      tol = ref::Tolerance::user(spec_.validation.rtol.value_or(0),
                                 spec_.validation.atol.value_or(0));
    Validation v = sweep::validate(*s.reference->plain, s.bf.sizes, got, s.reference->want, tol);
    v.add_findings(findings);
    r.max_abs_error = v.max_abs_error;
    // The default criterion has no rtol/atol: the record holds {0, floor}.
    if (!v.outputs.empty()) {
      const ref::Tolerance& t = v.outputs[0].tol;
      r.tolerance = {t.rtol(), t.is_user() ? t.atol() : t.floor()};
    }
    if (v.racy()) return fail(s, report::Status::Racy, v.summary());
    if (!v.ok) return fail(s, report::Status::WrongResult, v.summary());
  } catch (const UserError& e) {
    // Launch-time checks (vector alignment, block size) reject the schedule.
    return fail(s, report::Status::ScheduleError, e.what());
  }
}

// The performance model's prediction of a validated point, traced on a CPU
// backend (this one, or one made for it when the sweep runs on CUDA). Traced
// launches take launch_mu_ like every other launch of phase 1.
void SweepRun::profile(size_t i) {
  PointState& s = states_[i];
  if (!options_.profile_device || s.rec.status != report::Status::Ok ||
      s.kernel.source.source.empty())
    return;
  std::lock_guard lock(launch_mu_);
  if (is_cuda(backend_) && !profile_cpu_) profile_cpu_ = make_backend("cpu", options_.cache_dir);
  runtime::Backend& cpu = is_cuda(backend_) ? *profile_cpu_ : backend_;
  model::ProfileOptions po;
  po.cache_dir = options_.cache_dir;
  try {
    s.rec.prediction = model::record_prediction(
        model::profile_kernel(cpu, s.kernel, *s.bf.def.fusion, s.bf.sizes, s.rec.bytes_moved,
                              *options_.profile_device, po, s.rec.fusion));
  } catch (const UserError& e) {
    // The point stays ok (it validated); its record says why it has no prediction.
    s.rec.error = std::string("no prediction: ") + e.what();
  }
}

void SweepRun::phase1(size_t i, isolate::Worker* worker) {
  if (!identify(i, worker)) return;
  PointState& s = states_[i];
  s.reference = reference_of(points_[i]);  // in the parent: a child takes no locks
  if (worker) return isolate(i, *worker);
  if (schedule(i, /*in_child=*/false) && compile(i, backend_, /*may_reuse=*/true))
    validate(i, backend_, /*in_child=*/false);
}

// ---- --isolate: the worker's side and the host's ----
//
// A request is a JSON object: {"kind": "pick" or "point", "i": the point,
// "plugins": the loaded files (the registry's shadow copies) of the
// candidates (pick) or of the point's plugin, "record": the record so far}.
// The worker is a copy of this object from the round it was forked in, so
// points_ and spec_ are current there; everything identify() decided since
// travels in the request.

namespace {

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

}  // namespace

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
  s.reference = compute_reference(child_references_[{p.fusion, p.sizes, fast_math}], p, fast_math);
  const bool launches = launches_in_workers();
  if (schedule(i, /*in_child=*/true) && launches) {
    if (!child_backend_) child_backend_ = make_backend("cpu", options_.cache_dir);
    if (compile(i, *child_backend_, /*may_reuse=*/true)) validate(i, *child_backend_, true);
  }
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
    s.bf = bind_fusion(f.path, options_.fusion_dirs, f.sizes[points_[i].sizes]);
    try {
      plugin::replay(*s.bf.def.fusion, s.transforms);
    } catch (const UserError& e) {
      internal_error << "the schedule made in the isolated worker does not replay in the host: "
                     << e.what();
    }
  };
  if (final) {
    s.final = true;
    s.cached = !s.rec.times_us.empty();
    // A measurement reused from the previous results: its kernel, for the
    // profile (predictions are not carried over: the device model may have
    // changed since).
    if (s.rec.reused && options_.profile_device) {
      replay_here();
      prepare_kernel(i);
      internal_assert(s.kernel.source.hash() == worker_kernel)
          << "the schedule replayed in the host gives kernel " << s.kernel.source.hash()
          << ", the isolated worker's was " << worker_kernel;
    }
    return;
  }
  const bool validated = answer.at("validated").get<bool>();
  replay_here();
  if (!validated) {
    // On CUDA: compiled and validated here, as without isolation.
    if (compile(i, backend_, /*may_reuse=*/true)) validate(i, backend_, /*in_child=*/false);
    return;
  }
  if (!compile(i, backend_, /*may_reuse=*/false)) return;
  internal_assert(s.rec.kernel_hash == worker_kernel)
      << "the schedule replayed in the host gives kernel " << s.rec.kernel_hash
      << ", the isolated worker's was " << worker_kernel;
}

// The points of a (fusion, sizes) group are timed in interleaved rounds;
// points with the same kernel and launch are timed once, and the others share
// that measurement (same_kernel_as).
void SweepRun::measure() {
  const MeasureSpec& m = spec_.measure;
  // A group is a (fusion, sizes) and the repetitions its searches ask for
  // (halving times its early rungs briefly).
  std::map<std::tuple<size_t, size_t, int64_t>, std::vector<size_t>> by_group;
  for (size_t i = 0; i < states_.size(); ++i)
    if (!states_[i].final &&
        passes_benchmark_filter(options_.benchmark_args, benchmark_name(states_[i].rec)))
      by_group[{points_[i].fusion, points_[i].sizes,
                searches_[point_search_[i]].strategy->repetitions(m.repetitions)}]
          .push_back(i);
  for (const auto& [where, members] : by_group) {
    const size_t repetitions = static_cast<size_t>(std::get<2>(where));
    const uint64_t group = groups_++;
    std::vector<std::unique_ptr<runtime::BoundArgs>> bound;
    std::vector<size_t> timed;                       // representatives, by member
    std::map<std::pair<std::string, std::string>, size_t> first;  // (kernel, launch) -> timed index
    std::vector<size_t> timed_of(members.size());
    for (size_t k = 0; k < members.size(); ++k) {
      PointState& st = states_[members[k]];
      auto b = std::make_unique<runtime::BoundArgs>(backend_, st.kernel, st.reference->inputs,
                                                    st.bf.sizes);
      const runtime::LaunchDims& d = b->dims();
      st.rec.launch = fmt::format("grid={}x{}x{} block={}x{}x{} smem={}", d.grid[0], d.grid[1],
                                  d.grid[2], d.block[0], d.block[1], d.block[2], d.shared_bytes);
      auto [it, fresh] = first.emplace(std::pair(st.rec.kernel_hash, st.rec.launch), timed.size());
      timed_of[k] = it->second;
      if (fresh) {
        timed.push_back(members[k]);
        bound.push_back(std::move(b));
      }
    }
    std::vector<TimedKernel> kernels;
    for (size_t t = 0; t < timed.size(); ++t) {
      runtime::CompiledKernel* compiled = states_[timed[t]].compiled.get();
      const runtime::BoundArgs* args = bound[t].get();
      runtime::Backend* be = &backend_;
      kernels.push_back(
          {[=](int n) { be->time(*compiled, args->dims(), args->args(), n, 0); },
           [=] { return be->time(*compiled, args->dims(), args->args(), 0, 1).seconds.at(0); }});
    }
    const std::vector<std::vector<double>> times =
        time_kernels(kernels, repetitions, m.warmup, m.min_time, seed_, group);
    for (size_t k = 0; k < members.size(); ++k) {
      PointState& st = states_[members[k]];
      const size_t t = timed_of[k];
      st.rec.times_us.clear();
      for (double sec : times[t]) st.rec.times_us.push_back(sec * 1e6);
      st.rec.group = run_nonce_ + "-" + std::to_string(group);
      st.rec.seed = seed_;
      if (timed[t] != members[k]) st.rec.same_kernel_as = benchmark_name(states_[timed[t]].rec);
      st.final = true;
    }
    for (size_t i : members) record(states_[i]);
  }
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

// Google Benchmark reports every timed record once, whether timed now, reused
// or resumed, so --benchmark_out always describes this run whole.
void SweepRun::report_benchmarks() {
  std::vector<ReplayedBenchmark> replay;
  std::set<std::string> names;
  for (const report::Record& r : result_.records) {
    if (r.status != report::Status::Ok || r.times_us.empty()) continue;
    std::string name = benchmark_name(r);
    for (int dup = 2; names.count(name); ++dup)
      name = fmt::format("{}/dup:{}", benchmark_name(r), dup);
    names.insert(name);
    std::string label = is_cuda(backend_) ? "cuda-events" : "cpu-emulation";
    if (r.reused) label += ", reused";
    if (done_.count(r.key)) label += ", resumed";
    if (!r.same_kernel_as.empty()) label += ", same kernel as " + r.same_kernel_as;
    replay.push_back({name, r.times_us, r.bytes_moved, device_.peak_gbps * 1e9, label});
  }
  report_with_google_benchmark(replay, options_.benchmark_args);
}

}  // namespace

RunResult run_sweep(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
                    const RunOptions& options) {
  return SweepRun(spec, registry, backend, options).run();
}

}  // namespace schedlab::sweep
