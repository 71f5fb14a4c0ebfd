// `schedlab tune SWEEP -o tuned.yaml`: runs the sweep (its strategy, as
// `run` does) and keeps the best configuration of each scheduler per
// (fusion, size bucket) in a tuned file, which `run --tuned`, `exec --tuned`
// and a sweep's `tuned:` offer to the plugins (docs/tuning.md).
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "command.h"
#include "run_common.h"
#include "schedlab/report/record.h"
#include "schedlab/sweep/tuned/tuned.h"

namespace schedlab::cli {
namespace {

/// "block=128, vector=4".
std::string config_str(const report::ConfigList& config) {
  std::string r;
  for (const auto& [k, v] : config) r += (r.empty() ? "" : ", ") + k + "=" + v;
  return r.empty() ? "(no parameters)" : r;
}

int run_tune(const SweepOptions& o, const std::string& tuned_path,
             const std::vector<std::string>& extras) {
  namespace fs = std::filesystem;
  // Checked before the sweep runs: an hour of tuning must not end in "cannot write".
  user_assert(!fs::is_directory(tuned_path))
      << "tune: -o '" << tuned_path << "' is a directory; expected a file such as "
      << (fs::path(tuned_path) / "tuned.yaml").string();
  const fs::path dir = fs::path(tuned_path).parent_path();
  user_assert(dir.empty() || fs::is_directory(dir))
      << "tune: cannot write '" << tuned_path << "': the directory '" << dir.string()
      << "' does not exist";
  SweepOutcome out;
  const int code = run_sweep_command(o, "", extras, &out);
  sweep::TunedFile t = sweep::choose_tuned(out.spec, out.records, report::now_timestamp());
  if (t.entries.empty()) {
    fmt::print(stderr,
               "error: tune: no point of sweep '{}' validated with a {} objective; nothing to "
               "keep, and '{}' was not written\n",
               out.spec.name, sweep::objective_name(out.spec.strategy.objective), tuned_path);
    return kExitFailures;
  }
  sweep::write_tuned_file(tuned_path, t);
  // Measured on the CPU backend, "best" is the emulation's fastest, which says
  // little of a GPU's (the table ranks by the prediction there instead).
  const bool emulated = std::any_of(out.records.begin(), out.records.end(),
                                    [](const report::Record& r) { return r.device.emulated; });
  if (emulated && out.spec.strategy.objective != sweep::StrategySpec::Objective::Predicted)
    fmt::print(stderr,
               "warning: tune: the {} objective on the CPU backend keeps the CPU emulation's "
               "fastest configurations, not a GPU's; `strategy: {{objective: predicted}}` "
               "keeps the performance model's choice for the device model\n",
               sweep::objective_name(out.spec.strategy.objective));
  fmt::print("\ntuned configurations ({} objective, best of each scheduler per fusion and size "
             "bucket):\n",
             sweep::objective_name(out.spec.strategy.objective));
  for (const sweep::TunedEntry& e : t.entries)
    fmt::print("  {} {} | {} ({}): {}; {:.3f}x the best at {} size{}, {} candidate{}{}\n",
               e.fusion, sweep::bucket_str(e.bucket), e.scheduler, e.plugin,
               config_str(e.config), e.relative, e.figures.size(),
               e.figures.size() == 1 ? "" : "s", e.candidates, e.candidates == 1 ? "" : "s",
               e.fastest.empty() ? ""
                                 : fmt::format(" (kept over {}, whose faster median is "
                                               "within noise)",
                                               config_str(e.fastest)));
  fmt::print("{} entries in {}; serve them with `schedlab run SWEEP --tuned {}`\n",
             t.entries.size(), tuned_path, tuned_path);
  return code;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto tuned = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Run a sweep's search and keep the best configuration per scheduler, fusion and size "
      "bucket in a tuned file (for run/exec --tuned)");
  o->add_to(cmd, "--results");
  cmd->add_option("--output,-o", *tuned, "The tuned file to write (YAML; docs/tuning.md)")
      ->required();
  return {cmd, [o, tuned, cmd] { return run_tune(*o, *tuned, cmd->remaining()); }};
}

}  // namespace schedlab::cli
