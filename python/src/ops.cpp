// fd.ops: every operation of the fusion language (docs/fusion-text.md,
// "Functions"), each the ir builder call (schedlab/ir/arith.h) that fusion
// text makes, and the TensorView arithmetic operators.
#include <pybind11/stl.h>

#include <fmt/core.h>

#include <optional>

#include "bindings.h"
#include "errors.h"
#include "extents.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/reshape.h"

namespace schedlab::python {

namespace {

/// fd.ops: the operations of one definition.
struct Ops {
  DefinitionPtr owner;
};

/// The definition an operand belongs to, or null for a Python number.
DefinitionPtr owner_of(const py::handle& v) {
  if (py::isinstance<Tensor>(v)) return v.cast<const Tensor&>().owner;
  if (py::isinstance<ScalarHandle>(v)) return v.cast<const ScalarHandle&>().owner;
  return nullptr;
}

/// An operand as an IR value of `d`'s fusion: a tensor, a scalar, or a
/// Python number as a constant (weakly typed, as in fusion text: an int is
/// i64, a float f64, a bool bool).
ir::Val* operand(const DefinitionPtr& d, const py::handle& v, const char* op) {
  if (DefinitionPtr o = owner_of(v)) {
    if (o != d)
      raise(ErrorKind::Definition, fmt::format("{}: operands of two FusionDefinitions", op), {op});
    return py::isinstance<Tensor>(v) ? static_cast<ir::Val*>(v.cast<const Tensor&>().tv)
                                     : v.cast<const ScalarHandle&>().val;
  }
  ir::Fusion& f = d->fusion();
  if (py::isinstance<py::bool_>(v)) return ir::constant(f, v.cast<bool>() ? 1.0 : 0.0, ir::DataType::Bool);
  if (py::isinstance<py::int_>(v)) return ir::constant(f, v.cast<double>(), ir::DataType::I64);
  if (py::isinstance<py::float_>(v)) return ir::constant(f, v.cast<double>(), ir::DataType::F64);
  raise(ErrorKind::Definition,
        fmt::format("{}: expected a TensorView, a Scalar or a number, found {}", op,
                    py::str(py::type::of(v)).cast<std::string>()),
        {op});
}

/// The definition of an operation's operands (the first that has one).
DefinitionPtr definition_of_operands(std::initializer_list<py::handle> vs, const char* op) {
  for (const py::handle& v : vs)
    if (DefinitionPtr d = owner_of(v)) return d;
  raise(ErrorKind::Definition, fmt::format("{}: expected at least one TensorView operand", op), {op});
}

py::object result(const DefinitionPtr& d, ir::Val* v) {
  if (auto* t = v->as<ir::TensorView>()) return py::cast(Tensor{d, t});
  return py::cast(ScalarHandle{d, v});
}

/// Which axes of an operation's tensor operands meet (extents.h).
using Meet = void (*)(Definition&, const std::vector<ir::TensorView*>&);

/// Runs one builder call for `op` over `args`: the definition still open,
/// the -1 extents the operands' axes meet with unified (`meet`: aligned
/// from the right unless told otherwise), user errors as DefinitionError
/// about the first tensor operand.
template <typename F>
py::object build(const char* op, std::initializer_list<py::handle> args, F&& f,
                 Meet meet = unify_extents) {
  DefinitionPtr d = definition_of_operands(args, op);
  d->require_open(op);
  std::vector<ir::TensorView*> tensors;
  for (const py::handle& a : args)
    if (py::isinstance<Tensor>(a) && owner_of(a) == d)
      tensors.push_back(a.cast<const Tensor&>().tv);
  if (tensors.size() > 1) meet(*d, tensors);
  const ir::TensorView* first = tensors.empty() ? nullptr : tensors.front();
  return guarded(ErrorKind::Definition, {op, first}, [&] { return result(d, f(*d)); });
}

/// `v` as a TensorView; `role` ("the bias") names it in the error.
ir::TensorView* tensor_arg(const py::handle& v, const char* op, const char* role = nullptr) {
  if (!py::isinstance<Tensor>(v))
    raise(ErrorKind::Definition,
          role ? fmt::format("{}: expected a TensorView as {}, found {}", op, role,
                             py::str(py::type::of(v)).cast<std::string>())
               : fmt::format("{}: expected a TensorView", op),
          {op});
  return v.cast<const Tensor&>().tv;
}

/// A contraction (matmul, linear) over `args`, each a TensorView (named by
/// its entry in `roles`) of one definition: `meet` pairs their axes as the
/// contraction does, so every operand must be there, in its place.
template <typename F>
py::object contraction(const char* op, std::initializer_list<py::handle> args,
                       std::initializer_list<const char*> roles, Meet meet, F&& f) {
  const char* const* role = roles.begin();
  for (const py::handle& a : args) tensor_arg(a, op, *role++);
  DefinitionPtr d = definition_of_operands(args, op);
  for (const py::handle& a : args)
    if (owner_of(a) != d)
      raise(ErrorKind::Definition, fmt::format("{}: operands of two FusionDefinitions", op), {op});
  return build(op, args, std::forward<F>(f), meet);
}

struct Unary {
  const char* name;
  ir::UnaryOpType op;
};
constexpr Unary kUnary[] = {
    {"neg", ir::UnaryOpType::Neg},         {"abs", ir::UnaryOpType::Abs},
    {"exp", ir::UnaryOpType::Exp},         {"log", ir::UnaryOpType::Log},
    {"sqrt", ir::UnaryOpType::Sqrt},       {"rsqrt", ir::UnaryOpType::Rsqrt},
    {"tanh", ir::UnaryOpType::Tanh},       {"sigmoid", ir::UnaryOpType::Sigmoid},
    {"relu", ir::UnaryOpType::Relu},       {"erf", ir::UnaryOpType::Erf},
    {"reciprocal", ir::UnaryOpType::Reciprocal}, {"logical_not", ir::UnaryOpType::Not},
};

struct Binary {
  const char* name;
  ir::BinaryOpType op;
};
constexpr Binary kBinary[] = {
    {"add", ir::BinaryOpType::Add},     {"sub", ir::BinaryOpType::Sub},
    {"mul", ir::BinaryOpType::Mul},     {"div", ir::BinaryOpType::Div},
    {"maximum", ir::BinaryOpType::Max}, {"minimum", ir::BinaryOpType::Min},
    {"pow", ir::BinaryOpType::Pow},     {"lt", ir::BinaryOpType::Lt},
    {"le", ir::BinaryOpType::Le},       {"gt", ir::BinaryOpType::Gt},
    {"ge", ir::BinaryOpType::Ge},       {"eq", ir::BinaryOpType::Eq},
    {"ne", ir::BinaryOpType::Ne},       {"logical_and", ir::BinaryOpType::And},
    {"logical_or", ir::BinaryOpType::Or},
};

struct Reduction {
  const char* name;
  ir::ReductionOpType op;
};
constexpr Reduction kReductions[] = {
    {"sum", ir::ReductionOpType::Sum},
    {"max", ir::ReductionOpType::Max},
    {"min", ir::ReductionOpType::Min},
    {"prod", ir::ReductionOpType::Prod},
};

/// Defines the Python operator `name` (__add__, __radd__, ...) on `cls` as
/// the binary operation `op`; `reflected` swaps the operands (2 - tv).
void add_operator(const py::object& cls, const std::string& name, ir::BinaryOpType op,
                  bool reflected) {
  py::cpp_function f(
      [op, reflected](const py::object& self, const py::object& other) {
        const py::object& l = reflected ? other : self;
        const py::object& r = reflected ? self : other;
        return build("operator", {l, r}, [&](Definition&) {
          DefinitionPtr d = owner_of(self);
          return ir::binary(op, operand(d, l, "operator"), operand(d, r, "operator"));
        });
      },
      py::name(name.c_str()), py::is_method(cls));
  py::setattr(cls, name.c_str(), f);
}

}  // namespace

void bind_ops(py::module_& m, DefinitionClass& fd, TensorClass& tv, ScalarClass& scalar) {
  py::class_<Ops> ops(m, "Ops", "fd.ops: the operations of the fusion language");
  fd.def_property_readonly("ops", [](const DefinitionPtr& d) { return Ops{d}; });

  for (const Unary& u : kUnary) {
    const ir::UnaryOpType op = u.op;
    const char* name = u.name;
    ops.def(name, [op, name](const Ops&, const py::object& x) {
      return build(name, {x}, [&](Definition&) { return ir::unary(op, operand(owner_of(x), x, name)); });
    }, py::arg("x"));
  }
  for (const Binary& b : kBinary) {
    const ir::BinaryOpType op = b.op;
    const char* name = b.name;
    ops.def(name, [op, name](const Ops&, const py::object& x, const py::object& y) {
      return build(name, {x, y}, [&](Definition&) {
        DefinitionPtr d = definition_of_operands({x, y}, name);
        return ir::binary(op, operand(d, x, name), operand(d, y, name));
      });
    }, py::arg("x"), py::arg("y"));
  }
  for (const Reduction& r : kReductions) {
    const ir::ReductionOpType op = r.op;
    const char* name = r.name;
    ops.def(name, [op, name](const Ops&, const py::object& x, std::optional<std::vector<int>> dims,
                             bool keepdim) {
      return build(name, {x}, [&](Definition&) {
        return ir::reduce(op, tensor_arg(x, name), dims.value_or(std::vector<int>{}), keepdim);
      });
    }, py::arg("x"), py::arg("dims") = py::none(), py::arg("keepdim") = false,
       "Reduces over `dims` (every axis when None); keepdim leaves Broadcast axes");
  }
  ops.def("mean", [](const Ops&, const py::object& x, std::optional<std::vector<int>> dims, bool keepdim) {
    return build("mean", {x}, [&](Definition&) {
      return ir::mean(tensor_arg(x, "mean"), dims.value_or(std::vector<int>{}), keepdim);
    });
  }, py::arg("x"), py::arg("dims") = py::none(), py::arg("keepdim") = false);
  ops.def("where", [](const Ops&, const py::object& c, const py::object& x, const py::object& y) {
    return build("where", {c, x, y}, [&](Definition&) {
      DefinitionPtr d = definition_of_operands({c, x, y}, "where");
      return ir::where(operand(d, c, "where"), operand(d, x, "where"), operand(d, y, "where"));
    });
  }, py::arg("cond"), py::arg("x"), py::arg("y"));
  ops.def("cast", [](const Ops&, const py::object& x, ir::DataType dtype) {
    return build("cast", {x}, [&](Definition&) { return ir::cast(operand(owner_of(x), x, "cast"), dtype); });
  }, py::arg("x"), py::arg("dtype"));
  ops.def("broadcast", [](const Ops&, const py::object& x, const std::vector<bool>& is_broadcast_dim) {
    return build("broadcast", {x}, [&](Definition&) {
      return ir::broadcast(tensor_arg(x, "broadcast"), is_broadcast_dim);
    });
  }, py::arg("x"), py::arg("is_broadcast_dim"),
     "Inserts Broadcast axes: one flag per output axis, True where the axis is new");
  ops.def("set", [](const Ops&, const py::object& x) {
    return build("set", {x}, [&](Definition&) { return ir::set(tensor_arg(x, "set")); });
  }, py::arg("x"));
  ops.def("permute", [](const Ops&, const py::object& x, const std::vector<int>& dims) {
    return build("permute", {x}, [&](Definition&) { return ir::permute(tensor_arg(x, "permute"), dims); });
  }, py::arg("x"), py::arg("dims"), "Output axis k is input axis dims[k]");
  ops.def("transpose", [](const Ops&, const py::object& x, int dim0, int dim1) {
    return build("transpose", {x}, [&](Definition&) {
      return ir::transpose(tensor_arg(x, "transpose"), dim0, dim1);
    });
  }, py::arg("x"), py::arg("dim0"), py::arg("dim1"));

  // Reshapes (ir/reshape.h): a shape entry is an int (-1: inferred, or kept
  // by expand) or a named size ("N").
  auto shape_of = [](const py::list& shape, const char* fn) {
    std::vector<ir::ShapeEntry> r;
    for (const py::handle& e : shape) {
      if (py::isinstance<py::str>(e)) {
        r.emplace_back(ir::SizeExpr::symbol(e.cast<std::string>()));
      } else if (py::isinstance<py::int_>(e) && !py::isinstance<py::bool_>(e)) {
        const auto v = e.cast<int64_t>();
        if (v == -1) r.emplace_back(std::nullopt);
        else r.emplace_back(ir::SizeExpr::constant(v));
      } else {
        throw py::type_error(std::string(fn) + ": a shape entry is an int or a size name, found " +
                             std::string(py::str(py::type::of(e).attr("__name__"))));
      }
    }
    return r;
  };
  for (const char* fn : {"reshape", "view"})
    ops.def(fn, [fn, shape_of](const Ops&, const py::object& x, const py::list& new_shape) {
      auto shape = shape_of(new_shape, fn);
      return build(fn, {x}, [&](Definition&) { return ir::reshape(tensor_arg(x, fn), shape, fn); });
    }, py::arg("x"), py::arg("new_shape"),
       "The same elements in row-major order with new_shape (ints, -1 once, size names)");
  ops.def("flatten", [](const Ops&, const py::object& x, int start_dim, int end_dim) {
    return build("flatten", {x}, [&](Definition&) {
      return ir::flatten(tensor_arg(x, "flatten"), start_dim, end_dim);
    });
  }, py::arg("x"), py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  ops.def("squeeze", [](const Ops&, const py::object& x, const std::vector<int>& dims) {
    return build("squeeze", {x}, [&](Definition&) { return ir::squeeze(tensor_arg(x, "squeeze"), dims); });
  }, py::arg("x"), py::arg("dims") = std::vector<int>{},
     "Removes the given Broadcast axes (every Broadcast axis when empty)");
  ops.def("unsqueeze", [](const Ops&, const py::object& x, int dim) {
    return build("unsqueeze", {x}, [&](Definition&) { return ir::unsqueeze(tensor_arg(x, "unsqueeze"), dim); });
  }, py::arg("x"), py::arg("dim"));
  ops.def("expand", [shape_of](const Ops&, const py::object& x, const py::list& shape) {
    auto s = shape_of(shape, "expand");
    return build("expand", {x}, [&](Definition&) { return ir::expand(tensor_arg(x, "expand"), s); });
  }, py::arg("x"), py::arg("shape"), "Widens Broadcast axes; -1 keeps an axis");

  // nvFuser's spelling: matmul(arg1, arg2), linear(arg1, arg2, bias=None).
  ops.def("matmul", [](const Ops&, const py::object& a, const py::object& b) {
    return contraction("matmul", {a, b}, {"the first operand", "the second operand"},
                       unify_matmul_extents, [&](Definition&) {
                         return ir::matmul(a.cast<const Tensor&>().tv, b.cast<const Tensor&>().tv);
                       });
  }, py::arg("arg1"), py::arg("arg2"),
     "PyTorch's matmul: arg1 [..., M, K] @ arg2 [..., K, N] is [..., M, N], batch axes "
     "broadcast; operands of one dtype (bf16, f16 or f32), products and sum in f32, the "
     "result in the operands' dtype");
  ops.def("linear", [](const Ops&, const py::object& x, const py::object& w, const py::object& bias) {
    auto f = [&](Definition&) {
      return ir::linear(x.cast<const Tensor&>().tv, w.cast<const Tensor&>().tv,
                        bias.is_none() ? nullptr : bias.cast<const Tensor&>().tv);
    };
    if (bias.is_none())
      return contraction("linear", {x, w}, {"the input", "the weight"}, unify_linear_extents, f);
    return contraction("linear", {x, w, bias}, {"the input", "the weight", "the bias"},
                       unify_linear_extents, f);
  }, py::arg("arg1"), py::arg("arg2"), py::arg("bias") = py::none(),
     "PyTorch's linear: arg1 [..., K] @ arg2 [N, K] transposed, plus bias [N] (None: no "
     "bias), in f32; the result in arg1's dtype");

  // Python's arithmetic on handles, as fusion text's operators.
  constexpr std::pair<const char*, ir::BinaryOpType> kOperators[] = {
      {"add", ir::BinaryOpType::Add}, {"sub", ir::BinaryOpType::Sub},
      {"mul", ir::BinaryOpType::Mul}, {"truediv", ir::BinaryOpType::Div},
      {"pow", ir::BinaryOpType::Pow},
  };
  for (const auto& [name, op] : kOperators) {
    for (const py::object& cls : {py::object(tv), py::object(scalar)}) {
      add_operator(cls, fmt::format("__{}__", name), op, false);
      add_operator(cls, fmt::format("__r{}__", name), op, true);
    }
  }
  tv.def("__neg__", [](const py::object& x) {
    return build("neg", {x}, [&](Definition&) { return ir::neg(operand(owner_of(x), x, "neg")); });
  });
}

}  // namespace schedlab::python
