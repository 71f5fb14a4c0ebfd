// Arrays in and out of a run (docs/python.md, "Arrays in and out"): NumPy
// arrays, DLPack producers and anything np.asarray takes, converted to host
// tensors of a fusion input's dtype; host tensors back as NumPy arrays.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>

#include "schedlab/ir/ir.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::python {

/// `value` as input `i` of the run `what` (for fusion input `in`): its
/// dtype and rank checked, its values those in's dtype holds. A bf16 input
/// takes raw bits (uint16, V2, a DLPack bf16 tensor) or float32/float64
/// values rounded to nearest even; an f16 input float16 or wider floats,
/// rounded; every other dtype its own. A DLPack tensor on a device is
/// refused. Errors name the input and its tensor. With exact_dtype false
/// (reference outputs) any numeric dtype is taken.
ref::HostTensor to_host(const pybind11::handle& value, const ir::TensorView* in, size_t i,
                        const char* what, bool exact_dtype = true);

/// `t` as a NumPy array of its dtype (bf16: float32 holding its values).
pybind11::array to_numpy(const ref::HostTensor& t);

}  // namespace schedlab::python
