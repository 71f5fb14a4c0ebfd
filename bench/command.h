// The schedlab host program's verbs. Each verb lives in its own bench/cmd_*.cpp:
// add_<verb>_command registers the subcommand and its options on the app and
// returns how to run it once parsed; main.cpp only dispatches and maps errors
// to exit codes (below; README.md lists them for users).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace schedlab::cli {

/// Exit codes (README.md, "What works today").
constexpr int kExitOk = 0;
constexpr int kExitFailures = 1;  ///< the run found failures (validation, regression)
constexpr int kExitUsage = 2;     ///< bad input or usage
constexpr int kExitInternal = 3;  ///< a bug in schedlab

/// A registered verb: its subcommand, and what to run when it was parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_show_command(CLI::App& app);
Command add_exec_command(CLI::App& app);
Command add_plugins_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_watch_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_fuzz_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_slurm_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);

/// --plugin-dir: directories searched for plugins before $SCHEDLAB_PLUGIN_PATH
/// and the built-in ones.
void add_plugin_dir_option(CLI::App* cmd, std::vector<std::string>& dirs);

/// Where fusion names are looked up: `flags` (--fusion-dir), then
/// $SCHEDLAB_FUSION_PATH (colon-separated), then the source tree's configs/fusions.
std::vector<std::string> fusion_dirs(const std::vector<std::string>& flags);
/// Where --device names resolve: $SCHEDLAB_DEVICE_PATH (colon-separated),
/// then configs/devices.
std::vector<std::string> device_dirs();

}  // namespace schedlab::cli
