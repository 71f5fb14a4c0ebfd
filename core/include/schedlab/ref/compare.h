// Validation of a kernel's outputs against the reference evaluator.
#pragma once

#include <optional>
#include <string>

#include "schedlab/ref/evaluator.h"

namespace schedlab::ref {

/// |got - want| <= atol + rtol * |want| elementwise; NaN matches only NaN.
struct Tolerance {
  double rtol = 0.0;  ///< relative part
  double atol = 0.0;  ///< absolute part
};

/// The default for a dtype: exact for integers and bool; for floats about a
/// hundred ulps of the storage type relative, to absorb reduction order.
Tolerance default_tolerance(ir::DataType t);

/// Outcome of one comparison.
struct Comparison {
  bool ok = true;
  double max_abs_error = 0.0;  ///< largest |got - want|
  int64_t mismatches = 0;      ///< elements outside the tolerance
  std::string first_mismatch;  ///< "element 12 [1, 4]: got 0.5, expected 0.25" when !ok
};

/// Compares shapes, then values.
Comparison compare(const HostTensor& got, const HostTensor& want, Tolerance tol);

}  // namespace schedlab::ref
