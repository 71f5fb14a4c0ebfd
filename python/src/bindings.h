// The parts of the Python module (module.cpp puts them together): each
// bind_* adds one concern's functions and methods to the classes that
// module.cpp declares, so that every class has one definition.
#pragma once

#include <pybind11/pybind11.h>

#include "definition.h"

namespace schedlab::python {

namespace py = pybind11;

using DefinitionClass = py::class_<Definition, DefinitionPtr>;
using TensorClass = py::class_<Tensor>;
using AxisClass = py::class_<Axis>;
using ScalarClass = py::class_<ScalarHandle>;

/// FusionDefinition (the `with` block, define_tensor, add_output, fusion
/// printing), load_fusion, the handles' printing (definition.cpp).
void bind_definition(py::module_& m, DefinitionClass& fd, TensorClass& tv, AxisClass& axis,
                     ScalarClass& scalar);
/// fd.ops and the TensorView operators (ops.cpp).
void bind_ops(py::module_& m, DefinitionClass& fd, TensorClass& tv, ScalarClass& scalar);
/// The scheduling primitives as TensorView/IterDomain methods, and the
/// `schedule` submodule (schedule.cpp).
void bind_schedule(py::module_& m, TensorClass& tv, AxisClass& axis);
/// schedule.can_schedule, find_compatible_schedulers, compute_heuristics,
/// schedule and HeuristicParams on `schedule`, the submodule bind_schedule
/// made (plugins.cpp, heuristic_params.cpp).
void bind_plugins(py::module_& schedule);
/// manual_execute, execute, validate, manual_validate, print_kernel and
/// print_kernel_ir through core/point (execute.cpp).
void bind_execute(py::module_& m, DefinitionClass& fd);

}  // namespace schedlab::python
