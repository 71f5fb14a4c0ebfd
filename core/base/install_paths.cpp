// Data directories for a build tree or an installed prefix (install_paths.h).
#include "schedlab/base/install_paths.h"

#include <filesystem>
#include <system_error>

// Absolute build-tree paths, and the installed paths relative to the
// installed bin/ (core/CMakeLists.txt).
#ifndef SCHEDLAB_BUILTIN_PLUGIN_DIR
#define SCHEDLAB_BUILTIN_PLUGIN_DIR ""
#endif
#ifndef SCHEDLAB_SOURCE_CONFIG_DIR
#define SCHEDLAB_SOURCE_CONFIG_DIR ""
#endif
#ifndef SCHEDLAB_INSTALLED_PLUGIN_DIR
#define SCHEDLAB_INSTALLED_PLUGIN_DIR "../lib/schedlab/plugins"
#endif
#ifndef SCHEDLAB_INSTALLED_CONFIG_DIR
#define SCHEDLAB_INSTALLED_CONFIG_DIR "../share/schedlab/configs"
#endif

namespace schedlab::base {

namespace fs = std::filesystem;

namespace {

/// `relative` under the executable's directory when it is a directory there
/// (an installed prefix), else `build_tree`.
std::string installed_or(const char* relative, const char* build_tree) {
  const std::string exe = executable_dir();
  if (!exe.empty()) {
    std::error_code ec;
    fs::path p = (fs::path(exe) / relative).lexically_normal();
    if (fs::is_directory(p, ec)) return p.string();
  }
  return build_tree;
}

}  // namespace

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string builtin_plugin_dir() {
  return installed_or(SCHEDLAB_INSTALLED_PLUGIN_DIR, SCHEDLAB_BUILTIN_PLUGIN_DIR);
}

std::string config_dir() {
  return installed_or(SCHEDLAB_INSTALLED_CONFIG_DIR, SCHEDLAB_SOURCE_CONFIG_DIR);
}

}  // namespace schedlab::base
