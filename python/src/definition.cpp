// FusionDefinition, its handles and load_fusion (definition.h, bindings.h).
#include <pybind11/stl.h>

#include <fmt/core.h>

#include "bindings.h"
#include "data_dirs.h"
#include "errors.h"
#include "nvfuser_print.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/extract.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/sched/debug_print.h"

namespace schedlab::python {

namespace {

/// The definitions of the open `with` blocks, innermost last.
std::vector<DefinitionPtr>& open_blocks() {
  static std::vector<DefinitionPtr> blocks;
  return blocks;
}

/// A copy of every live statement of `f` (ir::extract): the same tensor
/// numbers and names, unscheduled.
std::unique_ptr<ir::Fusion> copy_math(const ir::Fusion& f) {
  user_assert(!f.outputs().empty())
      << "fusion '" << f.name() << "' has no output: call fd.add_output(tv) before scheduling or "
      << "running it";
  std::vector<const ir::Expr*> exprs;
  for (const ir::Expr* e : f.exprs_for_outputs()) exprs.push_back(e);
  std::unique_ptr<ir::Fusion> copy = ir::extract(f, exprs, f.name()).fusion;
  // extract keeps only the inputs the math reads; a run takes every input.
  for (const ir::TensorView* in : f.inputs()) {
    bool read = false;
    for (const ir::TensorView* c : copy->inputs()) read = read || c->number() == in->number();
    user_assert(read) << "input " << in->describe()
                      << " is read by no output's computation; expected every input to be used";
  }
  user_assert(copy->inputs().size() == f.inputs().size())
      << "expected " << f.inputs().size() << " inputs in the copy of fusion '" << f.name()
      << "', found " << copy->inputs().size();
  return copy;
}

/// A SizeExpr for one entry of define_tensor's shape: -1 a fresh symbol
/// (one with the axes it meets in an operation: extents.h), a positive
/// integer a constant (1: a Broadcast axis), a string a named size.
ir::SizeExpr extent(Definition& d, const py::handle& entry, size_t i) {
  if (py::isinstance<py::str>(entry)) return ir::SizeExpr::symbol(entry.cast<std::string>());
  const int64_t v = entry.cast<int64_t>();
  if (v == -1) {
    const std::string name = fmt::format("S{}", d.next_symbol++);
    d.symbolic.insert(name);
    return ir::SizeExpr::symbol(name);
  }
  if (v < 1)
    raise(ErrorKind::Definition,
          fmt::format("define_tensor: shape entry {} is {}; expected -1 (symbolic), a positive "
                      "extent or a size name",
                      i, v),
          {"define_tensor"});
  return ir::SizeExpr::constant(v);
}

Tensor define_tensor(const DefinitionPtr& d, const py::sequence& shape, ir::DataType dtype) {
  d->require_open("define_tensor");
  std::vector<ir::SizeExpr> extents;
  for (size_t i = 0; i < shape.size(); ++i) extents.push_back(extent(*d, shape[i], i));
  ir::TensorView* t = d->fusion().make_tensor(dtype, extents);
  d->fusion().add_input(t);
  return {d, t};
}

/// The DataType of an array's dtype (NumPy's name, or torch's without its
/// "torch." prefix).
ir::DataType dtype_of(const py::handle& array) {
  std::string name = py::str(array.attr("dtype")).cast<std::string>();
  if (name.rfind("torch.", 0) == 0) name.erase(0, 6);
  static const std::pair<const char*, ir::DataType> kNames[] = {
      {"float32", ir::DataType::F32},   {"float", ir::DataType::F32},
      {"float64", ir::DataType::F64},   {"double", ir::DataType::F64},
      {"float16", ir::DataType::F16},   {"half", ir::DataType::F16},
      {"bfloat16", ir::DataType::BF16}, {"int32", ir::DataType::I32},
      {"int", ir::DataType::I32},       {"int64", ir::DataType::I64},
      {"long", ir::DataType::I64},      {"bool", ir::DataType::Bool},
  };
  for (const auto& [n, t] : kNames)
    if (name == n) return t;
  raise(ErrorKind::Definition,
        fmt::format("from_pytorch: an array of dtype {}; expected float32, float64, float16, "
                    "bfloat16, int32, int64 or bool",
                    name),
        {"from_pytorch"});
}

/// nvFuser's fd.from_pytorch(t): an input of t's rank and dtype, each axis
/// -1 (symbolic) except those of size 1 (Broadcast).
Tensor from_pytorch(const DefinitionPtr& d, const py::handle& array) {
  d->require_open("from_pytorch");
  if (!py::hasattr(array, "shape") || !py::hasattr(array, "dtype"))
    raise(ErrorKind::Definition,
          fmt::format("from_pytorch: expected an array (shape and dtype), found {}",
                      py::str(py::type::of(array)).cast<std::string>()),
          {"from_pytorch"});
  py::list shape;
  for (const py::handle& n : array.attr("shape")) shape.append(n.cast<int64_t>() == 1 ? 1 : -1);
  return define_tensor(d, shape, dtype_of(array));
}

/// nvFuser's fd.define_scalar(value, dtype): a constant of the fusion.
ScalarHandle define_scalar(const DefinitionPtr& d, const py::object& value, ir::DataType dtype) {
  d->require_open("define_scalar");
  if (!py::isinstance<py::int_>(value) && !py::isinstance<py::float_>(value))
    raise(ErrorKind::Definition,
          fmt::format("define_scalar: expected a number (a constant; schedlab has no scalar "
                      "inputs), found {}",
                      py::str(py::type::of(value)).cast<std::string>()),
          {"define_scalar"});
  return {d, ir::constant(d->fusion(), value.cast<double>(), dtype)};
}

/// The tensor named `name` in d's fusion: a user name or T<n>.
Tensor tensor_named(const DefinitionPtr& d, const std::string& name) {
  std::vector<ir::TensorView*> found;
  for (ir::TensorView* t : d->fusion().tensors())
    if (t->user_name() == name || t->str() == name) found.push_back(t);
  if (found.size() == 1) return {d, found[0]};
  std::string known;
  for (ir::TensorView* t : d->fusion().tensors()) known += (known.empty() ? "" : ", ") + t->describe();
  raise(ErrorKind::Definition,
        found.empty() ? fmt::format("no tensor named '{}'; the fusion has {}", name, known)
                      : fmt::format("tensor name '{}' names {} tensors; use T<n>", name, found.size()),
        {"tensor"});
}

std::vector<Tensor> handles(const DefinitionPtr& d, const std::vector<ir::TensorView*>& tvs) {
  std::vector<Tensor> out;
  for (ir::TensorView* t : tvs) out.push_back({d, t});
  return out;
}

DefinitionPtr load_fusion(const std::string& name_or_path) {
  auto d = std::make_shared<Definition>();
  guarded(ErrorKind::Definition, {"load_fusion"}, [&] {
    d->def = frontend::load_fusion_file(frontend::resolve_fusion(name_or_path, fusion_dirs()));
    ir::verify(d->fusion());
  });
  return d;
}

}  // namespace

void Definition::require_open(const char* what) const {
  if (frozen())
    raise(ErrorKind::Definition,
          fmt::format("{}: the fusion's math is fixed once scheduling (or a run) begins; define "
                      "every operation and output first",
                      what),
          {what});
}

void Definition::freeze() {
  if (!plain) plain = copy_math(fusion());
}

std::unique_ptr<ir::Fusion> Definition::unscheduled_copy() {
  freeze();
  return copy_math(*plain);
}

DefinitionPtr current_definition() {
  return open_blocks().empty() ? nullptr : open_blocks().back();
}

DefinitionPtr definition_of(const std::vector<Tensor>& tensors, const char* what) {
  DefinitionPtr d = tensors.empty() ? current_definition() : tensors.front().owner;
  for (const Tensor& t : tensors)
    if (t.owner != d)
      raise(ErrorKind::Schedule,
            fmt::format("{}: {} belongs to another FusionDefinition than {}", what,
                        t.tv->describe(), tensors.front().tv->describe()),
            {what, t.tv});
  if (!d)
    raise(ErrorKind::Schedule,
          fmt::format("{}: no fusion to act on: call it inside `with FusionDefinition() as fd:` "
                      "or give it tensors",
                      what),
          {what});
  return d;
}

void bind_definition(py::module_& m, DefinitionClass& fd, TensorClass& tv, AxisClass& axis,
                     ScalarClass& scalar) {
  fd.def(py::init([] {
      auto d = std::make_shared<Definition>();
      d->def.fusion = std::make_unique<ir::Fusion>("fusion");
      return d;
    }))
      .def("__enter__",
           [](const DefinitionPtr& d) {
             open_blocks().push_back(d);
             return d;
           })
      .def(
          "__exit__",
          [](const DefinitionPtr& d, const py::object& type, const py::object&, const py::object&) {
            auto& blocks = open_blocks();
            if (!blocks.empty() && blocks.back() == d) blocks.pop_back();
            if (type.is_none())
              guarded(ErrorKind::Definition, {"FusionDefinition"}, [&] { d->freeze(); });
            return false;
          })
      .def("define_tensor", &define_tensor, py::arg("shape"), py::arg("dtype") = ir::DataType::F32,
           "A new input of the given shape: -1 for a symbolic extent (its own size name until "
           "an operation makes it meet another axis: then one extent), a positive extent (1: a "
           "Broadcast axis), or a size name ('N') shared with other inputs")
      .def("from_pytorch", &from_pytorch, py::arg("tensor"),
           "nvFuser's from_pytorch: an input of the array's rank and dtype (a NumPy array or a "
           "CPU torch.Tensor), each axis -1 except those of size 1 (Broadcast)")
      .def("define_scalar", &define_scalar, py::arg("value"), py::arg("dtype") = ir::DataType::F64,
           "A constant of the given dtype (nvFuser's define_scalar with a value)")
      .def(
          "add_output",
          [](const DefinitionPtr& d, const Tensor& t) {
            d->require_open("add_output");
            guarded(ErrorKind::Definition, {"add_output", t.tv},
                    [&] { d->fusion().add_output(t.tv); });
          },
          py::arg("tensor"))
      .def("tensor", &tensor_named, py::arg("name"),
           "The tensor with this name (fusion text's, or T<n>)")
      .def_property_readonly(
          "inputs", [](const DefinitionPtr& d) { return handles(d, d->fusion().inputs()); })
      .def_property_readonly(
          "outputs", [](const DefinitionPtr& d) { return handles(d, d->fusion().outputs()); })
      .def_property_readonly(
          "fusion", [](const DefinitionPtr& d) { return d; },
          "The fusion itself: print_math(), print_kernel()")
      .def_property_readonly("default_sizes",
                             [](const DefinitionPtr& d) { return d->def.default_sizes; })
      .def(
          "print_math", [](const DefinitionPtr& d) { return ir::print_math(d->fusion()); },
          "The math (and the schedule's caches and rfactor producers) in nvFuser's spelling")
      .def(
          "print_schedule",
          [](const DefinitionPtr& d) { return sched::print_scheduled_fusion(d->fusion()); },
          "Every tensor's domains, transforms, bindings and memory");
  m.def("load_fusion", &load_fusion, py::arg("name_or_path"),
        "A fusion file (configs/fusions/NAME.yaml, or a path) as a FusionDefinition");

  tv.def("__str__", [](const Tensor& t) { return nvfuser_tensor(t.tv); },
         "nvFuser's TensorView::toString: T2_g_float[iS4{S0}, iS5{S1}] ca_pos( 1 )")
      .def("__repr__", [](const Tensor& t) { return ir::tensor_str(t.tv); },
           "schedlab's spelling, as print_math prints it: T2_g_f32[iS4{S0}, iS5{S1}]")
      .def("print_detail", [](const Tensor& t) { return sched::print_tensor(t.tv); },
           "Its logical and loop domains, the splits and merges between them, and its memory")
      .def_property_readonly("name", [](const Tensor& t) { return t.tv->describe(); })
      .def_property_readonly("dtype", [](const Tensor& t) { return t.tv->dtype(); })
      .def("ndim", [](const Tensor& t) { return t.tv->logical_no_reductions().size(); })
      .def("nloop", [](const Tensor& t) { return t.tv->nloop(); },
           "The number of loop axes (tv.axis(i) for i below it)")
      .def("__eq__", [](const Tensor& a, const Tensor& b) { return a.tv == b.tv; })
      .def("__hash__", [](const Tensor& t) { return std::hash<const void*>()(t.tv); });
  axis.def("__str__", [](const Axis& a) { return nvfuser_axis(a.tensor.tv, a.id); },
           "nvFuser's IterDomain::toString: iS4{S0}, ithreadIdx.x9{4}, iV7{4}")
      .def("__repr__", [](const Axis& a) { return a.id->str(); })
      .def("extent", [](const Axis& a) { return a.id->extent().str(); })
      .def("is_reduction", [](const Axis& a) { return a.id->is_reduction(); })
      .def("is_broadcast", [](const Axis& a) { return a.id->is_broadcast(); });
  scalar.def("__repr__", [](const ScalarHandle& s) { return s.val->str(); });
}

}  // namespace schedlab::python
