#include "schedlab/ref/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "schedlab/ir/op_semantics.h"

namespace schedlab::ref {

double error_floor(ir::DataType t) {
  switch (t) {
    case ir::DataType::F64: return 0x1p-1022;
    case ir::DataType::F32:
    case ir::DataType::BF16: return 0x1p-126;
    case ir::DataType::F16: return 0x1p-24;
    default: return 0.0;
  }
}

Tolerance Tolerance::error_bound(ir::DataType t) {
  return error_bound(kBoundFactor, error_floor(t));
}

Tolerance Tolerance::error_bound(double factor, double floor) {
  Tolerance tol;
  tol.mode_ = Mode::ErrorBound;
  tol.factor_ = factor;
  tol.floor_ = floor;
  return tol;
}

Tolerance Tolerance::user(double rtol, double atol) {
  Tolerance tol;
  tol.mode_ = Mode::User;
  tol.rtol_ = rtol;
  tol.atol_ = atol;
  return tol;
}

double Tolerance::allowed(double want, double bound) const {
  if (mode_ == Mode::User) return atol_ + rtol_ * std::fabs(want);
  return factor_ * bound + floor_;
}

std::string Tolerance::describe() const {
  if (mode_ == Mode::User) return fmt::format("rtol {:.3g}, atol {:.3g}", rtol_, atol_);
  return floor_ > 0 ? fmt::format("{:g} x error bound + {:.3g}", factor_, floor_)
                    : fmt::format("{:g} x error bound", factor_);
}

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// "element 12 [1, 4]"
std::string element_str(size_t i, const std::vector<int64_t>& strides) {
  std::string r = "element " + std::to_string(i) + " [";
  int64_t rem = static_cast<int64_t>(i);
  for (size_t d = 0; d < strides.size(); ++d) {
    r += (d ? ", " : "") + std::to_string(rem / strides[d]);
    rem %= strides[d];
  }
  return r + "]";
}

/// "allowed 3.1e-08 (2 x error bound 1.5e-08)"
std::string allowed_str(const Tolerance& tol, double want, double bound) {
  const double allowed = tol.allowed(want, bound);
  if (tol.is_user())
    return fmt::format("allowed {:.3g} (atol {:.3g} + rtol {:.3g} x |expected|)", allowed,
                       tol.atol(), tol.rtol());
  return fmt::format("allowed {:.3g} ({:g} x error bound {:.3g}{})", allowed, tol.factor(), bound,
                     tol.floor() > 0 ? fmt::format(" + floor {:.3g}", tol.floor()) : "");
}

}  // namespace

Comparison compare(const HostTensor& got, const HostTensor& want, const Tolerance& tol) {
  Comparison c;
  if (got.shape != want.shape) {
    c.ok = false;
    c.first_mismatch = "shape " + shape_str(got.shape) + ", expected " + shape_str(want.shape);
    return c;
  }
  const auto strides = want.strides();
  size_t worst = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double g = got.data[i];
    double w = want.data[i];
    const double bound = want.error.empty() ? 0.0 : want.error[i];
    // The reference holds double; a value beyond the output dtype's range is
    // inf once a kernel stores it.
    if (std::isinf(g) && std::isfinite(w) && std::isinf(ir::round_to_dtype(w, want.dtype)))
      w = ir::round_to_dtype(w, want.dtype);
    bool ok;
    if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      const double err = std::fabs(g - w);
      const double allowed = tol.allowed(w, bound);
      c.max_abs_error = std::max(c.max_abs_error, err);
      ok = err <= allowed;
      if (err > 0) {
        const double ratio = allowed > 0 ? err / allowed : std::numeric_limits<double>::infinity();
        if (ratio > c.max_ratio) c.max_ratio = ratio, worst = i;
      }
    }
    if (ok) continue;
    if (c.mismatches++ == 0)
      c.first_mismatch = fmt::format("{}: got {:.9g}, expected {:.9g}, {}", element_str(i, strides),
                                     g, w, allowed_str(tol, w, bound));
    c.ok = false;
  }
  if (c.max_ratio > 0) {
    const double bound = want.error.empty() ? 0.0 : want.error[worst];
    c.max_ratio_at =
        fmt::format("{}: error {:.3g}, {}", element_str(worst, strides),
                    std::fabs(got.data[worst] - want.data[worst]),
                    allowed_str(tol, want.data[worst], bound));
  }
  return c;
}

}  // namespace schedlab::ref
