// schedlab: the host program. Each verb is a small function over the
// library; this file only wires CLI11 to them and maps errors to exit codes
// (DESIGN.md section 13): 0 success, 1 failures found, 2 bad input or usage,
// 3 internal error.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/npy.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/debug_print.h"

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

constexpr int kExitFailures = 1;

/// What `show` and `exec` share: the fusion, its sizes and its schedule.
struct FusionOptions {
  std::string fusion;
  std::string sizes;
  std::string schedule;
  std::string params;
  std::vector<std::string> fusion_dirs;
  std::string plugin;                    ///< --plugin: schedule with this plugin
  std::vector<std::string> settings;     ///< --set key=value, for --plugin
  std::vector<std::string> plugin_dirs;  ///< --plugin-dir

  void add_to(CLI::App* cmd) {
    cmd->add_option("fusion", fusion,
                    "A fusion name from configs/fusions (e.g. softmax) or a path to a .yaml")
        ->required();
    cmd->add_option("--size", sizes,
                    "Named sizes, e.g. N=4,K=8 (overrides the file's `sizes:` defaults)");
    cmd->add_option("--schedule", schedule, "A schedule script to apply (configs/schedules/*.sched)");
    cmd->add_option("--param", params, "Schedule parameters for {name} placeholders, e.g. block=128");
    cmd->add_option("--fusion-dir", fusion_dirs,
                    "Extra directory searched for fusion names (repeatable)");
    cmd->add_option("--plugin", plugin,
                    "Schedule with this plugin (see `schedlab plugins`) instead of --schedule");
    cmd->add_option("--set", settings,
                    "Plugin parameter, e.g. --set block=256 (repeatable; overrides the "
                    "plugin's own choice)");
    add_plugin_dir_option(cmd, plugin_dirs);
  }

  static void add_plugin_dir_option(CLI::App* cmd, std::vector<std::string>& dirs) {
    cmd->add_option("--plugin-dir", dirs,
                    "Directory searched for plugins before $SCHEDLAB_PLUGIN_PATH and the "
                    "built-in ones (repeatable)");
  }
};

/// A loaded fusion with its sizes and (if asked) its schedule applied.
struct Loaded {
  std::string path;
  schedlab::frontend::FusionDefinition def;
  schedlab::ir::SizeBindings sizes;
  std::vector<std::string> schedule_log;
};

/// `device`: the target a plugin schedules for; the model device when empty.
Loaded load(const FusionOptions& o,
            const std::optional<schedlab::runtime::DeviceProperties>& device = {}) {
  using namespace schedlab;
  Loaded l;
  l.path = frontend::resolve_fusion(o.fusion, fusion_dirs(o.fusion_dirs));
  l.def = frontend::load_fusion_file(l.path);
  l.sizes = frontend::bind_sizes(l.def, frontend::parse_size_list(o.sizes, "--size"));
  ir::verify(*l.def.fusion);
  user_assert(o.plugin.empty() || o.schedule.empty())
      << "--plugin and --schedule both schedule the fusion; give one of them";
  user_assert(!o.plugin.empty() || o.settings.empty()) << "--set needs --plugin";
  if (!o.plugin.empty()) {
    // The heuristic chooses its parameters; --set overrides that choice.
    plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
    std::shared_ptr<const plugin::Plugin> p = registry.get(o.plugin);
    plugin::Segment seg;
    seg.fusion = l.def.fusion.get();
    seg.sizes = l.sizes;
    if (device) {
      seg.device = *device;
      seg.device_is_model = false;
    }
    plugin::Verdict v = p->can_schedule(seg, p->defaults());
    user_assert(v.accepted) << "plugin '" << p->name() << "' cannot schedule fusion '"
                            << l.def.fusion->name() << "': " << v.reason;
    plugin::ParamValues params = p->with_settings(p->compute_params(seg), o.settings);
    p->schedule(seg, params);
    l.schedule_log.push_back(fmt::format("plugin {} {} (plugin ABI {}) on {}: {}", p->name(),
                                         p->version(), p->abi_str(), seg.device.name,
                                         p->format(params)));
  }
  if (!o.schedule.empty()) {
    frontend::ScheduleParams params;
    for (const auto& [k, v] : frontend::parse_size_list(o.params, "--param")) params[k] = v;
    l.schedule_log = frontend::apply_schedule_file(o.schedule, l.def, params);
  }
  return l;
}

std::string sizes_str(const schedlab::ir::SizeBindings& sizes) {
  std::string bound;
  for (const auto& [k, v] : sizes) bound += fmt::format("{}{}={}", bound.empty() ? "" : ", ", k, v);
  return bound.empty() ? "(none)" : bound;
}

int run_show(const FusionOptions& o, const std::string& stage) {
  using namespace schedlab;
  Loaded l = load(o);
  const ir::Fusion& f = *l.def.fusion;
  fmt::print("// {} ({})\n", f.name(), l.path);
  if (!l.def.description.empty()) fmt::print("// {}\n", l.def.description);
  fmt::print("// sizes: {}\n", sizes_str(l.sizes));
  if (stage == "math") {
    fmt::print("{}", ir::print_math(f));
  } else if (stage == "schedule") {
    for (const auto& line : l.schedule_log) fmt::print("// {}\n", line);
    fmt::print("{}", sched::print_scheduled_fusion(f));
  } else {
    runtime::PreparedKernel p = runtime::prepare(f, l.sizes);
    fmt::print("{}", stage == "cuda" ? p.source.source : codegen::print_kernel(p.kernel));
  }
  return kExitOk;
}

struct ExecOptions {
  std::string backend = "auto";
  std::string cache_dir;
  uint64_t seed = 1;
  std::string inputs;        ///< --inputs: comma-separated .npy files, one per fusion input
  std::string save_outputs;  ///< --save-outputs: a directory for <name>.npy and <name>.ref.npy
};

/// --inputs a.npy,b.npy: one file per input of f, in order, each checked
/// against the input's dtype and its shape under `sizes`.
std::vector<schedlab::ref::HostTensor> read_inputs(const std::string& list,
                                                   const schedlab::ir::Fusion& f,
                                                   const schedlab::ir::SizeBindings& sizes) {
  using namespace schedlab;
  std::vector<std::string> paths;
  std::stringstream ss(list);
  for (std::string p; std::getline(ss, p, ',');) paths.push_back(p);
  if (!list.empty() && list.back() == ',') paths.emplace_back();
  std::string names;
  for (const ir::TensorView* in : f.inputs()) names += (names.empty() ? "" : ", ") + in->describe();
  user_assert(paths.size() == f.inputs().size())
      << "--inputs: fusion '" << f.name() << "' has " << f.inputs().size() << " input"
      << (f.inputs().size() == 1 ? "" : "s") << " (" << names << "), found " << paths.size()
      << " file" << (paths.size() == 1 ? "" : "s") << " in '" << list << "'";
  std::vector<ref::HostTensor> r;
  for (size_t i = 0; i < paths.size(); ++i) {
    user_assert(!paths[i].empty())
        << "--inputs: file " << i + 1 << " of '" << list << "' is empty; expected a .npy path for "
        << f.inputs()[i]->describe();
    r.push_back(ref::read_npy_input(paths[i], f.inputs()[i], sizes));
  }
  return r;
}

/// --save-outputs DIR: each output as DIR/<name>.npy and the reference as
/// DIR/<name>.ref.npy, <name> being the output's name in the fusion or T<n>.
void save_outputs(const std::string& dir, const schedlab::ir::Fusion& f,
                  const std::vector<schedlab::ref::HostTensor>& got,
                  const std::vector<schedlab::ref::HostTensor>& want) {
  using namespace schedlab;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  user_assert(!ec) << "--save-outputs: cannot create directory '" << dir << "': " << ec.message();
  for (size_t i = 0; i < got.size(); ++i) {
    const ir::TensorView* out = f.outputs()[i];
    std::string base =
        (std::filesystem::path(dir) / (out->user_name().empty() ? out->str() : out->user_name()))
            .string();
    ref::write_npy(base + ".npy", got[i]);
    ref::write_npy(base + ".ref.npy", want[i]);
    fmt::print("  saved output {} to {}.npy and {}.ref.npy\n", i, base, base);
  }
}

std::unique_ptr<schedlab::runtime::Backend> make_backend(const ExecOptions& o) {
  using namespace schedlab;
  std::string why;
  if (o.backend == "cuda" || (o.backend == "auto" && runtime::cuda_available(&why)))
    return runtime::make_cuda_backend(o.cache_dir);
  return runtime::make_cpu_backend(o.cache_dir);
}

int run_exec(const FusionOptions& fo, const ExecOptions& eo) {
  using namespace schedlab;
  auto backend = make_backend(eo);
  // A plugin schedules for the device that will run the kernel.
  std::optional<runtime::DeviceProperties> device;
  if (backend->name().find("cuda") != std::string::npos) device = runtime::cuda_device_properties();
  Loaded l = load(fo, device);
  // The reference evaluates an unscheduled copy: scheduling rewrites the math
  // (caches, rfactor) and the oracle must not depend on it.
  auto plain = frontend::load_fusion_file(l.path);
  auto inputs = eo.inputs.empty()
                    ? ref::make_inputs(*plain.fusion, l.sizes, eo.seed, plain.input_ranges)
                    : read_inputs(eo.inputs, *plain.fusion, l.sizes);
  auto want = ref::evaluate(*plain.fusion, inputs, l.sizes);
  runtime::PreparedKernel p = runtime::prepare(*l.def.fusion, l.sizes);
  auto compiled = backend->compile(p.source);
  auto got = runtime::execute(*backend, *compiled, p, inputs, l.sizes);
  auto dims = runtime::launch_dims(p.kernel, l.sizes);
  fmt::print("{} on {}: sizes {}, grid ({}, {}, {}), block ({}, {}, {}), {} B shared, int{} index\n",
             l.def.fusion->name(), backend->name(), sizes_str(l.sizes), dims.grid[0], dims.grid[1],
             dims.grid[2], dims.block[0], dims.block[1], dims.block[2], dims.shared_bytes,
             p.source.index_bits);
  bool all_ok = true;
  // Reductions reorder sums: the tolerance grows with the elements they combine.
  int64_t reduced = ref::max_reduced_count(*plain.fusion, l.sizes);
  for (size_t i = 0; i < want.size(); ++i) {
    const ir::TensorView* out = l.def.fusion->outputs()[i];
    auto tol = ref::reduction_tolerance(out->dtype(), reduced);
    auto c = ref::compare(got[i], want[i], tol);
    all_ok &= c.ok;
    fmt::print("  output {} ({}): {} (max abs error {:.3g}; rtol {:.3g}, atol {:.3g}){}\n", i,
               out->describe(), c.ok ? "ok" : "wrong_result", c.max_abs_error, tol.rtol, tol.atol,
               c.ok ? "" : fmt::format(", {} mismatches, first at {}", c.mismatches, c.first_mismatch));
  }
  // Named after the unscheduled fusion's outputs: the names do not depend on the schedule.
  if (!eo.save_outputs.empty()) save_outputs(eo.save_outputs, *plain.fusion, got, want);
  return all_ok ? kExitOk : kExitFailures;
}

/// `schedlab plugins`: every plugin on the search path, with its ABI version
/// and parameter schema. Plugins that fail to load are listed with the reason
/// (exit 1).
int run_plugins(const std::vector<std::string>& plugin_dirs) {
  using namespace schedlab;
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

int main(int argc, char** argv) {
  CLI::App app{"schedlab: write, tune and compare GPU fusion schedulers", "schedlab"};
  app.set_version_flag("--version", "schedlab 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);

  FusionOptions show;
  std::string stage = "math";
  CLI::App* show_cmd = app.add_subcommand("show", "Print a fusion at a stage of the pipeline");
  show.add_to(show_cmd);
  show_cmd
      ->add_option("--stage", stage,
                   "math: the fusion IR; schedule: the scheduled tensors; kernel: the lowered "
                   "kernel; cuda: the whole CUDA translation unit")
      ->check(CLI::IsMember({"math", "schedule", "kernel", "cuda"}));

  FusionOptions exec;
  ExecOptions exec_opts;
  CLI::App* exec_cmd = app.add_subcommand(
      "exec", "Lower, compile and run a (scheduled) fusion once; validate it against the reference");
  exec.add_to(exec_cmd);
  exec_cmd->add_option("--backend", exec_opts.backend, "auto (CUDA when a device answers), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  exec_cmd->add_option("--cache-dir", exec_opts.cache_dir,
                       "Compiled-kernel cache (default $SCHEDLAB_CACHE_DIR or ~/.cache/schedlab)");
  exec_cmd->add_option("--seed", exec_opts.seed, "Seed of the generated inputs");
  exec_cmd->add_option("--inputs", exec_opts.inputs,
                       "NumPy .npy files, one per fusion input in order (e.g. x.npy,w.npy), "
                       "instead of generated inputs");
  exec_cmd->add_option("--save-outputs", exec_opts.save_outputs,
                       "Directory to write each output to as <name>.npy, and the reference as "
                       "<name>.ref.npy");

  std::vector<std::string> plugins_dirs;
  CLI::App* plugins_cmd = app.add_subcommand(
      "plugins", "List the scheduler plugins found, with their ABI version and parameters");
  FusionOptions::add_plugin_dir_option(plugins_cmd, plugins_dirs);

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
    if (show_cmd->parsed()) return run_show(show, stage);
    if (exec_cmd->parsed()) return run_exec(exec, exec_opts);
    if (plugins_cmd->parsed()) return run_plugins(plugins_dirs);
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
