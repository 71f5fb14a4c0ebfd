#include "schedlab/ref/compare.h"

#include "schedlab/ir/op_semantics.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace schedlab::ref {

Tolerance default_tolerance(ir::DataType t) {
  switch (t) {
    case ir::DataType::F64: return {1e-10, 1e-12};
    case ir::DataType::F32: return {1e-5, 1e-6};
    case ir::DataType::F16: return {1e-2, 1e-3};
    // bf16 keeps f32's exponent: its precision is relative all the way down,
    // so the absolute part is PyTorch's assert_close atol for bf16. A larger
    // one (it was 1e-2) passes anything for small outputs: every softmax
    // probability of a 4096-wide row lies below 1e-2.
    case ir::DataType::BF16: return {2e-2, 1e-5};
    default: return {0.0, 0.0};
  }
}

Tolerance reduction_tolerance(ir::DataType t, int64_t reduced_count, int64_t product_count) {
  Tolerance tol = default_tolerance(t);
  if (std::max(reduced_count, product_count) <= 1 || !ir::is_float(t)) return tol;
  double u = 0.0;
  switch (t) {
    case ir::DataType::F64: u = 0x1p-53; break;
    case ir::DataType::F32: u = 0x1p-24; break;
    case ir::DataType::F16: u = 0x1p-11; break;
    case ir::DataType::BF16: u = 0x1p-8; break;
    default: break;
  }
  // Half types reduce in f32 (the IR casts first), so the f32 bound applies
  // on top of their own storage rounding.
  if (ir::is_half(t)) u = 0x1p-24;
  tol.atol += static_cast<double>(reduced_count) * u;
  if (product_count > 1) tol.rtol += static_cast<double>(product_count) * u;
  return tol;
}

namespace {

int64_t max_count(const ir::Fusion& f, const ir::SizeBindings& sizes, bool products_only) {
  int64_t best = 1;
  for (const ir::Expr* e : f.exprs()) {
    auto* r = e->as<ir::ReductionOp>();
    if (!r || (products_only && r->op() != ir::ReductionOpType::Prod)) continue;
    int64_t n = 1;
    for (const ir::IterDomain* id : e->out()->root())
      if (id->is_reduction()) n *= id->extent().evaluate(sizes).value_or(1);
    best = std::max(best, n);
  }
  return best;
}

}  // namespace

int64_t max_reduced_count(const ir::Fusion& f, const ir::SizeBindings& sizes) {
  return max_count(f, sizes, /*products_only=*/false);
}

int64_t max_product_count(const ir::Fusion& f, const ir::SizeBindings& sizes) {
  return max_count(f, sizes, /*products_only=*/true);
}

Comparison compare(const HostTensor& got, const HostTensor& want, Tolerance tol) {
  Comparison c;
  auto shape = [](const std::vector<int64_t>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
  };
  if (got.shape != want.shape) {
    c.ok = false;
    c.first_mismatch = "shape " + shape(got.shape) + ", expected " + shape(want.shape);
    return c;
  }
  auto strides = want.strides();
  for (size_t i = 0; i < want.data.size(); ++i) {
    double g = got.data[i], w = want.data[i];
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
      double err = std::fabs(g - w);
      c.max_abs_error = std::max(c.max_abs_error, err);
      ok = err <= tol.atol + tol.rtol * std::fabs(w) ||
           (tol.error_bound && !want.error.empty() && err <= 2.0 * want.error[i]);
    }
    if (ok) continue;
    if (c.mismatches++ == 0) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << i << " [";
      int64_t rem = static_cast<int64_t>(i);
      for (size_t d = 0; d < strides.size(); ++d) {
        os << (d ? ", " : "") << rem / strides[d];
        rem %= strides[d];
      }
      os << "]: got " << g << ", expected " << w;
      if (tol.error_bound && !want.error.empty() && want.error[i] > 0)
        os << " (reference error bound " << want.error[i] << ")";
      c.first_mismatch = os.str();
    }
    c.ok = false;
  }
  return c;
}

}  // namespace schedlab::ref
