// The sweep runner's phase 2 (sweep_run.h): this round's validated points
// timed group by group in interleaved rounds (measure.h), and Google
// Benchmark's report of every timed record at the end.
#include <fmt/core.h>

#include <set>

#include "schedlab/sweep/run/measure.h"
#include "schedlab/sweep/run/timed_group.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "sweep_run.h"

namespace schedlab::sweep::detail {

// The points of a (fusion, sizes) group are timed together (time_group):
// in interleaved rounds, points with the same kernel and launch once.
void SweepRun::measure() {
  const MeasureSpec& m = spec_.measure;
  // A group is a (fusion, sizes) and the repetitions its searches ask for
  // (halving times its early rungs briefly).
  std::map<std::tuple<size_t, size_t, int64_t>, std::vector<size_t>> by_group;
  // A point on more than one rank (its ranks are other processes) runs
  // alone, as a group is timed alone: one at a time, nothing else running.
  for (size_t i = 0; i < states_.size(); ++i)
    if (!states_[i].final && states_[i].rec.mesh > 1 &&
        passes_benchmark_filter(options_.benchmark_args, benchmark_name(states_[i].rec))) {
      run_mesh(i);
      record(states_[i]);
    }
  for (size_t i = 0; i < states_.size(); ++i)
    if (!states_[i].final && states_[i].rec.mesh <= 1 &&
        passes_benchmark_filter(options_.benchmark_args, benchmark_name(states_[i].rec)))
      by_group[{points_[i].fusion, points_[i].sizes,
                searches_[point_search_[i]].strategy->repetitions(m.repetitions)}]
          .push_back(i);
  for (const auto& [where, members] : by_group) {
    const size_t repetitions = static_cast<size_t>(std::get<2>(where));
    const uint64_t group = groups_++;
    std::vector<GroupMember> group_members;
    for (size_t i : members) {
      PointState& st = states_[i];
      group_members.push_back({[this, &st] {
                                 return std::make_unique<BoundKernel>(
                                     backend_, st.point.kernel(), st.reference->inputs,
                                     st.point.fusion().sizes);
                               },
                               &st.rec});
    }
    time_group(group_members, repetitions, m.warmup, m.min_time, seed_, group,
               run_nonce_ + "-" + std::to_string(group));
    for (size_t i : members) states_[i].final = true;
    for (size_t i : members) record(states_[i]);
  }
}

// Google Benchmark reports every timed record once, whether timed now, reused
// or resumed, so --benchmark_out always describes this run whole.
void SweepRun::report_benchmarks() {
  std::vector<ReplayedBenchmark> replay;
  std::set<std::string> names;
  for (const report::Record& r : result_.records) {
    if (r.status != report::Status::Ok || r.times_us.empty()) continue;
    std::string name = benchmark_name(r);
    for (int dup = 2; names.count(name); ++dup)
      name = fmt::format("{}/dup:{}", benchmark_name(r), dup);
    names.insert(name);
    std::string label = is_cuda(backend_) ? "cuda-events" : "cpu-emulation";
    if (r.reused) label += ", reused";
    if (done_.count(r.key)) label += ", resumed";
    if (!r.same_kernel_as.empty()) label += ", same kernel as " + r.same_kernel_as;
    replay.push_back({name, r.times_us, r.bytes_moved, device_.peak_gbps * 1e9, label});
  }
  report_with_google_benchmark(replay, options_.benchmark_args);
}

}  // namespace schedlab::sweep::detail
