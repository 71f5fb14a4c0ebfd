// The search-strategy interface: see schedlab/sweep/search/search_strategy.h.
#include "schedlab/sweep/search/search_strategy.h"

namespace schedlab::sweep {

std::optional<double> objective_value(const Outcome& o, StrategySpec::Objective objective) {
  if (!o.ok()) return std::nullopt;
  if (objective == StrategySpec::Objective::Predicted) return o.predicted_s;
  if (o.median_s > 0) return o.median_s;
  return std::nullopt;
}

}  // namespace schedlab::sweep
