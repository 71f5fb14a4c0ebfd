// Grid and random search, the choice of a strategy, and the expansion of a
// sweep into points.
#include "schedlab/sweep/search/strategy.h"

#include <algorithm>
#include <random>
#include <set>

#include "adaptive.h"

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

/// `n` distinct admissible points, uniformly without replacement, returned in
/// space order. The draw is a partial Fisher-Yates shuffle over a 64-bit
/// Mersenne Twister (whose output the standard fixes, unlike its
/// distributions), so the first k draws do not depend on n: a larger n only
/// adds points. Each search seeds with the sweep's seed mixed with a hash of
/// (scheduler, fusion, sizes), so different searches draw independently.
std::vector<Config> draw_random(const StrategySpec& spec, const SearchProblem& p) {
  const SchedulerSpec& s = *p.scheduler;
  std::mt19937_64 rng(detail::search_seed(spec, p));
  auto below = [&](uint64_t bound) { return rng() % bound; };  // bias < bound / 2^64
  std::vector<uint64_t> chosen;
  const uint64_t size = s.space.size();
  if (size <= kMaxGridPoints) {
    std::vector<uint64_t> admissible;
    for (uint64_t i = 0; i < size; ++i)
      if (s.admits(s.space.point(i), *p.sizes)) admissible.push_back(i);
    uint64_t n = std::min<uint64_t>(spec.budget, admissible.size());
    for (uint64_t k = 0; k < n; ++k) {
      std::swap(admissible[k], admissible[k + below(admissible.size() - k)]);
      chosen.push_back(admissible[k]);
    }
  } else {
    // Too large to list: rejection sampling by index, with a bounded number
    // of tries, so a space the constraints make sparse yields fewer points.
    std::set<uint64_t> seen;
    uint64_t tries = std::max<uint64_t>(1000, 100 * spec.budget);
    for (uint64_t t = 0; t < tries && chosen.size() < spec.budget; ++t) {
      uint64_t i = below(size);
      if (seen.insert(i).second && s.admits(s.space.point(i), *p.sizes)) chosen.push_back(i);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<Config> r;
  for (uint64_t i : chosen) r.push_back(s.space.point(i));
  return r;
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
  return f.name + " " + sizes + " | " + s.name + " | " + config;
}

}  // namespace schedlab::sweep
