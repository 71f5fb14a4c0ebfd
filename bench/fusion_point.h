// What `show` (cmd_show.cpp) and `exec` (cmd_exec.cpp) share: the fusion, its
// sizes and its schedule as flags, parsed into a core/point Point (a bound
// fusion and a typed scheduler reference: --plugin, --schedule,
// --unscheduled, or by default the segmenter). The spellings stay here, at
// the edge; the stages are core/point's.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "schedlab/point/point.h"
#include "schedlab/sweep/tuned/tuned.h"

namespace schedlab::cli {

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
  std::string math = "default";          ///< --math default|native (half ops)
  std::string tuned;                     ///< --tuned: a tuned file offered to the plugins

  runtime::KernelOptions kernel_options() const {
    return {dynamic_sizes, fast_math, !no_divisibility, math == "native"};
  }

  /// Neither a plugin, a schedule script nor --unscheduled: the segmenter
  /// picks a plugin for each segment (docs/segments.md).
  bool segmented() const { return plugin.empty() && schedule.empty() && !unscheduled; }

  void add_to(CLI::App* cmd);
};

/// A point made from the flags, not run yet, and the tuned file it offers
/// (kept at a fixed address: the segmenter's reference points to it).
struct Loaded {
  std::unique_ptr<sweep::TunedFile> tuned;
  point::Point point;
};

/// The plugins the segmenter may pick (--schedulers, or every one found);
/// files that fail to load are reported and skipped.
std::vector<std::shared_ptr<const plugin::Plugin>> segmenter_plugins(const FusionOptions& o);

/// Binds the fusion, checks the flags' combinations, and makes the point on
/// `backend` (null: the point is scheduled and lowered only) with `options`
/// (its device, kernel options and the rest; kernel options are the flags').
/// `segment`: in segmented mode, load the segmenter's plugins (not needed
/// to print the math).
Loaded load(const FusionOptions& o, runtime::Backend* backend, point::Options options = {},
            bool segment = true);

/// A user error when the point's plugin declined the fusion.
void require_scheduled(const point::Point& p);

}  // namespace schedlab::cli
