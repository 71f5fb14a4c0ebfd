// Helpers for the sweep suites: fake plugin schemas, so that the loader's
// checks are tested without building plugins (configs_test.cpp uses the real
// ones), and loading sweep text with them.
#pragma once

#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/sweep/spec/spec.h"
#include "test_support.h"

namespace schedlab::sweep::testing_util {

inline plugin::ParamDesc int_param(const std::string& name, int64_t def, int64_t lo, int64_t hi) {
  plugin::ParamDesc d;
  d.name = name;
  d.kind = plugin::ParamKind::Int;
  d.int_default = def;
  d.int_min = lo;
  d.int_max = hi;
  return d;
}

inline plugin::ParamDesc choice_param(const std::string& name, std::vector<std::string> choices) {
  plugin::ParamDesc d;
  d.name = name;
  d.kind = plugin::ParamKind::Choice;
  d.choices = std::move(choices);
  return d;
}

inline plugin::ParamDesc float_param(const std::string& name, double lo, double hi) {
  plugin::ParamDesc d;
  d.name = name;
  d.kind = plugin::ParamKind::Float;
  d.float_min = lo;
  d.float_max = hi;
  d.float_default = lo;
  return d;
}

inline plugin::ParamDesc bool_param(const std::string& name) {
  plugin::ParamDesc d;
  d.name = name;
  d.kind = plugin::ParamKind::Bool;
  return d;
}

/// Fake schemas: `pointwise` mirrors the real plugin's (block, vector as
/// choices "1".."8", unroll); `normalization` has one parameter of each kind;
/// `script` stands in for the script plugin.
inline PluginSchema fake_plugin(const std::string& name) {
  if (name == "pointwise")
    return {name,
            {int_param("block", 128, 32, 1024), choice_param("vector", {"1", "2", "4", "8"}),
             int_param("unroll", 1, 1, 16)},
            "",
            ""};
  if (name == "normalization")
    return {name,
            {int_param("persist", 4, 1, 16), int_param("block", 128, 32, 1024),
             choice_param("order", {"inner", "outer"}), float_param("eps_scale", 0.0, 2.0),
             bool_param("welford")},
            "",
            ""};
  if (name == "script") return {name, {}, "", ""};
  user_error << "unknown plugin '" << name << "' (fakes: normalization, pointwise, script)";
  return {};
}

inline LoadOptions fake_options() {
  return {{test_support::config_fusion_dir()},
          {std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules"},
          fake_plugin};
}

/// A sweep from text; `path` anchors relative paths (tests/sweep by default).
inline SweepSpec load_text(const std::string& text, const std::string& path = SCHEDLAB_SOURCE_DIR
                                                    "/tests/sweep/inline.yaml") {
  return parse_sweep_text(text, path, fake_options());
}

}  // namespace schedlab::sweep::testing_util
