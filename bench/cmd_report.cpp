// `schedlab report RESULTS.jsonl...`: the side-by-side table of recorded
// sweep results, without running anything: to the console, and to CSV, JSON
// or the HTML page (with a heatmap over two chosen parameters).
#include <fmt/core.h>
#include <unistd.h>

#include <memory>

#include "command.h"
#include "run_common.h"
#include "schedlab/model/accuracy.h"
#include "schedlab/report/html.h"
#include "schedlab/report/table.h"

namespace schedlab::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string baseline;
  std::string csv, json, html;
  std::string heatmap;  ///< SCHEDULER:X:Y
  bool model_error = false;  ///< --model-error
};

int run_report(const ReportOptions& o) {
  report::HtmlOptions ho;
  if (!o.heatmap.empty()) {
    auto a = o.heatmap.find(':');
    auto b = a == std::string::npos ? a : o.heatmap.find(':', a + 1);
    user_assert(a != std::string::npos && b != std::string::npos)
        << "--heatmap: expected SCHEDULER:X:Y (a scheduler and two of its parameters), found '"
        << o.heatmap << "'";
    ho.heatmap_scheduler = o.heatmap.substr(0, a);
    ho.heatmap_x = o.heatmap.substr(a + 1, b - a - 1);
    ho.heatmap_y = o.heatmap.substr(b + 1);
  }
  std::vector<report::Record> records;
  for (const std::string& f : o.files)
    for (report::Record& r : report::read_records(f).records) records.push_back(std::move(r));
  user_assert(!records.empty()) << "report: no records in " << fmt::format("{}", o.files.size())
                                << " file(s); expected sweep records (schedlab run -o FILE)";
  report::TableOptions to;
  to.baseline = o.baseline;
  std::vector<report::Table> tables = report::build_tables(records, to);
  fmt::print("{}", report::render_console(tables, report::colour_enabled(STDOUT_FILENO)));
  if (!o.csv.empty()) write_file(o.csv, report::render_csv(tables));
  if (!o.json.empty()) write_file(o.json, report::render_json(tables));
  if (!o.html.empty()) {
    write_file(o.html, report::render_html(records, to, ho));
  }
  if (o.model_error)
    fmt::print("\n{}", model::render_accuracy(model::model_accuracy(records)));
  return kExitOk;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Print the side-by-side table of recorded sweep results (no run)");
  cmd->add_option("results", o->files, "Sweep record files (JSONL, from schedlab run)")
      ->required();
  cmd->add_option("--baseline", o->baseline,
                  "The scheduler speedups are relative to (default: the first)");
  cmd->add_option("--csv", o->csv, "Also write the table as CSV to this file");
  cmd->add_option("--json", o->json, "Also write the table as JSON to this file");
  cmd->add_option("--html", o->html, "Also write a self-contained HTML report to this file");
  cmd->add_option("--heatmap", o->heatmap,
                  "With --html: SCHEDULER:X:Y, the heatmap of time over parameters X and Y");
  cmd->add_flag("--model-error", o->model_error,
                "Also print each GPU-measured point's predicted time, the model's error, and "
                "the rank correlation of predictions and measurements (docs/model.md)");
  return {cmd, [o] { return run_report(*o); }};
}

}  // namespace schedlab::cli
