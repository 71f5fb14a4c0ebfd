// schedlab/report: `compare A B`, the regression report between two result
// files (docs/reports.md, "`schedlab compare BASE NEW`").
//
// Owns: reading result files of either kind (Google Benchmark JSON, ideally
// written with --benchmark_repetitions, and schedlab sweep JSONL), matching
// their benchmarks, the per-benchmark verdict and its renderings.
// Matching (docs/reports.md): a Google Benchmark file by name; a sweep
// file by (fusion, sizes, scheduler) for a scheduler with one point there
// (a heuristic: a changed choice of configuration is compared, and named),
// and for a swept scheduler by configuration plus its best configuration.
// May depend on schedlab/report/record.h and stats.h, schedlab/base.
// Invariants: the ratio, its interval, the verdict and the words come from
// one estimate of new/base (verdict.h's words and convention: paired when
// both benchmarks' times come from one interleaved group, else the
// two-sample Hodges-Lehmann ratio, as two runs are); a verdict other than
// Unchanged needs it significant (p < alpha) and beyond the threshold
// (strictly); either alone is noise or a negligible shift. A
// benchmark whose kernel (source hash and launch) is the same in both files
// is Unchanged unless include_unchanged_kernels: its times can only differ
// by noise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/record.h"
#include "schedlab/report/stats.h"

namespace schedlab::report {

/// One benchmark's repetitions in a result file.
struct BenchmarkSamples {
  std::string name;              ///< the matching key between files
  std::vector<double> times_us;  ///< one time per repetition, in microseconds
  /// Why there are no times: the benchmark's error message, or the sweep
  /// record's status and reason. Empty when times_us is not.
  std::string failure;
  std::string scheduler;  ///< for grouping: the sweep scheduler, "" if unknown
  std::string config;     ///< the configuration label, when the name omits it
  /// Kernel identity (source hash and launch), "" when unknown.
  std::string kernel;
  std::optional<double> min_effect;  ///< the sweep's minimum effect, when recorded
  /// The label of the "best" entry's kind: "heuristic" (one point, named
  /// without its configuration), "best" (a swept scheduler's best), or "".
  std::string role;
  /// What pairs it with the other file's benchmark when not its name: a
  /// sweep record's name with the sizes by name (Record::size_key), so that
  /// files listing sizes in different orders match.
  std::string match;
  /// The interleaved group of a sweep record's times (Record::group): two
  /// benchmarks of one group with as many samples are paired.
  std::string group;
};

/// A result file as read.
struct ResultFile {
  std::string path;                          ///< as given
  std::string kind;                          ///< "google-benchmark" or "schedlab-jsonl"
  std::vector<BenchmarkSamples> benchmarks;  ///< in file order, names unique
  std::vector<std::string> devices;          ///< device names the file mentions
  bool emulated = false;                     ///< some timings are CPU emulation
};

/// The entry name of a sweep record: "fusion/size/scheduler/config".
std::string record_benchmark_name(const Record& r);

/// Reads `path`, telling the kinds apart by content. Google Benchmark JSON:
/// the per-repetition entries (run_type "iteration", real_time converted
/// from time_unit); a benchmark with only aggregates contributes its median
/// aggregate as a single sample. Sweep JSONL: one benchmark per record,
/// named "fusion/size/scheduler/config"; a later record of the same point
/// replaces an earlier one (a rerun). A scheduler with one point at a
/// (fusion, size) is named "fusion/size/scheduler" instead, its config kept
/// apart; a swept one gets "fusion/size/scheduler/best" too. Malformed input is a user error naming
/// the file, and the line for JSONL.
ResultFile load_result_file(const std::string& path);

/// What a sweep JSONL benchmark's samples are.
enum class Metric {
  Time,       ///< the measured repetitions (times_us)
  Predicted,  ///< the performance model's predicted time, one deterministic sample
};
/// load_result_file with the samples of `metric`. Metric::Predicted needs a
/// sweep JSONL file; a record without a prediction fails with "no prediction".
ResultFile load_result_file(const std::string& path, Metric metric);

/// What happened to one benchmark between the files.
enum class Verdict {
  Regression,   ///< significantly slower, beyond the threshold
  Improvement,  ///< significantly faster, beyond the threshold
  Unchanged,    ///< neither
  Broken,       ///< had times in base, fails in new
  Fixed,        ///< failed in base, has times in new
  OnlyInBase,   ///< missing from new
  OnlyInNew,    ///< missing from base
};
/// "regression", "improvement", "unchanged", "broken", "fixed",
/// "only in base", "only in new".
std::string verdict_name(Verdict v);

/// One benchmark's comparison.
struct BenchmarkChange {
  std::string name;                      ///< benchmark name
  Verdict verdict = Verdict::Unchanged;  ///< the outcome
  std::optional<Summary> base;           ///< base statistics, when it has times
  std::optional<Summary> next;           ///< new statistics, when it has times
  std::optional<double> p;               ///< the ratio's p-value, when both have times
  /// new/base as a Hodges-Lehmann ratio with its 95 % interval (paired when
  /// both come from one interleaved group, else two-sample: the two files
  /// are two runs), when both have times.
  std::optional<RatioEstimate> ratio;
  /// The ratio in verdict.h's words, "1.20x slower [1.18, 1.22]*" ("1.20x
  /// slower (predicted)" for predictions); "" without a ratio.
  std::string text;
  std::string scheduler;     ///< for grouping ("" : unknown)
  bool same_kernel = false;  ///< the kernel did not change
  std::string note;          ///< a failure reason, a changed config, or why no test
};

/// Settings of a comparison.
struct CompareOptions {
  /// The ratio that matters: beyond 1 + threshold either way (0.05 = 5%). Unset: the
  /// sweep's minimum effect where the records carry one, else 10 % for CPU
  /// emulation and 2 % on a GPU (default_min_effect), and 5 % for Google
  /// Benchmark files.
  std::optional<double> threshold;
  double alpha = 0.05;  ///< significance level of the ratio's rank test
  /// Samples without noise (predictions): a change beyond the threshold is
  /// real, with no test.
  bool deterministic = false;
  /// Also judge benchmarks whose kernel did not change.
  bool include_unchanged_kernels = false;
};

/// The whole comparison.
struct CompareReport {
  std::string base_path, new_path;       ///< the files compared
  CompareOptions options;                ///< as used
  std::vector<BenchmarkChange> changes;  ///< base order, then benchmarks only in new
  std::vector<std::string> notes;        ///< file-level remarks (e.g. devices differ)

  /// Benchmarks with verdict `v`.
  size_t count(Verdict v) const;
  /// "2 regressions, 1 improvement, 337 untouched" (+ the other verdicts when present).
  std::string summary() const;
  /// True when a benchmark regressed or broke: the CLI exits 1.
  bool has_regression() const;
  /// The geometric mean of new/base over the benchmarks with times in both
  /// (an unchanged kernel counting 1); nullopt when there are none.
  std::optional<double> geomean_ratio() const;
  bool emulated = false;  ///< either file has CPU-emulation timings
};

/// Compares every benchmark of `base` with the same one in `next`.
CompareReport compare(const ResultFile& base, const ResultFile& next, const CompareOptions& o);

/// Parses a --threshold value in percent, "5%" or "5"; a user error
/// otherwise. Returns the fraction (0.05).
double parse_threshold(const std::string& text);

/// Plain text for a terminal or log.
std::string render_compare_text(const CompareReport& r);
/// GitHub-flavoured markdown for a pull-request comment: a headline with the
/// counts and the geometric-mean change, the changed benchmarks grouped by
/// scheduler (base, new, change, interval, verdict), a note for CPU
/// emulation, and the untouched ones folded away.
std::string render_compare_markdown(const CompareReport& r);
/// JSON (schema "schedlab.compare.v1").
std::string render_compare_json(const CompareReport& r);

}  // namespace schedlab::report
