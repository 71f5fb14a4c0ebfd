// schedlab/plugin_api/params.hpp: a plugin's parameter schema (Param), the
// values of one call (Params, with the tuned configuration the host offers)
// and can_schedule's answer (Verdict). Part of the C++ wrapper
// (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

/// One parameter of a plugin's schema.
struct Param {
  int32_t kind = SCHEDLAB_PARAM_INT;  ///< SchedlabParamKind
  std::string name;                   ///< identifier, unique in the schema
  std::string doc;                    ///< one line
  int64_t int_default = 0, int_min = 0, int_max = 0;
  double float_default = 0, float_min = 0, float_max = 0;
  std::vector<std::string> choices;
  std::string string_default;  ///< STRING (ABI 1.1)

  static Param integer(std::string name, int64_t def, int64_t min, int64_t max, std::string doc);
  static Param real(std::string name, double def, double min, double max, std::string doc);
  static Param boolean(std::string name, bool def, std::string doc);
  static Param choice(std::string name, std::vector<std::string> choices, const std::string& def,
                      std::string doc);
  /// Free text (ABI 1.1: a host of ABI 1.0 refuses to load the plugin).
  static Param string(std::string name, std::string def, std::string doc);
};

/// The values of one call, looked up by name. compute_params writes them.
class Params {
 public:
  /// `strings`: the STRING values, one per schema entry ("" for the others).
  Params(const std::vector<Param>* schema, std::vector<SchedlabParamValue> values,
         std::vector<std::string> strings = {})
      : schema_(schema), values_(std::move(values)), strings_(std::move(strings)) {
    strings_.resize(values_.size());
  }
  int64_t integer(const std::string& name) const { return at(name, SCHEDLAB_PARAM_INT).int_value; }
  double real(const std::string& name) const { return at(name, SCHEDLAB_PARAM_FLOAT).float_value; }
  bool boolean(const std::string& name) const;
  std::string choice(const std::string& name) const;
  std::string string(const std::string& name) const;
  void set_integer(const std::string& name, int64_t v);
  void set_real(const std::string& name, double v);
  void set_boolean(const std::string& name, bool v);
  void set_choice(const std::string& name, const std::string& v);
  void set_string(const std::string& name, const std::string& v);
  /// The C values; a STRING entry's string_value is not set here (see strings()).
  const std::vector<SchedlabParamValue>& values() const { return values_; }
  const std::vector<std::string>& strings() const { return strings_; }

  /// ABI 1.4, in compute_params: whether the host offers a tuned
  /// configuration for this segment (`run --tuned`, docs/tuning.md).
  bool has_tuned() const { return !tuned_.empty(); }
  /// Where it comes from ("tuned.yaml:12: softmax N=any K=[4096, 8191]"), or "".
  const std::string& tuned_source() const { return tuned_source_; }
  /// Takes the tuned configuration, every value, and returns true; returns
  /// false and changes nothing when there is none. A heuristic that serves
  /// tuned configurations starts compute_params with
  /// `if (p.use_tuned()) return;`.
  bool use_tuned();
  /// Sets the offer (detail::read_params does, from the host's values).
  void offer_tuned(std::vector<SchedlabParamValue> values, std::vector<std::string> strings,
                   std::string source);

 private:
  size_t index(const std::string& name, int32_t kind) const;
  const SchedlabParamValue& at(const std::string& name, int32_t kind) const;
  const std::vector<Param>* schema_;
  std::vector<SchedlabParamValue> values_;
  std::vector<std::string> strings_;
  std::vector<SchedlabParamValue> tuned_;  ///< empty: no offer
  std::vector<std::string> tuned_strings_;
  std::string tuned_source_;
};

/// can_schedule's answer.
struct Verdict {
  bool accepted = true;
  std::string reason;  ///< why not, when !accepted
  static Verdict yes() { return {}; }
  static Verdict no(std::string why) { return {false, std::move(why)}; }
};

}  // namespace schedlab::plugin_api

#ifndef SCHEDLAB_PLUGIN_API_SEPARATE
#include "schedlab/plugin_api/params_impl.hpp"
#else
// The vectors of API types a plugin passes and receives, instantiated once
// in plugin_api_impl (plugin-api/src/plugin_api.cpp): a quick plugin build
// (watch) does not compile them again.
extern template class std::vector<schedlab::plugin_api::Param>;
#endif
