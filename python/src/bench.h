// The pytest fixture's C++ side (python/schedlab/testing.py; docs/python.md,
// "pytest: schedlab.testing"): one FusionDefinition at one scheduler,
// validated and timed as `schedlab run` validates and times a sweep point,
// its record appended to a results file that `schedlab compare` and
// `schedlab report` read.
#pragma once

#include <pybind11/pybind11.h>

namespace schedlab::python {

/// schedlab._schedlab.bench_point and ResultsFile (bench.cpp).
void bind_bench(pybind11::module_& m);

}  // namespace schedlab::python
