// The exception classes and their raising (errors.h).
#include "errors.h"

namespace schedlab::python {

namespace py = pybind11;

namespace {

// Created once by bind_errors and kept for the interpreter's life (the
// module holds references too).
PyObject* g_error = nullptr;
PyObject* g_schedule = nullptr;
PyObject* g_definition = nullptr;
PyObject* g_validation = nullptr;

PyObject* type_of(ErrorKind k) {
  switch (k) {
    case ErrorKind::Schedule: return g_schedule;
    case ErrorKind::Definition: return g_definition;
    case ErrorKind::Validation: return g_validation;
    case ErrorKind::Error: break;
  }
  return g_error;
}

PyObject* new_class(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("schedlab.") + name;
  PyObject* t = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (t == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(t));
  return t;
}

/// The innermost Python frame's file and line (the user's call: a binding
/// runs no Python frame of its own), or ("", 0) when there is none.
std::pair<std::string, int> caller() {
  try {
    py::object frame = py::module_::import("sys").attr("_getframe")(0);
    return {frame.attr("f_code").attr("co_filename").cast<std::string>(),
            frame.attr("f_lineno").cast<int>()};
  } catch (const py::error_already_set&) {
    return {"", 0};
  }
}

}  // namespace

void bind_errors(py::module_& m) {
  g_error = new_class(m, "Error", PyExc_RuntimeError,
                      "A user error: the message names the object, what was expected and what "
                      "was found");
  g_schedule = new_class(m, "ScheduleError", g_error,
                         "A scheduling primitive refused its arguments, or the schedule did not "
                         "lower; .tensor and .axis name what the call was about");
  g_definition = new_class(m, "DefinitionError", g_error,
                           "An operation, input or output of a fusion definition was refused");
  py::tuple bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_AssertionError));
  g_validation = new_class(m, "ValidationError", bases.ptr(),
                           "validate(): an output is off the reference beyond its tolerance");
}

void raise(ErrorKind kind, const std::string& message, const Call& call) {
  const auto [file, line] = caller();
  const std::string where = file.empty() ? "" : file + ":" + std::to_string(line) + ": ";
  PyObject* type = type_of(kind);
  py::object e = py::reinterpret_borrow<py::object>(type)(where + "error: " + message);
  e.attr("message") = message;
  e.attr("primitive") = call.primitive;
  e.attr("tensor") = call.tensor ? py::cast(call.tensor->describe()) : py::none();
  e.attr("axis") = call.axis ? py::cast(*call.axis) : py::none();
  e.attr("filename") = file;
  e.attr("lineno") = line;
  PyErr_SetObject(type, e.ptr());
  throw py::error_already_set();
}

void raise(ErrorKind kind, const UserError& e, const Call& call) {
  raise(kind, e.loc().valid() ? e.what() : e.message(), call);
}

}  // namespace schedlab::python
