// Successive halving over repetitions (Jamieson and Talwalkar 2016, the
// budget-per-rung form Hyperband runs): time `budget` random admissible
// points briefly, keep the best half, time those twice as long, and so on
// until at most two remain, which get the sweep's full repetitions. A noisy
// objective is screened cheaply first; a deterministic one (predicted) ranks
// the same at every rung, so halving then costs about twice random's
// evaluations for random's answer.
#include <algorithm>
#include <cmath>

#include "adaptive.h"

namespace schedlab::sweep::detail {
namespace {

class Halving : public SearchStrategy {
 public:
  Halving(const StrategySpec& spec, const SearchProblem& p)
      : spec_(spec), rng_(search_seed(spec, p)), view_(p, rng_) {}

  std::vector<Config> propose() override {
    std::vector<uint64_t> next;
    if (rung_ == 0) {
      next = draw_fresh(view_.pool(), spec_.budget, history_, rng_);
      rungs_ = rungs_for(next.size());
    } else {
      if (current_.size() <= 2) return {};  // the last rung has run
      // The best half of the last rung's points that produced a value.
      std::vector<std::pair<double, uint64_t>> ranked;
      for (uint64_t i : current_)
        if (auto v = history_.values().at(i)) ranked.emplace_back(*v, i);
      std::sort(ranked.begin(), ranked.end());
      const size_t keep = std::min(ranked.size(), (current_.size() + 1) / 2);
      for (size_t k = 0; k < keep; ++k) next.push_back(ranked[k].second);
      std::sort(next.begin(), next.end());
    }
    ++rung_;
    current_ = next;
    return view_.configs(next);
  }

  void observe(const Config& config, const Outcome& outcome) override {
    record_outcome(view_, history_, config, outcome, spec_.objective);
  }

  // Rung k of R gets configured / 2^(R-1-k) repetitions, at least one: the
  // last rung the sweep's own.
  int64_t repetitions(int64_t configured) const override {
    const int shift = std::min(62, rungs_ - rung_);
    return std::max<int64_t>(1, configured >> shift);
  }

 private:
  /// Rungs from n points halving down to at most two.
  static int rungs_for(size_t n) {
    int r = 1;
    for (; n > 2; n = (n + 1) / 2) ++r;
    return r;
  }

  StrategySpec spec_;
  std::mt19937_64 rng_;
  SpaceView view_;
  History history_;
  std::vector<uint64_t> current_;  ///< the points of the rung last proposed
  int rung_ = 0;                   ///< rungs proposed so far
  int rungs_ = 1;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_halving(const StrategySpec& spec, const SearchProblem& p) {
  return std::make_unique<Halving>(spec, p);
}

}  // namespace schedlab::sweep::detail
