// Model-guided search, as TVM's MetaSchedule does it: a cost model trained
// online on the points evaluated so far chooses each next batch, mostly the
// candidates it predicts best, plus an exploration share drawn at random
// (epsilon-greedy) so that a wrong model still sees new parts of the space.
//
// The model is gradient-boosted trees (XGBoost's C API, as MetaSchedule's
// XGBModel), retrained from scratch each round: a few dozen points train in
// milliseconds. It regresses the standardised log of the objective (a time:
// only ratios matter, and the log keeps one slow outlier from flattening
// the rest); a failed point counts as twice the worst time seen, so the
// model learns to avoid what fails.
//
// Features: each parameter (numbers as themselves, choices as their
// position), the sizes, and, once evaluated points carry a profile, its
// figures (kProfileFeatures: sector bytes, occupancy, registers,
// instructions). A candidate has no profile before it runs, so each profile
// figure is itself regressed on the parameters by a small auxiliary model,
// and the main model sees those estimates for training points and
// candidates alike (training on the true figures and predicting from
// estimates would mix two different inputs).
//
// Warm start (StrategySpec::warm_start): once an outcome says what the
// scheduler itself would choose, the nearest point of the space leads the
// next batch, ahead of the model's choices.
//
// Deterministic: one thread, the exact tree method, fixed seeds; ties in the
// predictions are broken by a shuffle from the search's generator.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "adaptive.h"

namespace schedlab::sweep::detail {
namespace {

void xgb_check(int rc, const char* what) {
  internal_assert(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}

/// A DMatrix that frees itself.
class Matrix {
 public:
  Matrix(const std::vector<float>& rows, size_t cols) {
    xgb_check(XGDMatrixCreateFromMat(rows.data(), rows.size() / cols, cols, NAN, &h_),
              "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(h_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

/// Gradient-boosted regression trees fitted to (rows, y); predicts rows.
std::vector<float> fit_predict(const std::vector<float>& train, const std::vector<float>& y,
                               const std::vector<float>& query, size_t cols) {
  Matrix dtrain(train, cols);
  xgb_check(XGDMatrixSetFloatInfo(dtrain.get(), "label", y.data(), y.size()), "set labels");
  BoosterHandle booster = nullptr;
  DMatrixHandle mats[] = {dtrain.get()};
  xgb_check(XGBoosterCreate(mats, 1, &booster), "XGBoosterCreate");
  struct Free {
    BoosterHandle b;
    ~Free() { XGBoosterFree(b); }
  } free_booster{booster};
  // Small data: shallow trees, every point may be a leaf, no subsampling.
  const std::pair<const char*, const char*> params[] = {{"objective", "reg:squarederror"},
                                                        {"tree_method", "exact"},
                                                        {"nthread", "1"},
                                                        {"max_depth", "4"},
                                                        {"eta", "0.3"},
                                                        {"min_child_weight", "1"},
                                                        {"base_score", "0"},
                                                        {"seed", "0"},
                                                        {"verbosity", "0"}};
  for (const auto& [k, v] : params) xgb_check(XGBoosterSetParam(booster, k, v), k);
  for (int it = 0; it < 40; ++it)
    xgb_check(XGBoosterUpdateOneIter(booster, it, dtrain.get()), "XGBoosterUpdateOneIter");
  Matrix dquery(query, cols);
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  xgb_check(
      XGBoosterPredictFromDMatrix(
          booster, dquery.get(),
          R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
          &shape, &dim, &out),
      "XGBoosterPredictFromDMatrix");
  return std::vector<float>(out, out + query.size() / cols);
}

/// (v - mean) / sd, in place; sd 1 when the values are all alike.
void standardise(std::vector<float>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  double var = 0;
  for (float x : v) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / double(v.size()));
  for (float& x : v) x = static_cast<float>((x - mean) / (sd > 0 ? sd : 1));
}

class ModelSearch : public SearchStrategy {
 public:
  ModelSearch(const StrategySpec& spec, const SearchProblem& p,
              std::shared_ptr<SearchFamily> family)
      : spec_(spec),
        rng_(search_seed(spec, p)),
        view_(p, rng_),
        member_(std::move(family), view_),
        start_(spec.warm_start, view_) {
    // The first batch leaves at least one evaluation to the model (or to
    // the warm start).
    first_batch_ = std::min<size_t>(std::clamp<size_t>(spec.budget / 4, 2, 16),
                                    std::max<uint64_t>(1, spec.budget - 1));
    batch_ = std::clamp<size_t>(spec.budget / 8, 1, 16);
  }

  std::vector<Config> propose() override {
    const size_t left = spec_.budget - std::min<size_t>(spec_.budget, history_.proposals());
    std::vector<uint64_t> next;
    const Training training = this->training();
    // The random opening is larger than the model's batches.
    const bool opening = training.y.size() < 2 && history_.proposals() == 0;
    const size_t n = std::min(left, opening ? first_batch_ : batch_);
    if (n > 0)
      if (auto s = start_.take(history_)) next.push_back(*s);
    if (training.y.size() < 2) {
      // Nothing to learn from yet: a random batch.
      for (uint64_t i : draw_fresh(view_.pool(), n - next.size(), history_, rng_))
        next.push_back(i);
    } else {
      const size_t explore = static_cast<size_t>(double(n - next.size()) * kExploration);
      for (uint64_t i : best_predicted(training, n - next.size() - explore)) next.push_back(i);
      for (uint64_t i : draw_fresh(view_.pool(), explore, history_, rng_)) next.push_back(i);
    }
    return view_.configs(next);
  }

  void observe(const Config& config, const Outcome& outcome) override {
    record_outcome(view_, history_, config, outcome, spec_.objective, &member_);
    start_.observe(outcome);
  }

 private:
  /// The share of each model-chosen batch drawn at random instead.
  static constexpr double kExploration = 0.2;

  /// What the model learns from: a row of base features per point (the
  /// parameters, the sizes and, in a family, the fusion's ordinal), its
  /// target, and its profile (kProfileFeatures, or empty).
  struct Training {
    std::vector<std::vector<float>> rows;
    std::vector<float> y;
    std::vector<std::vector<double>> profiles;
  };

  /// The base features of point i of this search.
  std::vector<float> base_features(uint64_t i) const {
    if (member_.active()) return member_.features(i);
    std::vector<float> f = view_.features(i);
    for (const auto& [name, v] : *view_.problem().sizes) f.push_back(static_cast<float>(v));
    return f;
  }

  /// Alone: every point evaluated, its target the standardised log of the
  /// objective, a failure as twice the worst. In a family: every point the
  /// members evaluated, its target log(value / its member's best)
  /// (SearchFamily::relative), so that times at different sizes compare.
  Training training() const {
    Training t;
    if (member_.active()) {
      for (const SearchFamily::Entry& e : member_.family().relative()) {
        t.rows.push_back(member_.family().features(e.member, e.params));
        t.y.push_back(static_cast<float>(e.relative));
        t.profiles.push_back(e.profile);
      }
      return t;
    }
    if (history_.ranked().size() < 2) return t;
    double worst = 0;
    for (const auto& [v, i] : history_.ranked()) worst = std::max(worst, v);
    for (const auto& [i, v] : history_.values()) {
      t.rows.push_back(base_features(i));
      t.y.push_back(static_cast<float>(std::log(v ? *v : 2 * worst)));
      const Outcome& o = history_.outcomes().at(i);
      t.profiles.push_back(o.profile.size() == kProfileFeatureCount ? o.profile
                                                                    : std::vector<double>{});
    }
    standardise(t.y);
    return t;
  }

  /// The `n` unproposed candidates the model predicts best, recorded as proposed.
  std::vector<uint64_t> best_predicted(const Training& t, size_t n) {
    std::vector<uint64_t> candidates;
    for (uint64_t i : view_.pool())
      if (!history_.proposed(i)) candidates.push_back(i);
    // Shuffled first, so that ties (common with few training points) fall randomly.
    for (size_t k = candidates.size(); k > 1; --k)
      std::swap(candidates[k - 1], candidates[below(rng_, k)]);
    if (candidates.empty() || n == 0) return {};

    std::vector<std::vector<float>> query;
    for (uint64_t i : candidates) query.push_back(base_features(i));
    const size_t base = t.rows[0].size();
    std::vector<std::vector<float>> train = t.rows;
    add_profile_estimates(t, base, train, query);
    const size_t cols = train[0].size();
    std::vector<float> rows_train, rows_query;
    for (const auto& r : train) append(rows_train, r);
    for (const auto& r : query) append(rows_query, r);
    const std::vector<float> score = fit_predict(rows_train, t.y, rows_query, cols);
    std::vector<size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] < score[b]; });
    std::vector<uint64_t> r;
    for (size_t k = 0; k < n && k < order.size(); ++k) {
      r.push_back(candidates[order[k]]);
      history_.propose(candidates[order[k]]);
    }
    return r;
  }

  /// Each profile figure that at least two training points carry, regressed
  /// on the `base` features: its estimates for the training points and the
  /// candidates are appended to their rows.
  static void add_profile_estimates(const Training& t, size_t base,
                                    std::vector<std::vector<float>>& train,
                                    std::vector<std::vector<float>>& query) {
    std::vector<float> all;
    for (const auto& r : train) all.insert(all.end(), r.begin(), r.begin() + base);
    for (const auto& r : query) all.insert(all.end(), r.begin(), r.begin() + base);
    for (size_t f = 0; f < kProfileFeatureCount; ++f) {
      std::vector<float> x, y;
      for (size_t k = 0; k < t.rows.size(); ++k) {
        if (t.profiles[k].size() != kProfileFeatureCount) continue;
        append(x, t.rows[k]);
        y.push_back(static_cast<float>(std::log1p(std::max(0.0, t.profiles[k][f]))));
      }
      if (y.size() < 2) continue;
      const std::vector<float> est = fit_predict(x, y, all, base);
      for (size_t k = 0; k < train.size(); ++k) train[k].push_back(est[k]);
      for (size_t k = 0; k < query.size(); ++k) query[k].push_back(est[train.size() + k]);
    }
  }

  static void append(std::vector<float>& to, const std::vector<float>& v) {
    to.insert(to.end(), v.begin(), v.end());
  }

  StrategySpec spec_;
  std::mt19937_64 rng_;
  SpaceView view_;
  Membership member_;  ///< after view_, which it points to
  WarmStart start_;    ///< likewise
  History history_;
  size_t first_batch_ = 2, batch_ = 1;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_search(const StrategySpec& spec,
                                                  const SearchProblem& p,
                                                  std::shared_ptr<SearchFamily> family) {
  return std::make_unique<ModelSearch>(spec, p, std::move(family));
}

}  // namespace schedlab::sweep::detail
