// Tuned configurations: see schedlab/sweep/tuned.h.
#include "schedlab/sweep/tuned.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "bucket_yaml.h"
#include "schedlab/report/stats.h"
#include "schedlab/sweep/spec.h"

namespace schedlab::sweep {

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr const char* kSchema = "schedlab.tuned.v1";

const std::vector<std::string> kTopKeys = {"schema", "sweep", "sweep_hash", "buckets", "entries"};
const std::vector<std::string> kEntryKeys = {"scheduler", "plugin",    "fusion",   "bucket",
                                             "config",    "relative",  "candidates", "fastest",   "objective",
                                             "strategy",  "device",    "date",     "figures"};
const std::vector<std::string> kFigureKeys = {"sizes", "objective_us", "gbps", "kernel"};

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

/// The geometric mean of positive values; 0 for none.
double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) s += std::log(std::max(x, 1e-30));
  return std::exp(s / static_cast<double>(xs.size()));
}

std::string sizes_of(const report::SizeList& sizes) {
  std::string r;
  for (const auto& [k, v] : sizes) r += (r.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return r;
}

}  // namespace

// ---- buckets ------------------------------------------------------------------

bool BucketRange::any() const { return lo == kMin && hi == kMax; }

std::string BucketRange::str() const {
  if (any()) return size + "=any";
  if (lo == hi) return fmt::format("{}={}", size, lo);
  if (hi == kMax) return fmt::format("{}=[{}, inf]", size, lo);
  return fmt::format("{}=[{}, {}]", size, lo, hi);
}

std::string bucket_str(const Bucket& b) {
  std::string r;
  for (const BucketRange& x : b) r += (r.empty() ? "" : " ") + x.str();
  return r;
}

Bucket bucket_of(const std::vector<BucketRule>& rules, const std::vector<std::string>& size_names,
                 const ir::SizeBindings& sizes) {
  Bucket b;
  for (const std::string& name : size_names) {
    auto it = sizes.find(name);
    internal_assert(it != sizes.end()) << "bucket_of: size " << name << " is not bound";
    const int64_t v = it->second;
    BucketRange r{name, v, v};
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const BucketRule& x) { return x.size == name; });
    if (rule != rules.end()) {
      switch (rule->kind) {
        case BucketRule::Kind::Exact:
          break;
        case BucketRule::Kind::Any:
          r.lo = kMin, r.hi = kMax;
          break;
        case BucketRule::Kind::Pow2: {
          if (v < 1) break;  // no power of two holds it: exact
          int64_t p = 1;
          while (p <= v / 2) p *= 2;
          r.lo = p;
          r.hi = p > kMax / 2 ? kMax : 2 * p - 1;
          break;
        }
        case BucketRule::Kind::Edges: {
          const std::vector<int64_t>& e = rule->edges;
          auto up = std::upper_bound(e.begin(), e.end(), v);  // first edge above v
          r.lo = up == e.begin() ? 1 : *(up - 1);
          r.hi = up == e.end() ? kMax : *up - 1;
          if (v < r.lo) r.lo = v;  // below 1: a bucket of its own
          break;
        }
      }
    }
    b.push_back(r);
  }
  return b;
}

std::vector<BucketRule> parse_bucket_rules(const YAML::Node& n, const YamlReader& r) {
  const char* example = "{K: pow2, N: any} or {K: [1024, 4096, 16384]}";
  if (!n.IsMap() || n.size() == 0)
    user_error_at(r.loc(n)) << "buckets: expected a mapping such as " << example << ", found "
                            << kind_name(n);
  std::vector<BucketRule> rules;
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node key = it->first, value = it->second;
    BucketRule rule;
    rule.size = key.IsScalar() ? key.Scalar() : "";
    rule.loc = r.loc(key);
    if (!is_identifier(rule.size))
      user_error_at(r.loc(key)) << "buckets: expected a size name such as K, found "
                                << kind_name(key);
    if (!seen.insert(rule.size).second)
      user_error_at(r.loc(key)) << "buckets: duplicate size '" << rule.size << "'";
    if (value.IsScalar() && value.Scalar() == "pow2") {
      rule.kind = BucketRule::Kind::Pow2;
    } else if (value.IsScalar() && value.Scalar() == "any") {
      rule.kind = BucketRule::Kind::Any;
    } else if (value.IsScalar() && value.Scalar() == "exact") {
      rule.kind = BucketRule::Kind::Exact;
    } else if (value.IsSequence() && value.size() > 0) {
      rule.kind = BucketRule::Kind::Edges;
      for (const YAML::Node& e : value) {
        std::optional<int64_t> x = e.IsScalar() ? as_int(e.Scalar()) : std::nullopt;
        if (!x || *x < 1)
          user_error_at(r.loc(e)) << "buckets " << rule.size
                                  << ": expected a positive integer edge, found " << kind_name(e);
        if (!rule.edges.empty() && *x <= rule.edges.back())
          user_error_at(r.loc(e)) << "buckets " << rule.size << ": edges must ascend; found "
                                  << *x << " after " << rule.edges.back();
        rule.edges.push_back(*x);
      }
    } else {
      user_error_at(r.loc(value)) << "buckets " << rule.size
                                  << ": expected pow2, any, exact or a list of edges such as "
                                  << "[1024, 4096], found " << kind_name(value);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

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

// ---- lookup ---------------------------------------------------------------------

std::vector<const TunedEntry*> TunedFile::matches(const std::string& plugin,
                                                  const std::string& fusion,
                                                  const ir::SizeBindings& sizes) const {
  std::vector<const TunedEntry*> r;
  for (const TunedEntry& e : entries) {
    if (e.plugin != plugin || e.fusion != fusion || e.bucket.empty()) continue;
    // Every size of the segment in the bucket, and the bucket names no other.
    bool in = e.bucket.size() == sizes.size();
    for (const BucketRange& b : e.bucket) {
      auto it = sizes.find(b.size);
      in = in && it != sizes.end() && b.contains(it->second);
    }
    if (in) r.push_back(&e);
  }
  auto anys = [](const TunedEntry* e) {
    return std::count_if(e->bucket.begin(), e->bucket.end(),
                         [](const BucketRange& b) { return b.any(); });
  };
  auto level = [](const TunedEntry* e) {
    std::vector<double> xs;
    for (const TunedEntry::Figure& f : e->figures) xs.push_back(f.objective_us);
    return geomean(xs);
  };
  std::stable_sort(r.begin(), r.end(), [&](const TunedEntry* a, const TunedEntry* b) {
    if (anys(a) != anys(b)) return anys(a) < anys(b);
    return level(a) < level(b);
  });
  return r;
}

plugin::ParamValues TunedFile::values_for(const TunedEntry& e, const plugin::Plugin& p) const {
  std::vector<std::string> settings;
  for (const plugin::ParamDesc& d : p.schema()) {
    auto it = std::find_if(e.config.begin(), e.config.end(),
                           [&](const auto& kv) { return kv.first == d.name; });
    if (it == e.config.end())
      user_error_at(e.loc) << "tuned configuration for plugin '" << p.name() << "' on "
                           << e.fusion << ": expected a value for every parameter of the "
                           << "plugin's schema; '" << d.name << "' is missing (was the plugin "
                           << "rebuilt with other parameters since `schedlab tune` wrote it?)";
    settings.push_back(d.name + "=" + it->second);
  }
  for (const auto& [k, v] : e.config)
    if (std::none_of(p.schema().begin(), p.schema().end(),
                     [&](const plugin::ParamDesc& d) { return d.name == k; }))
      settings.push_back(k + "=" + v);  // with_settings names the unknown key
  try {
    return p.with_settings(p.defaults(), settings);
  } catch (const UserError& err) {
    user_error_at(e.loc) << "tuned configuration for plugin '" << p.name() << "' on " << e.fusion
                         << ": " << err.message();
  }
}

std::string TunedFile::source_of(const TunedEntry& e) const {
  return fmt::format("{}:{}: {} {}", e.loc.file.empty() ? path : e.loc.file, e.loc.line,
                     e.fusion, bucket_str(e.bucket));
}

std::optional<plugin::TunedOffer> TunedFile::offer(const plugin::Plugin& p,
                                                   const std::string& fusion,
                                                   const ir::SizeBindings& sizes) const {
  std::vector<const TunedEntry*> m = matches(p.name(), fusion, sizes);
  if (m.empty()) return std::nullopt;
  return plugin::TunedOffer{values_for(*m.front(), p), source_of(*m.front())};
}

// ---- YAML -----------------------------------------------------------------------

namespace {

void emit_range(YAML::Emitter& y, const BucketRange& b) {
  if (b.any()) {
    y << "any";
  } else if (b.lo == b.hi) {
    y << b.lo;
  } else {
    y << YAML::Flow << YAML::BeginSeq << b.lo;
    if (b.hi == kMax)
      y << "inf";
    else
      y << b.hi;
    y << YAML::EndSeq;
  }
}

void emit_rules(YAML::Emitter& y, const std::vector<BucketRule>& rules) {
  y << YAML::Flow << YAML::BeginMap;
  for (const BucketRule& r : rules) {
    y << YAML::Key << r.size << YAML::Value;
    switch (r.kind) {
      case BucketRule::Kind::Exact:
        y << "exact";
        break;
      case BucketRule::Kind::Any:
        y << "any";
        break;
      case BucketRule::Kind::Pow2:
        y << "pow2";
        break;
      case BucketRule::Kind::Edges:
        y << YAML::Flow << YAML::BeginSeq;
        for (int64_t e : r.edges) y << e;
        y << YAML::EndSeq;
        break;
    }
  }
  y << YAML::EndMap;
}

}  // namespace

std::string tuned_yaml(const TunedFile& t) {
  YAML::Emitter y;
  y << YAML::Comment(
      "schedlab tuned configurations, written by `schedlab tune` (docs/tuning.md).\n"
      "`schedlab run --tuned FILE`, `exec --tuned FILE` and a sweep's `tuned: FILE` offer\n"
      "each entry to its plugin's compute_params for the fusion at sizes in its bucket.");
  y << YAML::BeginMap;
  y << YAML::Key << "schema" << YAML::Value << kSchema;
  y << YAML::Key << "sweep" << YAML::Value << t.sweep;
  y << YAML::Key << "sweep_hash" << YAML::Value << t.sweep_hash;
  if (!t.buckets.empty()) {
    y << YAML::Key << "buckets" << YAML::Value;
    emit_rules(y, t.buckets);
  }
  y << YAML::Key << "entries" << YAML::Value << YAML::BeginSeq;
  for (const TunedEntry& e : t.entries) {
    y << YAML::BeginMap;
    y << YAML::Key << "scheduler" << YAML::Value << e.scheduler;
    y << YAML::Key << "plugin" << YAML::Value << e.plugin;
    y << YAML::Key << "fusion" << YAML::Value << e.fusion;
    y << YAML::Key << "bucket" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const BucketRange& b : e.bucket) {
      y << YAML::Key << b.size << YAML::Value;
      emit_range(y, b);
    }
    y << YAML::EndMap;
    y << YAML::Key << "config" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : e.config) y << YAML::Key << k << YAML::Value << v;
    y << YAML::EndMap;
    y << YAML::Key << "relative" << YAML::Value << e.relative;
    y << YAML::Key << "candidates" << YAML::Value << e.candidates;
    if (!e.fastest.empty()) {
      y << YAML::Key << "fastest" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [k, v] : e.fastest) y << YAML::Key << k << YAML::Value << v;
      y << YAML::EndMap;
    }
    y << YAML::Key << "objective" << YAML::Value << e.objective;
    y << YAML::Key << "strategy" << YAML::Value << e.strategy;
    y << YAML::Key << "device" << YAML::Value << e.device;
    y << YAML::Key << "date" << YAML::Value << e.date;
    y << YAML::Key << "figures" << YAML::Value << YAML::BeginSeq;
    for (const TunedEntry::Figure& f : e.figures) {
      y << YAML::Flow << YAML::BeginMap;
      y << YAML::Key << "sizes" << YAML::Value << f.sizes;
      y << YAML::Key << "objective_us" << YAML::Value << f.objective_us;
      y << YAML::Key << "gbps" << YAML::Value << f.gbps;
      y << YAML::Key << "kernel" << YAML::Value << f.kernel_hash;
      y << YAML::EndMap;
    }
    y << YAML::EndSeq;
    y << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  internal_assert(y.good()) << "tuned_yaml: " << y.GetLastError();
  return std::string(y.c_str()) + "\n";
}

void write_tuned_file(const std::string& path, const TunedFile& t) {
  namespace fs = std::filesystem;
  const std::string text = tuned_yaml(t);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    user_assert(out.good()) << "cannot write the tuned file '" << tmp << "'";
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    user_error << "cannot write the tuned file '" << path << "': rename failed";
  }
}

namespace {

class TunedLoader {
 public:
  TunedLoader(const std::string& text, const std::string& path) : r_(text, path) {}

  TunedFile run(const std::string& source) {
    YAML::Node root;
    try {
      root = YAML::Load(source);
    } catch (const YAML::ParserException& e) {
      throw UserError(r_.loc(e.mark), "invalid YAML: " + e.msg);
    }
    const SourceLoc top = root.Mark().is_null() ? SourceLoc{r_.path(), 1, 1} : r_.loc(root);
    if (!root.IsMap())
      user_error_at(top) << "expected a tuned file (a mapping with schema: " << kSchema
                         << " and entries), found " << kind_name(root);
    r_.check_keys(root, kTopKeys, "the tuned file");
    if (!root["schema"]) user_error_at(top) << "missing required key 'schema' (" << kSchema << ")";
    if (!root["schema"].IsScalar() || root["schema"].Scalar() != kSchema)
      user_error_at(r_.loc(root["schema"])) << "schema: expected " << kSchema << ", found "
                                            << kind_name(root["schema"]);
    if (!root["entries"]) user_error_at(top) << "missing required key 'entries'";
    TunedFile t;
    t.path = r_.path();
    if (root["sweep"]) t.sweep = text(root["sweep"], "sweep");
    if (root["sweep_hash"]) t.sweep_hash = text(root["sweep_hash"], "sweep_hash", true);
    if (root["buckets"]) t.buckets = parse_bucket_rules(root["buckets"], r_);
    const YAML::Node& list = root["entries"];
    if (!list.IsSequence())
      user_error_at(r_.loc(list)) << "entries: expected a list, found " << kind_name(list);
    for (const YAML::Node& n : list) t.entries.push_back(entry(n));
    return t;
  }

 private:
  std::string text(const YAML::Node& n, const std::string& key, bool may_be_empty = false) const {
    if (!n.IsScalar() || (!may_be_empty && n.Scalar().empty()))
      user_error_at(r_.loc(n)) << key << ": expected text, found " << kind_name(n);
    return n.Scalar();
  }
  double number(const YAML::Node& n, const std::string& key) const {
    std::optional<double> v = n.IsScalar() ? as_double(n.Scalar()) : std::nullopt;
    if (!v || !std::isfinite(*v) || *v < 0)
      user_error_at(r_.loc(n)) << key << ": expected a non-negative number, found "
                               << kind_name(n);
    return *v;
  }
  int64_t bound(const YAML::Node& n, const std::string& key) const {
    std::optional<int64_t> v = n.IsScalar() ? as_int(n.Scalar()) : std::nullopt;
    if (!v)
      user_error_at(r_.loc(n)) << "bucket " << key << ": expected an integer, found "
                               << kind_name(n);
    return *v;
  }

  /// A `config:` (or `fastest:`) mapping from parameter to value.
  report::ConfigList config_list(const YAML::Node& c, const std::string& key) const {
    if (!c.IsMap())
      user_error_at(r_.loc(c)) << key << ": expected a mapping from parameter to value such as "
                               << "{block: 128, vector: 4}, found " << kind_name(c);
    report::ConfigList r;
    for (auto it = c.begin(); it != c.end(); ++it) {
      const YAML::Node k = it->first, v = it->second;
      const std::string name = k.IsScalar() ? k.Scalar() : "";
      if (!is_identifier(name))
        user_error_at(r_.loc(k)) << key << ": expected a parameter name, found " << kind_name(k);
      for (const auto& [x, unused] : r)
        if (x == name)
          user_error_at(r_.loc(k)) << key << ": duplicate parameter '" << name << "'";
      if (!v.IsScalar())
        user_error_at(r_.loc(v)) << key << " " << name << ": expected a value, found "
                                 << kind_name(v);
      r.emplace_back(name, v.Scalar());
    }
    return r;
  }

  TunedEntry entry(const YAML::Node& n) const {
    TunedEntry e;
    e.loc = r_.loc(n);
    if (!n.IsMap())
      user_error_at(e.loc) << "entries: expected a mapping with plugin, fusion, bucket and "
                           << "config, found " << kind_name(n);
    r_.check_keys(n, kEntryKeys, "a tuned entry");
    for (const char* k : {"plugin", "fusion", "bucket", "config"})
      if (!n[k]) user_error_at(e.loc) << "tuned entry: missing required key '" << k << "'";
    e.plugin = text(n["plugin"], "plugin");
    e.fusion = text(n["fusion"], "fusion");
    if (n["scheduler"]) e.scheduler = text(n["scheduler"], "scheduler");
    const YAML::Node& b = n["bucket"];
    if (!b.IsMap() || b.size() == 0)
      user_error_at(r_.loc(b)) << "bucket: expected a mapping from each size to a value, a "
                               << "range or any, such as {N: any, K: [4096, 8191]}, found "
                               << kind_name(b);
    for (auto it = b.begin(); it != b.end(); ++it) {
      const YAML::Node key = it->first, v = it->second;
      BucketRange r;
      r.size = key.IsScalar() ? key.Scalar() : "";
      if (!is_identifier(r.size))
        user_error_at(r_.loc(key)) << "bucket: expected a size name, found " << kind_name(key);
      for (const BucketRange& x : e.bucket)
        if (x.size == r.size)
          user_error_at(r_.loc(key)) << "bucket: duplicate size '" << r.size << "'";
      if (v.IsScalar() && v.Scalar() == "any") {
        r.lo = kMin, r.hi = kMax;
      } else if (v.IsScalar()) {
        r.lo = r.hi = bound(v, r.size);
      } else if (v.IsSequence() && v.size() == 2) {
        r.lo = bound(v[0], r.size);
        r.hi = v[1].IsScalar() && v[1].Scalar() == "inf" ? kMax : bound(v[1], r.size);
        if (r.hi < r.lo)
          user_error_at(r_.loc(v)) << "bucket " << r.size << ": expected [lo, hi] with lo <= hi, "
                                   << "found [" << r.lo << ", " << r.hi << "]";
      } else {
        user_error_at(r_.loc(v)) << "bucket " << r.size
                                 << ": expected an integer, [lo, hi] or any, found "
                                 << kind_name(v);
      }
      e.bucket.push_back(r);
    }
    e.config = config_list(n["config"], "config");
    if (n["fastest"]) e.fastest = config_list(n["fastest"], "fastest");
    if (n["relative"]) e.relative = number(n["relative"], "relative");
    if (n["candidates"]) e.candidates = static_cast<int64_t>(number(n["candidates"], "candidates"));
    for (auto [key, field] : {std::pair{"objective", &e.objective}, {"strategy", &e.strategy},
                              {"device", &e.device}, {"date", &e.date}})
      if (n[key]) *field = text(n[key], key, true);
    if (const YAML::Node& fs = n["figures"]) {
      if (!fs.IsSequence())
        user_error_at(r_.loc(fs)) << "figures: expected a list, found " << kind_name(fs);
      for (const YAML::Node& f : fs) {
        if (!f.IsMap())
          user_error_at(r_.loc(f)) << "figures: expected a mapping such as {sizes: "
                                   << "\"N=1024,K=4096\", objective_us: 12.5}, found "
                                   << kind_name(f);
        r_.check_keys(f, kFigureKeys, "a figure");
        TunedEntry::Figure x;
        if (f["sizes"]) x.sizes = text(f["sizes"], "sizes");
        if (f["objective_us"]) x.objective_us = number(f["objective_us"], "objective_us");
        if (f["gbps"]) x.gbps = number(f["gbps"], "gbps");
        if (f["kernel"]) x.kernel_hash = text(f["kernel"], "kernel", true);
        e.figures.push_back(x);
      }
    }
    return e;
  }

  YamlReader r_;
};

}  // namespace

TunedFile parse_tuned_text(const std::string& text, const std::string& path) {
  return TunedLoader(text, path).run(text);
}

TunedFile load_tuned_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read the tuned file '" << path << "'";
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_tuned_text(ss.str(), path);
}

}  // namespace schedlab::sweep
