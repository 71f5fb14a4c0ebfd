// schedlab/plugin_api/params_impl.hpp: the out-of-line members of
// params.hpp. Included by it in a header-only build; compiled once into
// schedlab::plugin_api_impl (plugin-api/src/plugin_api.cpp) for plugins built
// with SCHEDLAB_PLUGIN_API_SEPARATE (registration.hpp says more).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/params.hpp"

namespace schedlab::plugin_api {

SCHEDLAB_PLUGIN_API_INLINE Param Param::integer(std::string name, int64_t def, int64_t min,
                                                int64_t max, std::string doc) {
  Param p;
  p.kind = SCHEDLAB_PARAM_INT;
  p.name = std::move(name);
  p.doc = std::move(doc);
  p.int_default = def;
  p.int_min = min;
  p.int_max = max;
  return p;
}

SCHEDLAB_PLUGIN_API_INLINE Param Param::real(std::string name, double def, double min, double max,
                                             std::string doc) {
  Param p;
  p.kind = SCHEDLAB_PARAM_FLOAT;
  p.name = std::move(name);
  p.doc = std::move(doc);
  p.float_default = def;
  p.float_min = min;
  p.float_max = max;
  return p;
}

SCHEDLAB_PLUGIN_API_INLINE Param Param::boolean(std::string name, bool def, std::string doc) {
  Param p;
  p.kind = SCHEDLAB_PARAM_BOOL;
  p.name = std::move(name);
  p.doc = std::move(doc);
  p.int_default = def ? 1 : 0;
  p.int_max = 1;
  return p;
}

SCHEDLAB_PLUGIN_API_INLINE Param Param::string(std::string name, std::string def, std::string doc) {
  Param p;
  p.kind = SCHEDLAB_PARAM_STRING;
  p.name = std::move(name);
  p.doc = std::move(doc);
  p.string_default = std::move(def);
  return p;
}

SCHEDLAB_PLUGIN_API_INLINE bool Params::boolean(const std::string& name) const {
  return at(name, SCHEDLAB_PARAM_BOOL).int_value != 0;
}

SCHEDLAB_PLUGIN_API_INLINE std::string Params::choice(const std::string& name) const {
  size_t i = index(name, SCHEDLAB_PARAM_CHOICE);
  return (*schema_)[i].choices.at(static_cast<size_t>(values_[i].int_value));
}

SCHEDLAB_PLUGIN_API_INLINE std::string Params::string(const std::string& name) const {
  return strings_[index(name, SCHEDLAB_PARAM_STRING)];
}

SCHEDLAB_PLUGIN_API_INLINE void Params::set_integer(const std::string& name, int64_t v) {
  values_[index(name, SCHEDLAB_PARAM_INT)].int_value = v;
}

SCHEDLAB_PLUGIN_API_INLINE void Params::set_real(const std::string& name, double v) {
  values_[index(name, SCHEDLAB_PARAM_FLOAT)].float_value = v;
}

SCHEDLAB_PLUGIN_API_INLINE void Params::set_boolean(const std::string& name, bool v) {
  values_[index(name, SCHEDLAB_PARAM_BOOL)].int_value = v ? 1 : 0;
}

SCHEDLAB_PLUGIN_API_INLINE void Params::set_choice(const std::string& name, const std::string& v) {
  size_t i = index(name, SCHEDLAB_PARAM_CHOICE);
  const auto& cs = (*schema_)[i].choices;
  auto it = std::find(cs.begin(), cs.end(), v);
  if (it == cs.end())
    throw Error(SCHEDLAB_ERR_PLUGIN, "parameter '" + name + "' has no choice '" + v + "'");
  values_[i].int_value = static_cast<int64_t>(it - cs.begin());
}

SCHEDLAB_PLUGIN_API_INLINE void Params::set_string(const std::string& name, const std::string& v) {
  strings_[index(name, SCHEDLAB_PARAM_STRING)] = v;
}

SCHEDLAB_PLUGIN_API_INLINE bool Params::use_tuned() {
  if (tuned_.empty()) return false;
  values_ = tuned_;
  strings_ = tuned_strings_;
  return true;
}

SCHEDLAB_PLUGIN_API_INLINE size_t Params::index(const std::string& name, int32_t kind) const {
  for (size_t i = 0; i < schema_->size(); ++i) {
    if ((*schema_)[i].name != name) continue;
    if ((*schema_)[i].kind != kind)
      throw Error(SCHEDLAB_ERR_PLUGIN, "parameter '" + name + "' is read as the wrong kind");
    return i;
  }
  throw Error(SCHEDLAB_ERR_PLUGIN, "no parameter named '" + name + "' in the schema");
}

SCHEDLAB_PLUGIN_API_INLINE const SchedlabParamValue& Params::at(const std::string& name,
                                                                int32_t kind) const {
  return values_[index(name, kind)];
}

SCHEDLAB_PLUGIN_API_INLINE Param Param::choice(std::string name, std::vector<std::string> choices,
                                               const std::string& def, std::string doc) {
  Param p;
  p.kind = SCHEDLAB_PARAM_CHOICE;
  p.name = std::move(name);
  p.doc = std::move(doc);
  p.choices = std::move(choices);
  auto it = std::find(p.choices.begin(), p.choices.end(), def);
  p.int_default =
      static_cast<int64_t>(it - p.choices.begin());  // past the end: the host rejects it
  return p;
}

SCHEDLAB_PLUGIN_API_INLINE void Params::offer_tuned(std::vector<SchedlabParamValue> values,
                                                    std::vector<std::string> strings,
                                                    std::string source) {
  tuned_ = std::move(values);
  tuned_strings_ = std::move(strings);
  tuned_strings_.resize(tuned_.size());
  tuned_source_ = std::move(source);
}

}  // namespace schedlab::plugin_api
