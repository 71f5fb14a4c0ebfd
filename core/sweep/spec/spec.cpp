// Sweep files to SweepSpec: the YAML schema and every load-time check. The
// loader (spec_loader.h) reads the document, fusions, strategy, validation
// and measure here, the schedulers in spec_schedulers.cpp. Values are checked
// against a plugin's schema in param_values.cpp, the constraint language is
// in constraint.cpp, and what a loaded scheduler means at run time
// (settings, admits) is in scheduler.cpp.
#include "schedlab/sweep/spec/spec.h"

#include "spec_loader.h"

namespace schedlab::sweep {

namespace detail {

std::string join(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r.empty() ? "(none)" : r;
}

/// "N=8, K=4096" in the fusion's declaration order.
std::string sizes_str(const FusionSpec& f, const ir::SizeBindings& sizes) {
  std::string r;
  for (const auto& [k, v] : ir::ordered_sizes(sizes, f.size_names))
    r += (r.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return r;
}

SweepSpec Loader::run() {
  const auto [root, top] = r_.root_mapping("a mapping with keys fusions and schedulers", kTopKeys,
                                           {"fusions", "schedulers"}, "the sweep");
  spec_.path = r_.path();
  spec_.name = fs::path(r_.path()).stem().string();
  if (const YAML::Node& n = root["sweep"]) spec_.name = text_of(n, "sweep", "a name");
  if (const YAML::Node& n = root["description"])
    spec_.description = text_of(n, "description", "text");
  if (const YAML::Node& n = root["strategy"]) parse_strategy(n);
  parse_fusions(root["fusions"]);
  // Before the schedulers: each one's fast_math defaults to the sweep's.
  if (const YAML::Node& n = root["fast_math"]) spec_.fast_math = bool_of(n, "fast_math");
  parse_schedulers(root["schedulers"]);
  if (const YAML::Node& n = root["baseline"]) {
    spec_.baseline = text_of(n, "baseline", "a scheduler name");
    if (!spec_.scheduler(spec_.baseline)) {
      std::vector<std::string> names;
      for (const auto& s : spec_.schedulers) names.push_back(s.name);
      std::string hint = closest_name(spec_.baseline, names);
      user_error_at(r_.loc(n)) << "baseline: no scheduler is named '" << spec_.baseline
                               << "'; expected one of " << join(names)
                               << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
    }
  } else {
    spec_.baseline = spec_.schedulers.front().name;
  }
  if (const YAML::Node& n = root["validation"]) parse_validation(n);
  if (const YAML::Node& n = root["measure"]) parse_measure(n);
  if (const YAML::Node& n = root["backend"]) {
    std::string b = text_of(n, "backend", "auto, cpu or cuda");
    if (b == "auto")
      spec_.backend = Backend::Auto;
    else if (b == "cpu")
      spec_.backend = Backend::Cpu;
    else if (b == "cuda")
      spec_.backend = Backend::Cuda;
    else
      user_error_at(r_.loc(n)) << "backend: expected auto, cpu or cuda, found '" << b << "'";
  }
  if (spec_.strategy.objective == StrategySpec::Objective::Cpu && spec_.backend == Backend::Cuda)
    user_error_at(spec_.strategy.objective_loc)
        << "strategy objective: cpu is the CPU emulation's time, but the sweep runs on "
        << "backend cuda; expected backend cpu or auto, or objective measured";
  if (const YAML::Node& n = root["dynamic_sizes"])
    spec_.dynamic_sizes = bool_of(n, "dynamic_sizes");
  if (const YAML::Node& n = root["buckets"]) parse_buckets(n);
  if (const YAML::Node& n = root["tuned"]) {
    spec_.tuned_loc = r_.loc(n);
    const std::string written = text_of(n, "tuned", "a tuned file (from `schedlab tune`)");
    spec_.tuned = resolve(written);
    std::error_code ec;
    if (!fs::is_regular_file(spec_.tuned, ec))
      user_error_at(r_.loc(n)) << "tuned: the tuned file '" << written << "' "
                               << (fs::exists(spec_.tuned, ec) ? "is not a regular file"
                                                               : "does not exist")
                               << " (looked for '" << spec_.tuned << "')";
  }
  check_spaces();
  return std::move(spec_);
}

std::string Loader::text_of(const YAML::Node& n, const std::string& key, const char* expected) const {
  if (!n.IsScalar() || n.Scalar().empty())
    user_error_at(r_.loc(n)) << key << ": expected " << expected << ", found " << kind_name(n);
  return n.Scalar();
}

int64_t Loader::int_of(const YAML::Node& n, const std::string& key, int64_t min) const {
  std::optional<int64_t> v;
  if (n.IsScalar()) v = as_int(n.Scalar());
  if (!v || *v < min)
    user_error_at(r_.loc(n)) << key << ": expected an integer >= " << min << ", found "
                             << kind_name(n);
  return *v;
}

double Loader::real_of(const YAML::Node& n, const std::string& key) const {
  std::optional<double> v;
  if (n.IsScalar()) v = as_double(n.Scalar());
  if (!v || !std::isfinite(*v) || *v < 0)
    user_error_at(r_.loc(n)) << key << ": expected a non-negative number, found " << kind_name(n);
  return *v;
}

double Loader::percent_of(const YAML::Node& n, const std::string& key) const {
  std::optional<double> v;
  if (n.IsScalar()) {
    std::string t = n.Scalar();
    if (!t.empty() && t.back() == '%') t.pop_back();
    v = as_double(t);
  }
  if (!v || !std::isfinite(*v) || *v < 0 || *v >= 100)
    user_error_at(r_.loc(n)) << key << ": expected a percentage in [0, 100) such as 2%, found "
                             << (n.IsScalar() ? "'" + n.Scalar() + "'" : kind_name(n));
  return *v / 100;
}

bool Loader::bool_of(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false"))
    user_error_at(r_.loc(n)) << key << ": expected true or false, found " << kind_name(n);
  return n.Scalar() == "true";
}

void Loader::require_map(const YAML::Node& n, const std::string& key, const char* example) const {
  if (!n.IsMap())
    user_error_at(r_.loc(n)) << key << ": expected a mapping such as " << example << ", found "
                             << kind_name(n);
}

void Loader::require_list(const YAML::Node& n, const std::string& key, const char* example) const {
  if (!n.IsSequence() || n.size() == 0)
    user_error_at(r_.loc(n)) << key << ": expected a non-empty list such as " << example
                             << ", found " << kind_name(n);
}

std::string Loader::resolve(const std::string& p) const {
  if (fs::path(p).is_absolute() || dir_.empty()) return p;
  return (dir_ / p).lexically_normal().string();
}

void Loader::parse_buckets(const YAML::Node& n) {
  spec_.buckets = parse_bucket_rules(n, r_);
  std::vector<std::string> names;
  for (const FusionSpec& f : spec_.fusions)
    for (const std::string& s : f.size_names)
      if (std::find(names.begin(), names.end(), s) == names.end()) names.push_back(s);
  for (const BucketRule& rule : spec_.buckets) {
    if (std::find(names.begin(), names.end(), rule.size) != names.end()) continue;
    const std::string hint = closest_name(rule.size, names);
    user_error_at(rule.loc) << "buckets: '" << rule.size
                            << "' is no named size of the sweep's fusions; expected one of "
                            << join(names) << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
  }
}

void Loader::parse_strategy(const YAML::Node& n) {
  StrategySpec& s = spec_.strategy;
  s.loc = s.objective_loc = r_.loc(n);
  const char* methods = "grid, random, halving, evolution or model";
  std::string method;
  if (n.IsScalar()) {
    method = n.Scalar();
  } else if (n.IsMap()) {
    r_.check_keys(n, kStrategyKeys, "strategy");
    if (!n["method"])
      user_error_at(r_.loc(n)) << "strategy: missing 'method'; expected " << methods;
    method = text_of(n["method"], "strategy method", methods);
  } else {
    user_error_at(r_.loc(n)) << "strategy: expected grid, or {method: evolution, budget: 32, "
                             << "seed: 0, objective: predicted}, found " << kind_name(n);
  }
  const YAML::Node& at = n.IsMap() ? n["method"] : n;
  static const std::pair<const char*, StrategySpec::Kind> kKinds[] = {
      {"grid", StrategySpec::Kind::Grid},
      {"random", StrategySpec::Kind::Random},
      {"halving", StrategySpec::Kind::Halving},
      {"evolution", StrategySpec::Kind::Evolution},
      {"model", StrategySpec::Kind::Model}};
  bool known = false;
  for (const auto& [name, kind] : kKinds)
    if (method == name) s.kind = kind, known = true;
  if (!known) {
    std::vector<std::string> names;
    for (const auto& [name, kind] : kKinds) names.push_back(name);
    const std::string hint = closest_name(method, names);
    user_error_at(r_.loc(at)) << "strategy: unknown method '" << method << "'; expected "
                              << methods << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
  }
  if (!n.IsMap()) {
    if (s.kind != StrategySpec::Kind::Grid)
      user_error_at(r_.loc(n)) << "strategy: " << method << " needs a budget; expected {method: "
                               << method << ", budget: 32, seed: 0}";
    return;
  }
  if (n["n"] && n["budget"])
    user_error_at(r_.loc(n["n"])) << "strategy: 'n' is random's old name for 'budget'; "
                                  << "expected one of them, found both";
  if (n["n"] && s.kind != StrategySpec::Kind::Random)
    user_error_at(r_.loc(n["n"])) << "strategy: 'n' applies to method random; expected "
                                  << "'budget' for " << method;
  const YAML::Node budget = n["budget"] ? n["budget"] : n["n"];
  if (s.kind == StrategySpec::Kind::Grid) {
    for (const char* k : {"budget", "seed"})
      if (n[k])
        user_error_at(r_.loc(n[k])) << "strategy: '" << k << "' does not apply to grid, "
                                    << "which runs every point; expected it only with random, "
                                    << "halving, evolution or model";
  } else {
    if (!budget)
      user_error_at(r_.loc(n))
          << "strategy: " << method << " needs 'budget', the "
          << (s.kind == StrategySpec::Kind::Random || s.kind == StrategySpec::Kind::Halving
                  ? "points to draw"
                  : "configurations to evaluate")
          << " per scheduler and size; expected {method: " << method << ", budget: 32, seed: 0}";
    const char* key = n["budget"] ? "strategy budget" : "strategy n";
    // Halving keeps the best half of its points each rung, so it needs two.
    s.budget = static_cast<uint64_t>(
        int_of(budget, key, s.kind == StrategySpec::Kind::Halving ? 2 : 1));
    if (n["seed"]) s.seed = static_cast<uint64_t>(int_of(n["seed"], "strategy seed", 0));
  }
  if (const YAML::Node& w = n["warm_start"]) {
    if (s.kind != StrategySpec::Kind::Evolution && s.kind != StrategySpec::Kind::Model)
      user_error_at(r_.loc(w)) << "strategy: 'warm_start' applies to evolution and model, which "
                               << "learn from outcomes; expected it only with them, found it "
                               << "with " << method;
    s.warm_start = bool_of(w, "strategy warm_start");
  }
  if (const YAML::Node& o = n["objective"]) {
    s.objective_loc = r_.loc(o);
    const std::string v = text_of(o, "strategy objective", "measured, predicted or cpu");
    if (v == "measured")
      s.objective = StrategySpec::Objective::Measured;
    else if (v == "predicted")
      s.objective = StrategySpec::Objective::Predicted;
    else if (v == "cpu")
      s.objective = StrategySpec::Objective::Cpu;
    else
      user_error_at(r_.loc(o)) << "strategy objective: expected measured, predicted or cpu, "
                               << "found '" << v << "'";
  }
}

void Loader::parse_validation(const YAML::Node& n) {
  if (n.IsScalar() && n.Scalar() == "default") return;
  if (!n.IsMap())
    user_error_at(r_.loc(n)) << "validation: expected default or a mapping such as {rtol: "
                             << "1e-5, atol: 1e-6, sanitize: false}, found " << kind_name(n);
  r_.check_keys(n, kValidationKeys, "validation");
  auto tol = [&](const char* k) -> std::optional<double> {
    if (!n[k] || (n[k].IsScalar() && n[k].Scalar() == "default")) return std::nullopt;
    return real_of(n[k], std::string("validation ") + k);
  };
  spec_.validation.rtol = tol("rtol");
  spec_.validation.atol = tol("atol");
  if (n["sanitize"]) spec_.validation.sanitize = bool_of(n["sanitize"], "validation sanitize");
}

void Loader::parse_measure(const YAML::Node& n) {
  require_map(n, "measure", "{repetitions: 10, warmup: 1}");
  r_.check_keys(n, kMeasureKeys, "measure");
  MeasureSpec& m = spec_.measure;
  if (n["repetitions"]) m.repetitions = int_of(n["repetitions"], "measure repetitions", 1);
  if (n["warmup"]) m.warmup = int_of(n["warmup"], "measure warmup", 0);
  if (n["min_time"]) m.min_time = real_of(n["min_time"], "measure min_time");
  if (n["flush_l2"]) m.flush_l2 = bool_of(n["flush_l2"], "measure flush_l2");
  if (n["min_effect"]) m.min_effect = percent_of(n["min_effect"], "measure min_effect");
  if (n["seed"]) m.seed = static_cast<uint64_t>(int_of(n["seed"], "measure seed", 0));
}

void Loader::parse_fusions(const YAML::Node& list) {
  require_list(list, "fusions", "[softmax] or [{fusion: softmax, sizes: {N: 1024, K: 4096}}]");
  for (const auto& entry : list) {
    FusionSpec f;
    f.loc = r_.loc(entry);
    if (entry.IsMap()) {
      r_.check_keys(entry, kFusionKeys, "a fusion entry");
      if (!entry["fusion"])
        user_error_at(f.loc) << "fusion entry: missing 'fusion'; expected a name from the "
                             << "fusion directories or a path to a .yaml";
    }
    // Copies only: assigning to a YAML::Node writes through to the tree.
    const YAML::Node name = entry.IsMap() ? entry["fusion"] : entry;
    const bool has_sizes = entry.IsMap() && entry["sizes"];
    const YAML::Node sizes = has_sizes ? entry["sizes"] : YAML::Node();
    std::string written = text_of(name, "fusion", "a fusion name or a path to a .yaml");
    bool is_path = written.find('/') != std::string::npos || written.ends_with(".yaml") ||
                   written.ends_with(".yml");
    try {
      f.path =
          frontend::resolve_fusion(is_path ? resolve(written) : written, options_.fusion_dirs);
    } catch (const UserError& e) {
      user_error_at(r_.loc(name)) << e.message();
    }
    frontend::FusionDefinition def = frontend::load_fusion_file(f.path);
    f.name = def.fusion->name();
    std::vector<std::string> symbols = def.fusion->size_symbols();
    std::vector<YAML::Node> grids;
    if (has_sizes && sizes.IsSequence() && sizes.size() > 0) {
      for (const auto& g : sizes) grids.push_back(g);
    } else if (has_sizes) {
      grids.push_back(sizes);
    }
    if (grids.empty()) bind(f, def, symbols, {}, f.loc);
    for (const YAML::Node& g : grids) {
      if (!g.IsMap())
        user_error_at(r_.loc(g)) << "sizes: expected a mapping such as {N: 1024, K: [1024, "
                                 << "4096]} or a list of them, found " << kind_name(g);
      r_.check_keys(g, symbols, "the sizes of fusion '" + f.name + "'");
      // Each key's values; the binding grid is their cross product, the
      // last key fastest.
      std::vector<std::pair<std::string, std::vector<int64_t>>> axes;
      for (auto it = g.begin(); it != g.end(); ++it) {
        const std::string key = it->first.Scalar();
        const YAML::Node v = it->second;
        std::vector<int64_t> values;
        if (v.IsSequence() && v.size() > 0) {
          for (const auto& x : v) values.push_back(size_value(x, f.name, key));
        } else {
          values.push_back(size_value(v, f.name, key));
        }
        axes.emplace_back(key, values);
      }
      std::vector<size_t> idx(axes.size(), 0);
      for (bool more = true; more;) {
        ir::SizeBindings b;
        for (size_t a = 0; a < axes.size(); ++a) b[axes[a].first] = axes[a].second[idx[a]];
        bind(f, def, symbols, b, r_.loc(g));
        more = false;
        for (size_t a = axes.size(); a-- > 0;) {
          if (++idx[a] < axes[a].second.size()) {
            more = true;
            break;
          }
          idx[a] = 0;
        }
      }
    }
    if (entry.IsMap() && entry["mesh"]) {
      // `mesh: [1, 2, 4]`: every binding on each mesh, the mesh fastest.
      const YAML::Node m = entry["mesh"];
      std::vector<int> meshes;
      auto mesh_value = [&](const YAML::Node& v) {
        int64_t x = v.IsScalar() ? as_int(v.Scalar()).value_or(0) : 0;
        if (x <= 0 || x > kMaxMesh)
          user_error_at(r_.loc(v)) << "mesh of fusion '" << f.name
                                   << "': expected a number of devices in [1, " << kMaxMesh
                                   << "] or a list of them, such as [1, 2, 4], found "
                                   << kind_name(v);
        if (std::find(meshes.begin(), meshes.end(), int(x)) == meshes.end())
          meshes.push_back(int(x));
      };
      if (m.IsSequence() && m.size() > 0) {
        for (const auto& v : m) mesh_value(v);
      } else {
        mesh_value(m);
      }
      std::vector<ir::SizeBindings> bindings;
      for (const ir::SizeBindings& b : f.sizes)
        for (int n : meshes) {
          bindings.push_back(b);
          f.meshes.push_back(n);
        }
      f.sizes = std::move(bindings);
    }
    f.size_names = symbols;
    fusion_symbols_.push_back(symbols);
    spec_.fusions.push_back(std::move(f));
  }
  // The sizes constraints may name: those every fusion has.
  for (const std::string& s : fusion_symbols_.front()) {
    bool everywhere = true;
    for (const auto& syms : fusion_symbols_)
      everywhere = everywhere && std::find(syms.begin(), syms.end(), s) != syms.end();
    if (everywhere) common_sizes_.push_back(s);
  }
}

int64_t Loader::size_value(const YAML::Node& v, const std::string& fusion, const std::string& key) {
  int64_t x = v.IsScalar() ? as_int(v.Scalar()).value_or(0) : 0;
  if (x <= 0)
    user_error_at(r_.loc(v)) << "sizes of fusion '" << fusion << "': " << key
                             << " must be a positive integer or a list of them, found "
                             << kind_name(v);
  return x;
}

void Loader::bind(FusionSpec& f, const frontend::FusionDefinition& def,
          const std::vector<std::string>& symbols, const ir::SizeBindings& given,
          const SourceLoc& at) {
  ir::SizeBindings b = def.default_sizes;
  for (const auto& [k, v] : given) b[k] = v;
  for (const std::string& s : symbols)
    if (!b.count(s))
      user_error_at(at) << "fusion '" << f.name << "': size " << s << " is not bound; "
                        << "expected it in `sizes:` (the fusion file gives no default)";
  // A size that no tensor of this machine's memory can hold is the sweep
  // file's error, here, not a crashed point later: the reference's inputs
  // and outputs are held as doubles (ref::make_inputs, ref::evaluate).
  try {
    for (const ir::TensorView* t : def.fusion->inputs()) ref::allocatable_shape(t, b, 8);
    for (const ir::TensorView* t : def.fusion->outputs()) ref::allocatable_shape(t, b, 16);
  } catch (const UserError& e) {
    user_error_at(at) << "fusion '" << f.name << "': " << e.message();
  }
  if (std::find(f.sizes.begin(), f.sizes.end(), b) == f.sizes.end()) f.sizes.push_back(b);
}


}  // namespace detail

SweepSpec parse_sweep_text(const std::string& text, const std::string& path,
                           const LoadOptions& options) {
  return detail::Loader(text, path, options).run();
}

SweepSpec load_sweep_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read sweep file '" << path << "': "
                         << (std::filesystem::exists(path) ? "permission denied or not a file" : "no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_sweep_text(ss.str(), path, options);
}

}  // namespace schedlab::sweep
