// schedlab/sweep/tuned: tuned configurations. `schedlab tune` keeps the best
// configuration a sweep found, per scheduler and (fusion, size bucket), in a
// tuned file; `run --tuned`, `exec --tuned` and a sweep's `tuned:` offer it
// to the plugin's compute_params (ABI 1.4, SchedlabParamSet.tuned), which
// serves it for segments in a tuned bucket and its own heuristic elsewhere
// (docs/tuning.md has the format and an example).
//
// Owns: choosing the best configuration of each bucket from a sweep's
// records. The buckets are in bucket.h, the tuned file (its YAML both ways
// and its lookup) in tuned_file.h; this header includes both.
// May depend on: sweep/spec/spec.h, sweep/tuned/tuned_file.h, report (records, stats).
// Invariants: a configuration is chosen only among those measured at the
// most sizes of its bucket, by the geometric mean of its objective relative
// to each size's best (no size outweighs another), ties going to the
// configuration evaluated first (records in the run's order), so the same
// records always give the same file.
#pragma once

#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/sweep/spec/bucket.h"
#include "schedlab/sweep/tuned/tuned_file.h"

namespace schedlab::sweep {

struct SweepSpec;

/// The tuned file for `records` of sweep `spec`: for each scheduler run by a
/// plugin (not a script) and each (fusion, bucket) it has Ok records in, the
/// best configuration by the records' objective (`objective`: the
/// prediction, or the median for measured and cpu). With a timed objective,
/// the first evaluated configuration the timings cannot tell slower than the
/// fastest (same kernel, or no significant slowdown beyond the minimum
/// effect) stands (docs/tuning.md). `date` is recorded as given.
TunedFile choose_tuned(const SweepSpec& spec, const std::vector<report::Record>& records,
                       const std::string& date);

}  // namespace schedlab::sweep
