// `schedlab watch SWEEP`: the prototyping loop (docs/sweeps.md, "watch"). Runs
// the sweep once, then polls the sources and binaries of the sweep's
// plugins. A source change runs the plugin's build; a new binary is
// hot-reloaded (the registry keeps the last good version on any failure);
// then only the points of the schedulers that use the changed plugin are
// re-run, as an A/B run (sweep/run/ab.h) of the new build against the one it
// replaced, timed in the same interleaved rounds; the table is printed with
// the change from the previous one, then the paired new/old verdicts. Build failures, load
// failures, crashes and wrong results are printed and the loop goes on.
//
// Rollback, as in cr.h: when the new build crashes, hangs, fails validation
// (wrong_result, racy) or breaks the ABI (plugin_error) on a point where the
// build it replaced passed in the same rerun, the registry puts the earlier
// build back, watch says so in one line, and the plugin's points are re-run
// with it; it serves until the file changes again. Points run isolated by
// default (--no-isolate to opt out), so a crash or a hang costs one point,
// never the loop.
//
// A Python heuristic (`plugin: python, file: F.py`) is watched by its file,
// which is its binary: a save reloads it without a build, and the A/B twin
// and rollback run the text the registry snapshotted before the save.
//
// Polling (every 20 ms: a few stat calls) rather than inotify: sources live anywhere, builds
// replace files by rename, and one thread that owns every step keeps a
// reload from racing a run.
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "cli_checks.h"
#include "command.h"
#include "run_common.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/report/ab.h"
#include "schedlab/report/results_lock.h"
#include "schedlab/report/table.h"
#include "schedlab/sweep/run/ab.h"

namespace schedlab::cli {
namespace {

namespace fs = std::filesystem;

struct WatchOptions {
  SweepOptions sweep;
  std::string build;                 ///< --build: the command for every plugin
  std::vector<std::string> sources;  ///< --source DIR (all plugins) or NAME=DIR
  int max_reruns = -1;               ///< exit after this many reruns (tests, benches)
};

bool failed(report::Status s) {
  using report::Status;
  return s == Status::Crashed || s == Status::Timeout || s == Status::WrongResult ||
         s == Status::Racy || s == Status::PluginError;
}

/// The first point of an A/B rerun where the new build failed (failed()) and
/// its old twin ("<scheduler>@old", same fusion and sizes, the same position
/// among that scheduler's points there: the twin expands the same configs in
/// the same order) was ok. Null when there is none.
const report::Record* first_regression(const std::vector<report::Record>& rerun) {
  std::map<std::string, std::array<std::vector<const report::Record*>, 2>> groups;
  const std::string old_suffix = sweep::kAbOldSuffix;
  for (const report::Record& r : rerun) {
    const bool old = r.scheduler.ends_with(old_suffix);
    const std::string sched =
        old ? r.scheduler.substr(0, r.scheduler.size() - old_suffix.size()) : r.scheduler;
    std::string key = r.fusion + '\n' + sched;
    for (const auto& [k, v] : r.sizes) key += '\n' + k + '=' + std::to_string(v);
    groups[key][old ? 1 : 0].push_back(&r);
  }
  for (const report::Record& r : rerun) {
    if (r.scheduler.ends_with(old_suffix) || !failed(r.status)) continue;
    for (const auto& [key, g] : groups) {
      auto at = std::find(g[0].begin(), g[0].end(), &r);
      if (at == g[0].end()) continue;
      const size_t i = static_cast<size_t>(at - g[0].begin());
      if (i < g[1].size() && g[1][i]->status == report::Status::Ok) return &r;
    }
  }
  return nullptr;
}

/// "crashed (SIGSEGV)" from a record: its status and the first line of its
/// error. A line too long for one message loses its middle, never its end:
/// a plugin's error ends with what went wrong ("mine.py:27: in schedule:
/// KeyError: 'no_such_param'") after a prefix and a path of any length.
std::string failure_text(const report::Record& r) {
  std::string e = r.error.substr(0, r.error.find('\n'));
  if (e.size() > 400) {
    // Cut between UTF-8 characters (a path may hold any).
    auto boundary = [&e](size_t i) {
      while (i < e.size() && (static_cast<unsigned char>(e[i]) & 0xC0) == 0x80) ++i;
      return i;
    };
    e = e.substr(0, boundary(120)) + " ... " + e.substr(boundary(e.size() - 275));
  }
  const std::string status(report::status_name(r.status));
  if (e.starts_with(status)) return e;  // "crashed (SIGSEGV)", "timeout after 2 s"
  return status + (e.empty() ? "" : ": " + e);
}

/// The newest modification time of a file or of the files under a directory.
fs::file_time_type newest(const std::string& path) {
  std::error_code ec;
  fs::file_time_type t = fs::file_time_type::min();  // the clock's epoch is in the future
  if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec)) t = std::max(t, it->last_write_time(ec));
  } else {
    t = fs::last_write_time(path, ec);
  }
  return t;
}

/// Runs `cmd` in a shell; returns its exit status and the tail of its output.
std::pair<int, std::string> run_build(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "cannot start the build command"};
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  if (out.size() > 4000) out = "...\n" + out.substr(out.size() - 4000);
  return {status, out};
}

/// The directory of the CMake build tree that holds `file`, or "".
std::string cmake_build_dir(const fs::path& file) {
  for (fs::path d = file.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
    if (fs::exists(d / "CMakeCache.txt")) return d.string();
  return "";
}

/// What is watched for one plugin.
struct Watched {
  std::string name;    ///< the registry name
  std::string binary;  ///< its .so
  std::vector<std::string> sources;
  std::string build;  ///< the build command ("" : none, binaries only)
  fs::file_time_type source_stamp = fs::file_time_type::min(), binary_stamp;
};

/// What schedlab_add_plugin recorded beside `binary` (<name>.so.sources:
/// `source FILE` and `build COMMAND` lines), in tree or out; nothing when
/// the file is absent (a plugin built some other way).
void read_recorded_sources(const std::string& binary, Watched& w) {
  std::ifstream in(binary + ".sources");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("source ")) w.sources.push_back(line.substr(7));
    if (line.starts_with("build ") && w.build.empty()) w.build = line.substr(6);
  }
}

int run_watch(const WatchOptions& o, const std::vector<std::string>& extras) {
  SweepOptions so = o.sweep;
  // The reruns re-run the same fusions at the same sizes: one reference each.
  so.references = std::make_shared<sweep::ReferenceCache>();
  plugin::Registry registry(plugin::plugin_search_path(so.plugin_dirs));
  sweep::SweepSpec spec = sweep::load_sweep_file(so.sweep, so.load_options(registry));
  auto backend = so.make_backend(spec);
  const std::string output = so.output_for(spec);
  report::ResultsLock lock(output);  // one writer per results file
  std::vector<report::Record> previous;
  if (fs::exists(output)) {
    previous = report::read_records(output).records;
    report::keep_previous(output);
  }
  // --ab: the first run compares against the given old build; later runs
  // against the build each reload replaced.
  PluginSwaps first_swaps;
  const sweep::SweepSpec first_spec =
      so.ab.empty() ? spec
                    : with_ab_twins(spec, registry, load_old_build(so.ab, registry), first_swaps);
  sweep::RunResult res =
      run_once(first_spec, registry, *backend, so, previous, false, extras, first_swaps);
  std::vector<report::Record> records;
  for (const report::Record& r : res.records)
    if (!first_swaps.count(r.scheduler)) records.push_back(r);
  std::vector<report::Table> tables = print_tables(records, spec, so);
  print_ab(res.records);
  // Every kernel this session validated (and profiled), old builds' too: an
  // edit that brings one back (64 -> 128 -> 64) keeps its verdict.
  std::vector<report::Record> validated = res.records;

  // What to watch: every plugin the sweep uses, its binary and its sources.
  std::map<std::string, Watched> watched;
  std::map<std::string, std::vector<std::string>> schedulers_of;  // plugin -> display names
  for (const report::Record& r : records) {
    std::vector<std::string>& names = schedulers_of[r.plugin];
    if (std::find(names.begin(), names.end(), r.scheduler) == names.end())
      names.push_back(r.scheduler);
  }
  for (auto& [name, file] : registry.files()) {
    if (!schedulers_of.count(name)) continue;
    Watched w;
    w.name = name;
    w.binary = file;
    for (const std::string& s : o.sources) {
      auto eq = s.find('=');
      if (eq == std::string::npos)
        w.sources.push_back(s);
      else if (s.substr(0, eq) == name)
        w.sources.push_back(s.substr(eq + 1));
    }
    // A Python heuristic is its own binary: a save reloads it, nothing builds.
    const bool python = plugin::is_python_file(file);
    if (python) {
      w.sources.clear();
    } else {
      // --source and --build win; else what the plugin's build recorded; else
      // the CMake target of the build tree that holds the .so.
      Watched recorded;
      read_recorded_sources(file, recorded);
      if (w.sources.empty()) w.sources = recorded.sources;
      w.build = !o.build.empty() ? o.build : recorded.build;
      if (w.build.empty()) {
        std::string dir = cmake_build_dir(file);
        if (!dir.empty()) w.build = fmt::format("cmake --build '{}' --target {}", dir, name);
      }
    }
    for (const std::string& s : w.sources) w.source_stamp = std::max(w.source_stamp, newest(s));
    w.binary_stamp = newest(w.binary);
    if (python)
      fmt::print("watching {}: Python heuristic {} (a save reloads it, no build)\n", name,
                 w.binary);
    else
      fmt::print("watching {}: binary {}{}{}\n", name, w.binary,
                 w.sources.empty() ? "" : fmt::format(", sources {}", fmt::join(w.sources, ", ")),
                 w.build.empty() ? "" : fmt::format(", build: {}", w.build));
    if (w.sources.empty() && !python)
      fmt::print(
          "  no sources known for {} (no {}.sources beside it: not built with "
          "schedlab_add_plugin); only a new binary is reloaded. Pass --source {}=FILE "
          "and --build CMD to rebuild on edits\n",
          name, fs::path(file).filename().string(), name);
    watched.emplace(name, std::move(w));
  }
  std::fflush(stdout);

  int reruns = 0;
  while (o.max_reruns < 0 || reruns < o.max_reruns) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto& [name, w] : watched) {
      fs::file_time_type src = fs::file_time_type::min();
      for (const std::string& s : w.sources) src = std::max(src, newest(s));
      bool built = false;  // the binary is the output of a build that has exited
      if (src != w.source_stamp) {
        w.source_stamp = src;
        if (!w.build.empty()) {
          fmt::print("{} changed: building ({})\n", name, w.build);
          std::fflush(stdout);
          auto [status, log] = run_build(w.build);
          if (status != 0) {
            fmt::print("build of {} failed (exit {}); still serving generation {}:\n{}\n", name,
                       WIFEXITED(status) ? WEXITSTATUS(status) : status, registry.generation(name),
                       log);
            std::fflush(stdout);
            continue;
          }
          built = true;
        }
      }
      fs::file_time_type bin = newest(w.binary);
      if (bin == w.binary_stamp) continue;
      // Wait until the file is quiet: the same stamp over one more period.
      // Not after our own build, which has exited: its output is complete.
      if (!built) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (newest(w.binary) != bin) continue;
      }
      w.binary_stamp = bin;
      // The serving build stays loaded as the A side: the rerun times both
      // builds in the same interleaved rounds (sweep/run/ab.h).
      std::shared_ptr<const plugin::Plugin> before = registry.find(name);
      const uint64_t before_generation = registry.generation(name);
      plugin::ReloadResult rr = registry.reload(name);
      if (!rr.ok) {
        fmt::print("reload of {} failed; still serving generation {}: {}\n", name, rr.generation,
                   rr.message);
        std::fflush(stdout);
        continue;
      }
      fmt::print("reloaded {} (generation {}); re-running {} against generation {}\n", name,
                 rr.generation, fmt::join(schedulers_of[name], ", "), before_generation);
      PluginSwaps swaps;
      const sweep::SweepSpec ab_spec = with_ab_twins(spec, registry, before, swaps);
      SweepOptions only = so;
      only.only = schedulers_of[name];
      for (const std::string& s : schedulers_of[name])
        if (swaps.count(s + sweep::kAbOldSuffix)) only.only.push_back(s + sweep::kAbOldSuffix);
      // No measurement cache: both builds are timed afresh, in the same rounds.
      // The kernels validated before (the old build's, any the edit left
      // unchanged, any an earlier edit made) keep their verdicts and predictions.
      only.validated = validated;
      sweep::RunResult again =
          run_once(ab_spec, registry, *backend, only, {}, false, extras, swaps);
      bool rolled_back = false;
      if (const report::Record* bad = first_regression(again.records)) {
        plugin::ReloadResult rb = registry.rollback(name);
        if (rb.ok) {
          rolled_back = true;
          fmt::print(
              "rolled back {} to generation {} (version {}): generation {} {} on {} {} ({}), "
              "where generation {} passed; generation {} serves until {} changes again\n",
              name, rb.generation, rb.plugin->version(), rb.rolled_back_from, failure_text(*bad),
              bad->fusion, bad->size_label(), bad->scheduler, rb.generation, rb.generation,
              fs::path(w.binary).filename().string());
          std::fflush(stdout);
          // The table and the results file go back to the restored build:
          // its points again, unchanged kernels reusing their measurements.
          SweepOptions plain = only;
          plain.only = schedulers_of[name];
          again = run_once(spec, registry, *backend, plain, records, false, extras);
        } else {
          fmt::print("cannot roll back {}: {}\n", name, rb.message);
        }
      }
      validated.insert(validated.end(), again.records.begin(), again.records.end());
      // Replace the affected schedulers' records, keep the others.
      std::vector<report::Record> merged;
      for (const report::Record& r : records)
        if (r.plugin != name) merged.push_back(r);
      for (const report::Record& r : again.records)
        if (!r.scheduler.ends_with(sweep::kAbOldSuffix)) merged.push_back(r);
      records = std::move(merged);
      report::TableOptions to;
      to.baseline = spec.baseline;
      std::vector<report::Table> next = report::build_tables(records, to);
      // The change column reads the A/B verdicts' own words and numbers
      // (report/verdict.h), so it cannot contradict the A/B lines below.
      fmt::print("{}", report::render_delta(tables, next, report::colour_enabled(STDOUT_FILENO),
                                            report::ab_verdicts(again.records)));
      write_table_files(records, next, spec, so);
      print_ab(again.records);
      if (rolled_back)
        fmt::print("{} points re-run with generation {}\n", again.records.size(),
                   registry.generation(name));
      else
        fmt::print("{} points re-run, both builds\n", again.records.size());
      std::fflush(stdout);
      tables = std::move(next);
      ++reruns;
    }
  }
  return failures_exit_code(records);
}

}  // namespace

Command add_watch_command(CLI::App& app) {
  auto o = std::make_shared<WatchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "Run a sweep, then rebuild, hot-reload and re-run a plugin's points whenever it changes");
  o->sweep.add_to(cmd);
  cmd->add_option("--build", o->build,
                  "Build command run when a plugin's sources change (default: the CMake "
                  "target of the plugin, in the build tree that holds its .so)");
  cmd->add_option("--source", o->sources,
                  "Source directory or file to watch: DIR for every plugin, or NAME=DIR "
                  "(default: the sources schedlab_add_plugin recorded in <plugin>.so.sources)");
  cmd->add_option("--max-reruns", o->max_reruns, "Exit after this many reruns (default: never)")
      ->check(integer_in(0, std::numeric_limits<int>::max()));
  return {cmd, [o, cmd] { return run_watch(*o, cmd->remaining()); }};
}

}  // namespace schedlab::cli
