// Cutting a sweep into shards: see schedlab/sweep/run/shard.h.
#include "schedlab/sweep/run/shard.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/report/record.h"
#include "schedlab/sweep/run/ab.h"

namespace schedlab::sweep {

namespace {

std::optional<size_t> parse_count(std::string_view s) {
  size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string sizes_by_name(const FusionSpec& f, size_t sizes) {
  std::vector<std::pair<std::string, int64_t>> by_name(f.sizes.at(sizes).begin(),
                                                       f.sizes.at(sizes).end());
  std::sort(by_name.begin(), by_name.end());
  std::string r;
  for (const auto& [k, v] : by_name) r += (r.empty() ? "" : ",") + k + "=" + std::to_string(v);
  // A point of a mesh dimension: as Record::size_key says it.
  if (f.has_mesh()) r += ",mesh=" + std::to_string(f.mesh_of(sizes));
  return r;
}

/// The twin's original: "NAME@old" -> "NAME".
std::string_view base_scheduler(std::string_view name) {
  const std::string_view old = kAbOldSuffix;
  return name.ends_with(old) ? name.substr(0, name.size() - old.size()) : name;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  std::optional<size_t> i, n;
  if (slash != std::string_view::npos) {
    i = parse_count(text.substr(0, slash));
    n = parse_count(text.substr(slash + 1));
  }
  user_assert(i && n && *n >= 1 && *i < *n)
      << "--shard: expected I/N, the I-th of N parts with 0 <= I < N (e.g. 0/4), found '" << text
      << "'";
  return {*i, *n};
}

bool shards_by_group(const StrategySpec& strategy) {
  return strategy.kind != StrategySpec::Kind::Grid && strategy.kind != StrategySpec::Kind::Random;
}

std::string group_identity(const SweepSpec& spec, size_t fusion, size_t sizes) {
  const FusionSpec& f = spec.fusions.at(fusion);
  return f.name + '\0' + sizes_by_name(f, sizes);
}

std::string point_identity(const SweepSpec& spec, const Point& point) {
  // The configuration by parameter name: the order the space lists them in
  // is the file's, not the point's.
  std::vector<std::string> values;
  for (const auto& [name, value] : point.config.values) values.push_back(name + "=" + value.str());
  std::sort(values.begin(), values.end());
  std::string id = group_identity(spec, point.fusion, point.sizes) + '\0' +
                   std::string(base_scheduler(spec.schedulers.at(point.scheduler).name));
  for (const std::string& v : values) id += '\0' + v;
  return id;
}

ShardPlan::ShardPlan(const SweepSpec& spec, Shard shard)
    : shard_(shard), by_group_(shards_by_group(spec.strategy)) {
  internal_assert(shard.count >= 1 && shard.index < shard.count)
      << "ShardPlan: shard " << shard.index << "/" << shard.count;
  std::vector<std::string> units;
  if (by_group_) {
    for (size_t f = 0; f < spec.fusions.size(); ++f)
      for (size_t z = 0; z < spec.fusions[f].sizes.size(); ++z)
        units.push_back(group_identity(spec, f, z));
  } else {
    for (const Point& p : expand(spec)) units.push_back(point_identity(spec, p));
  }
  // Dealt in the order of a stable hash (the sweep's own order would give
  // shard 0 every first fusion), ties broken by the identity itself.
  std::vector<std::pair<std::string, std::string>> order;
  for (std::string& u : units) order.emplace_back(report::hash_hex(u), std::move(u));
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  total_ = order.size();
  for (size_t r = shard.index; r < order.size(); r += shard.count)
    mine_.insert(std::move(order[r].second));
}

bool ShardPlan::has_group(const SweepSpec& spec, size_t fusion, size_t sizes) const {
  if (!by_group_) return true;  // its points are chosen one by one
  return mine_.count(group_identity(spec, fusion, sizes)) > 0;
}

bool ShardPlan::has_point(const SweepSpec& spec, const Point& point) const {
  if (by_group_) return has_group(spec, point.fusion, point.sizes);
  return mine_.count(point_identity(spec, point)) > 0;
}

}  // namespace schedlab::sweep
