// Where the Python module finds the built-in plugins and the standard
// configs: relative to the module itself when it is installed
// (P/lib/python3.X/site-packages/schedlab -> P/lib/schedlab/plugins and
// P/share/schedlab/configs), else the build tree's (base::install_paths.h:
// the interpreter is no executable of the prefix, so core's lookup by the
// executable's directory finds the build tree).
#pragma once

#include <string>
#include <vector>

namespace schedlab::python {

/// The plugin search path: $SCHEDLAB_PLUGIN_PATH and the built-ins (installed:
/// the prefix's, first; else the build tree's, last).
std::vector<std::string> plugin_dirs();
/// Fusion directories: $SCHEDLAB_FUSION_PATH, then configs/fusions.
std::vector<std::string> fusion_dirs();
/// Device models: $SCHEDLAB_DEVICE_PATH, then configs/devices.
std::vector<std::string> device_dirs();

}  // namespace schedlab::python
