// schedlab/report: best-so-far curves of a sweep's searches (docs/reports.md,
// "Best-so-far curves"): for each (fusion, sizes, scheduler) search, the best
// objective found after each evaluation, the figure that compares search
// strategies (how fast each one gets how close).
//
// Owns: the curves from records (Record::strategy, objective, evaluation),
// and their console rendering; html.cpp draws them as line charts.
// May depend on: record.h, format.h.
// Invariants: a curve is non-increasing; a record's objective value is its
// prediction under objective "predicted" and its median otherwise; failed
// points count as evaluations and improve nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/record.h"

namespace schedlab::report {

/// One search's best-so-far curve.
struct Curve {
  std::string fusion;      ///< the fusion
  std::string size_label;  ///< "N=256,K=1024"
  std::string scheduler;   ///< the scheduler's display name
  std::string strategy;    ///< "grid", "evolution", ...
  std::string objective;   ///< "measured", "predicted", "cpu"
  std::string device;      ///< the records' device name
  /// best[k]: the best objective value (microseconds) over evaluations
  /// 1..k+1; nullopt until the first that has one.
  std::vector<std::optional<double>> best;
};

/// The objective value of `r` in microseconds under `objective`, or nullopt
/// (not ok, or no prediction).
std::optional<double> objective_us(const Record& r, const std::string& objective);

/// One curve per search with at least two evaluations, in the records'
/// first-appearance order. Records without a search (Record::strategy
/// empty, files from before) are left out.
std::vector<Curve> best_so_far_curves(const std::vector<Record>& records);

/// The console summary: per curve, the best value and the evaluation that
/// found it, and the curve sampled at evaluations 1, 2, 4, 8, ... and the
/// last. "" when there is no curve.
std::string render_curves(const std::vector<Curve>& curves);

}  // namespace schedlab::report
