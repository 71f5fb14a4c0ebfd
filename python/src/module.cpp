// The `schedlab` Python module (docs/python.md): nvFuser's Python spelling
// (nvfuser_direct) over schedlab's IR, scheduling primitives and the
// one pipeline for a point (core/point). Nothing here schedules, lowers or
// runs on its own: every primitive is the C++ function the schedule scripts
// call, and every run is a point::Point.
#include <pybind11/stl.h>

#include "bench.h"
#include "bindings.h"
#include "enums.h"
#include "errors.h"

PYBIND11_MODULE(_schedlab, m) {
  namespace py = pybind11;
  namespace sp = schedlab::python;
  m.doc() = "schedlab: fusions and user schedules in nvFuser's Python spelling (docs/python.md)";
  sp::bind_errors(m);
  sp::bind_enums(m);
  sp::DefinitionClass fd(m, "FusionDefinition",
                         "A fusion and its schedule: define it in a `with` block, schedule its "
                         "tensors, run it");
  sp::TensorClass tv(m, "TensorView", "A tensor of a FusionDefinition");
  sp::AxisClass axis(m, "IterDomain", "A loop axis of a tensor: tv.axis(i)");
  sp::ScalarClass scalar(m, "Scalar", "A scalar value of a FusionDefinition");
  sp::bind_definition(m, fd, tv, axis, scalar);
  sp::bind_ops(m, fd, tv, scalar);
  sp::bind_schedule(m, tv, axis);
  py::module_ schedule = m.attr("schedule");
  sp::bind_plugins(schedule);
  sp::bind_execute(m, fd);
  sp::bind_bench(m);
}
