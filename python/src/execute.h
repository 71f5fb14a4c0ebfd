// What the running functions (execute.cpp) share with the plugin queries
// (plugins.cpp): NumPy inputs as host tensors and the sizes they bind, and
// the process's plugins.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "definition.h"
#include "schedlab/plugin/host.h"
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

/// The plugins the segmenter offers segments to (every built-in and
/// $SCHEDLAB_PLUGIN_PATH plugin that volunteers), loaded once.
const std::vector<std::shared_ptr<const plugin::Plugin>>& segmenter_plugins();

}  // namespace schedlab::python
