// `schedlab run SWEEP`: validate and benchmark every point of a sweep file,
// append the records to a JSONL file, and print the side-by-side table.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_checks.h"
#include "command.h"
#include "mesh_point.h"
#include "run_common.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/base/suggest.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/report/ab.h"
#include "schedlab/report/curves.h"
#include "schedlab/report/html.h"
#include "schedlab/report/merge.h"
#include "schedlab/report/results_lock.h"
#include "schedlab/report/table.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/run/ab.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/run/shard.h"
#include "schedlab/sweep/tuned/tuned.h"
#include "subprocess.h"

namespace schedlab::cli {

void SweepOptions::add_to(CLI::App* cmd, const std::string& output_flags) {
  cmd->add_option("sweep", sweep,
                  "A sweep file, or the name of a standard sweep (configs/sweeps: quickstart, ...)")
      ->required()
      ->transform(
          [](std::string s) {
            // A standard sweep by name, from any directory (the installed configs too).
            std::error_code ec;
            if (std::filesystem::exists(s, ec)) return s;
            for (const char* ext : {"", ".yaml"}) {
              std::filesystem::path p = std::filesystem::path(base::config_dir()) / "sweeps" / (s + ext);
              if (std::filesystem::is_regular_file(p, ec)) return p.string();
            }
            return s;
          },
          "", "");
  cmd->add_option(output_flags, output,
                  "JSONL file for the records (default: schedlab-results/<sweep>.jsonl)");
  cmd->add_flag("--resume", resume,
                "Continue the output file: points already recorded there are not re-run");
  cmd->add_option("--jobs,-j", jobs, "Compile threads (default: one per core)")
      ->check(integer_in(1, 4096));
  cmd->add_option("--backend", backend, "Override the sweep's backend: auto, cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--cache-dir", cache_dir,
                  "Compiled-kernel cache (default $SCHEDLAB_CACHE_DIR or ~/.cache/schedlab)");
  cmd->add_option("--only", only, "Run only these schedulers (display names; repeatable)");
  cmd->add_option("--csv", csv, "Also write the table as CSV to this file");
  cmd->add_option("--json", json, "Also write the table as JSON to this file");
  cmd->add_option("--html", html, "Also write a self-contained HTML report to this file");
  cmd->add_option("--fusion-dir", fusion_dir_flags,
                  "Extra directory searched for fusion names (repeatable)");
  add_plugin_dir_option(cmd, plugin_dirs);
  cmd->add_flag("--isolate,!--no-isolate", isolate,
                "Load plugins and run each point's plugin calls, compile and validating launch "
                "in worker processes, so that a crash or hang marks that point crashed or "
                "timeout and no plugin code runs in schedlab itself (the default; "
                "--no-isolate: all in this process)");
  cmd->add_option("--timeout", timeout_s, "Isolated: seconds a point may take (default 120)")
      ->check(finite_number(0, /*inclusive=*/false));
  cmd->add_option("--ab", ab,
                  "The old build (.so) of a plugin the sweep uses: each scheduler using it gets a "
                  "twin NAME@old run by the old build, timed in the same interleaved rounds, "
                  "and the new/old ratios are printed after the table");
  cmd->add_option("--device", device,
                  "Profile each validated point on this device model (configs/devices; "
                  "docs/model.md) and record the prediction; on the CPU backend the table "
                  "ranks by it. none: no profiles (default h200)");
  cmd->add_option("--progress-interval", progress_interval_s,
                  "When stderr is not a terminal: seconds between progress lines (default 5; "
                  "0: one per point)")
      ->check(finite_number(0, /*inclusive=*/true));
  cmd->add_option("--tuned", tuned,
                  "A tuned file (from `schedlab tune`) offered to the plugins of the heuristic "
                  "rows (schedulers without a space): each serves the configuration of its "
                  "fusion's size bucket, its own choice elsewhere; overrides the sweep's "
                  "`tuned:` (docs/tuning.md)");
  cmd->allow_extras();  // --benchmark_* flags go to Google Benchmark
  cmd->footer(
      "Google Benchmark's flags (--benchmark_filter, --benchmark_out=FILE, "
      "--benchmark_out_format=json, ...) are passed through.");
}

sweep::LoadOptions SweepOptions::load_options(plugin::Registry& registry) const {
  sweep::LoadOptions lo;
  lo.fusion_dirs = fusion_dirs(fusion_dir_flags);
  // Script names: $SCHEDLAB_SCHEDULE_PATH (colon-separated), then configs/schedules.
  if (const char* env = std::getenv("SCHEDLAB_SCHEDULE_PATH")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) lo.schedule_dirs.push_back(d);
  }
  lo.schedule_dirs.push_back(base::config_dir() + "/schedules");
  // --isolate: not even loading (the entry point, the schema) runs a
  // plugin's code here; the sweep's workers load it for themselves.
  if (isolate)
    registry.load_isolated(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  lo.plugins = sweep::registry_lookup(registry);
  return lo;
}

std::string SweepOptions::output_for(const sweep::SweepSpec& spec) const {
  const std::string path =
      output.empty() ? (std::filesystem::path("schedlab-results") / (spec.name + ".jsonl")).string()
                     : output;
  user_assert(!std::filesystem::is_directory(path))
      << "run: the results file '" << path << "' is a directory; expected a .jsonl file (e.g. -o "
      << path << "/" << spec.name << ".jsonl)";
  return path;
}

std::unique_ptr<runtime::Backend> SweepOptions::make_backend(const sweep::SweepSpec& spec) const {
  return sweep::make_backend(backend.empty() ? std::string(sweep::backend_name(spec.backend))
                                             : backend,
                             cache_dir);
}

std::vector<std::string> SweepOptions::forwarded_args() const {
  std::vector<std::string> a;
  if (jobs > 0) a.insert(a.end(), {"--jobs", std::to_string(jobs)});
  if (!backend.empty()) a.insert(a.end(), {"--backend", backend});
  if (!cache_dir.empty()) a.insert(a.end(), {"--cache-dir", cache_dir});
  for (const std::string& s : only) a.insert(a.end(), {"--only", s});
  for (const std::string& d : fusion_dir_flags) a.insert(a.end(), {"--fusion-dir", d});
  for (const std::string& d : plugin_dirs) a.insert(a.end(), {"--plugin-dir", d});
  a.push_back(isolate ? "--isolate" : "--no-isolate");
  a.insert(a.end(), {"--timeout", fmt::format("{}", timeout_s)});
  if (!ab.empty()) a.insert(a.end(), {"--ab", ab});
  a.insert(a.end(), {"--device", device});
  a.insert(a.end(), {"--progress-interval", fmt::format("{}", progress_interval_s)});
  if (!tuned.empty()) a.insert(a.end(), {"--tuned", tuned});
  return a;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  user_assert(out.good()) << "cannot write '" << path << "'";
  out << text;
  user_assert(out.good()) << "cannot write '" << path << "'";
}

/// Progress on stderr: in place with an ETA on a terminal, periodic lines in a pipe.
ProgressLine::ProgressLine(double pipe_interval_s)
    : terminal_(isatty(STDERR_FILENO) != 0), pipe_interval_s_(pipe_interval_s) {}
ProgressLine::~ProgressLine() { clear(); }

std::string eta_text(double elapsed_s, size_t done, size_t total) {
  if (done == 0) return "";
  if (done >= total) return "done";
  const double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  const long s = std::lround(left);
  if (s >= 3600) return fmt::format("ETA {}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("ETA {}m{:02}s", s / 60, s % 60);
  return fmt::format("ETA {}s", s);
}

void ProgressLine::update(const report::Record& r, size_t done, size_t total) {
  using clock = std::chrono::steady_clock;
  const clock::time_point now = clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string line = fmt::format("[{}/{}] {} | {} {} | {} | {}: {}", done, total,
                                 eta_text(elapsed, done, total), r.fusion, r.size_label(),
                                 r.scheduler, r.config_label(), report::status_name(r.status));
  if (terminal_) {
    if (line.size() > 110) line = line.substr(0, 107) + "...";
    fmt::print(stderr, "\r\033[K{}", line);
    shown_ = true;
  } else {
    if (done < total && std::chrono::duration<double>(now - last_line_).count() < pipe_interval_s_)
      return;
    fmt::print(stderr, "{}\n", line);
    last_line_ = now;
  }
  std::fflush(stderr);
}
void ProgressLine::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

namespace {
/// The sweep's baseline, or "" when `records` hold no point of it (a shard,
/// an --only run): the table then falls back as `report` does.
std::string table_baseline(const std::vector<report::Record>& records,
                           const sweep::SweepSpec& spec) {
  const bool present = std::any_of(records.begin(), records.end(), [&](const report::Record& r) {
    return r.scheduler == spec.baseline;
  });
  return present ? spec.baseline : "";
}
}  // namespace

std::vector<report::Table> print_tables(const std::vector<report::Record>& records,
                                        const sweep::SweepSpec& spec, const SweepOptions& o) {
  report::TableOptions to;
  to.baseline = table_baseline(records, spec);
  std::vector<report::Table> tables = report::build_tables(records, to);
  fmt::print("{}", report::render_console(tables, report::colour_enabled(STDOUT_FILENO)));
  write_table_files(records, tables, spec, o);
  return tables;
}

void write_table_files(const std::vector<report::Record>& records,
                       const std::vector<report::Table>& tables, const sweep::SweepSpec& spec,
                       const SweepOptions& o) {
  if (!o.csv.empty()) write_file(o.csv, report::render_csv(tables));
  if (!o.json.empty()) write_file(o.json, report::render_json(tables));
  if (!o.html.empty()) {
    report::TableOptions to;
    to.baseline = table_baseline(records, spec);
    report::HtmlOptions ho;
    ho.title = "schedlab: " + spec.name;
    write_file(o.html, report::render_html(records, to, ho));
  }
}

int failures_exit_code(const std::vector<report::Record>& records) {
  for (const report::Record& r : records)
    if (r.status == report::Status::WrongResult || r.status == report::Status::Crashed ||
        r.status == report::Status::Timeout || r.status == report::Status::Racy ||
        r.status == report::Status::PluginError)
      return kExitFailures;
  return kExitOk;
}

sweep::RunResult run_once(const sweep::SweepSpec& spec, plugin::Registry& registry,
                          runtime::Backend& backend, const SweepOptions& o,
                          std::vector<report::Record> measured, bool resume,
                          const std::vector<std::string>& extras, const PluginSwaps& swaps) {
  sweep::RunOptions ro;
  ro.output = o.output_for(spec);
  std::error_code ec;
  if (auto dir = std::filesystem::path(ro.output).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir, ec);
  ro.resume = resume;
  ro.jobs = o.jobs;
  ro.isolate = o.isolate;
  ro.timeout_s = o.timeout_s;
  ro.cache_dir = o.cache_dir;
  ro.fusion_dirs = fusion_dirs(o.fusion_dir_flags);
  ro.only_schedulers = {o.only.begin(), o.only.end()};
  ro.measured = std::move(measured);
  ro.plugin_swaps = swaps;
  ro.tuned = o.tuned;
  ro.references = o.references;
  ro.validated = o.validated;
  if (!o.shard.empty()) ro.shard.emplace(spec, sweep::parse_shard(o.shard));
  if (o.device != "none")
    ro.profile_device = model::load_device(o.device, device_dirs());
  ro.benchmark_args.push_back("schedlab");
  for (const std::string& e : extras) ro.benchmark_args.push_back(e);
  auto progress = std::make_shared<ProgressLine>(o.progress_interval_s);
  ro.on_record = [progress](const report::Record& r, size_t done, size_t total) {
    progress->update(r, done, total);
  };
  // A point on more than one rank: `schedlab exec --mesh N` under the launcher.
  MeshPointRunner mesh{(std::filesystem::path(base::executable_dir()) / "schedlab").string(),
                       sweep::is_cuda(backend) ? "cuda" : "cpu", o.plugin_dirs,
                       o.fusion_dir_flags, o.timeout_s};
  ro.run_mesh_point = [mesh](const sweep::MeshPointRequest& q) {
    return run_mesh_point(mesh, q);
  };
  sweep::RunResult res = sweep::run_sweep(spec, registry, backend, ro);
  progress->clear();
  return res;
}

std::shared_ptr<const plugin::Plugin> load_old_build(const std::string& path,
                                                     const plugin::Registry& registry) {
  user_assert(std::filesystem::is_regular_file(path))
      << "--ab: cannot read the old build '" << path << "'";
  const std::string shadow =
      (std::filesystem::temp_directory_path() /
       fmt::format("schedlab-ab-{}-{}.so", getpid(), std::filesystem::path(path).stem().string()))
          .string();
  if (auto limit = registry.isolated_timeout())  // --isolate: never in this process
    return plugin::load_plugin_isolated(path, shadow, *limit);
  return plugin::load_plugin(path, shadow);
}

sweep::SweepSpec with_ab_twins(const sweep::SweepSpec& spec, plugin::Registry& registry,
                               std::shared_ptr<const plugin::Plugin> old, PluginSwaps& swaps) {
  sweep::PluginLookup lookup = sweep::registry_lookup(registry);
  sweep::AbPlan plan =
      sweep::plan_ab(spec, std::move(old), [&](const sweep::SchedulerSpec& s) -> std::string {
        return lookup(s.plugin).name;
      });
  swaps.insert(plan.swaps.begin(), plan.swaps.end());
  return plan.spec;
}

void print_ab(const std::vector<report::Record>& records) {
  std::vector<report::AbVerdict> v = report::ab_verdicts(records);
  if (v.empty()) return;
  fmt::print("A/B, new build against old (ratios from paired rounds):\n{}",
             report::render_ab(v));
}

namespace {

/// `--devices 0,1,...`: the device ids, each as CUDA_VISIBLE_DEVICES names
/// one (an index or a GPU UUID). A usage error unless a CUDA device answers.
std::vector<std::string> parse_devices(const std::string& list, const SweepOptions& o) {
  std::vector<std::string> ids;
  std::stringstream ss(list);
  for (std::string id; std::getline(ss, id, ',');) {
    user_assert(!id.empty() && id.find_first_of(" \t") == std::string::npos)
        << "--devices: expected a comma-separated list of GPU ids (0,1,... or GPU UUIDs, as "
           "CUDA_VISIBLE_DEVICES takes them), found '"
        << list << "'";
    user_assert(std::find(ids.begin(), ids.end(), id) == ids.end())
        << "--devices: GPU " << id << " is given twice in '" << list << "'";
    ids.push_back(id);
  }
  user_assert(!ids.empty()) << "--devices: expected a comma-separated list of GPU ids, found ''";
  user_assert(o.backend != "cpu")
      << "--devices: one measuring worker per GPU needs the CUDA backend, found --backend cpu";
  std::string why;
  user_assert(runtime::cuda_available(&why))
      << "--devices: one measuring worker per GPU needs a CUDA device, and none answers here ("
      << why << "); run without --devices";
  return ids;
}

/// `run --devices`: one `schedlab run` per GPU, each pinned to its GPU by
/// CUDA_VISIBLE_DEVICES and running its own shard of this run's points (the
/// k-th of D workers of shard I/N runs shard I + N*k of N*D, which is the
/// k-th of D parts of shard I/N: shards are dealt round-robin), writing its
/// own part next to the output; the parts are merged into the output at the
/// end. The compile cache is shared (--cache-dir, or the default), so a
/// kernel compiles once. A worker per device rather than threads: each owns
/// its CUDA context, and a GPU that hangs costs only its own points.
int run_on_devices(const SweepOptions& o, const std::vector<std::string>& devices,
                   const sweep::SweepSpec& spec, const std::string& output,
                   const std::vector<std::string>& extras, std::vector<report::Record>& merged) {
  const sweep::Shard outer = o.shard.empty() ? sweep::Shard{} : sweep::parse_shard(o.shard);
  const size_t n = devices.size();
  const std::string self = (std::filesystem::path(base::executable_dir()) / "schedlab").string();
  std::vector<std::string> parts;
  std::vector<pid_t> pids;
  for (size_t k = 0; k < n; ++k) {
    const std::string part = fmt::format("{}.gpu{}.jsonl", output, k);
    const std::string log = fmt::format("{}.gpu{}.log", output, k);
    // A fresh run starts its parts fresh; --resume continues them.
    if (!o.resume) {
      std::filesystem::remove(part);
      std::filesystem::remove(log);
    }
    const std::string sub = fmt::format("{}/{}", outer.index + outer.count * k, outer.count * n);
    std::vector<std::string> argv = {self, "run", o.sweep, "-o", part, "--resume", "--shard", sub};
    for (const std::string& a : o.forwarded_args()) argv.push_back(a);
    for (const std::string& e : extras) argv.push_back(e);
    fmt::print("GPU {}: {} (log {})\n", devices[k], part, log);
    pids.push_back(start_process(argv, {{"CUDA_VISIBLE_DEVICES", devices[k]}}, log));
    parts.push_back(part);
  }
  int worst = kExitOk;
  for (size_t k = 0; k < n; ++k) {
    const int code = wait_process(pids[k]);
    if (code != kExitOk && code != kExitFailures)
      fmt::print(stderr, "error: the worker on GPU {} exited with {}; see {}.gpu{}.log\n",
                 devices[k], code, output, k);
    worst = std::max(worst, code);
  }
  std::vector<std::string> present;
  for (const std::string& p : parts)
    if (std::filesystem::exists(p)) present.push_back(p);
  report::MergeResult m = report::merge_record_files(present);
  report::write_records(output, m.records);
  print_tables(m.records, spec, o);
  fmt::print("{} points from {} GPUs; records in {}\n", m.records.size(), n, output);
  const int code = worst != kExitOk ? worst : failures_exit_code(m.records);
  merged = std::move(m.records);
  return code;
}

}  // namespace

int run_sweep_command(const SweepOptions& o, const std::string& devices_flag,
                      const std::vector<std::string>& extras, SweepOutcome* outcome) {
  for (const std::string& e : extras)
    user_assert(e.rfind("--benchmark_", 0) == 0)
        << "run: unknown argument '" << e << "' (only --benchmark_* flags pass through)";
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  sweep::SweepSpec spec = sweep::load_sweep_file(o.sweep, o.load_options(registry));
  PluginSwaps swaps;
  if (!o.ab.empty()) spec = with_ab_twins(spec, registry, load_old_build(o.ab, registry), swaps);
  // Every check before anything on disk moves: a mistyped --only or a
  // directory given as -o must not rename the previous results away.
  for (const std::string& name : o.only)
    if (!spec.scheduler(name)) {
      std::vector<std::string> names;
      std::string list;
      for (const sweep::SchedulerSpec& s : spec.schedulers) {
        names.push_back(s.name);
        list += (list.empty() ? "" : ", ") + s.name;
      }
      const std::string close = closest_name(name, names);
      user_error << "--only: sweep '" << spec.name << "' has no scheduler named '" << name
                 << "'; its schedulers are " << list
                 << (close.empty() ? "" : " (did you mean '" + close + "'?)");
    }
  if (spec.strategy.objective == sweep::StrategySpec::Objective::Predicted && o.device == "none")
    user_error_at(spec.strategy.objective_loc)
        << "strategy objective: predicted needs the performance model, but this run profiles "
        << "no point (--device none); expected a device model (--device h200) or objective "
        << "measured";
  // A tuned file that does not load is refused before anything runs.
  if (!o.tuned.empty()) sweep::load_tuned_file(o.tuned);
  const std::string output = o.output_for(spec);  // not a directory
  std::optional<sweep::ShardPlan> shard;
  if (!o.shard.empty()) shard.emplace(spec, sweep::parse_shard(o.shard));
  const std::vector<std::string> devices =
      devices_flag.empty() ? std::vector<std::string>{} : parse_devices(devices_flag, o);
  // One writer per results file, held until the run ends.
  report::ResultsLock lock(output);
  if (!devices.empty()) {
    std::vector<report::Record> merged;
    const int code = run_on_devices(o, devices, spec, output, extras, merged);
    if (outcome) *outcome = {std::move(spec), std::move(merged)};
    return code;
  }
  auto backend = o.make_backend(spec);
  // Without --resume the previous file is kept as <output>.prev (an older
  // .prev moves to the first free .prev.N), and its
  // records are a measurement cache: an unchanged kernel is not re-timed.
  std::vector<report::Record> measured;
  if (o.resume && !std::filesystem::exists(output))
    fmt::print("note: --resume: {} does not exist yet; starting a fresh run\n", output);
  if (!o.resume && std::filesystem::exists(output)) {
    measured = report::read_records(output).records;
    const std::string older = report::keep_previous(output);
    if (!older.empty())
      fmt::print("note: the previous results are {}.prev; the ones before them moved to {}\n",
                 output, older);
  }
  if (shard)
    fmt::print("shard {}/{}: {} of the sweep's {} {}\n", shard->shard().index, shard->shard().count,
               shard->units(), shard->total_units(),
               shard->by_group() ? "(fusion, sizes) groups" : "points");
  std::fflush(stdout);  // in a Slurm task's log at once, not at the end
  sweep::RunResult res =
      run_once(spec, registry, *backend, o, std::move(measured), o.resume, extras, swaps);
  // Even a shard with no points leaves its (empty) file, so that merging
  // every part of a sweep never meets a missing one.
  if (!std::filesystem::exists(output)) std::ofstream(output, std::ios::app);
  print_tables(res.records, spec, o);
  print_ab(res.records);
  // How the search went, when the strategy chose its points (a grid's curve
  // says only where in space order its best lies; the HTML report has it).
  if (spec.strategy.kind != sweep::StrategySpec::Kind::Grid)
    fmt::print("{}", report::render_curves(report::best_so_far_curves(res.records)));
  fmt::print("{} points: {} resumed, {} measurements reused; records in {}\n", res.records.size(),
             res.resumed, res.cached, output);
  const int code = failures_exit_code(res.records);
  if (outcome) *outcome = {std::move(spec), std::move(res.records)};
  return code;
}

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto devices = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Validate and benchmark every point of a sweep; print the side-by-side table");
  o->add_to(cmd);
  cmd->add_option("--shard", o->shard,
                  "I/N: run only the I-th of N disjoint, balanced parts of the sweep, the same "
                  "on every machine (docs/cluster.md); merge the parts with schedlab merge");
  cmd->add_option("--devices", *devices,
                  "0,1,...: one measuring worker per GPU, each with its own "
                  "CUDA_VISIBLE_DEVICES, sharing the compile cache (a CUDA device is needed)");
  return {cmd, [o, devices, cmd] { return run_sweep_command(*o, *devices, cmd->remaining()); }};
}

}  // namespace schedlab::cli
