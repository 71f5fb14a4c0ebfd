// The shared parts of the adaptive strategies: see adaptive.h.
#include "adaptive.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "schedlab/sweep/spec/draw.h"

namespace schedlab::sweep {

size_t SearchFamily::join(const SearchProblem& problem) {
  auto it = std::find(fusions_.begin(), fusions_.end(), problem.fusion->name);
  if (it == fusions_.end()) it = fusions_.insert(fusions_.end(), problem.fusion->name);
  members_.push_back({static_cast<size_t>(it - fusions_.begin()), problem.sizes});
  for (const auto& [name, v] : *problem.sizes)
    if (std::find(size_names_.begin(), size_names_.end(), name) == size_names_.end())
      size_names_.push_back(name);
  return members_.size() - 1;
}

std::vector<float> SearchFamily::features(size_t member, const std::vector<float>& params) const {
  const Member& m = members_.at(member);
  std::vector<float> f = params;
  for (const std::string& name : size_names_) {
    auto it = m.sizes->find(name);
    f.push_back(it == m.sizes->end() ? NAN : static_cast<float>(it->second));
  }
  f.push_back(static_cast<float>(m.fusion));
  return f;
}

void SearchFamily::observe(Entry entry) {
  const auto key = std::make_pair(entry.member, entry.index);
  entries_[key] = std::move(entry);
}

std::vector<SearchFamily::Entry> SearchFamily::relative() const {
  struct Range {
    double best = INFINITY, worst = 0;
    size_t valued = 0;
  };
  std::map<size_t, Range> range;
  for (const auto& [key, e] : entries_)
    if (e.value) {
      Range& r = range[e.member];
      r.best = std::min(r.best, *e.value);
      r.worst = std::max(r.worst, *e.value);
      ++r.valued;
    }
  std::vector<Entry> out;
  for (const auto& [key, e] : entries_) {
    auto it = range.find(e.member);
    if (it == range.end() || it->second.valued < 2 || !(it->second.best > 0)) continue;
    Entry r = e;
    r.relative = std::log((e.value ? *e.value : 2 * it->second.worst) / it->second.best);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace schedlab::sweep

namespace schedlab::sweep::detail {

Membership::Membership(std::shared_ptr<SearchFamily> family, const SpaceView& view)
    : family_(std::move(family)), view_(&view) {
  if (family_) id_ = family_->join(view.problem());
}

std::vector<float> Membership::features(uint64_t index) const {
  return family_->features(id_, view_->features(index));
}

void Membership::observe(uint64_t index, std::optional<double> value, const Outcome& outcome) {
  family_->observe({id_, index, view_->features(index), value,
                    outcome.profile.size() == kProfileFeatureCount ? outcome.profile
                                                                   : std::vector<double>{},
                    0});
}

uint64_t search_seed(const StrategySpec& spec, const SearchProblem& p) {
  return sweep::search_seed(spec.seed, p.scheduler->name, p.fusion->name, *p.sizes);
}

SpaceView::SpaceView(const SearchProblem& problem, std::mt19937_64& rng, size_t pool_limit)
    : problem_(problem) {
  const ParamSpace& space = problem.scheduler->space;
  const uint64_t size = space.size();
  if (size <= kMaxGridPoints) {
    for (uint64_t i = 0; i < size; ++i)
      if (admits(i)) pool_.push_back(i);
    return;
  }
  // Too large to list: a rejection sample, as random draws one.
  std::set<uint64_t> seen;
  const uint64_t tries = std::max<uint64_t>(1000, 100 * pool_limit);
  for (uint64_t t = 0; t < tries && seen.size() < pool_limit; ++t) {
    uint64_t i = below(rng, size);
    if (admits(i)) seen.insert(i);
  }
  pool_.assign(seen.begin(), seen.end());
}

std::vector<size_t> SpaceView::digits(uint64_t index) const {
  std::vector<size_t> d(dims());
  for (size_t k = dims(); k-- > 0;) {
    d[k] = static_cast<size_t>(index % values(k));
    index /= values(k);
  }
  return d;
}

uint64_t SpaceView::index(const std::vector<size_t>& digits) const {
  uint64_t i = 0;
  for (size_t k = 0; k < dims(); ++k) i = i * values(k) + digits[k];
  return i;
}

bool SpaceView::admits(uint64_t index) const {
  return problem_.scheduler->admits(config(index), *problem_.sizes);
}

std::optional<uint64_t> SpaceView::index_of(const Config& config) const {
  std::vector<size_t> d(dims());
  for (size_t k = 0; k < dims(); ++k) {
    const Dimension& dim = problem_.scheduler->space.dims[k];
    const Value* v = config.find(dim.name);
    if (!v) return std::nullopt;
    auto it = std::find(dim.values.begin(), dim.values.end(), *v);
    if (it == dim.values.end()) return std::nullopt;
    d[k] = static_cast<size_t>(it - dim.values.begin());
  }
  return index(d);
}

std::vector<float> SpaceView::features(uint64_t index) const {
  std::vector<float> f;
  const std::vector<size_t> d = digits(index);
  for (size_t k = 0; k < dims(); ++k) {
    const Value& v = problem_.scheduler->space.dims[k].values[d[k]];
    switch (v.kind) {
      case Value::Kind::Int:
      case Value::Kind::Bool:
        f.push_back(static_cast<float>(v.i));
        break;
      case Value::Kind::Float:
        f.push_back(static_cast<float>(v.f));
        break;
      case Value::Kind::String:
        f.push_back(static_cast<float>(d[k]));
        break;
    }
  }
  return f;
}

std::optional<uint64_t> SpaceView::nearest(
    const std::vector<std::pair<std::string, std::string>>& choice) const {
  // Per dimension, the distance of each of its values from the choice's.
  std::vector<std::vector<double>> distance(dims());
  bool names_any = false;
  for (size_t k = 0; k < dims(); ++k) {
    const Dimension& dim = problem_.scheduler->space.dims[k];
    distance[k].assign(dim.values.size(), 0.0);
    auto it = std::find_if(choice.begin(), choice.end(),
                           [&](const auto& c) { return c.first == dim.name; });
    if (it == choice.end()) continue;
    names_any = true;
    const std::string& want = it->second;
    char* end = nullptr;
    const double b = std::strtod(want.c_str(), &end);
    const bool b_number = !want.empty() && end && *end == '\0';
    for (size_t v = 0; v < dim.values.size(); ++v) {
      const Value& value = dim.values[v];
      if (value.str() == want) continue;
      const bool a_number = value.kind == Value::Kind::Int || value.kind == Value::Kind::Float;
      const double a = value.kind == Value::Kind::Float ? value.f : static_cast<double>(value.i);
      if (a_number && b_number)
        distance[k][v] = a > 0 && b > 0 ? std::abs(std::log2(a / b))
                                        : std::abs(a - b) / (std::abs(b) + 1);
      else
        distance[k][v] = 1;
    }
  }
  if (!names_any) return std::nullopt;
  std::optional<uint64_t> best;
  double best_distance = INFINITY;
  for (uint64_t i : pool_) {  // in space order: ties go to the lower index
    const std::vector<size_t> d = digits(i);
    double sum = 0;
    for (size_t k = 0; k < dims(); ++k) sum += distance[k][d[k]];
    if (sum < best_distance) best_distance = sum, best = i;
  }
  return best;
}

WarmStart::WarmStart(bool enabled, const SpaceView& view) : enabled_(enabled), view_(&view) {
  const Config& defaults = view.problem().scheduler->script_defaults;
  if (!enabled || defaults.empty()) return;
  std::vector<std::pair<std::string, std::string>> choice;
  for (const auto& [name, v] : defaults.values) choice.emplace_back(name, v.str());
  known_ = true;
  point_ = view.nearest(choice);
}

std::vector<std::pair<double, uint64_t>> History::ranked() const {
  std::vector<std::pair<double, uint64_t>> r;
  for (const auto& [i, v] : values_)
    if (v) r.emplace_back(*v, i);
  std::sort(r.begin(), r.end());
  return r;
}

std::vector<uint64_t> draw_fresh(const std::vector<uint64_t>& pool, size_t n, History& history,
                                 std::mt19937_64& rng) {
  std::vector<uint64_t> fresh;
  for (uint64_t i : pool)
    if (!history.proposed(i)) fresh.push_back(i);
  std::vector<uint64_t> r;
  for (size_t k = 0; k < n && k < fresh.size(); ++k) {
    std::swap(fresh[k], fresh[k + below(rng, fresh.size() - k)]);
    r.push_back(fresh[k]);
    history.propose(fresh[k]);
  }
  return r;
}

}  // namespace schedlab::sweep::detail
