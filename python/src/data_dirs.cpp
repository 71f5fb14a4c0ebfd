// Data directories of the Python module (data_dirs.h).
#include "data_dirs.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "schedlab/base/install_paths.h"
#include "schedlab/plugin/registry.h"

// The installed plugin and config directories relative to the installed
// package directory (python/CMakeLists.txt).
#ifndef SCHEDLAB_PY_INSTALLED_PLUGIN_DIR
#define SCHEDLAB_PY_INSTALLED_PLUGIN_DIR "../../../schedlab/plugins"
#endif
#ifndef SCHEDLAB_PY_INSTALLED_CONFIG_DIR
#define SCHEDLAB_PY_INSTALLED_CONFIG_DIR "../../../../share/schedlab/configs"
#endif

namespace schedlab::python {

namespace fs = std::filesystem;

namespace {

/// The directory of this extension module's file.
fs::path module_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_dir), &info) == 0 || info.dli_fname == nullptr)
    return {};
  return fs::path(info.dli_fname).parent_path();
}

/// `relative` under the module's directory when it is a directory there (an
/// installed package), else `build_tree`.
std::string installed_or(const char* relative, const std::string& build_tree) {
  std::error_code ec;
  const fs::path p = (module_dir() / relative).lexically_normal();
  return fs::is_directory(p, ec) ? p.string() : build_tree;
}

/// The directories of $`variable` (colon-separated), then configs/<sub>.
std::vector<std::string> config_dirs(const char* variable, const char* sub) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(variable)) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  dirs.push_back(installed_or(SCHEDLAB_PY_INSTALLED_CONFIG_DIR, base::config_dir()) + "/" + sub);
  return dirs;
}

}  // namespace

std::vector<std::string> plugin_dirs() {
  const std::string installed = installed_or(SCHEDLAB_PY_INSTALLED_PLUGIN_DIR, "");
  if (installed.empty()) return plugin::plugin_search_path();
  // Installed: the prefix's plugins, then $SCHEDLAB_PLUGIN_PATH; not core's
  // built-in directory, which for an interpreter outside the prefix is the
  // build tree's (the same plugins again, or none).
  std::vector<std::string> dirs = plugin::plugin_search_path({installed});
  if (dirs.back() == plugin::builtin_plugin_dir()) dirs.pop_back();
  return dirs;
}

std::vector<std::string> fusion_dirs() { return config_dirs("SCHEDLAB_FUSION_PATH", "fusions"); }

std::vector<std::string> device_dirs() { return config_dirs("SCHEDLAB_DEVICE_PATH", "devices"); }

}  // namespace schedlab::python
