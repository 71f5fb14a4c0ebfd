// schedlab: the host program. Each verb is a small function over the
// library; this file only wires CLI11 to them and maps errors to exit codes
// (DESIGN.md section 13): 0 success, 1 failures found, 2 bad input or usage,
// 3 internal error.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

/// Where fusion names are looked up: --fusion-dir, then $SCHEDLAB_FUSION_PATH
/// (colon-separated), then the source tree's configs/fusions.
std::vector<std::string> fusion_dirs(const std::vector<std::string>& flags) {
  std::vector<std::string> dirs = flags;
  if (const char* env = std::getenv("SCHEDLAB_FUSION_PATH")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  dirs.emplace_back(SCHEDLAB_CONFIG_DIR "/fusions");
  return dirs;
}

struct ShowOptions {
  std::string fusion;
  std::string sizes;
  std::string stage = "math";
  std::vector<std::string> fusion_dirs;
};

int run_show(const ShowOptions& o) {
  using namespace schedlab;
  auto path = frontend::resolve_fusion(o.fusion, fusion_dirs(o.fusion_dirs));
  auto def = frontend::load_fusion_file(path);
  auto sizes = frontend::bind_sizes(def, frontend::parse_size_list(o.sizes, "--size"));
  ir::verify(*def.fusion);
  std::string bound;
  for (const auto& [k, v] : sizes) bound += fmt::format("{}{}={}", bound.empty() ? "" : ", ", k, v);
  fmt::print("// {} ({})\n", def.fusion->name(), path);
  if (!def.description.empty()) fmt::print("// {}\n", def.description);
  fmt::print("// sizes: {}\n", bound.empty() ? "(none)" : bound);
  fmt::print("{}", ir::print_math(*def.fusion));
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedlab: write, tune and compare GPU fusion schedulers", "schedlab"};
  app.set_version_flag("--version", "schedlab 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);

  ShowOptions show;
  CLI::App* show_cmd = app.add_subcommand("show", "Print a fusion at a stage of the pipeline");
  show_cmd->add_option("fusion", show.fusion,
                       "A fusion name from configs/fusions (e.g. softmax) or a path to a .yaml")
      ->required();
  show_cmd->add_option("--size", show.sizes,
                       "Named sizes, e.g. N=4,K=8 (overrides the file's `sizes:` defaults)");
  show_cmd->add_option("--stage", show.stage, "What to print; `math` is the fusion IR")
      ->check(CLI::IsMember({"math"}));
  show_cmd->add_option("--fusion-dir", show.fusion_dirs,
                       "Extra directory searched for fusion names (repeatable)");

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
    if (show_cmd->parsed()) return run_show(show);
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
