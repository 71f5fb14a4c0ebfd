// schedlab/base: where the built-in plugins and the standard configs are, for
// a build tree and for an installed, relocatable prefix.
//
// Owns: the lookup of data directories relative to the running executable.
// May depend on: nothing in schedlab.
// Invariants: an installed tree is recognised by its layout alone
// (<bindir>/../lib/schedlab/plugins and <bindir>/../share/schedlab/configs,
// relative paths fixed at configure time), so a prefix can be moved or copied
// anywhere; anything else (the build tree, a test binary) gets the absolute
// build-tree paths compiled in.
#pragma once

#include <string>

namespace schedlab::base {

/// The directory of the running executable ("" when /proc/self/exe cannot be read).
std::string executable_dir();

/// The built-in plugins: the installed prefix's lib/schedlab/plugins when the
/// executable runs from an installed prefix, else the build tree's plugins/.
std::string builtin_plugin_dir();

/// The standard configs (fusions, devices, schedules, sweeps): the installed
/// prefix's share/schedlab/configs, else the source tree's configs/.
std::string config_dir();

}  // namespace schedlab::base
