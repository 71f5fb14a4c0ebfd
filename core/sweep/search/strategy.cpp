// Grid and random search, the choice of a strategy, and the expansion of a
// sweep into points.
#include "schedlab/sweep/search/strategy.h"

#include <algorithm>
#include <random>
#include <set>

#include "adaptive.h"
#include "schedlab/sweep/spec/draw.h"

namespace schedlab::sweep {

namespace {

/// Proposes a fixed list once.
class FixedList : public SearchStrategy {
 public:
  explicit FixedList(std::vector<Config> configs) : configs_(std::move(configs)) {}
  std::vector<Config> propose() override { return std::exchange(configs_, {}); }

 private:
  std::vector<Config> configs_;
};

/// The random strategy's points: the spec's draw (sweep/spec/draw.h) with
/// this search's seed and the strategy's budget.
std::vector<Config> draw_random(const StrategySpec& spec, const SearchProblem& p) {
  return draw_admissible(*p.scheduler, *p.sizes, detail::search_seed(spec, p), spec.budget);
}

}  // namespace

std::shared_ptr<SearchFamily> make_search_family() {
  return std::make_shared<SearchFamily>();
}

std::vector<Config> admissible_configs(const SearchProblem& p) {
  const SchedulerSpec& s = *p.scheduler;
  user_assert(s.space.size() <= kMaxGridPoints)
      << "scheduler '" << s.name << "': its space has " << s.space.size()
      << " points; expected at most " << kMaxGridPoints << " to list them all";
  std::vector<Config> r;
  for (uint64_t i = 0; i < s.space.size(); ++i) {
    Config c = s.space.point(i);
    if (s.admits(c, *p.sizes)) r.push_back(std::move(c));
  }
  return r;
}

std::unique_ptr<SearchStrategy> make_strategy(const StrategySpec& spec, const SearchProblem& p,
                                              const std::shared_ptr<SearchFamily>& family) {
  internal_assert(p.scheduler && p.fusion && p.sizes) << "incomplete SearchProblem";
  if (p.scheduler->uses_heuristic()) return std::make_unique<FixedList>(std::vector<Config>{{}});
  switch (spec.kind) {
    case StrategySpec::Kind::Grid:
      return std::make_unique<FixedList>(admissible_configs(p));
    case StrategySpec::Kind::Random:
      return std::make_unique<FixedList>(draw_random(spec, p));
    case StrategySpec::Kind::Halving:
      return detail::make_halving(spec, p);
    case StrategySpec::Kind::Evolution:
      return detail::make_evolution(spec, p, family);
    case StrategySpec::Kind::Model:
      return detail::make_model_search(spec, p, family);
  }
  internal_error << "unknown strategy kind";
}

std::vector<Point> expand(const SweepSpec& spec) {
  std::vector<Point> points;
  for (size_t f = 0; f < spec.fusions.size(); ++f)
    for (size_t z = 0; z < spec.fusions[f].sizes.size(); ++z)
      for (size_t s = 0; s < spec.schedulers.size(); ++s) {
        if (!spec.schedulers[s].applies_to(spec.fusions[f].name)) continue;
        SearchProblem problem{&spec.schedulers[s], &spec.fusions[f], &spec.fusions[f].sizes[z]};
        auto strategy = make_strategy(spec.strategy, problem);
        for (auto batch = strategy->propose(); !batch.empty(); batch = strategy->propose()) {
          for (Config& c : batch) points.push_back({f, z, s, std::move(c)});
          // An adaptive strategy's next batch depends on outcomes: only the
          // runner can drive it.
          if (spec.strategy.adaptive()) break;
        }
      }
  return points;
}

std::string describe(const SweepSpec& spec, const Point& point) {
  const FusionSpec& f = spec.fusions.at(point.fusion);
  const SchedulerSpec& s = spec.schedulers.at(point.scheduler);
  std::string config = point.config.empty() ? "(heuristic)" : point.config.str();
  if (!s.fixed.empty()) config += (point.config.empty() ? " " : ", ") + s.fixed.str();
  std::string sizes;  // each binding names every size (spec.h), in declaration order
  for (const std::string& k : f.size_names)
    sizes += (sizes.empty() ? "" : ",") + k + "=" + std::to_string(f.sizes.at(point.sizes).at(k));
  if (f.has_mesh()) sizes += " mesh=" + std::to_string(f.mesh_of(point.sizes));
  return f.name + " " + sizes + " | " + s.name + " | " + config;
}

}  // namespace schedlab::sweep
