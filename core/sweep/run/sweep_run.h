// The sweep runner's one class, shared by its files (runner.cpp: the rounds,
// the plugins and the records; runner_point.cpp: a point's identity and its
// run through core/point; runner_isolate.cpp: --isolate's worker and host
// sides; runner_measure.cpp: phase 2's timing and Google Benchmark's
// report). Internal to core/sweep/run: the public interface is run/runner.h.
//
// Two phases. Phase 1 runs each point's schedule, lower, codegen, compile and
// validation (one point::Point per point) on a pool of threads (compiles
// dominate and run in parallel; plugin calls and kernel launches are
// serialized, since neither plugins nor the CPU backend's fiber executor
// promise to be re-entrant). Phase 2 times the validated points of each
// (fusion, sizes) group in interleaved rounds (measure.h), one launch at a
// time so that timings never overlap; each record is appended when its group
// is done. At the end, Google Benchmark reports every timed record once
// (--benchmark_out included).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/point/point.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/tuned/tuned.h"

namespace schedlab::sweep::detail {

/// A point in flight.
struct PointState {
  report::Record rec;
  bool final = false;   ///< the record is decided (a failure, resumed, or cached)
  bool cached = false;  ///< its verdict and times come from an earlier record
  /// Its verdict comes from an earlier record (RunOptions::validated): it
  /// stopped after Lower, to be compiled and timed only.
  bool validated_before = false;
  std::shared_ptr<const plugin::Plugin> plugin;  ///< the scheduler's plugin (or auto's pick)
  point::Point point;  ///< its run through the pipeline (the scheduled fusion, the kernel)
  std::shared_ptr<const point::Reference> reference;
  plugin::TransformLog transforms;  ///< what the plugin applied (replayed under --isolate)
  int64_t evaluation = 0;           ///< its number in its search (Record::evaluation)
};

/// Makes the record final with `status` and `error`.
void fail(PointState& s, report::Status status, std::string error);
/// The file's contents' hash (plugin binaries, fusion files).
std::string file_hash(const std::string& path);
/// A record travelling between the host and a worker (runner_isolate.cpp).
std::string in_flight_json(report::Record r);
report::Record from_in_flight(const std::string& json, bool final, const char* where);

/// One run of a sweep: a small class with one method per stage of a point
/// (identify, run_point, isolate, profile, measure, record), driven round by
/// round by run().
class SweepRun {
 public:
  SweepRun(const SweepSpec& spec, plugin::Registry& registry, runtime::Backend& backend,
           const RunOptions& options);
  RunResult run();

 private:
  // One search per (fusion, sizes, scheduler), driven as an ask/tell loop
  // (strategy.h): each round runs every search's next proposals, then tells
  // each search how its points did. Grid and random propose everything in
  // the first round; a model-guided strategy proposes in small batches and
  // learns from observe(), with nothing to change here. The searches of one
  // scheduler share a SearchFamily: since every search proposes before any
  // observes, a round's proposals depend only on earlier rounds' outcomes.
  struct Search {
    size_t fusion, sizes, scheduler;
    std::unique_ptr<SearchStrategy> strategy;
    /// Configuration (Config::str) -> its record in result_.records.
    std::map<std::string, size_t> evaluated = {};
  };

  void plan_searches();
  void load_plugins();
  /// The reference of a point's (fusion, sizes), computed by whichever point
  /// needs it first.
  std::shared_ptr<const point::Reference> reference_of(const Point& p);
  /// Fills `slot` with p's reference unless it holds one; returns it.
  std::shared_ptr<const point::Reference> compute_reference(
      std::shared_ptr<const point::Reference>& slot, const Point& p, bool fast_math) const;
  /// Step 1, in the process: the record's identity, and whether it is done
  /// already (--resume). False when the point needs no more work. `worker`:
  /// where `auto` asks the built-ins under --isolate.
  bool identify(size_t i, isolate::Worker* worker);
  /// The tuned configuration offered to point i's plugin (a heuristic
  /// row's, in a tuned bucket), or nullopt. User error for an entry that
  /// does not fit the plugin's schema.
  std::optional<plugin::TunedOffer> tuned_offer(size_t i, const plugin::Plugin& plugin) const;
  /// The point::Options of point i: its kernel options, validation, locks
  /// (none `in_child`) and the observer that keeps its record.
  point::Options point_options(size_t i, bool in_child, bool may_reuse);
  /// Steps 2 and 3: point i through core/point on `be`, from `first` (Lower:
  /// its fusion is scheduled already, a replayed schedule) to `last`; the
  /// record follows each stage, a failure makes it final with the status of
  /// the stage it happened in. An unchanged kernel's earlier verdict may
  /// stand when may_reuse. False when the record is final.
  bool run_point(size_t i, runtime::Backend& be, bool in_child, point::Stage first,
                 point::Stage last, bool may_reuse);
  /// Steps 2 and 3 the way --isolate runs them: in `worker`, a child process
  /// that loads the plugin itself. A point that validated there comes back
  /// with its transform log, which the host replays and compiles (a cache
  /// hit) for the benchmark: no plugin code runs here.
  void isolate(size_t i, isolate::Worker& worker);
  /// `auto` under --isolate: the built-ins are asked in `worker`.
  std::shared_ptr<const plugin::Plugin> pick_isolated(size_t i, isolate::Worker& worker,
                                                      std::vector<std::string>& reasons);
  /// Whether workers compile and validate (RunOptions::isolate_launches,
  /// never on CUDA).
  bool launches_in_workers() const { return options_.isolate_launches && !is_cuda(backend_); }
  /// What a worker does with a request (in the child).
  std::string serve(const std::string& request);
  /// The child's instance of the plugin mapped from `loaded_path`.
  std::shared_ptr<const plugin::Plugin> child_plugin(const std::string& loaded_path);
  /// Steps 2 and 3 of a point on more than one rank (mesh > 1): through
  /// RunOptions::run_mesh_point, in phase 2 (its ranks time themselves, so
  /// nothing else may run meanwhile); the record is final after it (one
  /// timed run).
  void run_mesh(size_t i);
  /// Steps 1 to 3 for point i (phase 1).
  void phase1(size_t i, isolate::Worker* worker);
  /// The performance model's prediction of a validated point.
  void profile(size_t i);
  /// Phase 2: times this round's validated points, group by group.
  void measure();
  /// Appends a final record to the output and tells the callback.
  void record(PointState& st);
  /// Google Benchmark reports every timed record once.
  void report_benchmarks();

  const SweepSpec& spec_;
  plugin::Registry& registry_;
  runtime::Backend& backend_;
  const RunOptions& options_;
  const report::Device device_;
  const std::string sweep_hash_, host_;  ///< in every record
  std::optional<runtime::DeviceProperties> target_;

  std::optional<TunedFile> tuned_;  ///< RunOptions::tuned, else the sweep's `tuned:`

  std::vector<Search> searches_;
  std::vector<Point> points_;         ///< this round's points
  std::vector<size_t> point_search_;  ///< each point's search
  std::vector<PointState> states_;    ///< this round's

  /// What an earlier (killed) run already finished.
  std::map<std::string, report::Record> done_;
  /// Plugins, their binaries' hashes, and the fusion files' hashes, once each.
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins_;
  std::vector<std::string> plugin_hashes_;
  std::mutex hash_mu_;
  std::map<std::string, std::string> auto_hashes_;  ///< plugin path -> hash, for `auto`
  std::vector<std::string> fusion_hashes_;

  std::mutex ref_mu_;
  /// By (fusion, sizes, fast math): fast math widens the error bounds.
  /// Workers read the copy they were forked with (serve): forks hold ref_mu_.
  std::map<std::tuple<size_t, size_t, bool>, std::shared_ptr<const point::Reference>>
      references_;
  std::mutex plugin_mu_, launch_mu_;
  std::unique_ptr<runtime::Backend> profile_cpu_;

  /// --isolate: one worker per phase-1 thread, for a round.
  std::vector<std::unique_ptr<isolate::Worker>> workers_;
  /// Only ever filled in a worker (a child): its plugins, backend and
  /// references. The parent's copies stay empty, so a fork never copies
  /// them half-written.
  std::map<std::string, std::shared_ptr<const plugin::Plugin>> child_plugins_;
  std::unique_ptr<runtime::Backend> child_backend_;
  std::map<std::tuple<size_t, size_t, bool>, std::shared_ptr<const point::Reference>>
      child_references_;

  std::mutex out_mu_;  ///< the output file, the callback, the counters
  size_t total_ = 0;   ///< points proposed so far, over every round
  size_t finished_ = 0;
  RunResult result_;

  const uint64_t seed_;
  const std::string run_nonce_;
  uint64_t groups_ = 0;  ///< over the whole run: a group number is never reused
};

}  // namespace schedlab::sweep::detail
