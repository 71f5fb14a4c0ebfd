// Best-so-far curves: see schedlab/report/curves.h.
#include "schedlab/report/curves.h"

#include <fmt/core.h>

#include <map>
#include <tuple>

#include "schedlab/report/format.h"

namespace schedlab::report {

std::optional<double> objective_us(const Record& r, const std::string& objective) {
  if (r.status != Status::Ok) return std::nullopt;
  if (objective == "predicted")
    return r.prediction ? std::optional(r.prediction->predicted_us) : std::nullopt;
  if (r.times_us.empty()) return std::nullopt;
  return r.summary().median;
}

std::vector<Curve> best_so_far_curves(const std::vector<Record>& records) {
  using Key =
      std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;
  std::map<Key, size_t> index;
  std::vector<Curve> curves;
  std::vector<std::map<int64_t, std::optional<double>>> values;  // evaluation -> value
  for (const Record& r : records) {
    if (r.strategy.empty() || r.evaluation <= 0) continue;
    Key key{r.device.fingerprint, r.fusion, r.size_key(), r.scheduler, r.strategy, r.objective};
    auto [it, fresh] = index.emplace(key, curves.size());
    if (fresh) {
      curves.push_back(
          {r.fusion, r.size_label(), r.scheduler, r.strategy, r.objective, r.device.name, {}});
      values.emplace_back();
    }
    values[it->second][r.evaluation] = objective_us(r, r.objective);  // the latest stands
  }
  std::vector<Curve> out;
  for (size_t c = 0; c < curves.size(); ++c) {
    if (values[c].size() < 2) continue;
    std::optional<double> best;
    for (const auto& [evaluation, v] : values[c]) {
      if (v && (!best || *v < *best)) best = v;
      curves[c].best.push_back(best);
    }
    out.push_back(std::move(curves[c]));
  }
  return out;
}

std::string render_curves(const std::vector<Curve>& curves) {
  if (curves.empty()) return "";
  std::string out = "Best so far (objective against evaluations):\n";
  for (const Curve& c : curves) {
    const size_t n = c.best.size();
    size_t found = 0;  // the evaluation that found the final best
    for (size_t k = 0; k < n; ++k)
      if (c.best[k] && (k == 0 || c.best[k] != c.best[k - 1])) found = k + 1;
    std::vector<size_t> at;
    for (size_t k = 1; k < n; k *= 2) at.push_back(k);
    at.push_back(n);
    std::string samples;
    for (size_t k : at)
      samples += fmt::format("{}{}: {}", samples.empty() ? "" : ", ", k,
                             c.best[k - 1] ? format_time_us(*c.best[k - 1], 4, true) : "-");
    out += fmt::format("  {} {} | {} | {}, {}: best {} at evaluation {} of {} ({})\n", c.fusion,
                       c.size_label, c.scheduler, c.strategy, c.objective,
                       c.best.back() ? format_time_us(*c.best.back()) : "none", found, n, samples);
  }
  return out;
}

}  // namespace schedlab::report
