// schedlab/report/verdict: how one time compares with another, in one home.
//
// Owns: the estimate of the ratio of two records' times (paired per-round
// ratios when both were timed in the same interleaved rounds, else the
// two-sample estimate; stats.h), the choice of a scheduler's best record by
// that same estimate, and the words every output prints for a ratio:
// "1.23x slower [1.04, 1.27]*", "1.30x faster [1.25, 1.35]", "tie (predicted)".
// The table (console, CSV, JSON, HTML), `watch`'s change column, `compare`
// and the A/B lines of `--ab` and `watch` all print through verdict_text, so
// one pair of timings reads the same everywhere (issue 33). May depend on
// record.h, stats.h and the standard library.
// Convention (never break it): a ratio is always *this time / the reference's
// time* (new / old, scheduler / baseline); above 1 is slower. The text shows
// the factor max(r, 1/r) with its direction word and the interval turned the
// same way, so the number and the word cannot disagree; never a percent or a
// sign.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/report/stats.h"

namespace schedlab::report {

/// The ratio of `x`'s times over `ref`'s: paired_ratio when the two share an
/// interleaved group (paired()), else unpaired_ratio. Both need times.
RatioEstimate time_ratio(const Record& x, const Record& ref);

/// The best of `candidates` (ok records with times): the one whose
/// time_ratio against `ref` is lowest, ties to the lower median, then to
/// the first. With no `ref`, the reference is the candidate with the lowest
/// median (so the baseline's best is the configuration the paired estimate
/// puts fastest against that one). Null when there are no candidates. This
/// is how the table and the A/B lines choose, so a best configuration is
/// never slower than another of its scheduler by the statistic its verdict
/// prints.
const Record* best_by_ratio(const std::vector<const Record*>& candidates, const Record* ref);

/// Which way a ratio points.
enum class Direction {
  Slower,  ///< ratio > 1
  Faster,  ///< ratio < 1
  Same,    ///< the factor rounds to 1.00 (or the ratio is exactly 1)
};
/// The direction of `ratio` (this / reference) as verdict_text words it.
Direction direction_of(double ratio);

/// "1.23x slower [1.04, 1.27]*", "1.30x faster [1.25, 1.35]", "1.00x [0.98,
/// 1.03]" (a factor that rounds to 1.00 has no word); `*` when `significant`
/// (stats.h: p < alpha and beyond the minimum effect). Without an interval
/// when lo == hi == ratio (one deterministic sample).
std::string verdict_text(const RatioEstimate& r, bool significant);

/// A ratio of two predictions (deterministic): "tie (predicted)" when they
/// are equal, else "1.03x faster (predicted)".
std::string predicted_verdict_text(double ratio);

}  // namespace schedlab::report
