// What `run` and `watch` share: the sweep options, running a sweep once, and
// printing its table.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "schedlab/report/table.h"
#include "schedlab/runtime/kernel.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::cli {

struct SweepOptions {
  std::string sweep;
  std::string output;
  bool resume = false;
  int jobs = 0;
  std::string backend;  ///< empty: the sweep's own
  double progress_interval_s = 5.0;  ///< --progress-interval (stderr not a terminal)
  std::string cache_dir;
  std::vector<std::string> only;
  std::string csv, json, html;
  std::vector<std::string> fusion_dir_flags;
  std::vector<std::string> plugin_dirs;
  bool isolate = true;  ///< --isolate (default) / --no-isolate
  double timeout_s = 120;
  std::string ab;  ///< --ab OLD.so: the old build of a plugin, measured beside the current one
  std::string device = "h200";  ///< --device: the model device points are profiled on; "none"
  std::string shard;            ///< --shard I/N (run only); "" for the whole sweep
  std::string tuned;            ///< --tuned FILE: offered to the heuristic rows' plugins
  /// References kept across runs (watch's reruns); unset: each run its own.
  std::shared_ptr<sweep::ReferenceCache> references;
  /// Earlier records whose verdicts stand (watch's A/B reruns; RunOptions::validated).
  std::vector<report::Record> validated;

  /// `output_flags`: the names of the records file's option (`tune` keeps
  /// -o for the tuned file and takes the records file as --results).
  void add_to(CLI::App* cmd, const std::string& output_flags = "--output,-o");
  /// What the sweep loader needs; with --isolate, also sets `registry` to
  /// load plugins in a child (Registry::load_isolated).
  sweep::LoadOptions load_options(plugin::Registry& registry) const;
  std::string output_for(const sweep::SweepSpec& spec) const;
  std::unique_ptr<runtime::Backend> make_backend(const sweep::SweepSpec& spec) const;
  /// The options a `schedlab run` of the same sweep elsewhere needs (a Slurm
  /// task, a worker per GPU): everything but the sweep, -o, --resume,
  /// --shard and the table files, in flag form.
  std::vector<std::string> forwarded_args() const;
};

/// A progress line on a terminal's stderr; nothing in a pipe.
class ProgressLine {
 public:
  /// On a terminal: one line rewritten in place, with an ETA. In a pipe (a
  /// CI log): a plain line at most every `pipe_interval_s` seconds, and the
  /// last point's, so a long sweep never looks hung.
  explicit ProgressLine(double pipe_interval_s = 5.0);
  ~ProgressLine();
  void update(const report::Record& r, size_t done, size_t total);
  void clear();

 private:
  bool terminal_;
  double pipe_interval_s_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_line_ = start_;  ///< the last line in a pipe
};

/// "ETA 1m05s" from the elapsed time and the points done and left ("" before
/// the first point, "done" after the last).
std::string eta_text(double elapsed_s, size_t done, size_t total);

/// Writes the --csv, --json and --html files of `tables` (built from `records`).
void write_table_files(const std::vector<report::Record>& records,
                       const std::vector<report::Table>& tables, const sweep::SweepSpec& spec,
                       const SweepOptions& o);

void write_file(const std::string& path, const std::string& text);
/// Builds the tables, prints them, writes --csv/--json/--html.
std::vector<report::Table> print_tables(const std::vector<report::Record>& records,
                                        const sweep::SweepSpec& spec, const SweepOptions& o);
/// 1 when a point failed validation, crashed, timed out or met a plugin_error.
int failures_exit_code(const std::vector<report::Record>& records);
/// The plugin swaps of an A/B run (RunOptions::plugin_swaps).
using PluginSwaps = std::map<std::string, std::shared_ptr<const plugin::Plugin>>;
/// One run of the sweep with progress on the terminal.
sweep::RunResult run_once(const sweep::SweepSpec& spec, plugin::Registry& registry,
                          runtime::Backend& backend, const SweepOptions& o,
                          std::vector<report::Record> measured, bool resume,
                          const std::vector<std::string>& extras, const PluginSwaps& swaps = {});
/// `spec` with an "@old" twin of every scheduler that can use `old` (the
/// old build of one of its plugins); `swaps` gets what stands in for each.
sweep::SweepSpec with_ab_twins(const sweep::SweepSpec& spec, plugin::Registry& registry,
                               std::shared_ptr<const plugin::Plugin> old, PluginSwaps& swaps);
/// Loads the old build at `path` from a private copy (so it may share its
/// name and even its file with the current build); in a child when
/// `registry` loads isolated (--isolate).
std::shared_ptr<const plugin::Plugin> load_old_build(const std::string& path,
                                                     const plugin::Registry& registry);
/// The A/B verdicts of `records`, when there are twins.
void print_ab(const std::vector<report::Record>& records);

/// What `run` did, for a caller that goes on (`tune`).
struct SweepOutcome {
  sweep::SweepSpec spec;
  std::vector<report::Record> records;  ///< every point's, resumed ones included
};
/// `schedlab run`: loads the sweep, runs it (over `devices`, a --devices
/// list, when not empty), prints the tables; returns the exit code and,
/// when `outcome` is not null, the spec and records.
int run_sweep_command(const SweepOptions& o, const std::string& devices,
                      const std::vector<std::string>& extras, SweepOutcome* outcome = nullptr);

}  // namespace schedlab::cli
