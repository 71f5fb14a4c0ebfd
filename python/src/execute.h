// What the running functions (execute.cpp) share with the plugin queries
// (plugins.cpp): NumPy inputs as host tensors and the sizes they bind, and
// the process's plugins.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "definition.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/kernel.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::python {

/// A run's inputs, converted, and the named sizes their shapes bind.
struct HostInputs {
  std::vector<ref::HostTensor> tensors;
  ir::SizeBindings sizes;
};
/// `values` (NumPy arrays, or what np.asarray takes) as the inputs of
/// `plain`: each of its input's dtype and rank, the sizes agreeing; errors
/// name the input, its tensor and axis, for `what` (the Python call).
HostInputs host_inputs(const ir::Fusion& plain, const pybind11::sequence& values, const char* what);

/// The backend for `kind` (auto|cpu|cuda), made once per process and kept
/// for the interpreter's life (execute.cpp).
runtime::Backend& process_backend(const std::string& kind);

/// The registry of the plugin search path (data_dirs.h), made once and kept
/// for the interpreter's life (plugins.cpp).
plugin::Registry& process_registry();

/// A dict of plugin parameters as --set's "key=value" settings (plugins.cpp).
std::vector<std::string> settings_of(const pybind11::dict& params);

/// The plugins the segmenter offers segments to (every built-in and
/// $SCHEDLAB_PLUGIN_PATH plugin that volunteers), loaded once.
const std::vector<std::shared_ptr<const plugin::Plugin>>& segmenter_plugins();

}  // namespace schedlab::python
