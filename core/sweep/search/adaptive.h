// What the adaptive strategies (halving, evolution, model) share: a
// search's space seen as index vectors, its pool of admissible points, and
// the best-so-far bookkeeping of observe(). Internal to core/sweep/search.
//
// A point is its odometer index in the scheduler's space (space.h); a
// strategy works on indices and hands out Configs, and observe() maps a
// Config back through its str(). Every random choice comes from one
// std::mt19937_64 seeded by search_seed(), whose output (unlike the
// standard distributions') the standard fixes: the same spec proposes the
// same sequence on every machine.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/sweep/search/search_strategy.h"

namespace schedlab::sweep {

/// One scheduler's searches, together (strategy.h: make_search_family). A member joins with its
/// problem and reports every outcome; the family keeps each evaluated point
/// with its objective. Values are compared only within a member:
/// relative() turns them into log(value / the member's best), the
/// scale-free figure that both the shared cost model and migration use.
class SearchFamily {
 public:
  /// One evaluated point of a member.
  struct Entry {
    size_t member = 0;
    uint64_t index = 0;            ///< in the scheduler's space
    std::vector<float> params;     ///< SpaceView::features of the point
    std::optional<double> value;   ///< the objective; nullopt when the point failed
    std::vector<double> profile;   ///< kProfileFeatures' values, or empty
    double relative = 0;           ///< set by relative()
  };

  /// A new member searching `problem`; its id.
  size_t join(const SearchProblem& problem);
  /// A point's features for a cost model shared by the members: its
  /// parameters, then every size the family's fusions name (in order of
  /// first appearance; NaN, XGBoost's missing value, where `member`'s fusion
  /// has no such size), then the ordinal of the member's fusion, so that a
  /// model can tell fusions apart.
  std::vector<float> features(size_t member, const std::vector<float>& params) const;
  /// Records (or, when evaluated again, replaces) a member's point.
  void observe(Entry entry);
  /// The entries of members with at least two points with a value, each with
  /// `relative` set: log(value / the member's best), a failure as
  /// log(2 * the member's worst / its best). Ordered by (member, index).
  std::vector<Entry> relative() const;

 private:
  struct Member {
    size_t fusion = 0;  ///< into fusions_
    const ir::SizeBindings* sizes = nullptr;
  };
  std::vector<Member> members_;
  std::vector<std::string> fusions_;
  std::vector<std::string> size_names_;
  std::map<std::pair<size_t, uint64_t>, Entry> entries_;
};

}  // namespace schedlab::sweep

namespace schedlab::sweep::detail {

/// The seed of one search: the strategy's seed mixed with a hash of
/// (scheduler, fusion, sizes), so that different searches draw independently.
uint64_t search_seed(const StrategySpec& spec, const SearchProblem& problem);

/// A uniform draw in [0, bound) (bias < bound / 2^64).
inline uint64_t below(std::mt19937_64& rng, uint64_t bound) {
  return rng() % bound;
}

/// One search's space: points as odometer indices and digit vectors.
class SpaceView {
 public:
  /// At most `pool_limit` admissible points are listed: all of them when the
  /// space is listable (kMaxGridPoints), else a rejection sample.
  SpaceView(const SearchProblem& problem, std::mt19937_64& rng, size_t pool_limit = 4096);

  const SearchProblem& problem() const { return problem_; }
  /// The admissible points known, in space order (the candidates).
  const std::vector<uint64_t>& pool() const { return pool_; }
  size_t dims() const { return problem_.scheduler->space.dims.size(); }
  size_t values(size_t dim) const { return problem_.scheduler->space.dims[dim].values.size(); }
  std::vector<size_t> digits(uint64_t index) const;
  uint64_t index(const std::vector<size_t>& digits) const;
  bool admits(uint64_t index) const;
  Config config(uint64_t index) const { return problem_.scheduler->space.point(index); }
  /// config() of each index, in order: a batch to propose.
  std::vector<Config> configs(const std::vector<uint64_t>& indices) const {
    std::vector<Config> r;
    for (uint64_t i : indices) r.push_back(config(i));
    return r;
  }
  /// The index of a configuration this view handed out.
  std::optional<uint64_t> index_of(const Config& config) const;
  /// A numeric feature per dimension: the value itself for numbers and
  /// bools, its position in the dimension for a choice or a string.
  std::vector<float> features(uint64_t index) const;
  /// The admissible point of the pool nearest to `choice` (parameter ->
  /// value as `--set` spells it; Outcome::own_choice): per dimension, 0 for
  /// the same value, |log2(a / b)| between positive numbers (128 is as near
  /// 256 as 64), |a - b| / (|b| + 1) between other numbers, 1 otherwise, 0
  /// for a dimension `choice` does not name; summed, ties to the lower
  /// index. nullopt when `choice` names no dimension or the pool is empty.
  std::optional<uint64_t> nearest(const std::vector<std::pair<std::string, std::string>>& choice) const;

 private:
  SearchProblem problem_;
  std::vector<uint64_t> pool_;
};

/// What a search has seen: each evaluated point's objective (nullopt when
/// it failed), and the proposals so far.
class History {
 public:
  /// Records a proposal; false when it was proposed before.
  bool propose(uint64_t index) { return proposed_.insert(index).second; }
  bool proposed(uint64_t index) const { return proposed_.count(index) > 0; }
  size_t proposals() const { return proposed_.size(); }
  void observe(uint64_t index, std::optional<double> value, const Outcome& outcome) {
    values_[index] = value;
    outcomes_[index] = outcome;
  }
  /// Evaluated points with an objective, best (smallest) first.
  std::vector<std::pair<double, uint64_t>> ranked() const;
  const std::map<uint64_t, std::optional<double>>& values() const { return values_; }
  const std::map<uint64_t, Outcome>& outcomes() const { return outcomes_; }

 private:
  std::set<uint64_t> proposed_;
  std::map<uint64_t, std::optional<double>> values_;
  std::map<uint64_t, Outcome> outcomes_;
};

/// A strategy's membership of its family: joins at construction, reports
/// each outcome. Inactive (no family) unless given one.
class Membership {
 public:
  Membership(std::shared_ptr<SearchFamily> family, const SpaceView& view);
  bool active() const { return family_ != nullptr; }
  const SearchFamily& family() const { return *family_; }
  size_t id() const { return id_; }
  /// Point `index` of this member's space, as the family's model sees it.
  std::vector<float> features(uint64_t index) const;
  void observe(uint64_t index, std::optional<double> value, const Outcome& outcome);

 private:
  std::shared_ptr<SearchFamily> family_;
  const SpaceView* view_ = nullptr;
  size_t id_ = 0;
};

/// A strategy's observe(): the outcome of a configuration `view` handed out,
/// with its value under `objective`, into `history` (and the family's).
inline void record_outcome(const SpaceView& view, History& history, const Config& config,
                           const Outcome& outcome, StrategySpec::Objective objective,
                           Membership* membership = nullptr) {
  if (auto i = view.index_of(config)) {
    history.observe(*i, objective_value(outcome, objective), outcome);
    if (membership && membership->active())
      membership->observe(*i, objective_value(outcome, objective), outcome);
  }
}

/// Evolution's and model's warm start (StrategySpec::warm_start): the
/// point nearest the scheduler's own choice, proposed once unless proposed
/// already. A script's is its params(...) defaults, known from the start; a
/// plugin's is learnt from the first outcome that carries it.
class WarmStart {
 public:
  WarmStart(bool enabled, const SpaceView& view);
  void observe(const Outcome& outcome) {
    if (enabled_ && !known_ && !outcome.own_choice.empty()) {
      known_ = true;
      point_ = view_->nearest(outcome.own_choice);
    }
  }
  /// The point to propose now (recorded in `history`), at most once.
  std::optional<uint64_t> take(History& history) {
    if (!point_ || !history.propose(*point_)) return std::nullopt;
    return std::exchange(point_, std::nullopt);
  }

 private:
  bool enabled_ = true;
  const SpaceView* view_ = nullptr;
  bool known_ = false;
  std::optional<uint64_t> point_;
};

/// `n` distinct points of `pool` not yet proposed, uniformly (fewer when
/// the pool runs out), each recorded in `history`.
std::vector<uint64_t> draw_fresh(const std::vector<uint64_t>& pool, size_t n, History& history,
                                 std::mt19937_64& rng);

std::unique_ptr<SearchStrategy> make_halving(const StrategySpec& spec, const SearchProblem& p);
std::unique_ptr<SearchStrategy> make_evolution(const StrategySpec& spec, const SearchProblem& p,
                                               std::shared_ptr<SearchFamily> family);
std::unique_ptr<SearchStrategy> make_model_search(const StrategySpec& spec, const SearchProblem& p,
                                                  std::shared_ptr<SearchFamily> family);

}  // namespace schedlab::sweep::detail
