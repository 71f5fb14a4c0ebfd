// schedlab/sweep: search strategies, which choose the configurations of each
// scheduler's space to run, and the expansion of a sweep into points.
//
// Owns: the grid and random strategies, the choice of a strategy (the
// adaptive ones, halving.cpp, evolution.cpp, model_search.cpp: docs/sweeps.md
// "Strategies", behind core/sweep/search/adaptive.h), and the order of a sweep's
// points; the interface they implement is search_strategy.h. May depend on:
// sweep/spec/spec.h, sweep/search/search_strategy.h, core/sweep/search/adaptive.h, XGBoost's C
// API (model_search.cpp only).
// The runner drives a strategy as an ask/tell loop, one search per (fusion,
// sizes, scheduler):
//   auto s = make_strategy(spec.strategy, problem);
//   for (auto batch = s->propose(); !batch.empty(); batch = s->propose())
//     for (const Config& c : batch) s->observe(c, run(c));
// so a model-guided strategy (one that learns from observe) plugs in here
// without touching the runner. The searches of one scheduler may share a
// SearchFamily, so that what one learns at one size guides the others.
// Grid and random propose everything in their
// first batch and ignore observe, which is what lets expand() list a whole
// sweep up front.
// Invariants: every configuration proposed satisfies the constraints at the
// problem's sizes, is proposed at most once per search (halving re-times its
// survivors: the one exception), and the sequence
// depends only on the spec (and, for an adaptive strategy, the outcomes
// observed), never on the machine or the run.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/sweep/search/search_strategy.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

/// What the searches of one scheduler learn together in a run (TVM's
/// MetaSchedule trains one cost model for all its tasks): each evaluated
/// point of every member search, so that `model` trains on all of them and
/// `evolution` takes in the configurations that did best elsewhere
/// (adaptive.h says how). Grid, random and halving ignore it. The runner
/// gives every search of one scheduler the same family; since all searches
/// propose before any observes in a round, what a search proposes still
/// depends only on the spec and the outcomes, never on timing or threads.
class SearchFamily;
std::shared_ptr<SearchFamily> make_search_family();

/// The strategy `spec` names, for one problem, a member of `family` when
/// given (else it learns from its own points only). A scheduler that uses
/// its heuristic (no space) always gets exactly the empty configuration.
std::unique_ptr<SearchStrategy> make_strategy(
    const StrategySpec& spec, const SearchProblem& problem,
    const std::shared_ptr<SearchFamily>& family = nullptr);

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
/// without observing; an adaptive one (StrategySpec::adaptive) lists only its
/// first batch: the runner drives the rest.
std::vector<Point> expand(const SweepSpec& spec);

/// "softmax N=1024,K=4096 | block-space | block=128, vector=4": for logs.
std::string describe(const SweepSpec& spec, const Point& point);

}  // namespace schedlab::sweep
