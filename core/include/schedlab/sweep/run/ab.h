// schedlab/sweep/ab: A/B runs, two builds of one plugin in one sweep
// (docs/sweeps.md, "A/B runs"). The old build is loaded beside the current one and
// every scheduler that uses the plugin gets a twin, "<name>@old", for which
// the old build stands in (RunOptions::plugin_swaps). Both are points of the
// same (fusion, sizes) groups, so they are timed in the same interleaved
// rounds and their ratio is a paired estimate (report/ab.h judges it).
// May depend on: sweep (spec, runner), plugin (host).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "schedlab/plugin/host.h"
#include "schedlab/sweep/spec/spec.h"

namespace schedlab::sweep {

/// What an A/B twin's display name ends with.
inline constexpr const char* kAbOldSuffix = "@old";

/// A sweep extended with A/B twins.
struct AbPlan {
  SweepSpec spec;  ///< the sweep, each affected scheduler followed by its twin
  /// Twin display name -> the old build (RunOptions::plugin_swaps).
  std::map<std::string, std::shared_ptr<const plugin::Plugin>> swaps;
};

/// Adds a twin after every scheduler of `spec` whose plugin is named like
/// `old` (plugin_name_of gives the name a scheduler of kind Plugin or Script
/// resolves to), and after every `auto` scheduler (which may pick it). A
/// user error when no scheduler can use it, naming the plugins the sweep uses.
AbPlan plan_ab(const SweepSpec& spec, std::shared_ptr<const plugin::Plugin> old,
               const std::function<std::string(const SchedulerSpec&)>& plugin_name_of);

}  // namespace schedlab::sweep
