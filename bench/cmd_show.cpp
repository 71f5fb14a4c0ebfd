// `schedlab show`: one fusion, its sizes and its schedule (bench/fusion_point.h)
// shown at a stage of the pipeline: the math, the schedule, the lowered
// kernel, the CUDA, the kernel IR, or each kernel's profile on a device
// model. The stages are core/point's; this file prints them.
#include <fmt/core.h>

#include <cstdio>

#include "cli_checks.h"
#include "command.h"
#include "fusion_point.h"
#include "schedlab/base/error.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/ir/printer.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/sched/debug_print.h"
#include "schedlab/segment/segment.h"

namespace schedlab::cli {

namespace {

/// `show --segments`: the segmenter's log and segments; exit 2 when a part
/// is left that no plugin accepts (after printing why).
int show_segments(const FusionOptions& o) {
  user_assert(o.segmented()) << "--segments shows the segmenter's choice; it cannot be combined "
                                "with --plugin, --schedule or --unscheduled";
  Loaded l = load(o, nullptr, {}, /*segment=*/false);
  const sweep::BoundFusion& bf = l.point.fusion();
  const ir::Fusion& f = *bf.def.fusion;
  fmt::print("// {} ({})\n", f.name(), bf.path);
  fmt::print("// sizes: {}\n", sweep::sizes_str(f, bf.sizes));
  segment::Segmentation s =
      segment::segment(f, bf.sizes, sweep::plugin_schedulers(segmenter_plugins(o), {}));
  fmt::print("{}", segment::print_segmentation(s));
  std::fflush(stdout);
  segment::require_complete(s);
  return kExitOk;
}

/// "// segment 1 of 2: reduction {T3, T4}": a segment's header line.
void print_segment_header(const point::Point& p, size_t i) {
  const segment::Segmentation& s = p.segmented()->segmentation;
  fmt::print("// segment {} of {}: {} {}\n", i, s.segments.size(), s.segments[i].scheduler,
             segment::group_str(s.segments[i].exprs));
}

/// The schedule of the point (of each segment, under its header).
void show_schedule(const point::Point& p) {
  if (!p.segmented()) {
    for (const auto& line : p.result().schedule_log) fmt::print("// {}\n", line);
    fmt::print("{}", sched::print_scheduled_fusion(*p.fusion().def.fusion));
    return;
  }
  for (size_t i = 0; i < p.segmented()->segmentation.segments.size(); ++i) {
    print_segment_header(p, i);
    fmt::print("// {}\n", p.result().runs[i].log_line);
    fmt::print("{}", sched::print_scheduled_fusion(p.kernel_fusion(i)));
  }
}

/// A lowered stage (kernel, cuda or kir) of each kernel of the point, after
/// the kernel IR of each pass `print_after` names ("all", a pass of
/// lower::lowering_passes, or "" for none): the Lower stage, observed.
void show_lowered(point::Point& p, const std::string& stage, const std::string& print_after) {
  if (!print_after.empty())
    p.options().passes = [&](std::string_view pass, const kir::Kernel& k) {
      if (print_after == "all" || print_after == pass)
        fmt::print("// kernel IR after {}\n{}", pass, kir::print_kir(k));
    };
  p.options().observer = [&](const point::Event& e, const point::Point& pt) {
    if (e.stage != point::Stage::Lower || e.kernel == point::Event::kWhole) return true;
    if (e.begin) {
      if (pt.segmented()) print_segment_header(pt, e.kernel);
      return true;
    }
    const runtime::PreparedKernel& k = pt.result().kernels.at(e.kernel).prepared;
    if (!print_after.empty()) fmt::print("// {}\n", stage == "kir" ? "kernel IR" : stage);
    fmt::print("{}", stage == "cuda"  ? k.source.source
                     : stage == "kir" ? kir::print_kir(k.kernel)
                                      : codegen::print_kernel(k.kernel));
    return true;
  };
  p.run(point::Stage::Lower, point::Stage::Lower);
}

/// `show --stage profile`: each kernel's profile on a device model
/// (docs/model.md), as text or JSON. The plugins schedule for that device.
struct ProfileFlags {
  std::string device = model::kDefaultDevice;               ///< --device
  std::string format = "text";                              ///< --format
  int64_t max_blocks = model::ProfileOptions{}.max_blocks;  ///< --sample-blocks
};

int show_profile(const FusionOptions& o, const ProfileFlags& flags) {
  const model::DeviceModel device = model::load_device(flags.device, device_dirs());
  auto cpu = sweep::make_backend("cpu");
  point::Options po;
  po.device = model::device_properties(device);
  po.profile_device = &device;
  po.profile.max_blocks = flags.max_blocks;
  po.profile_backend = cpu.get();
  Loaded l = load(o, nullptr, po);
  point::Point& p = l.point;
  p.run(point::Stage::Schedule, point::Stage::Lower);
  require_scheduled(p);
  p.run(point::Stage::Profile, point::Stage::Profile);
  if (flags.format == "json") {
    fmt::print("{}\n", model::profiles_json(p.result().profiles));
    return kExitOk;
  }
  const sweep::BoundFusion& bf = p.fusion();
  fmt::print("// {} ({})\n// sizes: {}\n", bf.def.fusion->name(), bf.path,
             sweep::sizes_str(*bf.def.fusion, bf.sizes));
  fmt::print("{}", model::format_profiles(p.result().profiles));
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
  const bool segment = stage != "math";
  Loaded l = load(o, nullptr, {}, segment);
  point::Point& p = l.point;
  if (segment || !o.segmented()) {
    p.run(point::Stage::Schedule, point::Stage::Schedule);
    require_scheduled(p);
  }
  const sweep::BoundFusion& bf = p.fusion();
  const ir::Fusion& f = *bf.def.fusion;
  fmt::print("// {} ({})\n", f.name(), bf.path);
  if (!bf.def.description.empty()) fmt::print("// {}\n", bf.def.description);
  fmt::print("// sizes: {}\n", sweep::sizes_str(f, bf.sizes));
  if (stage == "math") {
    fmt::print("{}", ir::print_math(f));
  } else if (stage == "schedule") {
    show_schedule(p);
  } else {
    show_lowered(p, stage, print_after);
  }
  return kExitOk;
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

}  // namespace schedlab::cli
