// Validation of a kernel's outputs against the reference evaluator.
//
// The default criterion (docs/validation.md): element i of an output matches
// when
//     |got - want| <= C * bound[i] + floor(dtype)
// with bound[i] the reference's forward error bound for the kernel's own
// precision (HostTensor::error, evaluator.h), C = kBoundFactor and floor the
// output dtype's smallest normal (error_floor). Nothing in it is a constant
// that could exceed the values: an output of 1e-5 is checked to about 1e-5
// times its relative bound. A tolerance the user writes (a sweep's
// `validation: {rtol, atol}`) replaces it: |got - want| <= atol + rtol |want|
// is then the whole tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "schedlab/ref/evaluator.h"

namespace schedlab::ref {

/// C in the default criterion: a correct kernel lies within the reference's
/// error bound; twice it absorbs what the bound does not model (a kernel
/// that divides as a multiplication by the reciprocal rounds twice where the
/// reference's op rounds once, docs/validation.md).
inline constexpr double kBoundFactor = 2.0;

/// The floor of the default criterion for an output of dtype t: its smallest
/// normal for f64, f32 and bf16 (a kernel that flushes a subnormal result to
/// zero is right), the smallest subnormal 2^-24 for f16 (f16 stores subnormals
/// with gradual underflow; its smallest normal, 6.1e-5, exceeds a softmax
/// probability of a 16k-wide row), 0 for integers and bool (exact).
double error_floor(ir::DataType t);

/// How outputs are compared with the reference.
class Tolerance {
 public:
  enum class Mode {
    ErrorBound,  ///< |got - want| <= factor * error[i] + floor (the default)
    User,        ///< |got - want| <= atol + rtol * |want|, nothing else
  };
  /// The default criterion for an output of dtype t (kBoundFactor, error_floor(t)).
  static Tolerance error_bound(ir::DataType t);
  /// The criterion with an explicit factor and floor.
  static Tolerance error_bound(double factor, double floor);
  /// A tolerance the user wrote: the whole tolerance.
  static Tolerance user(double rtol, double atol);
  /// Error-bound mode, factor kBoundFactor, floor 0.
  Tolerance() = default;

  Mode mode() const { return mode_; }
  bool is_user() const { return mode_ == Mode::User; }
  double rtol() const { return rtol_; }      ///< User mode; 0 otherwise
  double atol() const { return atol_; }      ///< User mode; 0 otherwise
  double factor() const { return factor_; }  ///< ErrorBound mode: C
  double floor() const { return floor_; }    ///< ErrorBound mode

  /// The largest |got - want| accepted at an element whose reference value is
  /// `want` and error bound `bound`.
  double allowed(double want, double bound) const;
  /// "2 x error bound + 1.18e-38" or "rtol 1e-05, atol 1e-06".
  std::string describe() const;

 private:
  Mode mode_ = Mode::ErrorBound;
  double factor_ = kBoundFactor, floor_ = 0.0;
  double rtol_ = 0.0, atol_ = 0.0;
};

/// Outcome of one comparison. NaN matches only NaN; an infinity only the
/// same infinity (a reference value beyond the dtype's range matches the
/// infinity a kernel stores).
struct Comparison {
  bool ok = true;
  double max_abs_error = 0.0;  ///< largest |got - want|
  int64_t mismatches = 0;      ///< elements outside the tolerance
  /// "element 12 [1, 4]: got 0.5, expected 0.25, allowed 3.1e-08 (2 x error
  /// bound 1.5e-08)" when !ok.
  std::string first_mismatch;
  /// The largest |got - want| / allowed over the finite elements (1: at the
  /// limit; above 1: a mismatch); 0 when every error is 0, infinity for an
  /// error where nothing is allowed.
  double max_ratio = 0.0;
  /// Where max_ratio is: "element 3 [0, 3]: error 1e-09, allowed 2e-08
  /// (2 x error bound 1e-08)"; empty when max_ratio is 0.
  std::string max_ratio_at;
};

/// Compares shapes, then values.
Comparison compare(const HostTensor& got, const HostTensor& want, const Tolerance& tol);

}  // namespace schedlab::ref
