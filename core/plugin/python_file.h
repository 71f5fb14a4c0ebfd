// A Python heuristic file as a plugin: the host's half of the contract with
// the built-in `python` plugin (plugins/python; docs/plugins.md "Python
// heuristic files", docs/python.md "Python heuristics"). Internal to
// core/plugin; load_plugin calls it for a path ending in .py.
//
// One file is one plugin. Its text is snapshotted into the registry's shadow
// (so a save never changes a loaded generation: watch's A/B twin and rollback
// run the old text), with the user's path in <snapshot>.origin beside it (so
// an isolated worker that loads the snapshot in place still names the user's
// file). Each load maps its own copy of python.so: the C ABI's callbacks carry
// no instance pointer, so a copy's static state is the heuristic it serves.
// schedlab_python_bind tells that copy which file it serves before its entry
// point runs.
#pragma once

#include <boost/dll/shared_library.hpp>
#include <string>

namespace schedlab::plugin {

/// The files of one load of a Python heuristic.
struct PythonLoad {
  std::string display;        ///< the user's file: what errors and Plugin::path() name
  std::string snapshot;       ///< the text python.so reads (Plugin::loaded_path())
  std::string host;           ///< this load's private copy of python.so, to map
  bool host_is_temp = false;  ///< `host` lies in the temp directory, not beside a snapshot
};

/// Prepares loading `path`. With a `shadow`: copies the text there (a
/// ".py" name: Registry::next_shadow; another name gets ".py" appended) and
/// writes <snapshot>.origin. Without: `path` is loaded in place, and when
/// <path>.origin exists it is a snapshot whose user file that names. Then
/// copies the built-in python.so (base::builtin_plugin_dir) to a fresh file
/// beside the snapshot (<snapshot>.host.so, .host.2.so, ... when taken), or
/// in the temp directory for a user's file loaded in place. user_error when
/// python.so is not built, or a copy fails.
PythonLoad prepare_python_load(const std::string& path, const std::string& shadow);

/// Binds the mapped copy of python.so to its file (schedlab_python_bind),
/// before its entry point runs. The heuristic's own load error (a
/// SyntaxError, a bad PARAMS) is a user error naming the file and line; a
/// copy without the bind symbol is a user error too (not python.so).
void bind_python(const boost::dll::shared_library& lib, const PythonLoad& load);

/// Removes what prepare_python_load wrote beside `snapshot`: its .origin and
/// the python.so copies (mapped ones stay mapped; the files go). For the
/// owner of a snapshot when it releases it.
void remove_python_snapshot_files(const std::string& snapshot);

}  // namespace schedlab::plugin
