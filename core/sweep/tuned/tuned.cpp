// Choosing tuned configurations: see schedlab/sweep/tuned/tuned.h.
#include "schedlab/sweep/tuned/tuned.h"

#include <algorithm>
#include <map>
#include <set>

#include "schedlab/report/stats.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

namespace {

/// A String parameter as a record shows it (plugin::Plugin::format_value:
/// in double quotes, `"` and `\` escaped) back to the raw text `--set` takes.
std::string unquote(const std::string& v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return v;
  std::string r;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] == '\\' && i + 2 < v.size()) ++i;
    r += v[i];
  }
  return r;
}

std::string sizes_of(const report::SizeList& sizes) {
  std::string r;
  for (const auto& [k, v] : sizes) r += (r.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return r;
}

}  // namespace

// ---- choosing -------------------------------------------------------------------

namespace {

/// Whether the measurements show `c` slower than `w` at one size: false
/// when both ran the same kernel or the rank test (paired by round when
/// both were timed in one interleaved group, else Mann-Whitney) finds no
/// slowdown significant at 5 % and beyond the sweep's minimum effect;
/// nullopt when no outcome of the test could be significant with so few
/// timings (a perfectly separated sample of the same sizes misses 5 % too).
std::optional<bool> measurably_slower(const report::Record& c, const report::Record& w) {
  constexpr double kAlpha = 0.05;
  if (!c.kernel_hash.empty() && c.kernel_hash == w.kernel_hash && c.launch == w.launch)
    return false;
  const bool paired = report::paired(c, w);
  auto ratio = [&](const std::vector<double>& num, const std::vector<double>& den) {
    return paired ? report::paired_ratio(num, den) : report::unpaired_ratio(num, den);
  };
  std::vector<double> num(c.times_us.size()), den(w.times_us.size());
  for (size_t k = 0; k < num.size(); ++k) num[k] = 100.0 + double(k) + (paired ? double(k) : 0);
  for (size_t k = 0; k < den.size(); ++k) den[k] = 1.0 + double(k);
  if (!(ratio(num, den).p < kAlpha)) return std::nullopt;
  const report::RatioEstimate e = ratio(c.times_us, w.times_us);
  return e.ratio > 1 && e.significant(kAlpha, report::min_effect_of(c));
}

}  // namespace

TunedFile choose_tuned(const SweepSpec& spec, const std::vector<report::Record>& records,
                       const std::string& date) {
  TunedFile t;
  t.sweep = spec.name;
  t.buckets = spec.buckets;
  const bool predicted = spec.strategy.objective == StrategySpec::Objective::Predicted;
  for (const SchedulerSpec& sched : spec.schedulers) {
    if (!sched.script.empty()) continue;  // a script's placeholders are no plugin's parameters
    // (fusion, plugin, bucket) -> the records of that group, in order.
    struct Group {
      std::string fusion, plugin;
      Bucket bucket;
      std::vector<const report::Record*> records;
    };
    std::vector<Group> groups;
    for (const report::Record& r : records) {
      if (r.scheduler != sched.name || r.status != report::Status::Ok) continue;
      if (predicted ? !r.prediction : r.times_us.empty()) continue;
      if (t.sweep_hash.empty()) t.sweep_hash = r.sweep_hash;
      ir::SizeBindings sizes;
      std::vector<std::string> names;
      for (const auto& [k, v] : r.sizes) sizes[k] = v, names.push_back(k);
      Bucket b = bucket_of(spec.buckets, names, sizes);
      const std::string label = bucket_str(b);
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
        return x.fusion == r.fusion && x.plugin == r.plugin && bucket_str(x.bucket) == label;
      });
      if (g == groups.end()) g = groups.insert(groups.end(), Group{r.fusion, r.plugin, b, {}});
      g->records.push_back(&r);
    }
    for (const Group& g : groups) {
      auto value = [&](const report::Record& r) {
        return predicted ? r.prediction->predicted_us : r.summary().median;
      };
      // Each size's best, and each configuration's best record per size.
      std::map<std::string, double> best;  // size key -> objective
      std::vector<std::string> size_order;
      struct Candidate {
        report::ConfigList config;
        std::map<std::string, const report::Record*> at;  // size key -> its best record
      };
      // In the order first evaluated, which breaks ties (a grid's space
      // order, a search's proposal order: deterministic either way).
      std::vector<Candidate> configs;
      std::map<std::string, size_t> index;  // config label -> into configs
      for (const report::Record* r : g.records) {
        const std::string sk = r->size_key();
        if (!best.count(sk)) size_order.push_back(sk), best[sk] = value(*r);
        best[sk] = std::min(best[sk], value(*r));
        auto [it, fresh] = index.emplace(r->config_label(), configs.size());
        if (fresh) configs.push_back({r->config, {}});
        Candidate& c = configs[it->second];
        auto& slot = c.at[sk];
        if (!slot || value(*r) < value(*slot)) slot = r;
      }
      size_t most = 0;
      for (const Candidate& c : configs) most = std::max(most, c.at.size());
      const Candidate* winner = nullptr;
      double winner_rel = 0;
      auto relative = [&](const Candidate& c) {
        std::vector<double> ratios;
        for (const auto& [sk, r] : c.at) ratios.push_back(value(*r) / std::max(best[sk], 1e-30));
        return geomean(ratios);
      };
      for (const Candidate& c : configs) {  // ties go to the first evaluated
        if (c.at.size() != most) continue;
        const double rel = relative(c);
        if (!winner || rel < winner_rel * (1 - 1e-12)) winner = &c, winner_rel = rel;
      }
      const Candidate* fastest = nullptr;  // when noise kept an earlier one
      // Timed objectives: the first evaluated configuration that the timings
      // cannot tell slower than the fastest at any of its sizes stands, so
      // that tuning the same code twice writes the same file, not whichever
      // of two equal configurations noise favoured this time.
      if (!predicted)
        for (const Candidate& c : configs) {
          if (&c == winner) break;
          if (c.at.size() != most) continue;
          bool same = true;
          for (const auto& [sk, r] : c.at) {
            auto w = winner->at.find(sk);
            same = same && w != winner->at.end() && measurably_slower(*r, *w->second) == false;
          }
          if (same) {
            fastest = winner;
            winner = &c;
            winner_rel = relative(c);
            break;
          }
        }
      TunedEntry e;
      e.scheduler = sched.name;
      e.plugin = g.plugin;
      e.fusion = g.fusion;
      e.bucket = g.bucket;
      for (const auto& [k, v] : winner->config) e.config.emplace_back(k, unquote(v));
      e.relative = winner_rel;
      e.candidates = static_cast<int64_t>(configs.size());
      if (fastest)
        for (const auto& [k, v] : fastest->config) e.fastest.emplace_back(k, unquote(v));
      e.objective = std::string(objective_name(spec.strategy.objective));
      for (const std::string& sk : size_order) {
        auto it = winner->at.find(sk);
        if (it == winner->at.end()) continue;
        const report::Record& r = *it->second;
        e.figures.push_back({sizes_of(r.sizes), value(r), r.times_us.empty() ? 0 : r.gbps(),
                             r.kernel_hash});
        e.device = r.device.name;
        e.strategy = r.strategy.empty() ? std::string(strategy_name(spec.strategy.kind))
                                        : r.strategy;
      }
      e.date = date;
      t.entries.push_back(std::move(e));
    }
  }
  return t;
}

}  // namespace schedlab::sweep
