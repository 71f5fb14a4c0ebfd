// schedlab/plugin_api/registration_impl.hpp: the entry point's machinery
// behind SCHEDLAB_PLUGIN (registration.hpp): the plugin's state, its
// last_error, the conversion of parameter values both ways, and the three
// calls the host makes. Included by registration.hpp in a header-only build;
// compiled once into schedlab::plugin_api_impl (plugin-api/src/plugin_api.cpp)
// for plugins built with SCHEDLAB_PLUGIN_API_SEPARATE.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api::detail {

/// Everything the plugin hands the host, kept alive until unload.
struct State {
  std::unique_ptr<Plugin> plugin;
  std::string name, version, description;
  std::vector<Param> schema;
  std::vector<std::vector<const char*>> choice_ptrs;
  std::vector<SchedlabParamDesc> descs;
};
SCHEDLAB_PLUGIN_API_INLINE State& state() {
  static State s;
  return s;
}

/// The plugin's last_error. A plain char array: a thread_local with a
/// destructor would pin the library in memory (glibc refuses to dlclose a
/// library with live TLS destructors), and hot reload must unload it.
SCHEDLAB_PLUGIN_API_INLINE char* error_buffer() {
  thread_local char buffer[4096];
  return buffer;
}
SCHEDLAB_PLUGIN_API_INLINE const char* last_error() {
  return error_buffer();
}
SCHEDLAB_PLUGIN_API_INLINE int32_t fail(int32_t status, const char* message) {
  std::strncpy(error_buffer(), message, 4095);
  error_buffer()[4095] = '\0';
  return status;
}

/// Runs f, turning every exception into a status and the plugin's last_error.
template <typename F>
int32_t guard(F&& f) noexcept {
  try {
    f();
    return SCHEDLAB_OK;
  } catch (const Error& e) {
    return fail(e.status() < 0 ? e.status() : SCHEDLAB_ERR_PLUGIN, e.what());
  } catch (const std::exception& e) {
    return fail(SCHEDLAB_ERR_PLUGIN, e.what());
  } catch (...) {
    return fail(SCHEDLAB_ERR_PLUGIN, "unknown exception");
  }
}

/// Copies `count` host values (stride first->struct_size) into our layout;
/// STRING values into `strings`, since the host's pointers die with the call.
SCHEDLAB_PLUGIN_API_INLINE void copy_values(const SchedlabParamValue* first, size_t count,
                                            std::vector<SchedlabParamValue>& values,
                                            std::vector<std::string>& strings) {
  const State& s = state();
  values.assign(count, SchedlabParamValue{});
  strings.assign(count, std::string());
  if (count == 0) return;
  size_t stride = first->struct_size;
  const char* base = reinterpret_cast<const char*>(first);
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(&values[i], base + i * stride, std::min(stride, sizeof values[i]));
    values[i].struct_size = sizeof values[i];
    if (s.schema[i].kind == SCHEDLAB_PARAM_STRING && values[i].string_value != nullptr)
      strings[i] = values[i].string_value;
    values[i].string_value = nullptr;
  }
}

/// Reads the host's values (stride values[0].struct_size) into our layout,
/// and the tuned configuration it offers (ABI 1.4) when its struct has one.
SCHEDLAB_PLUGIN_API_INLINE Params read_params(const SchedlabParamSet* set) {
  const State& s = state();
  if (set == nullptr || set->count != s.schema.size())
    throw Error(SCHEDLAB_ERR_INVALID_ARGUMENT,
                "expected " + std::to_string(s.schema.size()) + " parameter values, got " +
                    std::to_string(set == nullptr ? 0u : set->count));
  std::vector<SchedlabParamValue> values;
  std::vector<std::string> strings;
  copy_values(set->values, set->count, values, strings);
  Params p(&s.schema, std::move(values), std::move(strings));
  if (set->struct_size >= offsetof(SchedlabParamSet, tuned_source) + sizeof(const char*) &&
      set->tuned != nullptr) {
    std::vector<SchedlabParamValue> tuned;
    std::vector<std::string> tuned_strings;
    copy_values(set->tuned, set->count, tuned, tuned_strings);
    p.offer_tuned(std::move(tuned), std::move(tuned_strings),
                  set->tuned_source != nullptr ? set->tuned_source : "");
  }
  return p;
}

/// A copy of v that lives until the plugin is unloaded: every STRING value
/// compute_params hands the host, which the ABI wants valid past the call. A
/// thread_local would pin the library (see error_buffer), and a plugin
/// chooses few distinct strings.
SCHEDLAB_PLUGIN_API_INLINE const char* intern(const std::string& v) {
  static std::mutex mutex;
  static std::set<std::string> interned;
  std::lock_guard<std::mutex> lock(mutex);
  return interned.insert(v).first->c_str();
}

SCHEDLAB_PLUGIN_API_INLINE void write_params(const Params& p, SchedlabParamSet* set) {
  if (set->count == 0) return;
  size_t stride = set->values[0].struct_size;
  char* base = reinterpret_cast<char*>(set->values);
  for (size_t i = 0; i < set->count; ++i) {
    SchedlabParamValue v = p.values()[i];
    v.struct_size = static_cast<uint32_t>(stride);
    if (state().schema[i].kind == SCHEDLAB_PARAM_STRING) v.string_value = intern(p.strings()[i]);
    std::memcpy(base + i * stride, &v, std::min(stride, sizeof v));
  }
}

SCHEDLAB_PLUGIN_API_INLINE int32_t can_schedule(SchedlabSegment* seg,
                                                const SchedlabParamSet* params, int32_t* accepted,
                                                char* reason, uint32_t reason_size) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    Verdict v = state().plugin->can_schedule(s, p);
    *accepted = v.accepted ? 1 : 0;
    if (reason != nullptr && reason_size > 0) {
      size_t n = std::min<size_t>(v.reason.size(), reason_size - 1);
      std::memcpy(reason, v.reason.data(), n);
      reason[n] = '\0';
    }
  });
}

SCHEDLAB_PLUGIN_API_INLINE int32_t compute_params(SchedlabSegment* seg, SchedlabParamSet* params) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    state().plugin->compute_params(s, p);
    write_params(p, params);
  });
}

SCHEDLAB_PLUGIN_API_INLINE int32_t schedule(SchedlabSegment* seg, const SchedlabParamSet* params) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    state().plugin->schedule(s, p);
  });
}

SCHEDLAB_PLUGIN_API_INLINE int32_t register_plugin(const SchedlabHostApi* host,
                                                   SchedlabPluginInfo* info,
                                                   PluginFactory make) noexcept {
  if (host == nullptr || info == nullptr) return SCHEDLAB_ERR_INVALID_ARGUMENT;
  if (info->struct_size < offsetof(SchedlabPluginInfo, can_schedule)) return SCHEDLAB_ERR_VERSION;
  // These two go first, so that the host can name both versions, or read
  // why the entry failed, whatever happens next.
  info->abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  info->last_error = &detail::last_error;
  return guard([&] {
    bind_host(host);
    State& s = state();
    s = State{};
    s.plugin.reset(make());
    s.name = s.plugin->name();
    s.version = s.plugin->version();
    s.description = s.plugin->description();
    s.schema = s.plugin->params();
    s.choice_ptrs.resize(s.schema.size());
    for (size_t i = 0; i < s.schema.size(); ++i) {
      const Param& p = s.schema[i];
      for (const std::string& c : p.choices) s.choice_ptrs[i].push_back(c.c_str());
      SchedlabParamDesc d{};
      d.struct_size = sizeof d;
      d.kind = p.kind;
      d.name = p.name.c_str();
      d.doc = p.doc.c_str();
      d.int_default = p.int_default;
      d.int_min = p.int_min;
      d.int_max = p.int_max;
      d.float_default = p.float_default;
      d.float_min = p.float_min;
      d.float_max = p.float_max;
      d.choices = s.choice_ptrs[i].empty() ? nullptr : s.choice_ptrs[i].data();
      d.choice_count = static_cast<uint32_t>(p.choices.size());
      d.string_default = p.string_default.c_str();
      s.descs.push_back(d);
    }
    SchedlabPluginInfo mine{};
    mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
    mine.name = s.name.c_str();
    mine.version = s.version.c_str();
    mine.description = s.description.c_str();
    mine.params = s.descs.empty() ? nullptr : s.descs.data();
    mine.param_count = static_cast<uint32_t>(s.descs.size());
    mine.last_error = &detail::last_error;
    mine.can_schedule = &detail::can_schedule;
    mine.compute_params = &detail::compute_params;
    mine.schedule = &detail::schedule;
    mine.priority = s.plugin->priority();
    // The host zero-filled *info; write only what both of us know.
    uint32_t n = std::min<uint32_t>(info->struct_size, sizeof mine);
    mine.struct_size = n;
    std::memcpy(info, &mine, n);
  });
}

}  // namespace schedlab::plugin_api::detail
