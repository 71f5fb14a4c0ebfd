// Validation of a kernel's outputs against the reference evaluator.
#pragma once

#include <optional>
#include <string>

#include "schedlab/ref/evaluator.h"

namespace schedlab::ref {

/// |got - want| <= atol + rtol * |want| elementwise; NaN matches only NaN.
/// With error_bound, an element within twice the reference's own forward
/// error bound (HostTensor::error, evaluator.h) matches too: an
/// ill-conditioned result (a sum that cancels, then a sqrt) is not wrong.
struct Tolerance {
  double rtol = 0.0;  ///< relative part
  double atol = 0.0;  ///< absolute part
  bool error_bound = true;  ///< also accept within 2 * want.error[i]
};

/// The default for a dtype: exact for integers and bool; for floats about a
/// hundred ulps of the storage type relative, to absorb reduction order.
Tolerance default_tolerance(ir::DataType t);

/// The tolerance for an output computed by reductions over up to
/// `reduced_count` elements: the dtype's default plus the classic bound on
/// recursive summation error, (count) * u * mean|x| with u the unit roundoff
/// and |x| taken as 1 (generated inputs lie in [-1, 1] unless a range says
/// otherwise), as an absolute term. Reduction order differs between the
/// reference (sequential, in double) and any schedule.
/// A product's rounding error is relative and grows with its length: over
/// `product_count` factors (1: no product) rtol grows by (count) * u too.
Tolerance reduction_tolerance(ir::DataType t, int64_t reduced_count, int64_t product_count = 1);
/// The largest number of elements any reduction of f combines under `sizes`
/// (1 when f has no reduction).
int64_t max_reduced_count(const ir::Fusion& f, const ir::SizeBindings& sizes);
/// The same over the product (prod) reductions of f only.
int64_t max_product_count(const ir::Fusion& f, const ir::SizeBindings& sizes);

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
