// schedlab/report: the self-contained HTML report (docs/reports.md).
//
// Owns: one HTML page per set of records with inline CSS and inline SVG
// charts, and nothing fetched from anywhere (no scripts, fonts, images or
// stylesheets by URL), so the page can be archived as a CI artifact and
// opened offline. May depend on table.h, record.h, stats.h, schedlab/base.
// Invariants: a section per device, as in build_tables (records of two
// devices never share a table or a chart); an emulated section carries
// kEmulationLabel in its heading and above its charts. Every SVG is
// well-formed XML (tests parse it). The page fits a 1280 px wide window
// without horizontal scrolling: the table wraps long configurations and the
// SVGs scale down (tests/report/chromium_check.py checks it in Chromium).
#pragma once

#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/report/table.h"

namespace schedlab::report {

/// What the page shows besides the table.
struct HtmlOptions {
  std::string title = "schedlab report";  ///< the page title
  /// The heatmap: median time over two parameters of one scheduler, the best
  /// over the other parameters, one map per fusion and size. Empty fields
  /// choose: the first scheduler with two parameters of at least two values
  /// each, and its first two such parameters.
  std::string heatmap_scheduler;
  std::string heatmap_x;  ///< parameter along the x axis
  std::string heatmap_y;  ///< parameter along the y axis
};

/// The page for `records`: per device, the side-by-side table; per fusion
/// with two or more sizes, line plots of each scheduler's best time and its
/// GB/s against size (docs/reports.md says how sizes are ordered); a bar
/// chart of each scheduler's time relative to the baseline's best per fusion
/// and size, the ratio its verdict words and labelled with it; and the
/// heatmaps. Every colour-coded chart has its legend. A heatmap parameter or
/// scheduler that is not in the records is a user error naming the ones
/// there are.
std::string render_html(const std::vector<Record>& records, const TableOptions& table,
                        const HtmlOptions& html);

}  // namespace schedlab::report
