// The check every built-in plugin suite makes of a (fusion, sizes,
// settings): the plugin accepts it, schedules it with its own choice
// overridden by the settings, the kernel matches the reference on a backend
// (with `schedlab exec`'s reduction-aware tolerance, sweep::validate), and
// NVRTC compiles its CUDA source for sm_90.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/plugin/host.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::test_support {

/// `load` returns a fresh definition of the fusion (called twice: one copy is
/// scheduled, the other is the reference's). Returns the parameters used
/// ("block=128, vector=4"), or "" after a test failure when rejected.
template <typename Load>
std::string schedule_and_validate(const plugin::Plugin& p, Load&& load,
                                  const ir::SizeBindings& sizes,
                                  const std::vector<std::string>& settings,
                                  runtime::Backend& backend, const std::string& nvrtc_cache) {
  frontend::FusionDefinition def = load();
  plugin::HostSegment seg;
  seg.fusion = def.fusion.get();
  seg.sizes = frontend::bind_sizes(def, sizes);
  const std::string at = def.fusion->name() + " at " + sweep::sizes_str(seg.sizes);
  // Asked with the settings, as the host asks (`--set`): a forced setting
  // may take what the plugin's own choice refuses.
  plugin::Verdict v = p.can_schedule(seg, p.with_settings(p.defaults(), settings));
  EXPECT_TRUE(v.accepted) << at << ": " << v.reason;
  if (!v.accepted) return "";
  plugin::ParamValues params = p.with_settings(p.compute_params(seg), settings);
  p.schedule(seg, params);
  const std::string what = at + " with " + p.format(params);

  frontend::FusionDefinition plain = load();
  auto inputs = ref::make_inputs(*plain.fusion, seg.sizes, 7, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, seg.sizes);
  auto prepared = runtime::prepare(*def.fusion, seg.sizes);
  auto compiled = backend.compile(prepared.source);
  auto got = runtime::execute(backend, *compiled, prepared, inputs, seg.sizes);
  sweep::Validation check = sweep::validate(*plain.fusion, seg.sizes, got, want);
  EXPECT_TRUE(check.ok) << what << ": " << check.summary();
  std::string log;
  std::string image = runtime::nvrtc_compile(prepared.source, "sm_90", &log, nvrtc_cache);
  EXPECT_FALSE(image.empty()) << what << ": " << log;
  return p.format(params);
}

}  // namespace schedlab::test_support
