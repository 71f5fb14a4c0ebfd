// schedlab/fuzz: the differential fuzzer behind `schedlab fuzz`
// (docs/fuzz.md). It generates random fusions written as
// fusion text and random plausible schedule scripts for them, runs every case
// twice in forked children (once with its schedule, once through the
// segmenter and the built-in plugins, as `schedlab exec` does), classifies
// each run, and shrinks every failure to a small fusion + schedule pair.
//
// Owns: the generators (fusion_gen.cpp with inputs_gen.cpp and matmul_gen.cpp,
// the starts of its two kinds; schedule_gen.cpp), running and
// classifying one run (runner.cpp), delta debugging (minimize.cpp), and the
// campaign over many cases with its summary and kept files (campaign.cpp).
// May depend on: frontend, ir, ref, runtime, segment, plugin, sweep
// (pipeline.h: the same steps as `exec`) and isolate (fork + timeout).
// Invariants: a case is a pure function of (seed, index): case i is drawn
// from a std::mt19937_64 seeded from (seed, i) alone, so the same seed gives
// the same cases whatever --jobs is. Everything a run needs is text (fusion
// YAML, schedule script), so every failure reproduces with
// `schedlab exec FUSION.yaml [--schedule X.sched] --backend cpu`. The
// generator only writes fusions that parse (a unit test holds it to that) and
// keeps values in ranges where f32 kernels meet the reference's tolerance, so
// a `wrong` run is a wrong kernel, not rounding.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedlab/ir/fusion.h"
#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin/host.h"
#include "schedlab/sweep/pipeline/mutate.h"

namespace schedlab::fuzz {

// ---- Generated cases (fusion_gen.cpp, schedule_gen.cpp) --------------------

/// The generator of case `index` under `seed`: a std::mt19937_64 seeded
/// from both through std::seed_seq, independent of every other case.
std::mt19937_64 case_rng(uint64_t seed, uint64_t index);

/// One input of a generated fusion.
struct GenInput {
  std::string name;                ///< "x0"
  std::string dtype;               ///< fusion-text dtype: "f32", "f16", "i32", ...
  std::vector<std::string> shape;  ///< named sizes ("N") or "1" (a Broadcast axis)
};

/// One body line `name = expr`.
struct GenStatement {
  std::string name;               ///< the bound name ("v3")
  std::string expr;               ///< the expression text
  std::vector<std::string> uses;  ///< names of inputs and statements it reads
};

/// A generated fusion, kept structured so the minimiser can drop statements,
/// outputs and inputs and shrink sizes; text() writes it as fusion YAML.
struct GenFusion {
  std::string name;                       ///< `fusion:`
  std::vector<GenInput> inputs;           ///< in order
  std::map<std::string, int64_t> sizes;   ///< a value for every named size
  std::vector<GenStatement> body;         ///< in order; each uses only earlier names
  std::vector<std::string> outputs;       ///< at least one
  std::set<std::string> features;         ///< what it exercises (docs/fuzz.md lists the tags)

  /// The fusion YAML (configs/fusions format). `sizes:` lists only the
  /// names some input's shape uses.
  std::string text() const;
};

/// A random valid fusion (see docs/fuzz.md for what is drawn and why).
GenFusion generate_fusion(std::mt19937_64& rng, const std::string& name);

/// A generated schedule script, one statement per line.
struct GenSchedule {
  std::vector<std::string> lines;  ///< statements, without comments
  std::set<std::string> features;  ///< primitives, bindings, memory types used

  std::string text() const;  ///< lines joined with '\n'
};

/// A random plausible schedule for `f` (parsed from a GenFusion) bound by
/// `sizes`: caches, transforms of a reference tensor, bindings, propagation
/// and inlining, mostly legal and sometimes not (refusals are a class too).
GenSchedule generate_schedule(const ir::Fusion& f, const ir::SizeBindings& sizes,
                              std::mt19937_64& rng);

/// One fuzz case.
struct Case {
  uint64_t index = 0;
  GenFusion fusion;
  GenSchedule schedule;
};

/// Case `index` of `seed`: the fusion, parsed, then its schedule, both drawn
/// from case_rng(seed, index). internal_error if the fusion does not parse.
Case generate_case(uint64_t seed, uint64_t index);

// ---- Running and classifying (runner.cpp) ----------------------------------

/// How one run ended.
enum class RunClass {
  Validated,    ///< ran and matched the reference
  Refused,      ///< a user error (the schedule path: a schedule lowering refuses)
  Unscheduled,  ///< the segmenter path: a user error (no built-in plugin takes it, or
                ///< a plugin's own schedule is refused later)
  Wrong,        ///< validation failed
  Racy,         ///< the sanitizer reported a finding (with --sanitize)
  Crashed,      ///< the child died on a signal or exited without a result
  Internal,     ///< internal_assert or another exception: exit code 3's class
  Timeout,      ///< the child ran past the limit
};
inline constexpr int kRunClassCount = 8;
/// "validated", "refused", ..., "timeout".
std::string_view class_name(RunClass c);
/// Wrong, Racy, Crashed, Internal, Timeout: a bug in schedlab whatever the input.
bool is_failure(RunClass c);
/// is_failure, or Unscheduled (a valid fusion the built-in plugins failed on):
/// the runs printed one per line and, with --keep, minimised and kept.
bool is_reported(RunClass c);

/// Which of a case's two runs.
enum class Path {
  Schedule,   ///< with the case's schedule script (`exec --schedule`)
  Segmenter,  ///< without one: the segmenter picks built-in plugins (`exec`)
};

/// With RunOptions::mutation, what became of a validated run's mutant.
enum class Mutant {
  None,       ///< no mutation, or the run did not validate (nothing to mutate)
  Killed,     ///< validation rejected the mutated outputs
  Survived,   ///< validation passed them: the check is too weak
  Unchanged,  ///< the mutation changed no element (sweep::MutationEffect::noop)
};

/// A run's class and a one-line reason (empty when validated).
struct RunOutcome {
  RunOutcome() = default;
  RunOutcome(RunClass c, std::string why) : cls(c), reason(std::move(why)) {}
  RunClass cls = RunClass::Validated;
  std::string reason;
  Mutant mutant = Mutant::None;
  std::string mutant_line;  ///< sweep::MutantVerdict::line, or why it is unchanged
  /// Validated: the largest |got - want| / allowed over its outputs
  /// (sweep::Validation::max_ratio) and where.
  double max_ratio = 0.0;
  std::string max_ratio_at;
};

/// What a run needs besides its text.
struct RunOptions {
  /// The segmenter's plugins in priority order (sweep::segmenter_plugins),
  /// resolved in the parent before any fork.
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins;
  std::string cache_dir;                       ///< compiled kernels, as runtime::cache_dir
  std::chrono::milliseconds timeout{60000};    ///< per run
  /// Also run the scheduled kernel under the emulation sanitizer
  /// (runtime/sanitizer.h); a finding makes the run racy.
  bool sanitize = false;
  uint64_t input_seed = 1;                     ///< `exec --seed`'s default
  /// Kernels read their sizes at run time (`--dynamic-sizes`); the campaign
  /// sets it for every odd case, so both kinds of kernel are fuzzed.
  bool dynamic_sizes = false;
  /// f32 math through the hardware approximations (`--fast-math`), validated
  /// with their error bounds; the campaign sets it for cases 2 and 3 mod 4.
  bool fast_math = false;
  /// Half ops through __hmul2 and the like (`--math native`); the campaign
  /// sets it for cases 2 mod 3.
  bool native_half_math = false;
  /// `--mutate`: a run that validates is mutated and validated again
  /// (RunOutcome::mutant), as `exec --mutate` does.
  std::optional<sweep::Mutation> mutation;
};

/// One run, in this process: parse, schedule (`schedule` given) or segment,
/// lower, compile on the CPU backend, run, validate, as `exec` does. Returns
/// "validated\nratio <R>\t<where>\n" (R: the largest error/allowed,
/// sweep::Validation::max_ratio; with a mutation, then
/// "<killed|survived|unchanged>\n<line>"),
/// "racy\n<first finding>" (a sanitizer finding wins over the
/// outputs), "wrong\n<summary>", or "invalid\n<diagnostic>" for a text that
/// does not parse; user and internal errors propagate as thrown. What an
/// isolated child runs.
std::string run_here(const std::string& fusion_text, const std::optional<std::string>& schedule,
                     const RunOptions& options);

/// The class of an isolated run that ended as `o` on `path`.
RunOutcome classify(const isolate::Outcome& o, Path path);

/// run_here in a forked child with options.timeout, classified.
RunOutcome run_isolated(const std::string& fusion_text, const std::optional<std::string>& schedule,
                        const RunOptions& options);

// ---- Minimising (minimize.cpp) ---------------------------------------------

/// Delta debugging (Zeller's ddmin) over units 0..n-1: a 1-minimal subset for
/// which `fails(kept)` holds, trying the empty set first. `kept` is sorted.
/// Stops early (returning the smallest found so far) once `budget` calls of
/// `fails` are spent; *spent, if given, adds the calls made.
std::vector<size_t> ddmin(size_t n, const std::function<bool(const std::vector<size_t>&)>& fails,
                          int budget, int* spent = nullptr);

/// A failing run to shrink.
struct Failure {
  uint64_t case_index = 0;
  Path path = Path::Schedule;
  RunOutcome outcome;                  ///< the class to keep and its reason
  GenFusion fusion;
  std::vector<std::string> schedule;   ///< Path::Schedule: the script's lines
};

/// Runs a candidate (fusion, schedule lines; the lines are ignored on the
/// segmenter path) and says how it ended.
using Oracle = std::function<RunOutcome(const GenFusion&, const std::vector<std::string>&)>;

/// Shrinks f while `oracle` keeps its class: schedule lines, statements (a
/// dropped statement takes its users with it), outputs, unused inputs, then
/// each size toward 1, 2 or 3; repeated until nothing shrinks or `budget`
/// oracle calls are spent. The result's outcome is the last one seen with
/// the class kept.
Failure minimise(const Failure& f, const Oracle& oracle, int budget = 150);

// ---- Campaigns (campaign.cpp) ----------------------------------------------

/// Both runs of one case.
struct CaseResult {
  uint64_t index = 0;
  RunOutcome scheduled;  ///< Path::Schedule
  RunOutcome segmented;  ///< Path::Segmenter
  bool tensor_cores = false;  ///< its schedule tiles an mma (fuse_mma + mma_tile)
};

/// Counts of runs by class (two runs per case).
struct Summary {
  uint64_t cases = 0;
  std::array<uint64_t, kRunClassCount> counts{};
  /// With --mutate: validated runs' mutants, by Mutant (None not counted).
  uint64_t killed = 0, survived = 0, unchanged = 0;
  /// Counts `o` (its class and its mutant).
  void add(const RunOutcome& o);
  uint64_t count(RunClass c) const { return counts[static_cast<size_t>(c)]; }
  /// Runs that are a bug whatever the input (is_failure).
  uint64_t failures() const;
  /// "N cases: V validated, R refused, U unscheduled, W wrong, X racy, C
  /// crashed, I internal, T timeout", then with mutants "; mutants: K
  /// killed, S survived, U unchanged"
  std::string line() const;
  /// failures, a surviving mutant, or more than 1 % of cases unscheduled
  /// (issue #11's bound).
  bool failed() const;
  /// Schedule-path runs whose schedule tiles an mma, by class.
  std::array<uint64_t, kRunClassCount> tensor_cores{};
  /// "tensor-core schedules (fuse_mma + mma_tile): N, V validated, R refused, ..."
  /// (the classes that occurred), or "" when there were none.
  std::string tensor_core_line() const;
};

struct CampaignOptions {
  uint64_t cases = 100;
  uint64_t seed = 1;
  /// Non-empty: run only these case indices (each < cases), e.g. to keep
  /// the files of failures a longer run printed.
  std::vector<uint64_t> only;
  int jobs = 1;             ///< children at once
  RunOptions run;
  std::string keep_dir;     ///< non-empty: minimise each failure and write it here
  int minimise_budget = 150;
  /// Called in case order (whatever --jobs is) as each case's runs end.
  std::function<void(const CaseResult&)> on_case;
  /// Called for every kept file set, after minimisation.
  std::function<void(const Failure& minimised, const std::string& files)> on_kept;
};

/// Runs cases 0..cases-1 (or `only`), then (with keep_dir) minimises every failing run
/// and writes DIR/<class>-<case>[-segmenter].{yaml,sched} and DIR/README.md; a run
/// whose mutant survived is written whole as DIR/survived-<case>[-segmenter].*.
Summary run_campaign(const CampaignOptions& options);

/// "<class> case <i> (<path>): <reason>", the line printed per failure.
std::string failure_line(uint64_t index, Path path, const RunOutcome& o);

/// Writes the failure's files under `dir` (created if needed) and appends its
/// README.md line with the exact reproducing command; returns the base path.
/// A run whose mutant survived (f.outcome.mutant, with `mutation` given) is
/// kept as survived-<case>[-segmenter], its command with `--mutate`.
std::string keep_failure(const std::string& dir, const Failure& f,
                         const std::optional<sweep::Mutation>& mutation = std::nullopt);

}  // namespace schedlab::fuzz
