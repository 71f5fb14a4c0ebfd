// schedlab: the host program. Each verb is a bench/cmd_*.cpp over the
// library (see command.h); this file only dispatches to the parsed verb and
// maps errors to exit codes (DESIGN.md section 13): 0 success, 1 failures
// found, 2 bad input or usage, 3 internal error.
#include <CLI/CLI.hpp>

#include <iostream>
#include <vector>

#include "command.h"
#include "schedlab/base/error.h"

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
      add_watch_command(app),
      add_report_command(app),
      add_compare_command(app),
      add_fuzz_command(app),
  };

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
    return kExitUsage;
  }

  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
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
