// Small named fusions built with the builder, shared by the IR tests and
// ir_print_tool, so the FileCheck tests and the unit tests see the same IR.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schedlab/ir/arith.h"

namespace schedlab::ir::testing {

/// An input tensor named `name` with the given symbolic shape.
inline TensorView* input(Fusion& f, const std::string& name, DataType t,
                         const std::vector<SizeExpr>& shape) {
  TensorView* x = f.make_tensor(t, shape);
  x->set_user_name(name);
  f.add_input(x);
  return x;
}

inline SizeExpr sym(const std::string& name) {
  return SizeExpr::symbol(name);
}

/// The tensor of `v`, added to f's outputs under the name `name`.
inline TensorView* output(Fusion& f, Val* v, const std::string& name) {
  TensorView* t = tv(v);
  t->set_user_name(name);
  f.add_output(t);
  return t;
}

/// y = softmax(x, axis = -1) over x[N, K], in the numerically stable form.
inline std::unique_ptr<Fusion> make_softmax() {
  auto f = std::make_unique<Fusion>("softmax");
  TensorView* x = input(*f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* m = max(x, {-1}, /*keepdim=*/true);
  Val* e = exp(sub(x, m));
  TensorView* s = sum(tv(e), {-1}, /*keepdim=*/true);
  TensorView* y = tv(div(e, s));
  y->set_user_name("y");
  f->add_output(y);
  return f;
}

/// y = layer_norm(x) * w + b over x[N, 1024], with w[1024] and b[1024] in f32.
inline std::unique_ptr<Fusion> make_layernorm() {
  auto f = std::make_unique<Fusion>("layernorm");
  SizeExpr k = SizeExpr::constant(1024);
  TensorView* x = input(*f, "x", DataType::F32, {sym("N"), k});
  TensorView* w = input(*f, "w", DataType::F32, {k});
  TensorView* b = input(*f, "b", DataType::F32, {k});
  Scalar* inv_k = constant(*f, 1.0 / 1024.0);
  Val* mean = mul(sum(x, {-1}, true), inv_k);
  Val* d = sub(x, mean);
  Val* var = mul(sum(tv(mul(d, d)), {-1}, true), inv_k);
  Val* norm = mul(d, rsqrt(add(var, constant(*f, 1e-5))));
  TensorView* y = tv(add(mul(norm, w), b));
  y->set_user_name("y");
  f->add_output(y);
  return f;
}

/// y = transpose(x, 0, 1) over x[N, K].
inline std::unique_ptr<Fusion> make_transpose() {
  auto f = std::make_unique<Fusion>("transpose");
  TensorView* x = input(*f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* y = transpose(x, 0, 1);
  y->set_user_name("y");
  f->add_output(y);
  return f;
}

/// y = x - sum(x, axis = 1, keepdim) over an f16 x[N, K]: the half input is
/// cast to f32 and the kept axis comes back as a Broadcast.
inline std::unique_ptr<Fusion> make_keepdim() {
  auto f = std::make_unique<Fusion>("keepdim");
  TensorView* x = input(*f, "x", DataType::F16, {sym("N"), sym("K")});
  TensorView* s = sum(x, {1}, /*keepdim=*/true);
  s->set_user_name("s");
  TensorView* y = tv(sub(x, s));
  y->set_user_name("y");
  f->add_output(y);
  return f;
}

}  // namespace schedlab::ir::testing
