// schedlab/sweep/measure: how the validated points of a sweep are timed and
// handed to Google Benchmark (docs/sweeps.md, "How points are timed").
//
// Owns: interleaved measurement (the points of one (fusion, sizes) group are
// timed in rounds, each round timing every point once in an order shuffled
// from a recorded seed), and the replay of the measured samples through
// Google Benchmark so that its reporters, counters and --benchmark_out
// JSON (readable by its tools/compare.py) carry every point.
// May depend on: Google Benchmark, schedlab/report (the record), base.
// Invariants:
//   - Sample k of every point of a group comes from round k: the samples
//     are paired, and a change of machine load during the group hits every
//     point alike (report::paired_ratio relies on this).
//   - The order of a round is a function of (seed, group number, round)
//     only, so a recorded seed reproduces it.
//   - Google Benchmark never times anything here: each benchmark replays the
//     samples already measured (manual time), one per repetition, so what
//     the records say and what the JSON says are the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schedlab/report/record.h"

namespace schedlab::sweep {

/// The order in which round `round` of group `group` times its `n` points:
/// a permutation of 0..n-1 drawn with std::mt19937_64 seeded from
/// std::seed_seq{seed, group, round}.
std::vector<size_t> round_order(size_t n, uint64_t seed, uint64_t group, uint64_t round);

/// Times `n` points in `rounds` interleaved rounds: first `warm(i)` for every
/// point (its warm-up launches), then for each round every `sample(i)` once
/// (seconds) in round_order. Returns the samples, [point][round].
std::vector<std::vector<double>> measure_interleaved(size_t n, size_t rounds, uint64_t seed,
                                                     uint64_t group,
                                                     const std::function<void(size_t)>& warm,
                                                     const std::function<double(size_t)>& sample);

/// One kernel to time: `warm(n)` makes n untimed launches, `launch()` one
/// timed launch and returns its seconds.
struct TimedKernel {
  std::function<void(int)> warm;
  std::function<double()> launch;
};

/// measure_interleaved over kernels: each first warms with `warmup` launches
/// (none when 0); each sample is one launch or, while their total is under
/// min_time seconds, the mean of as many launches as fill it. [kernel][round].
std::vector<std::vector<double>> time_kernels(const std::vector<TimedKernel>& kernels,
                                              size_t repetitions, int64_t warmup,
                                              double min_time, uint64_t seed, uint64_t group);

/// A seed for the round orders when the sweep names none.
uint64_t fresh_seed();

/// One benchmark for Google Benchmark to report.
struct ReplayedBenchmark {
  std::string name;           ///< unique, stable across runs (compare.py matches by name)
  std::vector<double> times_us;  ///< one repetition each
  int64_t bytes_moved = 0;    ///< for the bytes_per_second counter; 0: none
  double peak_bytes_per_s = 0;  ///< for the peak_fraction counter; 0: none
  std::string label;          ///< the benchmark's label ("cuda-events", "... reused")
};

/// "fusion/sizes/scheduler/config", the name a record's benchmark has.
std::string benchmark_name(const report::Record& r);

/// Whether `name` passes a --benchmark_filter among `args` (Google
/// Benchmark's semantics: a POSIX extended regex, searched; a leading '-'
/// negates; no filter, "" or "all" pass everything).
bool passes_benchmark_filter(const std::vector<std::string>& args, const std::string& name);

/// Runs Google Benchmark over `benchmarks` with `args` (argv[0] first; the
/// --benchmark_* flags, --benchmark_out included, apply): every benchmark
/// has one repetition per sample and replays the samples as manual time in
/// microseconds. Nothing to report: nothing runs, and a stale
/// --benchmark_out file is removed (with a note on stderr).
void report_with_google_benchmark(const std::vector<ReplayedBenchmark>& benchmarks,
                                  std::vector<std::string> args);

}  // namespace schedlab::sweep
