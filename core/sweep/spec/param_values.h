// Sweep values checked against what a scheduler accepts: a plugin's
// parameter schema, or a schedule script's placeholders (integers). Private
// to core/sweep/spec.
//
// Needs: the sweep's YamlReader for positions. Guarantees: every Value
// returned is in the parameter's domain (range, choices, kind), every
// dimension is non-empty, without repeats and at most kMaxGridPoints long;
// otherwise a UserError at the offending node naming the scheduler, the
// parameter, what was expected and what was found.
#pragma once

#include <string>
#include <vector>

#include "../../base/yaml_reader.h"
#include "schedlab/plugin/host.h"
#include "schedlab/sweep/spec/constraint.h"
#include "schedlab/sweep/spec/space.h"

namespace schedlab::sweep {

/// One parameter a scheduler accepts.
struct ParamInfo {
  std::string name;
  ValueType type = ValueType::Int;          ///< its type in constraints
  const plugin::ParamDesc* desc = nullptr;  ///< null for a script placeholder
};

class ValueReader {
 public:
  static ValueReader for_plugin(const YamlReader& r, std::string scheduler,
                                const std::string& plugin,
                                const std::vector<plugin::ParamDesc>& schema);
  static ValueReader for_script(const YamlReader& r, std::string scheduler,
                                const std::string& script,
                                const std::vector<std::string>& placeholders);

  /// The parameter a `space:` or `set:` key names; user_error at the key if none.
  const ParamInfo& param(const YAML::Node& key) const;
  /// One value, as in `set: {block: 128}`.
  Value scalar(const YAML::Node& n, const ParamInfo& p) const;
  /// A space dimension: a list, or a range {from, to, step} / {from, to, pow2: true}.
  std::vector<Value> dimension(const YAML::Node& n, const ParamInfo& p) const;

 private:
  ValueReader(const YamlReader& r, std::string scheduler)
      : r_(r), scheduler_(std::move(scheduler)) {}
  std::vector<Value> range(const YAML::Node& n, const ParamInfo& p) const;
  /// "scheduler 'x': block: " for messages.
  std::string prefix(const std::string& param) const;

  const YamlReader& r_;
  std::string scheduler_;
  std::string owner_;  ///< "plugin 'pointwise'" or "script 'softmax_block.sched'"
  std::string what_;   ///< "parameter" or "placeholder"
  std::vector<ParamInfo> params_;
};

}  // namespace schedlab::sweep
