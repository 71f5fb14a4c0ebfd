// The embedded interpreter as the `python` plugin uses it: started lazily
// (at bind, never when the unbound plugin is loaded), shared by every copy of
// python.so in the process and never finalized; the GIL taken around each
// call; and the module schedlab_heuristic (schedlab_heuristic.py), found
// beside this file or, in a copy that has none beside it, from the text this
// build embedded.
#pragma once

#include <Python.h>

#include <string>

#include <pybind11/pybind11.h>

namespace schedlab::python_plugin {

/// Starts the interpreter unless it runs already (the `schedlab` Python
/// module's process), leaving the GIL released; keeps this copy of python.so
/// mapped from then on, since Python objects will point into its code, and
/// makes libpython's symbols global so that the stdlib's extension modules
/// load. Throws plugin_api::Error(SCHEDLAB_ERR_INTERNAL) when it cannot.
void ensure_interpreter();

/// Holds the GIL for one call from the host (PyGILState: any thread, and a
/// forked isolate worker, whose parent released it).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

/// The module schedlab_heuristic, imported once per process. Needs the GIL.
pybind11::module_ heuristic_module();

}  // namespace schedlab::python_plugin
