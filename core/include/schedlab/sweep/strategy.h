// schedlab/sweep: search strategies, which choose the configurations of each
// scheduler's space to run, and the expansion of a sweep into points.
//
// Owns: the SearchStrategy interface, the grid and random strategies, and
// the order of a sweep's points. May depend on: sweep/spec.h.
// The runner drives a strategy as an ask/tell loop, one search per (fusion,
// sizes, scheduler):
//   auto s = make_strategy(spec.strategy, problem);
//   for (auto batch = s->propose(); !batch.empty(); batch = s->propose())
//     for (const Config& c : batch) s->observe(c, run(c));
// so a model-guided strategy (one that learns from observe) plugs in here
// without touching the runner. Grid and random propose everything in their
// first batch and ignore observe, which is what lets expand() list a whole
// sweep up front.
// Invariants: every configuration proposed satisfies the constraints at the
// problem's sizes, is proposed at most once per search, and the sequence
// depends only on the spec (and, for an adaptive strategy, the outcomes
// observed), never on the machine or the run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedlab/sweep/spec.h"

namespace schedlab::sweep {

/// One search: a scheduler's space at one fusion and size binding.
struct SearchProblem {
  const SchedulerSpec* scheduler = nullptr;  ///< its space, fixed values and constraints
  const FusionSpec* fusion = nullptr;        ///< the fusion
  const ir::SizeBindings* sizes = nullptr;   ///< the concrete sizes
};

/// What became of a configuration, as much of a run's record as a
/// strategy needs.
struct Outcome {
  /// The record's status: "ok", "rejected", "schedule_error",
  /// "compile_error", "wrong_result", "crashed", "timeout", "racy",
  /// "plugin_error".
  std::string status;
  double median_s = 0;  ///< median time in seconds when status is "ok"
  bool ok() const { return status == "ok"; }
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// The next configurations to run; empty when the search is over. Never
  /// repeats a configuration within a search.
  virtual std::vector<Config> propose() = 0;
  /// The outcome of a proposed configuration. The default ignores it.
  virtual void observe(const Config& config, const Outcome& outcome) {
    (void)config;
    (void)outcome;
  }
};

/// The strategy `spec` names, for one problem. A scheduler that uses its
/// heuristic (no space) always gets exactly the empty configuration.
std::unique_ptr<SearchStrategy> make_strategy(const StrategySpec& spec,
                                              const SearchProblem& problem);

/// The configurations of `problem`'s space that satisfy its constraints, in
/// odometer order. user_error when the space has more than kMaxGridPoints
/// points (space.h), before evaluating any.
std::vector<Config> admissible_configs(const SearchProblem& problem);

/// One run of the sweep: indices into the spec and the configuration.
struct Point {
  size_t fusion = 0;     ///< into SweepSpec::fusions
  size_t sizes = 0;      ///< into FusionSpec::sizes
  size_t scheduler = 0;  ///< into SweepSpec::schedulers
  Config config;         ///< empty when the scheduler uses its heuristic
};

/// Every point, in order: fusions, then size bindings, then schedulers (each
/// in file order), then the strategy's order. Drains non-adaptive strategies
/// without observing; an adaptive one must be driven by the runner instead.
std::vector<Point> expand(const SweepSpec& spec);

/// "softmax N=1024,K=4096 | block-space | block=128, vector=4": for logs.
std::string describe(const SweepSpec& spec, const Point& point);

}  // namespace schedlab::sweep
