// schedlab/plugin_api/registration.hpp: Plugin, the base class of a C++
// plugin, and SCHEDLAB_PLUGIN(Class), which defines the one exported entry
// point: it negotiates the ABI, hands the host the plugin's name, priority
// and schema, and turns every exception into a status and last_error at the
// boundary. Part of the C++ wrapper (schedlab/plugin.hpp includes every part).
//
// Header-only by default: the entry point's machinery (registration_impl.hpp)
// is compiled into every plugin. A plugin built with
// SCHEDLAB_PLUGIN_API_SEPARATE defined links it precompiled instead, from the
// schedlab::plugin_api_impl library (plugin-api/src/plugin_api.cpp), and
// compiles in a fraction of the time: schedlab_add_plugin does so for the
// built-in plugins, `schedlab watch` rebuilds a plugin so (docs/plugins.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

/// Base class of a C++ plugin. One instance lives from the entry call until
/// the library is unloaded; the host may call it from several threads.
class Plugin {
 public:
  virtual ~Plugin() = default;
  /// Registry key: an identifier unique among loaded plugins.
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::string description() const = 0;
  /// ABI 1.6: the segmenter offers a segment to higher priorities first
  /// (SchedlabPluginInfo.priority); negative: never (SCHEDLAB_PRIORITY_NEVER_OFFERED).
  virtual int priority() const { return SCHEDLAB_PRIORITY_DEFAULT; }
  virtual std::vector<Param> params() const { return {}; }
  virtual Verdict can_schedule(Segment&, const Params&) { return Verdict::yes(); }
  /// The heuristic's own choice; `params` arrives with the defaults.
  virtual void compute_params(Segment&, Params&) {}
  virtual void schedule(Segment& seg, const Params& params) = 0;
};

namespace detail {

/// Makes the plugin's one instance (SCHEDLAB_PLUGIN's class).
using PluginFactory = Plugin* (*)();
template <typename C>
Plugin* make_plugin() {
  return new C();
}

/// The body of schedlab_plugin_entry: builds the plugin with `make`, keeps
/// it and what it declares until unload, and fills `info` for the host.
int32_t register_plugin(const SchedlabHostApi* host, SchedlabPluginInfo* info,
                        PluginFactory make) noexcept;

/// schedlab_plugin_entry for plugin class C.
template <typename C>
int32_t entry(const SchedlabHostApi* host, SchedlabPluginInfo* info) noexcept {
  return register_plugin(host, info, &make_plugin<C>);
}

}  // namespace detail
}  // namespace schedlab::plugin_api

#ifndef SCHEDLAB_PLUGIN_API_SEPARATE
#include "schedlab/plugin_api/registration_impl.hpp"
#endif

/// Defines the plugin's one exported symbol for plugin class Class (a
/// default-constructible schedlab::plugin_api::Plugin). Use once per library.
#define SCHEDLAB_PLUGIN(Class)                                                                 \
  extern "C" SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi* host, \
                                                                  SchedlabPluginInfo* info) {  \
    return ::schedlab::plugin_api::detail::entry<Class>(host, info);                           \
  }
