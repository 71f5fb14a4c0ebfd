// Interleaved measurement and its replay through Google Benchmark: see
// schedlab/sweep/run/measure.h.
//
// Why not Google Benchmark's own --benchmark_enable_random_interleaving: it
// shuffles all (benchmark, repetition) pairs at once from an unrecorded
// std::random_device seed, so a run cannot be reproduced, and the samples
// are not in rounds: repetition k of two benchmarks may be minutes apart, and
// nothing pairs them. Rounds are what make per-round ratios (and a paired
// test) meaningful; so the rounds are ours, and Google Benchmark reports.
#include "schedlab/sweep/run/measure.h"

#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>

#include "schedlab/base/error.h"

namespace schedlab::sweep {
namespace {

/// A display reporter that shows nothing: the table is the console output,
/// and --benchmark_out gets Google Benchmark's own file reporter.
class QuietReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

/// The value of --benchmark_<flag>=VALUE among `args` (the last one wins, as
/// in Google Benchmark), or nullopt.
std::optional<std::string> flag_value(const std::vector<std::string>& args,
                                      const std::string& flag) {
  const std::string prefix = "--benchmark_" + flag + "=";
  std::optional<std::string> v;
  for (const std::string& a : args)
    if (a.rfind(prefix, 0) == 0) v = a.substr(prefix.size());
  return v;
}

}  // namespace

std::vector<size_t> round_order(size_t n, uint64_t seed, uint64_t group, uint64_t round) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(group), static_cast<uint32_t>(round)};
  std::mt19937_64 rng(seq);
  // A Fisher-Yates shuffle written out: std::shuffle's algorithm is not
  // specified, and the order must be reproducible across standard libraries.
  for (size_t i = n; i > 1; --i) {
    size_t j = static_cast<size_t>(rng() % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::vector<std::vector<double>> measure_interleaved(size_t n, size_t rounds, uint64_t seed,
                                                     uint64_t group,
                                                     const std::function<void(size_t)>& warm,
                                                     const std::function<double(size_t)>& sample) {
  for (size_t i = 0; i < n; ++i) warm(i);
  std::vector<std::vector<double>> times(n, std::vector<double>(rounds));
  for (size_t r = 0; r < rounds; ++r)
    for (size_t i : round_order(n, seed, group, r)) times[i][r] = sample(i);
  return times;
}

std::vector<std::vector<double>> time_kernels(const std::vector<TimedKernel>& kernels,
                                              size_t repetitions, int64_t warmup,
                                              double min_time, uint64_t seed, uint64_t group) {
  return measure_interleaved(
      kernels.size(), repetitions, seed, group,
      [&](size_t t) {
        if (warmup > 0) kernels[t].warm(static_cast<int>(warmup));
      },
      [&](size_t t) {
        double total = kernels[t].launch();
        int launches = 1;
        while (total < min_time) total += kernels[t].launch(), ++launches;
        return total / launches;
      });
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::string benchmark_name(const report::Record& r) {
  return fmt::format("{}/{}/{}/{}", r.fusion, r.size_label(), r.scheduler, r.config_label());
}

bool passes_benchmark_filter(const std::vector<std::string>& args, const std::string& name) {
  std::string filter = flag_value(args, "filter").value_or("");
  if (filter.empty() || filter == "all") return true;
  bool negate = filter.front() == '-';
  if (negate) filter.erase(0, 1);
  regex_t re;
  user_assert(regcomp(&re, filter.c_str(), REG_EXTENDED | REG_NOSUB) == 0)
      << "--benchmark_filter: '" << filter << "' is not a valid extended regular expression";
  bool match = regexec(&re, name.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return match != negate;
}

void report_with_google_benchmark(const std::vector<ReplayedBenchmark>& benchmarks,
                                  std::vector<std::string> args) {
  const std::optional<std::string> out = flag_value(args, "out");
  if (benchmarks.empty()) {
    // An old file would pass for this run's results.
    std::error_code ec;
    if (out && !out->empty() && std::filesystem::remove(*out, ec))
      fmt::print(stderr, "note: no point was timed; removed the stale --benchmark_out file {}\n",
                 *out);
    return;
  }
  if (args.empty()) args.emplace_back("schedlab");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  // Each benchmark's next repetition; Google Benchmark calls the function
  // once per repetition (one iteration each), in order unless asked to
  // interleave them, and either way the k-th call replays sample k.
  std::vector<size_t> next(benchmarks.size(), 0);
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const ReplayedBenchmark& b = benchmarks[i];
    auto* reg = benchmark::RegisterBenchmark(b.name.c_str(), [&, i](benchmark::State& st) {
      const ReplayedBenchmark& rb = benchmarks[i];
      const double t = rb.times_us[std::min(next[i]++, rb.times_us.size() - 1)];
      for (auto _ : st) st.SetIterationTime(t * 1e-6);
      const double bytes = static_cast<double>(rb.bytes_moved);
      if (bytes > 0)
        st.counters["bytes_per_second"] =
            benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
      if (bytes > 0 && rb.peak_bytes_per_s > 0)
        st.counters["peak_fraction"] = benchmark::Counter(
            bytes / rb.peak_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
      st.SetLabel(rb.label);
    });
    reg->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(1)
        ->Repetitions(static_cast<int>(b.times_us.size()));
  }
  QuietReporter quiet;
  benchmark::RunSpecifiedBenchmarks(&quiet);
  benchmark::ClearRegisteredBenchmarks();
}

}  // namespace schedlab::sweep
