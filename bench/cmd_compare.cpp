// `schedlab compare BASE NEW`: the regression report between two result
// files (Google Benchmark JSON or sweep JSONL; schedlab/report/compare.h).
// Sweep files are matched by (fusion, sizes, scheduler), so a heuristic that
// picks another configuration is compared and named. Each benchmark's
// new/base ratio is worded as every verdict is (report/verdict.h: "1.20x
// slower [1.19, 1.21]*"). Exit 1 when a benchmark
// regressed significantly beyond the threshold or broke, 0 otherwise; a
// malformed file is a user error (exit 2).
#include <fmt/core.h>

#include <memory>

#include "command.h"
#include "schedlab/report/compare.h"

namespace schedlab::cli {

namespace {

struct CompareOptions {
  std::string base;
  std::string next;
  std::string threshold;  ///< "" : the default (see report::CompareOptions; 0% for predictions)
  std::string format = "text";
  std::string metric = "time";
  bool include_unchanged_kernels = false;
};

int run_compare(const CompareOptions& o) {
  const bool predicted = o.metric == "predicted";
  report::CompareOptions co;
  if (!o.threshold.empty() || predicted)
    co.threshold = report::parse_threshold(o.threshold.empty() ? "0%" : o.threshold);
  co.deterministic = predicted;
  co.include_unchanged_kernels = o.include_unchanged_kernels;
  const report::Metric metric = predicted ? report::Metric::Predicted : report::Metric::Time;
  report::ResultFile base = report::load_result_file(o.base, metric);
  report::ResultFile next = report::load_result_file(o.next, metric);
  report::CompareReport r = report::compare(base, next, co);
  if (o.format == "markdown")
    fmt::print("{}", report::render_compare_markdown(r));
  else if (o.format == "json")
    fmt::print("{}", report::render_compare_json(r));
  else
    fmt::print("{}", report::render_compare_text(r));
  return r.has_regression() ? kExitFailures : kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two result files (Google Benchmark JSON with --benchmark_repetitions, or sweep "
      "JSONL); exit 1 on a significant regression");
  cmd->add_option("base", o->base, "The baseline results (e.g. main.json)")->required();
  cmd->add_option("new", o->next, "The results to check (e.g. branch.json)")->required();
  cmd->add_option("--threshold", o->threshold,
                  "Smallest change of the new/base ratio that counts either way, in percent "
                  "(default: the sweep's min_effect, else 10% for CPU emulation and 2% on a GPU; "
                  "5% for Google Benchmark files; 0% with --metric predicted); a measured change "
                  "also needs p < 0.05 (Wilcoxon signed-rank when both files' times come from "
                  "one interleaved group, else Mann-Whitney U)");
  cmd->add_flag("--include-unchanged-kernels", o->include_unchanged_kernels,
                "Also judge benchmarks whose kernel (source and launch) did not change; by "
                "default their differences are noise and never flagged");
  cmd->add_option("--metric", o->metric,
                  "time: the measured repetitions; predicted: the performance model's "
                  "predicted time of sweeps run with --device (deterministic: any change "
                  "beyond the threshold counts)")
      ->check(CLI::IsMember({"time", "predicted"}));
  cmd->add_option("--format", o->format, "text, markdown (for a pull request) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  return {cmd, [o] { return run_compare(*o); }};
}

}  // namespace schedlab::cli
