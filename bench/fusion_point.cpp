// `show` and `exec`'s shared part (bench/fusion_point.h): the fusion flags,
// and the core/point Point they make. The verbs are cmd_show.cpp and
// cmd_exec.cpp.
#include "fusion_point.h"

#include <fmt/core.h>

#include <cstdlib>
#include <sstream>

#include "cli_checks.h"
#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/plugin/registry.h"

namespace schedlab::cli {

namespace {

/// The directories of a colon-separated path variable, in order.
std::vector<std::string> path_variable(const char* name) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(name)) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  return dirs;
}

}  // namespace

std::vector<std::string> fusion_dirs(const std::vector<std::string>& flags) {
  std::vector<std::string> dirs = flags;
  for (std::string& d : path_variable("SCHEDLAB_FUSION_PATH")) dirs.push_back(std::move(d));
  dirs.push_back(base::config_dir() + "/fusions");
  return dirs;
}

std::vector<std::string> device_dirs() {
  std::vector<std::string> dirs = path_variable("SCHEDLAB_DEVICE_PATH");
  dirs.push_back(base::config_dir() + "/devices");
  return dirs;
}

void FusionOptions::add_to(CLI::App* cmd) {
  cmd->add_option("fusion", fusion,
                  "A fusion name from configs/fusions (e.g. softmax) or a path to a .yaml")
      ->required();
  cmd->add_option("--size", sizes,
                  "Named sizes, e.g. N=4,K=8 (overrides the file's `sizes:` defaults)");
  cmd->add_option("--schedule", schedule, "A schedule script to apply (configs/schedules/*.sched)");
  cmd->add_option("--param", params,
                  "Schedule parameters for {name} placeholders, e.g. --param block=128 "
                  "(repeatable, like --set)");
  cmd->add_option("--fusion-dir", fusion_dirs,
                  "Extra directory searched for fusion names (repeatable)");
  cmd->add_option("--plugin", plugin,
                  "Schedule with this plugin (see `schedlab plugins`) instead of --schedule");
  cmd->add_option("--set", settings,
                  "Plugin parameter, e.g. --set block=256 (repeatable; overrides the "
                  "plugin's own choice)");
  add_plugin_dir_option(cmd, plugin_dirs);
  cmd->add_flag("--unscheduled", unscheduled,
                "Lower the fusion as it is, without a schedule: one serial kernel (without "
                "--plugin or --schedule, the segmenter picks a plugin for each segment)");
  cmd->add_option("--schedulers", schedulers,
                  "Plugins the segmenter may pick, in priority order, e.g. "
                  "reduction,pointwise (default: every plugin found, in the priority each "
                  "declares, as `schedlab plugins` lists them; never script)")
      ->delimiter(',');
  cmd->add_flag("--dynamic-sizes", dynamic_sizes,
                "Compile kernels that read their sizes at run time (one kernel for every "
                "shape) instead of having the sizes compiled in as constants");
  cmd->add_flag("--no-divisibility", no_divisibility,
                "With --dynamic-sizes: do not assume that the sizes which are multiples of "
                "16 stay so (by default the kernel does, as Triton's divisibility "
                "specialization, and refuses other sizes)")
      ->needs("--dynamic-sizes");
  cmd->add_flag("--fast-math", fast_math,
                "Compile f32 exp, log, division, reciprocal, rsqrt and sigmoid to the "
                "hardware approximations (__expf, __logf, __fdividef, rsqrtf); validation "
                "allows their error bounds");
  cmd->add_option("--math", math,
                  "Half math: default computes f16/bf16 +, -, *, neg and abs in f32 and rounds "
                  "back; native uses __hadd/__hmul/... and their half2 forms (__hmul2) for "
                  "two iterations of a loop; both give the same bits")
      ->check(CLI::IsMember({"default", "native"}));
  cmd->add_option("--tuned", tuned,
                  "A tuned file (from `schedlab tune`): a plugin that serves tuned "
                  "configurations uses the one for this fusion's size bucket, its own "
                  "heuristic outside the tuned buckets (docs/tuning.md)");
}

std::vector<std::shared_ptr<const plugin::Plugin>> segmenter_plugins(const FusionOptions& o) {
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  std::vector<std::string> errors;
  auto plugins = sweep::segmenter_plugins(registry, o.schedulers, &errors);
  for (const std::string& e : errors) fmt::print(stderr, "warning: {}\n", e);
  return plugins;
}

Loaded load(const FusionOptions& o, runtime::Backend* backend, point::Options options,
            bool segment) {
  Loaded l;
  sweep::BoundFusion bf = sweep::bind_fusion(o.fusion, fusion_dirs(o.fusion_dirs),
                                             frontend::parse_size_list(o.sizes, "--size"));
  user_assert(o.plugin.empty() || o.schedule.empty())
      << "--plugin and --schedule both schedule the fusion; give one of them";
  user_assert(!o.plugin.empty() || o.settings.empty()) << "--set needs --plugin";
  user_assert(!o.unscheduled || (o.plugin.empty() && o.schedule.empty()))
      << "--unscheduled runs the fusion without a schedule; drop --plugin and --schedule";
  user_assert(o.segmented() || o.schedulers.empty())
      << "--schedulers picks the segmenter's plugins; it cannot be combined with --plugin, "
         "--schedule or --unscheduled";
  user_assert(o.tuned.empty() || (o.schedule.empty() && !o.unscheduled))
      << "--tuned offers tuned configurations to plugins; it cannot be combined with "
         "--schedule or --unscheduled";
  if (!o.tuned.empty()) l.tuned = std::make_unique<sweep::TunedFile>(sweep::load_tuned_file(o.tuned));
  // The flags' spellings, parsed into the typed reference.
  point::SchedulerRef ref = point::UnscheduledRef{};
  if (!o.plugin.empty()) {
    plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
    point::PluginRef r{registry.get(o.plugin), o.settings, std::nullopt};
    if (l.tuned) r.tuned = l.tuned->offer(*r.plugin, bf.def.fusion->name(), bf.sizes);
    ref = std::move(r);
  } else if (!o.schedule.empty()) {
    point::ScriptRef r{o.schedule, std::nullopt, {}};
    std::string list;  // every --param joined: a name given twice is still an error
    for (const std::string& p : o.params) list += (list.empty() ? "" : ",") + p;
    for (const auto& [k, v] : frontend::parse_size_list(list, "--param")) r.params[k] = v;
    ref = std::move(r);
  } else if (o.segmented()) {
    ref = point::SegmenterRef{segment ? segmenter_plugins(o)
                                      : std::vector<std::shared_ptr<const plugin::Plugin>>{},
                              l.tuned.get()};
  }
  options.kernel = o.kernel_options();
  l.point = point::Point(std::move(bf), std::move(ref), backend, std::move(options));
  return l;
}

void require_scheduled(const point::Point& p) {
  if (p.result().verdict != point::Verdict::Rejected) return;
  const auto* r = std::get_if<point::PluginRef>(&p.scheduler());
  user_assert(r == nullptr) << "plugin '" << r->plugin->name() << "' cannot schedule fusion '"
                            << p.fusion().def.fusion->name() << "': " << p.result().reject_reason;
  user_error << p.fusion().def.fusion->name() << ": " << p.result().reject_reason;
}

}  // namespace schedlab::cli
