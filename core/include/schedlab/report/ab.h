// schedlab/report/ab: the verdicts of an A/B run (sweep/run/ab.h): for each
// (fusion, sizes, scheduler) with an "@old" twin, the new build's best point
// against the old build's, from the per-round ratios of the interleaved
// rounds they shared (docs/sweeps.md, "A/B runs").
// May depend on: report (record, stats, verdict).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/report/stats.h"

namespace schedlab::report {

/// One scheduler at one fusion and size, new build against old.
struct AbVerdict {
  std::string fusion, size_label;      ///< where
  std::string size_key;                ///< Record::size_key(): tables match on it
  std::string scheduler;               ///< the new build's display name
  std::string new_config, old_config;  ///< each build's best configuration; "" if none valid
  /// new time / old time, paired when both bests share a group.
  std::optional<RatioEstimate> ratio;
  bool same_kernel = false;  ///< both builds produced the same kernel
  bool significant = false;  ///< ratio significant at alpha and beyond the minimum effect
  std::string note;          ///< why there is no ratio
};

/// The verdicts of every twin pair in `records`, in order of first appearance.
/// Each build's best is chosen as the table chooses (verdict.h
/// best_by_ratio): the old build's against its lowest median, the new
/// build's against the old build's best, so the line's ratio is the one
/// the choice was made by.
std::vector<AbVerdict> ab_verdicts(const std::vector<Record>& records, double alpha = 0.05);

/// One line per verdict, its ratio in verdict.h's words: "softmax
/// N=128,K=1024 heuristic: new build 1.21x slower [1.15, 1.27]* than old,
/// p=0.002; block=128 instead of block=256".
std::string render_ab(const std::vector<AbVerdict>& verdicts);

}  // namespace schedlab::report
