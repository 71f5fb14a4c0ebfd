// schedlab/sweep/search_strategy: the interface every search strategy
// implements (strategy.h chooses one; docs/sweeps.md "Strategies"): one
// search's problem, the outcome of a configuration as a strategy sees it,
// and the ask/tell SearchStrategy.
//
// Owns: SearchProblem, Outcome, objective_value and SearchStrategy.
// May depend on: sweep/spec/spec.h. The strategies (strategy.cpp and, through
// core/sweep/search/adaptive.h, the adaptive ones) depend on this header, never on
// each other's: no include circle between the choice of a strategy and the
// strategies.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

/// One search: a scheduler's space at one fusion and size binding.
struct SearchProblem {
  const SchedulerSpec* scheduler = nullptr;  ///< its space, fixed values and constraints
  const FusionSpec* fusion = nullptr;        ///< the fusion
  const ir::SizeBindings* sizes = nullptr;   ///< the concrete sizes
};

/// The profile figures an outcome may carry (model::KernelProfile), in
/// this order: what the `model` strategy learns from besides the parameters.
inline constexpr const char* kProfileFeatures[] = {"sector_bytes", "occupancy", "registers",
                                                   "instructions"};
inline constexpr size_t kProfileFeatureCount = std::size(kProfileFeatures);

/// What became of a configuration, as much of a run's record as a
/// strategy needs.
struct Outcome {
  /// The record's status: "ok", "rejected", "schedule_error",
  /// "compile_error", "wrong_result", "crashed", "timeout", "racy",
  /// "plugin_error".
  std::string status;
  double median_s = 0;  ///< median time in seconds when status is "ok"
  /// The performance model's prediction, when the point was profiled.
  std::optional<double> predicted_s;
  /// kProfileFeatures' values when the point was profiled, else empty.
  std::vector<double> profile;
  /// What the scheduler itself would choose at this fusion and sizes
  /// (report::Record::own_choice): parameter -> value as `--set` spells it;
  /// empty when unknown. The warm start of evolution and model.
  std::vector<std::pair<std::string, std::string>> own_choice;
  bool ok() const { return status == "ok"; }
};

/// What a search minimises for `outcome`: its median (measured, cpu) or its
/// prediction; nullopt when the point failed or has no such figure.
std::optional<double> objective_value(const Outcome& outcome, StrategySpec::Objective objective);

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// The next configurations to run; empty when the search is over. Never
  /// repeats a configuration within a search, except to time it again with
  /// more repetitions (halving), whose later outcome then stands.
  virtual std::vector<Config> propose() = 0;
  /// The outcome of a proposed configuration. The default ignores it.
  virtual void observe(const Config& config, const Outcome& outcome) {
    (void)config;
    (void)outcome;
  }
  /// The timed repetitions for the latest batch, given the sweep's
  /// `configured` ones: halving times its early rungs briefly.
  virtual int64_t repetitions(int64_t configured) const { return configured; }
};

}  // namespace schedlab::sweep
