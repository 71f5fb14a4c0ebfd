// `schedlab show` and `schedlab exec`: one fusion, its sizes and its schedule
// (a schedule script, a plugin, none with --unscheduled, or by default the
// segmenter's choice of a plugin per segment), shown at a stage of the
// pipeline or run once and validated against the reference.
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "cli_checks.h"
#include "command.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/base/error.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/ir/printer.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/isolate/isolate.h"
#include "schedlab/model/profile.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/npy.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/debug_print.h"
#include "schedlab/segment/segment.h"
#include "schedlab/sweep/mutate.h"
#include "schedlab/sweep/pipeline.h"
#include "schedlab/sweep/tuned.h"

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

namespace {

/// What `show` and `exec` share: the fusion, its sizes and its schedule.
struct FusionOptions {
  std::string fusion;
  std::string sizes;
  std::string schedule;
  std::vector<std::string> params;        ///< --param k=v[,k=v] (repeatable)
  std::vector<std::string> fusion_dirs;
  std::string plugin;                    ///< --plugin: schedule with this plugin
  std::vector<std::string> settings;     ///< --set key=value, for --plugin
  std::vector<std::string> plugin_dirs;  ///< --plugin-dir
  bool unscheduled = false;              ///< --unscheduled: one serial kernel, no schedule
  std::vector<std::string> schedulers;   ///< --schedulers: the segmenter's plugins, in order
  bool dynamic_sizes = false;            ///< --dynamic-sizes
  bool fast_math = false;                ///< --fast-math
  bool no_divisibility = false;          ///< --no-divisibility
  std::string tuned;                     ///< --tuned: a tuned file offered to the plugins

  runtime::KernelOptions kernel_options() const {
    return {dynamic_sizes, fast_math, !no_divisibility};
  }

  /// Neither a plugin, a schedule script nor --unscheduled: the segmenter
  /// picks a plugin for each segment (docs/segments.md).
  bool segmented() const { return plugin.empty() && schedule.empty() && !unscheduled; }

  void add_to(CLI::App* cmd) {
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
                    "reduction,pointwise (default: every plugin found; normalization, "
                    "reduction, transpose, pointwise first, never script)")
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
    cmd->add_option("--tuned", tuned,
                    "A tuned file (from `schedlab tune`): a plugin that serves tuned "
                    "configurations uses the one for this fusion's size bucket, its own "
                    "heuristic outside the tuned buckets (docs/tuning.md)");
  }
};

/// A bound fusion with its schedule (if any) applied; when segmented, bf
/// stays unscheduled and the scheduled segments are in `segmented`.
struct Loaded {
  sweep::BoundFusion bf;
  std::vector<std::string> schedule_log;
  /// What became of a tuned configuration on offer (--tuned), one line per
  /// plugin run that had one.
  std::vector<std::string> tuned_lines;
  std::optional<sweep::SegmentedFusion> segmented;
};

/// The plugins the segmenter may pick (--schedulers, or every one found);
/// files that fail to load are reported and skipped.
std::vector<std::shared_ptr<const plugin::Plugin>> segmenter_plugins(const FusionOptions& o) {
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  std::vector<std::string> errors;
  auto plugins = sweep::segmenter_plugins(registry, o.schedulers, &errors);
  for (const std::string& e : errors) fmt::print(stderr, "warning: {}\n", e);
  return plugins;
}

/// `device`: the target a plugin schedules for; the model device when empty.
/// `segment`: in segmented mode, segment and schedule (not needed to print the math).
Loaded load(const FusionOptions& o, const std::optional<runtime::DeviceProperties>& device = {},
            bool segment = true) {
  Loaded l;
  l.bf = sweep::bind_fusion(o.fusion, fusion_dirs(o.fusion_dirs),
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
  std::optional<sweep::TunedFile> tuned;
  if (!o.tuned.empty()) tuned = sweep::load_tuned_file(o.tuned);
  if (!o.plugin.empty()) {
    plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
    std::shared_ptr<const plugin::Plugin> p = registry.get(o.plugin);
    std::optional<plugin::TunedOffer> offer;
    if (tuned) offer = tuned->offer(*p, l.bf.def.fusion->name(), l.bf.sizes);
    sweep::PluginRun run =
        sweep::schedule_with_plugin(*p, l.bf, device, o.settings, offer ? &*offer : nullptr);
    user_assert(run.accepted) << "plugin '" << p->name() << "' cannot schedule fusion '"
                              << l.bf.def.fusion->name() << "': " << run.reason;
    l.schedule_log.push_back(run.log_line);
    if (!run.tuned_offered.empty()) l.tuned_lines.push_back(run.tuned_note());
  }
  if (!o.schedule.empty()) {
    frontend::ScheduleParams params;
    std::string list;  // every --param joined: a name given twice is still an error
    for (const std::string& p : o.params) list += (list.empty() ? "" : ",") + p;
    for (const auto& [k, v] : frontend::parse_size_list(list, "--param")) params[k] = v;
    l.schedule_log = frontend::apply_schedule_file(o.schedule, l.bf.def, params);
  }
  if (o.segmented() && segment) {
    l.segmented = sweep::segment_and_schedule(l.bf, segmenter_plugins(o), device,
                                              tuned ? &*tuned : nullptr);
    for (const sweep::PluginRun& run : l.segmented->runs)
      if (!run.tuned_offered.empty()) l.tuned_lines.push_back(run.tuned_note());
  }
  return l;
}

/// `show --segments`: the segmenter's log and segments; exit 2 when a part
/// is left that no plugin accepts (after printing why).
int show_segments(const FusionOptions& o) {
  user_assert(o.segmented()) << "--segments shows the segmenter's choice; it cannot be combined "
                                "with --plugin, --schedule or --unscheduled";
  Loaded l = load(o, {}, /*segment=*/false);
  const ir::Fusion& f = *l.bf.def.fusion;
  fmt::print("// {} ({})\n", f.name(), l.bf.path);
  fmt::print("// sizes: {}\n", sweep::sizes_str(*l.bf.def.fusion, l.bf.sizes));
  segment::Segmentation s =
      segment::segment(f, l.bf.sizes, sweep::plugin_schedulers(segmenter_plugins(o), {}));
  fmt::print("{}", segment::print_segmentation(s));
  std::fflush(stdout);
  segment::require_complete(s);
  return kExitOk;
}

/// A lowered stage of one fusion (kernel, cuda or kir), after the kernel IR
/// of each pass `print_after` names ("all", a pass of lower::lowering_passes,
/// or "" for none).
void show_lowered(const ir::Fusion& f, const ir::SizeBindings& sizes, const std::string& stage,
                  const std::string& print_after, const runtime::KernelOptions& options) {
  lower::PassObserver observer;
  if (!print_after.empty())
    observer = [&](std::string_view pass, const kir::Kernel& k) {
      if (print_after == "all" || print_after == pass)
        fmt::print("// kernel IR after {}\n{}", pass, kir::print_kir(k));
    };
  runtime::PreparedKernel p = runtime::prepare(f, sizes, observer, options);
  if (!print_after.empty()) fmt::print("// {}\n", stage == "kir" ? "kernel IR" : stage);
  fmt::print("{}", stage == "cuda"  ? p.source.source
                   : stage == "kir" ? kir::print_kir(p.kernel)
                                    : codegen::print_kernel(p.kernel));
}

/// One segment's stage (schedule, kernel, cuda or kir) under a header line.
void show_segment_stage(const sweep::SegmentedFusion& sf, size_t i, const ir::SizeBindings& sizes,
                        const runtime::KernelOptions& options,
                        const std::string& stage, const std::string& print_after) {
  const segment::Segment& seg = sf.segmentation.segments[i];
  fmt::print("// segment {} of {}: {} {}\n", i, sf.segmentation.segments.size(), seg.scheduler,
             segment::group_str(seg.exprs));
  const ir::Fusion& f = *seg.fusion.fusion;
  if (stage == "schedule") {
    fmt::print("// {}\n", sf.runs[i].log_line);
    fmt::print("{}", sched::print_scheduled_fusion(f));
    return;
  }
  show_lowered(f, sizes, stage, print_after, options);
}

/// `show --stage profile`: each kernel's profile on a device model
/// (docs/model.md), as text or JSON. The plugins schedule for that device.
struct ProfileFlags {
  std::string device = model::kDefaultDevice;               ///< --device
  std::string format = "text";                              ///< --format
  int64_t max_blocks = model::ProfileOptions{}.max_blocks;  ///< --sample-blocks
};

int show_profile(const FusionOptions& o, const ProfileFlags& flags) {
  const model::DeviceModel device =
      model::load_device(flags.device, device_dirs());
  Loaded l = load(o, model::device_properties(device));
  auto cpu = sweep::make_backend("cpu");
  model::ProfileOptions options;
  options.max_blocks = flags.max_blocks;
  const std::string name = l.bf.def.fusion->name();
  std::vector<model::KernelProfile> profiles;
  if (l.segmented) {
    const segment::Segmentation& s = l.segmented->segmentation;
    for (size_t i = 0; i < s.segments.size(); ++i) {
      const ir::Fusion& f = *s.segments[i].fusion.fusion;
      profiles.push_back(model::profile_kernel(
          *cpu, runtime::prepare(f, l.bf.sizes, {}, o.kernel_options()), f, l.bf.sizes, sweep::io_bytes(f, l.bf.sizes),
          device, options,
          s.segments.size() == 1
              ? name
              : fmt::format("{} segment {} ({})", name, i, s.segments[i].scheduler)));
    }
  } else {
    const ir::Fusion& f = *l.bf.def.fusion;
    profiles.push_back(model::profile_kernel(*cpu, runtime::prepare(f, l.bf.sizes, {}, o.kernel_options()), f, l.bf.sizes,
                                             sweep::io_bytes(f, l.bf.sizes), device, options,
                                             name));
  }
  if (flags.format == "json") {
    fmt::print("{}\n", model::profiles_json(profiles));
    return kExitOk;
  }
  fmt::print("// {} ({})\n// sizes: {}\n", name, l.bf.path,
             sweep::sizes_str(*l.bf.def.fusion, l.bf.sizes));
  fmt::print("{}", model::format_profiles(profiles));
  return kExitOk;
}

int run_show(const FusionOptions& o, const std::string& stage, bool segments,
             const ProfileFlags& profile, const std::string& print_after) {
  if (segments) return show_segments(o);
  user_assert(print_after.empty() || stage == "kernel" || stage == "cuda" || stage == "kir")
      << "--print-after prints the kernel IR as lowering builds it; expected --stage kir, "
         "kernel or cuda with it, found --stage "
      << stage;
  if (stage == "profile") return show_profile(o, profile);
  user_assert(profile.format == "text")
      << "--format json is for --stage profile; the other stages print text";
  // The math does not depend on the schedule: no plugin is consulted for it.
  Loaded l = load(o, {}, /*segment=*/stage != "math");
  const ir::Fusion& f = *l.bf.def.fusion;
  fmt::print("// {} ({})\n", f.name(), l.bf.path);
  if (!l.bf.def.description.empty()) fmt::print("// {}\n", l.bf.def.description);
  fmt::print("// sizes: {}\n", sweep::sizes_str(*l.bf.def.fusion, l.bf.sizes));
  if (stage == "math") {
    fmt::print("{}", ir::print_math(f));
  } else if (l.segmented) {
    for (size_t i = 0; i < l.segmented->segmentation.segments.size(); ++i)
      show_segment_stage(*l.segmented, i, l.bf.sizes, o.kernel_options(), stage, print_after);
  } else if (stage == "schedule") {
    for (const auto& line : l.schedule_log) fmt::print("// {}\n", line);
    fmt::print("{}", sched::print_scheduled_fusion(f));
  } else {
    show_lowered(f, l.bf.sizes, stage, print_after, o.kernel_options());
  }
  return kExitOk;
}

struct ExecOptions {
  std::string backend = "auto";
  std::string cache_dir;
  uint64_t seed = 1;
  std::string inputs;        ///< --inputs: comma-separated .npy files, one per fusion input
  std::string save_outputs;  ///< --save-outputs: a directory for <name>.npy and <name>.ref.npy
  bool isolate = true;       ///< --isolate (default) / --no-isolate: run in a child process
  bool sanitize = false;     ///< --sanitize: run the kernels under the emulation sanitizer
  double timeout_s = 120;    ///< --timeout (0: none)
  std::vector<std::string> mutate;  ///< --mutate KIND (repeatable; docs/mutation.md)
  std::optional<double> rtol, atol;  ///< --rtol/--atol: a user tolerance (docs/validation.md)
  /// The user's tolerance when --rtol or --atol was given (the other one 0,
  /// as the sweep key `validation: {rtol, atol}`), else the error bound's.
  std::optional<ref::Tolerance> tolerance() const {
    if (!rtol && !atol) return std::nullopt;
    return ref::Tolerance::user(rtol.value_or(0), atol.value_or(0));
  }
};

/// --inputs a.npy,b.npy: one file per input of f, in order, each checked
/// against the input's dtype and its shape under `sizes`.
std::vector<ref::HostTensor> read_inputs(const std::string& list, const ir::Fusion& f,
                                         const ir::SizeBindings& sizes) {
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

/// --save-outputs DIR: each output as DIR/<name>.npy, the reference as
/// DIR/<name>.ref.npy and the reference's per-element error bound (f64, the
/// B of docs/validation.md) as DIR/<name>.bound.npy, <name> being the
/// output's name in the fusion or T<n>.
void save_outputs(const std::string& dir, const ir::Fusion& f,
                  const std::vector<ref::HostTensor>& got,
                  const std::vector<ref::HostTensor>& want) {
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
    ref::HostTensor bound{ir::DataType::F64, want[i].shape, want[i].error};
    bound.data.resize(static_cast<size_t>(want[i].numel()), 0.0);  // empty: exact
    ref::write_npy(base + ".bound.npy", bound);
    fmt::print("  saved output {} to {}.npy, {}.ref.npy and {}.bound.npy\n", i, base, base, base);
  }
}

/// --mutate: each mutation applied to a copy of the outputs `got`, which
/// validated (`v`), validated again and judged; its effect and verdict
/// printed. When `v` failed there is nothing to test: it says so. A mutation
/// that changes no output cannot be killed: a user error, after the others.
void run_mutations(const std::vector<std::string>& kinds, const ir::Fusion& plain,
                   const ir::SizeBindings& sizes, const std::vector<ref::HostTensor>& got,
                   const std::vector<ref::HostTensor>& want, const sweep::Validation& v,
                   const std::optional<ref::Tolerance>& tol) {
  std::string unchanged;  // the mutations that changed nothing
  for (const std::string& kind : kinds) {
    const sweep::Mutation m = sweep::parse_mutation(kind);
    if (!v.ok) {
      fmt::print("  mutation {} not applied: the kernel's own outputs fail validation\n", m.str());
      continue;
    }
    std::vector<ref::HostTensor> mutant = got;
    const sweep::MutationEffect e = sweep::mutate(m, mutant, want);
    for (size_t i = 0; i < e.outputs.size(); ++i)
      fmt::print("  mutation {}: output {}: {}\n", m.str(), i, e.outputs[i]);
    if (e.noop()) {
      unchanged += (unchanged.empty() ? "" : ", ") + m.str();
      continue;
    }
    fmt::print("{}\n", sweep::judge_mutant(m, sweep::validate(plain, sizes, mutant, want, tol)).line);
  }
  user_assert(unchanged.empty())
      << "--mutate " << unchanged
      << ": expected a mutation that changes some output, but every output is unchanged (see "
         "above); try another kind";
}

int run_exec_here(const FusionOptions& fo, const ExecOptions& eo) {
  auto backend = sweep::make_backend(eo.backend, eo.cache_dir);
  // A plugin schedules for the device that will run the kernel.
  std::optional<runtime::DeviceProperties> device;
  if (sweep::is_cuda(*backend)) device = runtime::cuda_device_properties();
  Loaded l = load(fo, device);
  // The reference evaluates an unscheduled copy (see sweep/pipeline.h).
  auto plain = frontend::load_fusion_file(l.bf.path);
  auto inputs = eo.inputs.empty()
                    ? ref::make_inputs(*plain.fusion, l.bf.sizes, eo.seed, plain.input_ranges)
                    : read_inputs(eo.inputs, *plain.fusion, l.bf.sizes);
  auto want = ref::evaluate(*plain.fusion, inputs, l.bf.sizes, {fo.fast_math});
  std::vector<ref::HostTensor> got;
  std::vector<runtime::SanitizerFinding> findings;
  if (l.segmented) {
    const segment::Segmentation& s = l.segmented->segmentation;
    auto kernels = sweep::compile_segments(*backend, s, l.bf.sizes, fo.kernel_options());
    got = sweep::run_segments(*backend, s, kernels, inputs, l.bf.sizes);
    if (eo.sanitize)
      sweep::run_segments(*backend, s, kernels, inputs, l.bf.sizes, &findings, eo.cache_dir);
    fmt::print("{} on {}: sizes {}, {} segment{}\n", l.bf.def.fusion->name(), backend->name(),
               sweep::sizes_str(*l.bf.def.fusion, l.bf.sizes), s.segments.size(),
               s.segments.size() == 1 ? "" : "s");
    for (size_t i = 0; i < kernels.size(); ++i) {
      const runtime::LaunchDims& dims = kernels[i].dims;
      const std::string& params = l.segmented->runs[i].params_str;
      fmt::print("  segment {} ({}{}): grid ({}, {}, {}), block ({}, {}, {}), {} B shared, "
                 "int{} index\n",
                 i, s.segments[i].scheduler, params.empty() ? "" : ": " + params, dims.grid[0],
                 dims.grid[1], dims.grid[2], dims.block[0], dims.block[1], dims.block[2],
                 dims.shared_bytes, kernels[i].prepared.source.index_bits);
    }
  } else {
    runtime::PreparedKernel p =
        runtime::prepare(*l.bf.def.fusion, l.bf.sizes, {}, fo.kernel_options());
    auto compiled = backend->compile(p.source);
    got = runtime::execute(*backend, *compiled, p, inputs, l.bf.sizes);
    if (eo.sanitize)
      findings = sweep::sanitize_kernel(*backend, p, inputs, l.bf.sizes,
                                        l.bf.def.fusion->name(), eo.cache_dir)
                     .findings;
    auto dims = runtime::launch_dims(p.kernel, l.bf.sizes);
    fmt::print(
        "{} on {}: sizes {}, grid ({}, {}, {}), block ({}, {}, {}), {} B shared, int{} index\n",
        l.bf.def.fusion->name(), backend->name(), sweep::sizes_str(*l.bf.def.fusion, l.bf.sizes),
        dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1], dims.block[2],
        dims.shared_bytes, p.source.index_bits);
  }
  for (const std::string& line : l.tuned_lines) fmt::print("  {}\n", line);
  sweep::Validation v = sweep::validate(*plain.fusion, l.bf.sizes, got, want, eo.tolerance());
  v.add_findings(findings);
  if (eo.sanitize)
    fmt::print("  sanitizer: {}\n", findings.empty()
                                         ? std::string("no findings")
                                         : fmt::format("{} finding{}", findings.size(),
                                                       findings.size() == 1 ? "" : "s"));
  for (const runtime::SanitizerFinding& f : findings) fmt::print("    {}\n", f.message());
  for (size_t i = 0; i < v.outputs.size(); ++i) {
    const sweep::OutputCheck& c = v.outputs[i];
    fmt::print("  output {} ({}): {} (max abs error {:.3g}; allowed {}; largest error/allowed "
               "{:.3g}{}){}\n",
               i, c.name, c.cmp.ok ? "ok" : "wrong_result", c.cmp.max_abs_error, c.tol.describe(),
               c.cmp.max_ratio, c.cmp.max_ratio > 0 ? " at " + c.cmp.max_ratio_at : "",
               c.cmp.ok ? ""
                        : fmt::format(", {} mismatches, first at {}", c.cmp.mismatches,
                                      c.cmp.first_mismatch));
  }
  // Named after the unscheduled fusion's outputs: the names do not depend on the schedule.
  if (!eo.save_outputs.empty()) save_outputs(eo.save_outputs, *plain.fusion, got, want);
  // Killed or survived, a mutant is no correct result: exit 1 either way
  // (a survivor means the check is too weak; its line says so).
  run_mutations(eo.mutate, *plain.fusion, l.bf.sizes, got, want, v, eo.tolerance());
  return v.ok && eo.mutate.empty() ? kExitOk : kExitFailures;
}

/// By default (--isolate) the whole of exec (plugin calls, compile, launches,
/// validation and --mutate) runs in a child process. A crash or a hang is
/// reported, naming the plugin call it happened in, and exits 1; the child's
/// user and internal errors come back as such. --no-isolate runs it here,
/// for a debugger.
int run_exec(const FusionOptions& fo, const ExecOptions& eo) {
  for (const std::string& m : eo.mutate) sweep::parse_mutation(m);  // bad kinds before any work
  if (!eo.isolate) {
    // A default time limit: an emulated kernel that never ends (a schedule
    // that loops over a huge tensor per thread) must not hang a script.
    if (eo.timeout_s > 0)
      std::thread([t = eo.timeout_s] {
        std::this_thread::sleep_for(std::chrono::duration<double>(t));
        std::fprintf(stderr, "error: exec: timed out after %g s (--timeout)\n", t);
        std::fflush(stdout);
        std::_Exit(kExitFailures);
      }).detach();
    return run_exec_here(fo, eo);
  }
  const std::chrono::milliseconds limit =
      eo.timeout_s > 0 ? std::chrono::milliseconds(static_cast<int64_t>(eo.timeout_s * 1000))
                       : std::chrono::hours(24 * 365);  // --timeout 0: none
  isolate::Outcome out = isolate::run_isolated(
      [&] {
        // The child's error frame carries a UserError's text, not its type:
        // a plugin's fault is reported here (stderr is forwarded) and comes
        // back as the exit code main() gives it.
        try {
          return std::to_string(run_exec_here(fo, eo));
        } catch (const plugin::PluginFault& e) {
          fmt::print(stderr, "{}\n", e.what());
          return std::to_string(kExitFailures);
        }
      },
      limit);
  isolate::rethrow_error(out);
  if (!out.ok()) {
    fmt::print(stderr, "error: exec: {}\n", isolate::report(out));
    return kExitFailures;
  }
  return std::stoi(out.payload);
}

}  // namespace

Command add_show_command(CLI::App& app) {
  auto o = std::make_shared<FusionOptions>();
  auto stage = std::make_shared<std::string>("math");
  auto segments = std::make_shared<bool>(false);
  auto profile = std::make_shared<ProfileFlags>();
  CLI::App* cmd = app.add_subcommand("show", "Print a fusion at a stage of the pipeline");
  o->add_to(cmd);
  cmd->add_flag("--segments", *segments,
                "Print the segmenter's choice: the segments, the plugin picked for each, and "
                "every offer with each plugin's reason for rejecting it");
  cmd->add_option("--stage", *stage,
                  "math: the fusion IR; schedule: the scheduled tensors; kernel: the lowered "
                  "kernel; cuda: the whole CUDA translation unit; kir: the kernel IR itself; "
                  "profile: the performance model's prediction for each kernel on --device "
                  "(docs/model.md)")
      ->check(CLI::IsMember({"math", "schedule", "kernel", "cuda", "kir", "profile"}));
  auto print_after = std::make_shared<std::string>();
  std::vector<std::string> passes{"all"};
  for (std::string_view p : lower::lowering_passes()) passes.emplace_back(p);
  cmd->add_option("--print-after", *print_after,
                  "Also print the kernel IR after this lowering pass, or after every pass with "
                  "`all` (as Halide logs \"Lowering after ...\"), before the --stage output")
      ->check(CLI::IsMember(passes));
  cmd->add_option("--device", profile->device,
                  "With --stage profile: a device model of configs/devices (h200, h100-sxm, "
                  "a100-80g, l40s, rtx4090) or a path to one");
  cmd->add_option("--format", profile->format, "With --stage profile: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--sample-blocks", profile->max_blocks,
                  "With --stage profile: trace at most about this many blocks of a large grid "
                  "and scale the counts (0: every block)")
      ->check(integer_in<int64_t>(0));
  return {cmd, [o, stage, segments, profile, print_after] {
            return run_show(*o, *stage, *segments, *profile, *print_after);
          }};
}

Command add_exec_command(CLI::App& app) {
  auto fo = std::make_shared<FusionOptions>();
  auto eo = std::make_shared<ExecOptions>();
  CLI::App* cmd = app.add_subcommand(
      "exec", "Lower, compile and run a (scheduled) fusion once; validate it against the reference");
  fo->add_to(cmd);
  cmd->add_option("--backend", eo->backend, "auto (CUDA when a device answers), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--cache-dir", eo->cache_dir,
                  "Compiled-kernel cache (default $SCHEDLAB_CACHE_DIR or ~/.cache/schedlab)");
  cmd->add_option("--seed", eo->seed, "Seed of the generated inputs")
      ->check(integer_in<uint64_t>(0));
  cmd->add_option("--inputs", eo->inputs,
                  "NumPy .npy files, one per fusion input in order (e.g. x.npy,w.npy), "
                  "instead of generated inputs (a bf16 input: <u2 raw bits, or <f4 rounded)");
  cmd->add_option("--save-outputs", eo->save_outputs,
                  "Directory to write each output to as <name>.npy, and the reference as "
                  "<name>.ref.npy (bf16: its raw bits as <u2, see docs/fusion-text.md)");
  cmd->add_flag("--isolate,!--no-isolate", eo->isolate,
                "Run the plugin calls, the compile and the launches in a child process (the "
                "default): a crash or hang is reported, naming the plugin call, with exit 1 "
                "instead of taking schedlab down. --no-isolate: all in this process (for a "
                "debugger)");
  cmd->add_option("--timeout", eo->timeout_s,
                  "Seconds exec may take (default 120; 0: no limit). Past it exec stops with "
                  "exit 1 (isolated: the child is killed)")
      ->check(finite_number(0, /*inclusive=*/true));
  cmd->add_flag("--sanitize", eo->sanitize,
                "Also run the kernels under the emulation sanitizer (CPU backend): races, "
                "out-of-bounds and uninitialised accesses, divergent barriers; any finding "
                "is printed and exits 1 (docs/sanitizer.md)");
  cmd->add_option("--mutate", eo->mutate,
                  "Make the outputs wrong after the launch, before validation, to test the "
                  "validation itself: zero, scale:F, one:R, swap or nan (repeatable or "
                  "comma-separated: each on its own copy; docs/mutation.md). Exits 1 either "
                  "way: 'wrong_result under mutation ...' when a mutant is killed, 'mutation "
                  "... survived validation' when it is not")
      ->delimiter(',');
  cmd->add_option("--rtol", eo->rtol,
                  "Relative tolerance: validate with |got - want| <= atol + rtol x |want| instead "
                  "of the reference's error bounds (docs/validation.md; --atol alone: rtol 0)")
      ->check(finite_number(0, /*inclusive=*/true));
  cmd->add_option("--atol", eo->atol,
                  "Absolute tolerance, with --rtol (alone: rtol 0) instead of the error bounds")
      ->check(finite_number(0, /*inclusive=*/true));
  return {cmd, [fo, eo] { return run_exec(*fo, *eo); }};
}

}  // namespace schedlab::cli
