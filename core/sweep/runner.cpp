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
#include "schedlab/sweep/runner.h"

#include <fmt/core.h>

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

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
  if (old.kernel_hash.empty() || old.kernel_hash != now.kernel_hash || old.sizes != now.sizes ||
      old.device.fingerprint != now.device.fingerprint)
    return false;
  return (old.status == report::Status::Ok &&
          static_cast<int64_t>(old.times_us.size()) == repetitions) ||
         old.status == report::Status::WrongResult || old.status == report::Status::Racy;
}

}  // namespace

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

RunResult run_sweep(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
                    const RunOptions& options) {
  user_assert(!options.output.empty()) << "run: no output file for the records";
  const report::Device device = describe_device(backend);
  std::optional<runtime::DeviceProperties> target;
  if (is_cuda(backend)) target = runtime::cuda_device_properties();

  // One search per (fusion, sizes, scheduler), driven as an ask/tell loop
  // (strategy.h): each round runs every search's next proposals, then tells
  // each search how its points did. Grid and random propose everything in
  // the first round; a model-guided strategy proposes in small batches and
  // learns from observe(), with nothing to change here.
  struct Search {
    size_t fusion, sizes, scheduler;
    std::unique_ptr<SearchStrategy> strategy;
  };
  std::vector<Search> searches;
  for (size_t f = 0; f < spec.fusions.size(); ++f)
    for (size_t z = 0; z < spec.fusions[f].sizes.size(); ++z)
      for (size_t k = 0; k < spec.schedulers.size(); ++k) {
        const SchedulerSpec& sched = spec.schedulers[k];
        if (!sched.applies_to(spec.fusions[f].name) ||
            (!options.only_schedulers.empty() && !options.only_schedulers.count(sched.name)))
          continue;
        SearchProblem problem{&sched, &spec.fusions[f], &spec.fusions[f].sizes[z]};
        searches.push_back(
            {f, z, k,
             options.strategy ? options.strategy(problem) : make_strategy(spec.strategy, problem)});
      }
  std::vector<Point> points;         // this round's points
  std::vector<size_t> point_search;  // each point's search

  // What an earlier (killed) run already finished.
  std::map<std::string, report::Record> done;
  if (options.resume) {
    report::drop_truncated_tail(options.output);
    for (report::Record& r : report::read_records(options.output).records)
      done.emplace(r.key, std::move(r));
  }

  // Plugins, their binaries' hashes, and the fusion files' hashes, once each.
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins;
  std::vector<std::string> plugin_hashes;
  for (const SchedulerSpec& s : spec.schedulers) {
    std::shared_ptr<const plugin::Plugin> p;
    if (s.plugin == kAutoScheduler) {
      // Chosen per point (pick_builtin); nothing to load up front.
    } else if (s.plugin.find('/') == std::string::npos && !s.plugin.ends_with(".so")) {
      p = registry.get(s.plugin);
    } else {
      // A path: the plugin already serving that file (the spec loader read
      // its schema), else load it.
      std::error_code ec;
      for (const auto& [name, file] : registry.files())
        if (std::filesystem::equivalent(file, s.plugin, ec)) p = registry.find(name);
      if (!p) p = registry.add(s.plugin);
    }
    plugin_hashes.push_back(p ? file_hash(p->path()) : "");
    plugins.push_back(std::move(p));
  }
  std::mutex hash_mu;
  std::map<std::string, std::string> auto_hashes;  // plugin path -> hash, for `auto`
  std::vector<std::string> fusion_hashes;
  for (const FusionSpec& f : spec.fusions) fusion_hashes.push_back(file_hash(f.path));

  size_t total = 0;                // points proposed so far, over every round
  std::vector<PointState> states;  // this round's
  std::mutex out_mu;               // the output file, the callback, the counters
  RunResult result;
  size_t finished = 0;
  auto emit_state = [&](PointState& st) {
    std::lock_guard lock(out_mu);
    report::Record& r = st.rec;
    if (r.timestamp.empty()) r.timestamp = report::now_timestamp();
    if (!done.count(r.key)) report::append_record(options.output, r);
    ++finished;
    if (options.on_record) options.on_record(r, finished, total);
  };
  auto emit = [&](size_t i) { emit_state(states[i]); };

  // References, one per (fusion, sizes), computed by whichever point needs it first.
  std::mutex ref_mu;
  std::map<std::pair<size_t, size_t>, std::shared_ptr<const Reference>> references;
  auto reference_of = [&](const Point& p) {
    std::lock_guard lock(ref_mu);
    auto& slot = references[{p.fusion, p.sizes}];
    if (!slot) {
      auto r = std::make_shared<Reference>();
      const FusionSpec& f = spec.fusions[p.fusion];
      const ir::SizeBindings& sizes = f.sizes[p.sizes];
      auto def = frontend::load_fusion_file(f.path);
      r->inputs = ref::make_inputs(*def.fusion, sizes, 1, def.input_ranges);
      r->want = ref::evaluate(*def.fusion, r->inputs, sizes);
      r->plain = std::move(def.fusion);
      slot = std::move(r);
    }
    return slot;
  };

  // Locks for what is not re-entrant. A child process (--isolate) takes none:
  // it is alone in its address space, and a lock another thread held at the
  // fork would never be released there.
  std::mutex plugin_mu, launch_mu;
  auto maybe_lock = [](std::mutex& mu, bool in_child) {
    return in_child ? std::unique_lock<std::mutex>() : std::unique_lock<std::mutex>(mu);
  };

  // Step 1, in the process: the record's identity, and whether it is done
  // already (--resume). False when the point needs no more work.
  auto identify = [&](size_t i) -> bool {
    const Point& p = points[i];
    PointState& s = states[i];
    const FusionSpec& f = spec.fusions[p.fusion];
    const SchedulerSpec& sched = spec.schedulers[p.scheduler];
    const std::vector<std::string> settings = sched.settings(p.config);
    report::Record& r = s.rec;
    r.sweep = spec.name;
    r.fusion = f.name;
    for (const auto& [k, v] : f.sizes[p.sizes]) r.sizes.emplace_back(k, v);
    r.scheduler = sched.name;
    r.device = device;
    r.baseline = spec.baseline;
    r.min_effect = spec.measure.min_effect;
    s.plugin = plugins[p.scheduler];
    if (!s.plugin) {
      // `auto`: the first built-in that takes the fusion, as `exec` without
      // --plugin would pick.
      try {
        s.bf = bind_fusion(f.path, options.fusion_dirs, f.sizes[p.sizes]);
        std::vector<std::string> reasons;
        {
          std::lock_guard lock(plugin_mu);
          s.plugin = pick_builtin(registry, s.bf, target, &reasons);
        }
        if (!s.plugin) {
          r.plugin = kAutoScheduler;
          r.key = report::record_key(kAutoScheduler, "", f.name + "@" + fusion_hashes[p.fusion],
                                     r.sizes, device.fingerprint);
          std::string why;
          for (const std::string& x : reasons) why += (why.empty() ? "" : "; ") + x;
          fail(s, report::Status::Rejected, "no built-in plugin takes it: " + why);
          return false;
        }
      } catch (const UserError& e) {
        r.plugin = kAutoScheduler;
        fail(s, report::Status::ScheduleError, e.what());
        return false;
      }
    }
    bool swapped = false;
    if (auto it = options.plugin_swaps.find(sched.name);
        it != options.plugin_swaps.end() && it->second->name() == s.plugin->name()) {
      s.plugin = it->second;
      swapped = true;
    }
    const plugin::Plugin& plugin = *s.plugin;
    r.plugin = plugin.name();
    r.plugin_version = plugin.version();
    r.plugin_hash = swapped ? "" : plugin_hashes[p.scheduler];
    if (r.plugin_hash.empty()) {
      std::lock_guard lock(hash_mu);
      auto& h = auto_hashes[plugin.path()];
      if (h.empty()) h = file_hash(plugin.path());
      r.plugin_hash = h;
    }
    std::string requested;
    for (const std::string& kv : settings) requested += kv + ";";
    r.key = report::record_key(r.plugin_hash, report::hash_hex(requested),
                               f.name + "@" + fusion_hashes[p.fusion], r.sizes, device.fingerprint);
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
    if (auto it = done.find(r.key); it != done.end()) {
      r = it->second;
      s.final = true;
      return false;
    }
    return true;
  };

  // Step 2: schedule, lower, codegen, compile on `be`, and validate unless
  // the point already validated in a child. Fills the record; a failure makes
  // it final.
  auto work = [&](size_t i, runtime::Backend& be, bool validate_it, bool in_child) {
    const Point& p = points[i];
    PointState& s = states[i];
    const FusionSpec& f = spec.fusions[p.fusion];
    const SchedulerSpec& sched = spec.schedulers[p.scheduler];
    const plugin::Plugin& plugin = *s.plugin;
    report::Record& r = s.rec;
    try {
      s.bf = bind_fusion(f.path, options.fusion_dirs, f.sizes[p.sizes]);
      r.bytes_moved = io_bytes(*s.bf.def.fusion, s.bf.sizes);
      PluginRun run;
      {
        auto lock = maybe_lock(plugin_mu, in_child);
        run = schedule_with_plugin(plugin, s.bf, target, sched.settings(p.config));
      }
      if (!run.accepted) return fail(s, report::Status::Rejected, run.reason);
      if (sched.script.empty()) {
        r.config.clear();
        for (size_t k = 0; k < plugin.schema().size(); ++k)
          r.config.emplace_back(plugin.schema()[k].name, plugin.format_value(k, run.params[k]));
        r.config_hash = report::config_hash(r.config);
      }
    } catch (const UserError& e) {
      return fail(s, report::Status::ScheduleError, e.what());
    }
    try {
      s.kernel = runtime::prepare(*s.bf.def.fusion, s.bf.sizes);
      r.kernel_hash = s.kernel.source.hash();
      // An unchanged kernel at the same sizes on the same device: its earlier
      // verdict and times stand (the inputs are generated deterministically).
      for (const report::Record& old : options.measured)
        if (validate_it && reusable(old, r, spec.measure.repetitions)) {
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
          return;
        }
      s.compiled = be.compile(s.kernel.source);
    } catch (const UserError& e) {
      return fail(s, report::Status::CompileError, e.what());
    }
    if (!validate_it) return;
    try {
      std::vector<ref::HostTensor> got;
      std::vector<runtime::SanitizerFinding> findings;
      {
        auto lock = maybe_lock(launch_mu, in_child);
        // Under the sanitizer by default: on the CPU backend its traced run
        // is the validating run; on CUDA it runs beside the GPU's.
        // Beyond the traced budget (work_estimate.h) the point is validated
        // without it, as with `validation: {sanitize: false}`.
        const bool cpu = !is_cuda(be);
        const bool sanitize =
            spec.validation.sanitize && runtime::traced_run_fits(s.kernel, s.bf.sizes);
        if (!cpu || !sanitize)
          got = runtime::execute(be, *s.compiled, s.kernel, s.reference->inputs, s.bf.sizes);
        if (sanitize) {
          runtime::SanitizedRun run =
              sanitize_kernel(be, s.kernel, s.reference->inputs, s.bf.sizes,
                              s.bf.def.fusion->name(), options.cache_dir);
          findings = std::move(run.findings);
          if (cpu) got = std::move(run.outputs);
        }
      }
      std::optional<ref::Tolerance> tol;
      if (spec.validation.rtol || spec.validation.atol)
        tol = ref::Tolerance{spec.validation.rtol.value_or(0), spec.validation.atol.value_or(0)};
      Validation v = validate(*s.reference->plain, s.bf.sizes, got, s.reference->want, tol);
      v.add_findings(findings);
      r.max_abs_error = v.max_abs_error;
      if (!v.outputs.empty()) r.tolerance = {v.outputs[0].tol.rtol, v.outputs[0].tol.atol};
      if (v.racy()) return fail(s, report::Status::Racy, v.summary());
      if (!v.ok) return fail(s, report::Status::WrongResult, v.summary());
    } catch (const UserError& e) {
      // Launch-time checks (vector alignment, block size) reject the schedule.
      return fail(s, report::Status::ScheduleError, e.what());
    }
  };

  // The performance model's prediction of a validated point, traced on a
  // CPU backend (this one, or one made for it when the sweep runs on CUDA).
  // Traced launches take launch_mu like every other launch of phase 1.
  std::unique_ptr<runtime::Backend> profile_cpu;
  auto profile = [&](size_t i) {
    PointState& s = states[i];
    if (!options.profile_device || s.rec.status != report::Status::Ok ||
        s.kernel.source.source.empty())
      return;
    std::lock_guard lock(launch_mu);
    if (is_cuda(backend) && !profile_cpu) profile_cpu = make_backend("cpu", options.cache_dir);
    runtime::Backend& cpu = is_cuda(backend) ? *profile_cpu : backend;
    model::ProfileOptions po;
    po.cache_dir = options.cache_dir;
    try {
      s.rec.prediction = model::record_prediction(
          model::profile_kernel(cpu, s.kernel, *s.bf.def.fusion, s.bf.sizes, s.rec.bytes_moved,
                                *options.profile_device, po, s.rec.fusion));
    } catch (const UserError& e) {
      // The point stays ok (it validated); its record says why it has no prediction.
      s.rec.error = std::string("no prediction: ") + e.what();
    }
  };

  auto phase1 = [&](size_t i) {
    if (!identify(i)) return;
    PointState& s = states[i];
    s.reference = reference_of(points[i]);  // in the parent: a child takes no locks
    if (!options.isolate) return work(i, backend, true, false);
    // --isolate: the plugin calls, the compile and the validating launch run
    // in a child with its own backend; the child sends back the record and
    // whether it is final. A point that validated there is scheduled and
    // compiled again here (deterministic, and the compile is a cache hit)
    // for the benchmark.
    isolate::Options io;
    io.timeout = std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
    io.forward_stderr = false;
    isolate::Outcome out = isolate::run_isolated(
        [&]() -> std::string {
          auto child_backend = make_backend(is_cuda(backend) ? "cuda" : "cpu", options.cache_dir);
          work(i, *child_backend, true, true);
          // Final: the whole record. Validated: what validation measured.
          if (s.final) return "F" + report::to_json(s.rec);
          return fmt::format("P{:.17g} {:.17g} {:.17g}", s.rec.max_abs_error.value_or(0),
                             s.rec.tolerance.rtol, s.rec.tolerance.atol);
        },
        io);
    if (out.status == isolate::Outcome::Status::Crashed ||
        out.status == isolate::Outcome::Status::Timeout) {
      std::string tail = out.stderr_tail;
      if (tail.size() > 500) tail = "..." + tail.substr(tail.size() - 500);
      return fail(s,
                  out.status == isolate::Outcome::Status::Crashed ? report::Status::Crashed
                                                                  : report::Status::Timeout,
                  isolate::describe(out) + (tail.empty() ? "" : ": " + tail));
    }
    if (!out.ok()) return fail(s, report::Status::Crashed, isolate::describe(out));
    if (out.payload.front() == 'F') {
      s.rec = report::record_from_json(std::string_view(out.payload).substr(1),
                                       SourceLoc{"(isolated child)", 1, 1});
      s.final = true;
      s.cached = !s.rec.times_us.empty();
      return;
    }
    double max_abs_error = 0;
    report::Tolerance tol;
    std::istringstream(out.payload.substr(1)) >> max_abs_error >> tol.rtol >> tol.atol;
    work(i, backend, false, false);
    if (!s.final) {
      s.rec.max_abs_error = max_abs_error;
      s.rec.tolerance = tol;
    }
  };

  // Phase 2 of a round. The points of a (fusion, sizes) group are timed in
  // interleaved rounds; points with the same kernel and launch are timed
  // once, and the others share that measurement (same_kernel_as).
  const uint64_t seed = spec.measure.seed.value_or(fresh_seed());
  const std::string run_nonce = fmt::format("{:016x}", fresh_seed());
  uint64_t groups = 0;  // over the whole run: a group number is never reused
  const MeasureSpec& m = spec.measure;
  auto measure_round = [&](std::vector<PointState>& round_states, const std::vector<Point>& pts) {
    std::map<std::pair<size_t, size_t>, std::vector<size_t>> by_group;
    for (size_t i = 0; i < round_states.size(); ++i)
      if (!round_states[i].final &&
          passes_benchmark_filter(options.benchmark_args, benchmark_name(round_states[i].rec)))
        by_group[{pts[i].fusion, pts[i].sizes}].push_back(i);
    for (const auto& [where, members] : by_group) {
      const uint64_t group = groups++;
      std::vector<std::unique_ptr<runtime::BoundArgs>> bound;
      std::vector<size_t> timed;                       // representatives, by member
      std::map<std::pair<std::string, std::string>, size_t> first;  // (kernel, launch) -> timed index
      std::vector<size_t> timed_of(members.size());
      for (size_t k = 0; k < members.size(); ++k) {
        PointState& st = round_states[members[k]];
        auto b = std::make_unique<runtime::BoundArgs>(backend, st.kernel, st.reference->inputs,
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
      auto launch_once = [&](size_t t) {
        return backend.time(*round_states[timed[t]].compiled, bound[t]->dims(), bound[t]->args(), 0,
                            1).seconds.at(0);
      };
      std::vector<std::vector<double>> times = measure_interleaved(
          timed.size(), static_cast<size_t>(m.repetitions), seed, group,
          [&](size_t t) {
            if (m.warmup > 0)
              backend.time(*round_states[timed[t]].compiled, bound[t]->dims(), bound[t]->args(),
                           static_cast<int>(m.warmup), 0);
          },
          [&](size_t t) {
            // One launch, or as many as fill min_time: their mean.
            double total = launch_once(t);
            int launches = 1;
            while (total < m.min_time) total += launch_once(t), ++launches;
            return total / launches;
          });
      for (size_t k = 0; k < members.size(); ++k) {
        PointState& st = round_states[members[k]];
        const size_t t = timed_of[k];
        st.rec.times_us.clear();
        for (double sec : times[t]) st.rec.times_us.push_back(sec * 1e6);
        st.rec.group = run_nonce + "-" + std::to_string(group);
        st.rec.seed = seed;
        if (timed[t] != members[k]) st.rec.same_kernel_as = benchmark_name(round_states[timed[t]].rec);
        st.final = true;
      }
      for (size_t i : members) emit_state(round_states[i]);
    }
  };

  for (;;) {
    // The round's points: every search's next proposals.
    points.clear();
    point_search.clear();
    for (size_t k = 0; k < searches.size(); ++k)
      for (Config& c : searches[k].strategy->propose()) {
        points.push_back(
            {searches[k].fusion, searches[k].sizes, searches[k].scheduler, std::move(c)});
        point_search.push_back(k);
      }
    if (points.empty()) break;
    const size_t round = points.size();
    total += round;
    states = std::vector<PointState>(round);

    // Phase 1 on a pool: every failure is final (and written) as it happens.
    const size_t jobs = std::min<size_t>(
        round, options.jobs > 0 ? static_cast<size_t>(options.jobs)
                                : std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t t = 0; t < jobs; ++t)
      pool.emplace_back([&] {
        for (size_t i; (i = next++) < round;) {
          try {
            phase1(i);
            profile(i);
          } catch (const std::exception& e) {
            // A bug in schedlab (InternalError or worse): the point is marked,
            // the sweep goes on, and the run reports it.
            fail(states[i], report::Status::Crashed, std::string("internal error: ") + e.what());
          }
          if (states[i].final) {
            {
              std::lock_guard lock(out_mu);
              result.resumed += done.count(states[i].rec.key);
              result.cached += states[i].cached;
            }
            emit(i);
          }
        }
      });
    for (std::thread& t : pool) t.join();

    // Phase 2: time the validated points, group by group.
    measure_round(states, points);

    // Tell each search how its points did, then keep the round's records.
    for (size_t i = 0; i < round; ++i) {
      PointState& s = states[i];
      if (!s.final) continue;  // filtered out by --benchmark_filter: never timed
      Outcome outcome{std::string(report::status_name(s.rec.status)), 0};
      if (s.rec.status == report::Status::Ok && !s.rec.times_us.empty())
        outcome.median_s = s.rec.summary().median * 1e-6;
      searches[point_search[i]].strategy->observe(points[i].config, outcome);
      result.records.push_back(std::move(s.rec));
    }
  }

  // Google Benchmark reports every timed record once, whether timed now,
  // reused or resumed, so --benchmark_out always describes this run whole.
  std::vector<ReplayedBenchmark> replay;
  std::set<std::string> names;
  for (const report::Record& r : result.records) {
    if (r.status != report::Status::Ok || r.times_us.empty()) continue;
    std::string name = benchmark_name(r);
    for (int dup = 2; names.count(name); ++dup)
      name = fmt::format("{}/dup:{}", benchmark_name(r), dup);
    names.insert(name);
    std::string label = is_cuda(backend) ? "cuda-events" : "cpu-emulation";
    if (r.reused) label += ", reused";
    if (done.count(r.key)) label += ", resumed";
    if (!r.same_kernel_as.empty()) label += ", same kernel as " + r.same_kernel_as;
    replay.push_back({name, r.times_us, r.bytes_moved, device.peak_gbps * 1e9, label});
  }
  report_with_google_benchmark(replay, options.benchmark_args);
  return result;
}

}  // namespace schedlab::sweep
