// The bridge: the host's entries (SchedlabHostApi, through the plugin API's
// Segment and TensorView) as Python functions over opaque handles, which
// schedlab_heuristic's Segment and TensorView call. One table per copy of
// python.so: its functions reach the host table this copy was bound to.
// A call the host refuses raises schedlab_heuristic.ScheduleError with the
// host's message and status.
#pragma once

#include <pybind11/pybind11.h>

namespace schedlab::python_plugin {

/// The table, as a types.SimpleNamespace of functions. Needs the GIL.
pybind11::object make_bridge();

}  // namespace schedlab::python_plugin
