// schedlab.schedule.HeuristicParams (heuristic_params.h).
#include "heuristic_params.h"

#include <fmt/core.h>

#include <string>

#include "errors.h"

namespace schedlab::python {

namespace py = pybind11;

namespace {

/// The names `p` has, for errors: "vector, persist, rows".
std::string known(const HeuristicParams& p) {
  std::string names;
  for (const auto& [k, v] : p.values)
    names += (names.empty() ? "" : ", ") + py::str(k).cast<std::string>();
  return names;
}

/// Raises `error` (AttributeError or KeyError) unless `name` is one of p's.
void require_known(const HeuristicParams& p, const std::string& name, PyObject* error) {
  if (p.values.contains(name)) return;
  PyErr_SetString(error, fmt::format("the {} plugin has no parameter '{}'; its parameters: {}",
                                     p.plugin, name, known(p))
                             .c_str());
  throw py::error_already_set();
}

}  // namespace

std::optional<py::dict> params_values(const py::object& given, const std::string& plugin,
                                      const char* call) {
  if (given.is_none()) return std::nullopt;
  if (py::isinstance<HeuristicParams>(given)) {
    const auto& hp = given.cast<const HeuristicParams&>();
    if (hp.plugin != plugin)
      raise(ErrorKind::Error,
            fmt::format("{}: the parameters are the {} plugin's; expected the {} plugin's", call,
                        hp.plugin, plugin),
            {call});
    return hp.values;
  }
  if (!py::isinstance<py::dict>(given))
    raise(ErrorKind::Error,
          fmt::format("{}: expected the parameters as a HeuristicParams or a dict, found {}", call,
                      py::str(py::type::of(given).attr("__name__")).cast<std::string>()),
          {call});
  return given.cast<py::dict>();
}

void bind_heuristic_params(py::module_& schedule) {
  py::class_<HeuristicParams>(schedule, "HeuristicParams",
                              "A plugin's parameters for a fusion at given inputs (nvFuser's "
                              "HeuristicParams): edit them as attributes or items, then "
                              "schedule.schedule(fd, plugin, params)")
      .def_property_readonly("plugin", [](const HeuristicParams& p) { return p.plugin; })
      .def_property_readonly("inputs", [](const HeuristicParams& p) { return p.inputs; })
      .def("__getattr__",
           [](const HeuristicParams& p, const std::string& name) -> py::object {
             require_known(p, name, PyExc_AttributeError);
             return p.values[py::str(name)];
           })
      .def("__setattr__",
           [](HeuristicParams& p, const std::string& name, const py::object& value) {
             require_known(p, name, PyExc_AttributeError);
             p.values[py::str(name)] = value;
           })
      .def("__getitem__",
           [](const HeuristicParams& p, const std::string& name) -> py::object {
             require_known(p, name, PyExc_KeyError);
             return p.values[py::str(name)];
           })
      .def("__setitem__",
           [](HeuristicParams& p, const std::string& name, const py::object& value) {
             require_known(p, name, PyExc_KeyError);
             p.values[py::str(name)] = value;
           })
      .def("__contains__", [](const HeuristicParams& p,
                              const std::string& name) { return p.values.contains(name); })
      .def("__iter__", [](const HeuristicParams& p) { return py::iter(p.values); })
      .def("__len__", [](const HeuristicParams& p) { return p.values.size(); })
      .def("keys", [](const HeuristicParams& p) { return p.values.attr("keys")(); })
      .def("items", [](const HeuristicParams& p) { return p.values.attr("items")(); })
      .def(
          "to_dict", [](const HeuristicParams& p) { return py::dict(p.values.attr("copy")()); },
          "The values as a new dict {name: value}")
      .def("__eq__",
           [](const HeuristicParams& p, const py::object& other) {
             if (py::isinstance<HeuristicParams>(other)) {
               const auto& o = other.cast<const HeuristicParams&>();
               return o.plugin == p.plugin && o.values.equal(p.values);
             }
             return py::isinstance<py::dict>(other) && p.values.equal(other);
           })
      .def("__repr__", [](const HeuristicParams& p) {
        return fmt::format("HeuristicParams({}: {})", p.plugin,
                           py::repr(p.values).cast<std::string>());
      });
}

}  // namespace schedlab::python
