// `schedlab plugins`: every plugin on the search path (and each --plugin
// file: a .so, or a Python heuristic), with its ABI version and parameter
// schema. Plugins that fail to load are listed with the reason
// (exit 1).
#include <fmt/core.h>

#include <iostream>
#include <memory>
#include <optional>

#include "command.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/tuned/tuned.h"

namespace schedlab::cli {
namespace {

/// `--tuned FILE`: the buckets `p` serves from t, each with its
/// configuration; false when an entry does not fit p's schema.
bool print_tuned(const plugin::Plugin& p, const sweep::TunedFile& t) {
  bool fits = true;
  size_t n = 0;
  for (const sweep::TunedEntry& e : t.entries) {
    if (e.plugin != p.name()) continue;
    if (n++ == 0)
      fmt::print("  tuned ({}){}:\n", t.path,
                 SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(p.abi_version()) < 4
                     ? fmt::format(", not served: plugin ABI {} predates tuned configurations "
                                   "(1.4)",
                                   p.abi_str())
                     : "");
    std::string config;
    try {
      config = p.format(t.values_for(e, p));
    } catch (const UserError& err) {
      config = fmt::format("does not fit the plugin: {}", err.what());
      fits = false;
    }
    fmt::print("    {} {} (line {}, from {}): {}\n", e.fusion, sweep::bucket_str(e.bucket),
               e.loc.line, e.scheduler.empty() ? "?" : e.scheduler, config);
  }
  if (n == 0) fmt::print("  tuned ({}): no entries\n", t.path);
  return fits;
}

int run_plugins(const std::vector<std::string>& plugin_dirs, const std::vector<std::string>& files,
                const std::string& tuned_path) {
  std::optional<sweep::TunedFile> tuned;
  if (!tuned_path.empty()) tuned = sweep::load_tuned_file(tuned_path);
  bool fits = true;
  std::vector<std::string> dirs = plugin::plugin_search_path(plugin_dirs);
  plugin::Registry registry(dirs);
  std::vector<std::string> errors;
  for (const std::string& f : files) {  // --plugin: before the path, which cannot take its name
    try {
      registry.add(f);
    } catch (const UserError& e) {
      errors.push_back(e.what());
    }
  }
  for (const std::string& e : registry.add_search_path()) errors.push_back(e);
  // In the order the segmenter offers them segments (ABI 1.6 priorities).
  auto plugins = registry.by_priority();
  if (plugins.empty()) {
    std::string searched;
    for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
    fmt::print("no plugins found (searched: {})\n", searched.empty() ? "nothing" : searched);
  }
  for (const auto& p : plugins) {
    fmt::print("{} {} (plugin ABI {})\n  {}\n  file: {}\n  priority: {}{}\n", p->name(),
               p->version(), p->abi_str(), p->description(), p->path(), p->priority(),
               p->volunteers() ? "" : " (never offered a segment by the segmenter)");
    if (p->schema().empty()) fmt::print("  no parameters\n");
    for (const plugin::ParamDesc& d : p->schema()) {
      size_t i = static_cast<size_t>(&d - p->schema().data());
      fmt::print("  {:<16} {:<28} default {:<8} {}\n", d.name, d.domain_str(),
                 p->format_value(i, p->defaults()[i]), d.doc);
    }
    if (tuned) fits = print_tuned(*p, *tuned) && fits;
  }
  if (tuned)
    for (const sweep::TunedEntry& e : tuned->entries)
      if (!registry.find(e.plugin))
        fmt::print("tuned entry for a plugin not found: {}:{}: {} {} {}\n", tuned->path,
                   e.loc.line, e.plugin, e.fusion, sweep::bucket_str(e.bucket));
  for (const std::string& e : errors) std::cerr << e << "\n";
  return errors.empty() && fits ? kExitOk : kExitFailures;
}

}  // namespace

void add_plugin_dir_option(CLI::App* cmd, std::vector<std::string>& dirs) {
  cmd->add_option("--plugin-dir", dirs,
                  "Directory searched for plugins before $SCHEDLAB_PLUGIN_PATH and the "
                  "built-in ones (repeatable)")
      ->check(CLI::ExistingDirectory);
}

Command add_plugins_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto tuned = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "plugins", "List the scheduler plugins found, with their ABI version and parameters");
  add_plugin_dir_option(cmd, *dirs);
  cmd->add_option("--plugin", *files,
                  "A plugin file to list beside those found: a .so, or a Python heuristic "
                  "(.py, served by the built-in `python` plugin) (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tuned", *tuned,
                  "A tuned file (from `schedlab tune`): list the fusions and size buckets "
                  "each plugin has tuned configurations for");
  return {cmd, [dirs, files, tuned] { return run_plugins(*dirs, *files, *tuned); }};
}

}  // namespace schedlab::cli
