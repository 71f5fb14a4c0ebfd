// The Python module's enumerations (docs/python.md, "Enums"): each value
// under schedlab's name (the schedule scripts' and the printers') and under
// nvFuser's Python name, both naming the same value.
#pragma once

#include <pybind11/pybind11.h>

#include <variant>

#include "schedlab/ir/ir.h"

namespace schedlab::python {

/// nvFuser's ParallelType holds both hardware bindings and loop transforms;
/// schedlab keeps them apart (ir::ParallelType, ir::LoopTransform). The
/// Python ParallelType is the union, as nvFuser spells it.
enum class PyParallelType {
  Serial, DIDx, BIDx, BIDy, BIDz, TIDx, TIDy, TIDz,
  Vectorize, Unroll, Unswitch, Bulk,
};

/// What `tv->parallelize` takes for a Python ParallelType.
std::variant<ir::ParallelType, ir::LoopTransform> binding(PyParallelType t);
/// The Python ParallelType of a hardware binding.
PyParallelType py_parallel_type(ir::ParallelType t);

/// Defines DataType, ParallelType, LoopTransform, MemoryType,
/// LoadStoreOpType and CacheOp in `m`.
void bind_enums(pybind11::module_& m);

}  // namespace schedlab::python
