// schedlab: the host program. Each verb is a bench/cmd_*.cpp over the
// library (see command.h); this file only dispatches to the parsed verb and
// maps errors to exit codes (command.h): 0 success, 1 failures
// found (a plugin that broke the ABI among them), 2 bad input or usage, 3
// internal error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/base/suggest.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"

namespace {

/// After a usage error: "did you mean" for a mistyped verb (`schedlab rn`) or
/// for a mistyped long flag of the verb given (`exec --plugin-dirr`), on
/// stderr after CLI11's own message. Nothing when nothing is close.
void suggest_usage(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> verbs;
  CLI::App* verb = nullptr;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    verbs.push_back(sub->get_name());
  int first = 1;
  while (first < argc && argv[first][0] == '-') ++first;
  if (first < argc) {
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == argv[first]) verb = sub;
    if (!verb) {
      const std::string close = schedlab::closest_name(argv[first], verbs);
      if (!close.empty())
        std::cerr << "hint: unknown verb '" << argv[first] << "'; did you mean '" << close
                  << "'?\n";
      return;
    }
  }
  CLI::App& scope = verb ? *verb : app;
  std::vector<std::string> flags;
  for (const CLI::Option* o : scope.get_options())
    for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
  for (int i = first + 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") continue;
    a = a.substr(0, a.find('='));
    if (std::find(flags.begin(), flags.end(), a) != flags.end()) continue;
    const std::string close = schedlab::closest_name(a, flags);
    if (!close.empty())
      std::cerr << "hint: unknown flag '" << a << "'; did you mean '" << close << "'?\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace schedlab::cli;
  CLI::App app{"schedlab: write, tune and compare GPU fusion schedulers", "schedlab"};
  app.set_version_flag("--version", "schedlab 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);

  const std::vector<Command> commands = {
      add_show_command(app),
      add_exec_command(app),
      add_plugins_command(app),
      add_run_command(app),
      add_tune_command(app),
      add_watch_command(app),
      add_report_command(app),
      add_compare_command(app),
      add_fuzz_command(app),
      add_merge_command(app),
      add_slurm_command(app),
      add_calibrate_command(app),
  };

  // The process ends after its one command: plugins stay mapped to the end,
  // so a thread a plugin left running cannot crash the host at exit.
  schedlab::plugin::Registry::keep_plugins_mapped_at_destruction(true);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    suggest_usage(app, argc, argv);
    return kExitUsage;
  }

  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const schedlab::plugin::PluginFault& e) {
    // The plugin failed (an exception through the ABI, a garbage status):
    // a failure found, like a crash, not the user's input.
    std::cerr << e.what() << "\n";
    return kExitFailures;
  } catch (const schedlab::UserError& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  } catch (const schedlab::InternalError& e) {
    std::cerr << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a bug in schedlab, please report it): " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitUsage;
}
