// schedlab/report: the side-by-side table (docs/reports.md) and its
// text renderings: console, CSV, JSON, and the delta between two tables
// that `watch` prints. The HTML page is in schedlab/report/html.h.
//
// Owns: choosing each scheduler's best configuration per fusion and size,
// its verdict against the baseline (verdict.h: one estimate, paired when
// both were timed in one interleaved group, chooses the best and gives the
// number, the interval, the star and the words; docs/reports.md, "Verdicts"),
// kernel identity with the baseline, and why a scheduler has no valid point.
// May depend on record.h, stats.h, verdict.h, ab.h and schedlab/base.
// Invariants: one Table holds the records of one device (fingerprint) only,
// so CPU-emulation timings never share a table with GPU timings, and every
// rendering of an emulated table says "CPU emulation — not GPU timings".
// The spread the renderings show is the IQR (q3 - q1) of the repetitions;
// CSV and JSON carry min and max as well.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/ab.h"
#include "schedlab/report/record.h"
#include "schedlab/report/stats.h"

namespace schedlab::report {

/// What every rendering of CPU-emulated timings says about them.
inline constexpr const char* kEmulationLabel = "CPU emulation — not GPU timings";

/// How to build the tables.
struct TableOptions {
  /// The baseline scheduler's display name, as the sweep names it. Empty:
  /// the `baseline` the records carry (the sweep's), else the first
  /// scheduler in the records.
  std::string baseline;
  double alpha = 0.05;  ///< significance level of the rank tests
  /// The smallest speedup or slowdown that counts (0.1 = 10 %); unset: the
  /// records' min_effect_of.
  std::optional<double> min_effect;
};

/// One scheduler at one fusion and size.
struct TableCell {
  std::string scheduler;  ///< display name
  size_t points = 0;      ///< records of this scheduler here (0: not in the sweep here)
  size_t ok_points = 0;   ///< of which status ok
  /// The chosen ok record. Measured tables: the baseline's is the one the
  /// paired estimate puts fastest against its lowest median, every other
  /// scheduler's the one it puts fastest against the baseline's best
  /// (verdict.h best_by_ratio), so the best is chosen by the statistic its
  /// verdict prints. Predicted tables: the lowest prediction, ties by the
  /// same estimate.
  std::optional<Record> best;
  std::optional<Summary> stats;  ///< best's statistics
  /// Baseline time / best time: 1 / estimate's ratio (measured tables), the
  /// ratio of predictions (predicted tables); 1 for the baseline and for the
  /// baseline's own kernel.
  std::optional<double> speedup;
  /// Best's measured time over the baseline's best (verdict.h time_ratio:
  /// paired when they share an interleaved group): the CPU emulation's in a
  /// predicted table. Unset for the baseline itself and for the same kernel.
  std::optional<RatioEstimate> estimate;
  std::optional<double> p;  ///< estimate's p-value
  /// The estimate is significant: p < alpha and beyond the minimum effect.
  bool significant = false;
  /// The "vs baseline" column: verdict_text of the estimate ("1.23x slower
  /// [1.04, 1.27]*"), or in a predicted table predicted_verdict_text ("tie
  /// (predicted)"); "baseline"; "same kernel as `b`"; "" without a best.
  std::string verdict;
  /// Predicted tables: verdict_text of the CPU emulation's estimate, shown
  /// beside the predicted verdict (so a tie of predictions says what the
  /// CPU measured); "" elsewhere.
  std::string measured_verdict;
  /// The baseline's name when best is the baseline's best kernel (same
  /// source and launch): one measurement, no comparison.
  std::string same_kernel_as;
  /// When there is no best: why ("rejected: <reason>", "wrong_result in 2
  /// configs: <first error>; 1 crashed: <error>").
  std::string why_none;
};

/// One fusion at one size: a cell per scheduler of the table, in table order.
struct TableRow {
  std::string fusion;            ///< fusion name
  std::string size_label;        ///< "N=1024,K=1024", as the first record lists them
  std::string size_key;          ///< Record::size_key(): rows match on it
  std::vector<TableCell> cells;  ///< parallel to Table::schedulers
  /// A sweep over meshes (Record::mesh): the row's ranks, 0 otherwise; the
  /// text table then has a mesh and a predicted-communication column.
  int mesh = 0;
  std::optional<double> comm_us;  ///< Record::comm_us of the row's first record that has one

  /// size_label, and " mesh=N" for a row of a sweep over meshes: what names
  /// the row where there is no mesh column (HTML).
  std::string label() const {
    return mesh > 0 ? size_label + " mesh=" + std::to_string(mesh) : size_label;
  }
};

/// The side-by-side table of one device.
struct Table {
  std::string sweep;                    ///< the sweep name(s), comma-separated
  Device device;                        ///< the device all its records ran on
  std::string baseline;                 ///< the baseline scheduler
  bool baseline_defaulted = false;      ///< true when neither the options nor the records named one
  double alpha = 0.05;                  ///< significance level used
  double min_effect = 0.1;              ///< minimum effect used
  std::vector<std::string> schedulers;  ///< in order of first appearance
  std::vector<TableRow> rows;           ///< in order of first appearance
  /// The device model the cells are ranked on: set for CPU-emulated tables
  /// whose ok records all carry a prediction from one device model; then a
  /// cell's best is the lowest *predicted* time (docs/model.md), the verdict
  /// is the ratio of predictions (deterministic: any difference is real, and
  /// equal ones say "tie (predicted)"), and the renderings show the
  /// prediction and the CPU emulation's own verdict beside it. Empty: ranked
  /// and judged by the measured times.
  std::string predicted_on;

  /// The cell of `scheduler` in `row`, or null.
  const TableCell* cell(const TableRow& row, const std::string& scheduler) const;
};

/// One table per device, in order of first appearance. A named baseline
/// that appears in no record is a user error naming the schedulers there are.
std::vector<Table> build_tables(const std::vector<Record>& records, const TableOptions& o);

/// Whether to colour output on file descriptor `fd`: it is a terminal and
/// NO_COLOR is unset or empty (https://no-color.org).
bool colour_enabled(int fd);

/// Aligned columns for a terminal, ANSI colour when `colour`.
std::string render_console(const std::vector<Table>& tables, bool colour);
/// The same table with, per cell, the change from `previous` (matched by
/// device, fusion, size and scheduler) as a verdict (verdict.h): from `ab`'s
/// paired estimate of the new build against the old when it has the cell
/// ("1.23x slower [1.04, 1.27]* vs old build", the number the A/B line
/// prints), else the two-sample estimate against the previous best ("... vs
/// last run"); a changed best config, and points that became valid or
/// failing; "=" where the best is the same measurement as before (a cell
/// `watch` did not re-run). `watch` prints this after each rerun.
std::string render_delta(const std::vector<Table>& previous, const std::vector<Table>& current,
                         bool colour, const std::vector<AbVerdict>& ab = {});
/// One line per cell (header first), RFC 4180 quoting.
std::string render_csv(const std::vector<Table>& tables);
/// JSON (schema "schedlab.table.v1").
std::string render_json(const std::vector<Table>& tables);

}  // namespace schedlab::report
