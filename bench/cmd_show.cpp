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
#include "schedlab/lower/communication.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/model/collective.h"
#include "schedlab/point/sharded.h"
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
std::string segment_header(const point::Point& p, size_t i) {
  const segment::Segmentation& s = p.segmented()->segmentation;
  return fmt::format("// segment {} of {}: {} {}\n", i, s.segments.size(), s.segments[i].scheduler,
                     segment::group_str(s.segments[i].exprs));
}

/// The schedule of the point (of each segment, under its header).
std::string show_schedule(const point::Point& p) {
  std::string out;
  if (!p.segmented()) {
    for (const auto& line : p.result().schedule_log) out += fmt::format("// {}\n", line);
    return out + sched::print_scheduled_fusion(*p.fusion().def.fusion);
  }
  for (size_t i = 0; i < p.segmented()->segmentation.segments.size(); ++i) {
    out += segment_header(p, i);
    out += fmt::format("// {}\n", p.result().runs[i].log_line);
    out += sched::print_scheduled_fusion(p.kernel_fusion(i));
  }
  return out;
}

/// A lowered stage (kernel, cuda or kir) of each kernel of the point, after
/// the kernel IR of each pass `print_after` names ("all", a pass of
/// lower::lowering_passes, or "" for none): the Lower stage, observed.
/// Printed as it is made (a lowering error comes after what was made
/// before it), or, with `into`, appended there.
void show_lowered(point::Point& p, const std::string& stage, const std::string& print_after,
                  std::string* into = nullptr) {
  auto put = [into](const std::string& text) {
    if (into)
      *into += text;
    else
      fmt::print("{}", text);
  };
  if (!print_after.empty())
    p.options().passes = [&](std::string_view pass, const kir::Kernel& k) {
      if (print_after == "all" || print_after == pass)
        put(fmt::format("// kernel IR after {}\n{}", pass, kir::print_kir(k)));
    };
  p.options().observer = [&](const point::Event& e, const point::Point& pt) {
    if (e.stage != point::Stage::Lower || e.kernel == point::Event::kWhole) return true;
    if (e.begin) {
      if (pt.segmented()) put(segment_header(pt, e.kernel));
      return true;
    }
    const runtime::PreparedKernel& k = pt.result().kernels.at(e.kernel).prepared;
    if (!print_after.empty()) put(fmt::format("// {}\n", stage == "kir" ? "kernel IR" : stage));
    put(stage == "cuda"  ? k.source.source
        : stage == "kir" ? kir::print_kir(k.kernel)
                         : codegen::print_kernel(k.kernel));
    return true;
  };
  p.run(point::Stage::Lower, point::Stage::Lower);
  p.options().passes = {};
  p.options().observer = {};
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

/// `show --mesh N`: the communication plan for a mesh of N devices (no
/// ranks are started: the plan is the same on every one), each local step's
/// `stage` under its line, the step scheduled and lowered as show does a
/// one-device fusion.
int show_mesh(const FusionOptions& o, int n, const std::string& stage, const ProfileFlags& flags,
              const std::string& print_after) {
  user_assert(flags.format == "text")
      << "--format json with --mesh: the plan is text; drop one of them";
  point::Options po;
  std::optional<model::DeviceModel> device;
  std::unique_ptr<runtime::Backend> cpu;
  if (stage == "profile") {
    device = model::load_device(flags.device, device_dirs());
    cpu = sweep::make_backend("cpu");
    po.device = model::device_properties(*device);
    po.profile_device = &*device;
    po.profile.max_blocks = flags.max_blocks;
    po.profile_backend = cpu.get();
  }
  Loaded l = load(o, nullptr, po, /*segment=*/stage != "math");
  const sweep::BoundFusion& bf = l.point.fusion();
  const ir::Fusion& f = *bf.def.fusion;
  const lower::ShardedPlan plan =
      lower::plan_communication(f, bf.sizes, ir::DeviceMesh::of_size(n));
  fmt::print("// {} ({})\n", f.name(), bf.path);
  if (!bf.def.description.empty()) fmt::print("// {}\n", bf.def.description);
  fmt::print("// sizes: {}\n", sweep::sizes_str(f, bf.sizes));
  // The steps are printed once the whole plan is: print_plan asks for each
  // step's text while it builds its own.
  auto step_text = [&](size_t step) -> std::string {
    point::StepRun run =
        point::make_step_point(plan, step, l.point.scheduler(), nullptr, po, bf.path);
    point::Point& p = *run.point;
    if (stage == "math") return ir::print_math(*p.fusion().def.fusion);
    p.run(point::Stage::Schedule, point::Stage::Schedule);
    require_scheduled(p);
    if (stage == "schedule") return show_schedule(p);
    if (stage == "profile") {
      p.run(point::Stage::Lower, point::Stage::Lower);
      p.run(point::Stage::Profile, point::Stage::Profile);
      return model::format_profiles(p.result().profiles);
    }
    std::string text;
    show_lowered(p, stage, print_after, &text);
    return text;
  };
  fmt::print("{}", lower::print_plan(plan, step_text));
  if (stage != "profile") return kExitOk;
  // The communications' predicted times (docs/multi-device.md, "The model").
  fmt::print("// communications on {} ({}, {} GB/s per direction, {} us per ring step):\n",
             device->name, device->interconnect.link, device->interconnect.bandwidth_gbs,
             device->interconnect.latency_us);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const auto* c = std::get_if<lower::Communication>(&plan.steps[i]);
    if (!c) continue;
    const double us = model::collective_us(*device, *c, n);
    fmt::print("step {}: {}: predicted {:.3g} us\n", i, c->str(plan.values), us);
  }
  fmt::print("comm {:.3g} us predicted\n", model::communication_us(*device, plan));
  return kExitOk;
}

int run_show(const FusionOptions& o, const std::string& stage, bool segments,
             const ProfileFlags& profile, const std::string& print_after, int mesh) {
  user_assert(!segments || mesh == 0)
      << "--segments shows one fusion's segments; with --mesh, --stage schedule shows each "
         "local step's";
  if (segments) return show_segments(o);
  user_assert(print_after.empty() || stage == "kernel" || stage == "cuda" || stage == "kir")
      << "--print-after prints the kernel IR as lowering builds it; expected --stage kir, "
         "kernel or cuda with it, found --stage "
      << stage;
  if (mesh > 0) return show_mesh(o, mesh, stage, profile, print_after);
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
    fmt::print("{}", show_schedule(p));
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
  auto mesh = std::make_shared<int>(0);
  cmd->add_option("--mesh", *mesh,
                  "Plan the fusion for a mesh of N devices (docs/multi-device.md): the "
                  "communication plan, and each local step at --stage under it (starts no ranks)")
      ->check(integer_in<int>(1));
  return {cmd, [o, stage, segments, profile, print_after, mesh] {
            return run_show(*o, *stage, *segments, *profile, *print_after, *mesh);
          }};
}

}  // namespace schedlab::cli
