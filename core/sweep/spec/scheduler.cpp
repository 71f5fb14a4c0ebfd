// What a loaded sweep means at run time: the settings a point hands its
// plugin, which configurations the constraints admit, and the lookups the
// loader uses (plugin schemas from a registry).
#include <algorithm>
#include <filesystem>

#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

namespace fs = std::filesystem;

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::Auto:
      return "auto";
    case Backend::Cpu:
      return "cpu";
    case Backend::Cuda:
      return "cuda";
  }
  return "?";
}

std::string_view strategy_name(StrategySpec::Kind kind) {
  switch (kind) {
    case StrategySpec::Kind::Grid:
      return "grid";
    case StrategySpec::Kind::Random:
      return "random";
    case StrategySpec::Kind::Halving:
      return "halving";
    case StrategySpec::Kind::Evolution:
      return "evolution";
    case StrategySpec::Kind::Model:
      return "model";
  }
  return "?";
}

std::string_view objective_name(StrategySpec::Objective objective) {
  switch (objective) {
    case StrategySpec::Objective::Measured:
      return "measured";
    case StrategySpec::Objective::Predicted:
      return "predicted";
    case StrategySpec::Objective::Cpu:
      return "cpu";
  }
  return "?";
}

const SchedulerSpec* SweepSpec::scheduler(const std::string& name) const {
  for (const SchedulerSpec& s : schedulers)
    if (s.name == name) return &s;
  return nullptr;
}

bool SchedulerSpec::applies_to(const std::string& fusion) const {
  return fusions.empty() || std::find(fusions.begin(), fusions.end(), fusion) != fusions.end();
}

bool SchedulerSpec::admits(const Config& config, const ir::SizeBindings& sizes) const {
  if (constraints.empty()) return true;
  std::map<std::string, Value> size_values;
  for (const auto& [k, v] : sizes) size_values.emplace(k, Value::integer(v));
  auto lookup = [&](const std::string& name) -> const Value& {
    if (const Value* v = config.find(name)) return *v;
    if (const Value* v = fixed.find(name)) return *v;
    auto it = size_values.find(name);
    internal_assert(it != size_values.end()) << "constraint name '" << name << "' has no value";
    return it->second;
  };
  for (const Constraint& c : constraints)
    if (!c.holds(lookup)) return false;
  return true;
}

std::vector<std::string> SchedulerSpec::settings(const Config& config) const {
  std::vector<std::string> r;
  if (kind != SchedulerKind::Script) {
    for (const auto& [k, v] : fixed.values) r.push_back(k + "=" + v.str());
    for (const auto& [k, v] : config.values) r.push_back(k + "=" + v.str());
    return r;
  }
  std::string args;
  for (const Config* c : {&fixed, &config})
    for (const auto& [k, v] : c->values) args += (args.empty() ? "" : ",") + k + "=" + v.str();
  r.push_back("script=" + script);
  r.push_back("args=" + args);
  return r;
}

PluginLookup registry_lookup(plugin::Registry& registry) {
  return [&registry](const std::string& name_or_path) {
    std::shared_ptr<const plugin::Plugin> p;
    bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".so") ||
                   plugin::is_python_file(name_or_path);
    try {
      if (!is_path) {
        p = registry.get(name_or_path);
      } else {
        std::error_code ec;
        user_assert(fs::is_regular_file(name_or_path, ec))
            << "plugin file '" << name_or_path << "' "
            << (fs::exists(name_or_path, ec) ? "is not a regular file" : "does not exist");
        for (const auto& [name, file] : registry.files())
          if (fs::equivalent(file, name_or_path, ec)) p = registry.find(name);
        if (!p) p = registry.add(name_or_path);
      }
    } catch (const plugin::LoadFault& e) {
      // Isolated: the plugin's own failure is its scheduler's records.
      using Kind = plugin::LoadFault::Kind;
      return PluginSchema{is_path ? fs::path(name_or_path).stem().string() : name_or_path,
                          {},
                          e.what(),
                          e.kind() == Kind::Timeout   ? "timeout"
                          : e.kind() == Kind::Crashed ? "crashed"
                                                      : "plugin_error"};
    }
    return PluginSchema{p->name(), p->schema(), "", ""};
  };
}

}  // namespace schedlab::sweep
