// The tuned database: see schedlab/sweep/tuned/tuned_file.h.
#include "schedlab/sweep/tuned/tuned_file.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "../spec/bucket_yaml.h"

namespace schedlab::sweep {

namespace {

constexpr const char* kSchema = "schedlab.tuned.v1";

const std::vector<std::string> kTopKeys = {"schema", "sweep", "sweep_hash", "buckets", "entries"};
const std::vector<std::string> kEntryKeys = {"scheduler", "plugin",    "fusion",   "bucket",
                                             "config",    "relative",  "candidates", "fastest",   "objective",
                                             "strategy",  "device",    "date",     "figures"};
const std::vector<std::string> kFigureKeys = {"sizes", "objective_us", "gbps", "kernel"};

}  // namespace

double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) s += std::log(std::max(x, 1e-30));
  return std::exp(s / static_cast<double>(xs.size()));
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
    if (b.hi == kBucketMax)
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

  TunedFile run() {
    const auto [root, top] = r_.root_mapping(
        std::string("a tuned file (a mapping with schema: ") + kSchema + " and entries)", kTopKeys,
        {}, "the tuned file");
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
        r.lo = kBucketMin, r.hi = kBucketMax;
      } else if (v.IsScalar()) {
        r.lo = r.hi = bound(v, r.size);
      } else if (v.IsSequence() && v.size() == 2) {
        r.lo = bound(v[0], r.size);
        r.hi = v[1].IsScalar() && v[1].Scalar() == "inf" ? kBucketMax : bound(v[1], r.size);
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
  return TunedLoader(text, path).run();
}

TunedFile load_tuned_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read the tuned file '" << path << "'";
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_tuned_text(ss.str(), path);
}
}  // namespace schedlab::sweep
