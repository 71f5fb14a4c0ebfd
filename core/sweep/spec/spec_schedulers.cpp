// The sweep file's schedulers (spec_loader.h): plugin, script or auto, each
// with its fixed settings, space and constraints checked against the
// plugin's schema or the script's placeholders, and every space checked to
// leave a point at every size.
#include "schedlab/plugin/host.h"
#include "schedlab/sweep/spec/draw.h"
#include "spec_loader.h"

namespace schedlab::sweep::detail {

namespace {
/// The built-in plugin that serves Python heuristic files (`file:`).
constexpr const char* kPythonPlugin = "python";
}  // namespace

std::string Loader::resolve_script(const std::string& written, const YAML::Node& at) const {
  bool is_path = written.find('/') != std::string::npos || written.ends_with(".sched");
  if (is_path) {
    std::string p = resolve(written);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      user_error_at(r_.loc(at)) << "script: schedule script '" << written << "' "
                                << (fs::exists(p, ec) ? "is not a regular file" : "does not exist")
                                << " (looked for '" << p << "')";
    return p;
  }
  std::vector<std::string> known;
  for (const std::string& d : options_.schedule_dirs) {
    fs::path p = fs::path(d) / (written + ".sched");
    if (fs::is_regular_file(p)) return p.string();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".sched") known.push_back(e.path().stem().string());
  }
  std::string hint = closest_name(written, known);
  user_error_at(r_.loc(at)) << "script: unknown schedule script '" << written
                            << "'; expected a path or a name from "
                            << join(options_.schedule_dirs)
                            << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
}

std::string Loader::resolve_python_file(const YAML::Node& entry, const std::string& found) const {
  const YAML::Node& file = entry["file"];
  if (found != std::string("plugin: ") + kPythonPlugin) {
    if (file)
      user_error_at(r_.loc(file)) << "file: names a Python heuristic, which only `plugin: "
                                  << kPythonPlugin
                                  << "` serves; expected `plugin: " << kPythonPlugin << "`, found `"
                                  << found << "`";
    return "";
  }
  if (!file)
    user_error_at(r_.loc(entry["plugin"]))
        << "plugin: " << kPythonPlugin << " serves a heuristic file; expected `file: "
        << "my_heuristic.py` beside it, found no file:";
  const std::string written = text_of(file, "file", "a Python heuristic file (.py)");
  if (!plugin::is_python_file(written))
    user_error_at(r_.loc(file)) << "file: expected a Python heuristic file ending in .py, found '"
                                << written << "'";
  std::string p = resolve(written);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    user_error_at(r_.loc(file)) << "file: Python heuristic '" << written << "' "
                                << (fs::exists(p, ec) ? "is not a regular file" : "does not exist")
                                << " (looked for '" << p << "')";
  // A path, never a bare name, wherever the sweep file is: the registry and
  // the runner tell a plugin file from a plugin name by its '/'.
  return p.find('/') == std::string::npos ? "./" + p : p;
}

void Loader::parse_schedulers(const YAML::Node& list) {
  require_list(list, "schedulers", "[{name: heuristic, plugin: pointwise}]");
  std::map<std::string, SourceLoc> names;
  for (const auto& entry : list) {
    if (!entry.IsMap())
      user_error_at(r_.loc(entry)) << "scheduler: expected a mapping with plugin: or script:, "
                                   << "found " << kind_name(entry);
    r_.check_keys(entry, kSchedulerKeys, "a scheduler");
    SchedulerSpec s = parse_scheduler(entry);
    const YAML::Node& at = entry["name"] ? entry["name"] : entry;
    if (auto it = names.find(s.name); it != names.end())
      user_error_at(r_.loc(at)) << "duplicate scheduler name '" << s.name << "' (first at "
                                << it->second.str() << "); expected a unique name: add "
                                << "`name:` to tell them apart";
    names.emplace(s.name, r_.loc(at));
    spec_.schedulers.push_back(std::move(s));
  }
}

SchedulerSpec Loader::parse_scheduler(const YAML::Node& entry) {
  SchedulerSpec s;
  s.loc = r_.loc(entry);
  const YAML::Node& plugin = entry["plugin"];
  const YAML::Node& script = entry["script"];
  if (plugin && script)
    user_error_at(r_.loc(script)) << "scheduler: expected either plugin: or script:, found both";
  if (!plugin && !script)
    user_error_at(s.loc) << "scheduler: missing 'plugin' or 'script'; expected a plugin name "
                         << "(or .so path) or a schedule script";
  std::string plugin_name;
  std::vector<std::string> placeholders;
  if (plugin) {
    std::string p = text_of(plugin, "plugin", "a plugin name or a path to a .so");
    bool is_path = p.find('/') != std::string::npos || p.ends_with(".so");
    // A Python heuristic's file is its plugin (one registry entry each).
    const std::string python_file = resolve_python_file(entry, "plugin: " + p);
    if (p == kAutoSpelling) {
      // The runner's: the first built-in that takes each fusion
      // (pick_builtin), which brings its own parameters; none to sweep.
      s.kind = SchedulerKind::Auto;
      s.name = plugin_name = kAutoSpelling;
    } else {
      s.plugin = !python_file.empty() ? python_file : is_path ? resolve(p) : p;
      PluginSchema schema = lookup(s.plugin, python_file.empty() ? plugin : entry["file"], "");
      s.schema = schema.params;
      s.name = plugin_name = schema.name;
      s.load_failure = schema.load_failure;
      s.load_failure_status = schema.load_failure_status;
    }
  } else {
    resolve_python_file(entry, "script: " + script.Scalar());
    std::string written = text_of(script, "script", "a schedule script name or path");
    s.script = resolve_script(written, script);
    s.kind = SchedulerKind::Script;
    s.plugin = kScriptPlugin;
    lookup(kScriptPlugin, script, "script schedulers run through the `script` plugin: ");
    s.name = fs::path(s.script).stem().string();
    for (const auto& ph : frontend::schedule_placeholders(s.script)) {
      placeholders.push_back(ph.name);
      if (ph.default_value)
        s.script_defaults.values.emplace_back(ph.name, Value::integer(*ph.default_value));
    }
  }
  if (const YAML::Node& n = entry["name"]) s.name = text_of(n, "name", "a display name");
  s.fast_math = spec_.fast_math;
  if (const YAML::Node& n = entry["fast_math"]) s.fast_math = bool_of(n, "fast_math");
  if (const YAML::Node& n = entry["math"]) {
    const std::string m = text_of(n, "math", "default or native");
    if (m != "default" && m != "native")
      user_error_at(r_.loc(n)) << "math: expected default or native, found '" << m << "'";
    s.native_half_math = m == "native";
  }
  if (const YAML::Node& fl = entry["fusions"]) {
    // Only these fusions: a script written for softmax is no scheduler for
    // a row sum.
    require_list(fl, "fusions", "[softmax, layernorm]");
    std::string known;
    for (const FusionSpec& f : spec_.fusions) known += (known.empty() ? "" : ", ") + f.name;
    for (const auto& item : fl) {
      std::string name = text_of(item, "fusions", "a fusion name of the sweep");
      bool found = std::any_of(spec_.fusions.begin(), spec_.fusions.end(),
                               [&](const FusionSpec& f) { return f.name == name; });
      if (!found)
        user_error_at(r_.loc(item)) << "fusions: expected one of the sweep's fusions (" << known
                                    << "), found '" << name << "'";
      s.fusions.push_back(name);
    }
  }
  if (!s.load_failure.empty()) {
    // No schema to read set:/space:/constraints: by: one point per
    // fusion and sizes, each recorded as the failure.
    fmt::print(stderr, "warning: {}: scheduler '{}': {}\n", s.loc.str(), s.name, s.load_failure);
    return s;
  }
  ValueReader values = s.kind != SchedulerKind::Script
                           ? ValueReader::for_plugin(r_, s.name, plugin_name, s.schema)
                           : ValueReader::for_script(r_, s.name, script.Scalar(), placeholders);

  std::map<std::string, ValueType> names;
  for (const std::string& size : common_sizes_) names[size] = ValueType::Int;
  if (const YAML::Node& set = entry["set"]) {
    require_map(set, "set", "{unroll: 1}");
    r_.check_keys(set, keys_of(set), "set");
    for (auto it = set.begin(); it != set.end(); ++it) {
      const YAML::Node key = it->first;
      const ParamInfo& info = values.param(key);
      s.fixed.values.emplace_back(key.Scalar(), values.scalar(it->second, info));
      names[key.Scalar()] = info.type;
    }
  }
  if (const YAML::Node& space = entry["space"]) {
    s.space_loc = r_.loc(space);
    require_map(space, "space", "{block: [128, 256], vector: {from: 1, to: 8, pow2: true}}");
    if (space.size() == 0)
      user_error_at(r_.loc(space)) << "space: expected at least one parameter, found an empty "
                                   << "mapping (leave out space: to run the heuristic)";
    r_.check_keys(space, keys_of(space), "space");
    for (auto it = space.begin(); it != space.end(); ++it) {
      const YAML::Node key = it->first;
      const ParamInfo& info = values.param(key);
      if (s.fixed.find(key.Scalar()))
        user_error_at(r_.loc(key)) << "space: '" << key.Scalar() << "' is also fixed in set:; "
                                   << "expected it in one of them";
      s.space.dims.push_back({key.Scalar(), values.dimension(it->second, info), r_.loc(key)});
      names[key.Scalar()] = info.type;
    }
    if (s.space.size() == UINT64_MAX ||
        (spec_.strategy.kind == StrategySpec::Kind::Grid && s.space.size() > kMaxGridPoints))
      user_error_at(s.space_loc)
          << "space: scheduler '" << s.name << "' has " << space_size_str(s.space)
          << " points; expected at most " << kMaxGridPoints
          << (s.space.size() == UINT64_MAX ? "" : " for strategy grid")
          << " (narrow the space or use {method: random, budget: ...})";
  }
  if (const YAML::Node& cs = entry["constraints"]) {
    if (!cs.IsSequence())
      user_error_at(r_.loc(cs)) << "constraints: expected a list of conditions such as "
                                << "[\"block * vector <= K\"], found " << kind_name(cs);
    if (!entry["space"])
      user_error_at(r_.loc(cs)) << "constraints: scheduler '" << s.name << "' has no space: "
                                << "to constrain; expected constraints only next to space:";
    s.space_loc = r_.loc(cs);
    for (const auto& c : cs) {
      if (!c.IsScalar())
        user_error_at(r_.loc(c)) << "constraints: expected a condition such as \"K % vector == "
                                 << "0\", found " << kind_name(c);
      s.constraints.push_back(Constraint::parse(c.Scalar(), names, column_locator(c)));
    }
  }
  return s;
}

std::vector<std::string> Loader::keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (auto it = map.begin(); it != map.end(); ++it)
    keys.push_back(it->first.IsScalar() ? it->first.Scalar() : "");
  return keys;
}

std::string Loader::space_size_str(const ParamSpace& space) {
  uint64_t n = space.size();
  return n == UINT64_MAX ? "more than 2^64" : std::to_string(n);
}

ColumnLocator Loader::column_locator(const YAML::Node& c) const {
  const YAML::Mark m = c.Mark();
  const std::string& line = r_.line(m.line);
  char first =
      static_cast<size_t>(m.column) < line.size() ? line[static_cast<size_t>(m.column)] : ' ';
  int start = m.column + 1 + ((first == '"' || first == '\'') ? 1 : 0);
  std::string path = r_.path();
  int l = m.line + 1;
  return [path, l, start](int col) { return SourceLoc{path, l, start + col - 1}; };
}

PluginSchema Loader::lookup(const std::string& name, const YAML::Node& at, const std::string& context) {
  try {
    return options_.plugins(name);
  } catch (const UserError& e) {
    user_error_at(r_.loc(at)) << context << e.message();
  }
  return {};
}

void Loader::check_spaces() {
  for (const SchedulerSpec& s : spec_.schedulers) {
    if (s.constraints.empty()) continue;
    for (const FusionSpec& f : spec_.fusions)
      for (const ir::SizeBindings& sizes : f.sizes) {
        if (!s.applies_to(f.name)) continue;
        bool any = false;
        if (s.space.size() <= kMaxGridPoints) {
          // Every point, not just up to the first admitted one, so that a
          // constraint that divides by zero somewhere fails here.
          for (uint64_t i = 0; i < s.space.size(); ++i)
            any = s.admits(s.space.point(i), sizes) || any;
        } else {  // random over a space too large to scan: what it draws
          const uint64_t seed = sweep::search_seed(spec_.strategy.seed, s.name, f.name, sizes);
          any = !draw_admissible(s, sizes, seed, spec_.strategy.budget).empty();
        }
        if (!any)
          user_error_at(s.space_loc)
              << "constraints: no point of the space of scheduler '" << s.name << "' ("
              << s.space.size() << " points) satisfies them at fusion '" << f.name << "' "
              << sizes_str(f, sizes) << "; expected at least one";
      }
  }
}

}  // namespace schedlab::sweep::detail
