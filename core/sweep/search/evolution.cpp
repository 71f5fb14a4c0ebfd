// Evolutionary search: a steady-state genetic algorithm over the space's
// digit vectors (each parameter's position in its list of values).
//
// The first generation is drawn at random from the admissible points (never
// the whole budget: one evaluation at least is left to breed). Each
// later one breeds `population` children: two parents, each the better of
// two drawn from the best `population` points evaluated so far (tournament
// selection: the elite survive implicitly, since they stay in that pool),
// uniform crossover, then mutation of each parameter with probability
// 1/dims (at least one), which moves it to a neighbouring value (the lists
// are ordered: 64 -> 128) three times in four and to any value otherwise.
// A child the constraints reject, or one proposed before, is bred again, up
// to a bound; after it a fresh random point stands in, so the search never
// stalls while the space has points left. Failed points never parent.
//
// Warm start (StrategySpec::warm_start): once an outcome says what the
// scheduler itself would choose, the nearest point of the space leads the
// next generation, so that the search is never worse than the heuristic it
// tunes (when the budget reaches a second generation).
//
// In a family (strategy.h), the searches of one scheduler are islands of an
// island-model genetic algorithm: once the other members have evaluated
// points, up to a quarter of each generation (at least one) are migrants,
// the configurations that did best relative to the best of the member that
// evaluated them (SearchFamily::relative, averaged over the members that
// did), admissible here and not yet proposed; the rest are bred as above,
// and a migrant that does well here parents like any other point.
#include <algorithm>
#include <map>
#include <tuple>

#include "adaptive.h"

namespace schedlab::sweep::detail {
namespace {

class Evolution : public SearchStrategy {
 public:
  Evolution(const StrategySpec& spec, const SearchProblem& p, std::shared_ptr<SearchFamily> family)
      : spec_(spec),
        rng_(search_seed(spec, p)),
        view_(p, rng_),
        member_(std::move(family), view_),
        start_(spec.warm_start, view_) {
    population_ = std::clamp<size_t>(spec.budget / 4, 2, 16);
    // The first generation leaves at least one evaluation to breed (or to a
    // migrant).
    first_generation_ = std::min<size_t>(population_, std::max<uint64_t>(1, spec.budget - 1));
  }

  std::vector<Config> propose() override {
    const size_t left = spec_.budget - std::min<size_t>(spec_.budget, history_.proposals());
    const size_t n = std::min(left, history_.proposals() ? population_ : first_generation_);
    std::vector<uint64_t> next;
    if (n > 0)
      if (auto s = start_.take(history_)) next.push_back(*s);
    const std::vector<std::pair<double, uint64_t>> ranked = history_.ranked();
    std::vector<uint64_t> migrants = this->migrants(std::max<size_t>(1, n / 4));
    if (migrants.size() > n - next.size()) migrants.resize(n - next.size());
    for (uint64_t i : migrants) {
      history_.propose(i);
      next.push_back(i);
    }
    if (ranked.empty()) {
      for (uint64_t i : draw_fresh(view_.pool(), n - next.size(), history_, rng_)) next.push_back(i);
    } else {
      const size_t elite = std::min(ranked.size(), population_);
      for (size_t k = next.size(); k < n; ++k) {
        std::optional<uint64_t> child;
        for (int attempt = 0; attempt < 64 && !child; ++attempt) {
          uint64_t c = breed(ranked, elite);
          if (!history_.proposed(c) && view_.admits(c)) child = c;
        }
        if (child) {
          history_.propose(*child);
          next.push_back(*child);
        } else {
          for (uint64_t i : draw_fresh(view_.pool(), 1, history_, rng_)) next.push_back(i);
        }
      }
    }
    return view_.configs(next);
  }

  void observe(const Config& config, const Outcome& outcome) override {
    record_outcome(view_, history_, config, outcome, spec_.objective, &member_);
    start_.observe(outcome);
  }

 private:
  /// Up to `n` points the other members of the family found best, best
  /// first (ties: the one more members evaluated, then the lower index).
  std::vector<uint64_t> migrants(size_t n) const {
    if (!member_.active()) return {};
    std::map<uint64_t, std::pair<double, size_t>> score;  // index -> (sum, members)
    for (const SearchFamily::Entry& e : member_.family().relative()) {
      if (e.member == member_.id()) continue;
      auto& [sum, count] = score[e.index];
      sum += e.relative;
      ++count;
    }
    std::vector<std::tuple<double, size_t, uint64_t>> order;  // (mean, -count, index)
    for (const auto& [i, sc] : score)
      if (!history_.proposed(i) && view_.admits(i))
        order.emplace_back(sc.first / double(sc.second), SIZE_MAX - sc.second, i);
    std::sort(order.begin(), order.end());
    std::vector<uint64_t> r;
    for (size_t k = 0; k < n && k < order.size(); ++k) r.push_back(std::get<2>(order[k]));
    return r;
  }

  uint64_t tournament(const std::vector<std::pair<double, uint64_t>>& ranked, size_t elite) {
    const size_t a = below(rng_, elite), b = below(rng_, elite);
    return ranked[std::min(a, b)].second;  // ranked is best first
  }

  uint64_t breed(const std::vector<std::pair<double, uint64_t>>& ranked, size_t elite) {
    const std::vector<size_t> mother = view_.digits(tournament(ranked, elite));
    const std::vector<size_t> father = view_.digits(tournament(ranked, elite));
    std::vector<size_t> child(view_.dims());
    for (size_t d = 0; d < child.size(); ++d) child[d] = (rng_() & 1) ? mother[d] : father[d];
    const size_t dims = view_.dims();
    bool mutated = false;
    while (!mutated) {
      for (size_t d = 0; d < dims; ++d) {
        if (below(rng_, dims) != 0 || view_.values(d) < 2) continue;
        mutated = true;
        const size_t n = view_.values(d);
        if (below(rng_, 4) != 0) {
          const bool up = child[d] == 0 || (child[d] + 1 < n && (rng_() & 1));
          child[d] = up ? child[d] + 1 : child[d] - 1;
        } else {
          child[d] = below(rng_, n);
        }
      }
      if (std::all_of(view_.problem().scheduler->space.dims.begin(),
                      view_.problem().scheduler->space.dims.end(),
                      [](const Dimension& dim) { return dim.values.size() < 2; }))
        break;  // nothing can mutate
    }
    return view_.index(child);
  }

  StrategySpec spec_;
  std::mt19937_64 rng_;
  SpaceView view_;
  Membership member_;  ///< after view_, which it points to
  WarmStart start_;    ///< likewise
  History history_;
  size_t population_ = 2;
  size_t first_generation_ = 2;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_evolution(const StrategySpec& spec, const SearchProblem& p,
                                               std::shared_ptr<SearchFamily> family) {
  return std::make_unique<Evolution>(spec, p, std::move(family));
}

}  // namespace schedlab::sweep::detail
