// The host's record of one mapped plugin library, and the helpers that
// loading it (loader.cpp) and calling into it (host.cpp) share. Internal to
// core/plugin.
#pragma once

#include <boost/dll/shared_library.hpp>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>

#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"

namespace schedlab::plugin {

/// The mapping and the plugin's function table. The library is unloaded
/// when this is destroyed, so nothing may call through `info` after that.
struct Plugin::Library {
  boost::dll::shared_library lib;
  SchedlabPluginInfo info{};
  /// A private file of this mapping alone (a Python heuristic's copy of
  /// python.so in the temp directory), removed once unmapped.
  std::string remove_after_unload;
  ~Library() {
    lib.unload();
    if (remove_after_unload.empty()) return;
    std::error_code ec;
    std::filesystem::remove(remove_after_unload, ec);
  }
};

/// "1.5" for an ABI version.
inline std::string version_str(uint32_t v) {
  return std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v)) + "." +
         std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v));
}

/// One call into the plugin. An exception that crosses the C ABI (a plugin
/// that fills SchedlabPluginInfo itself and lets one escape; SCHEDLAB_PLUGIN
/// turns them into statuses) is the plugin's fault: a PluginFault naming the
/// call and the exception, never std::terminate or "a bug in schedlab".
/// Host errors never arrive here: host_api.cpp turns them into statuses.
template <typename Call>
auto guarded(const std::string& plugin, const char* what, Call&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    throw PluginFault("plugin '" + plugin + "' " + what +
                      " let a C++ exception escape through the C ABI (" + e.what() +
                      "); expected a status (SCHEDLAB_PLUGIN converts exceptions)");
  } catch (...) {
    throw PluginFault("plugin '" + plugin + "' " + what +
                      " let a C++ exception of a non-standard type escape through the C ABI; "
                      "expected a status (SCHEDLAB_PLUGIN converts exceptions)");
  }
}

inline  /// Whether `status` is one plugin.h defines.
    bool
    known_status(int32_t status) {
  return status <= SCHEDLAB_OK && status >= SCHEDLAB_ERR_UNSUPPORTED;
}

}  // namespace schedlab::plugin
