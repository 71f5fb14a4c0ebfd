// `schedlab plugins`: every plugin on the search path, with its ABI version
// and parameter schema. Plugins that fail to load are listed with the reason
// (exit 1).
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "command.h"
#include "schedlab/plugin/registry.h"

namespace schedlab::cli {
namespace {

int run_plugins(const std::vector<std::string>& plugin_dirs) {
  std::vector<std::string> dirs = plugin::plugin_search_path(plugin_dirs);
  plugin::Registry registry(dirs);
  std::vector<std::string> errors = registry.add_search_path();
  auto plugins = registry.plugins();
  if (plugins.empty()) {
    std::string searched;
    for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
    fmt::print("no plugins found (searched: {})\n", searched.empty() ? "nothing" : searched);
  }
  for (const auto& p : plugins) {
    fmt::print("{} {} (plugin ABI {})\n  {}\n  file: {}\n", p->name(), p->version(), p->abi_str(),
               p->description(), p->path());
    if (p->schema().empty()) fmt::print("  no parameters\n");
    for (const plugin::ParamDesc& d : p->schema()) {
      size_t i = static_cast<size_t>(&d - p->schema().data());
      fmt::print("  {:<16} {:<28} default {:<8} {}\n", d.name, d.domain_str(),
                 p->format_value(i, p->defaults()[i]), d.doc);
    }
  }
  for (const std::string& e : errors) std::cerr << e << "\n";
  return errors.empty() ? kExitOk : kExitFailures;
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
  CLI::App* cmd = app.add_subcommand(
      "plugins", "List the scheduler plugins found, with their ABI version and parameters");
  add_plugin_dir_option(cmd, *dirs);
  return {cmd, [dirs] { return run_plugins(*dirs); }};
}

}  // namespace schedlab::cli
