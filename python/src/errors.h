// The Python module's exceptions (docs/python.md, "Errors"): a core
// UserError becomes a schedlab exception carrying the same message, the
// tensor and axis of the call, and the Python file and line that made it.
//
//   schedlab.Error(RuntimeError)       every user error of the module
//   schedlab.ScheduleError(Error)      a scheduling primitive refused, or the
//                                      schedule did not lower
//   schedlab.DefinitionError(Error)    an operation or input refused
//   schedlab.ValidationError(Error, AssertionError)
//                                      validate(): outputs off the reference
// Internal errors stay RuntimeError ("internal error: ...").
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "schedlab/base/error.h"
#include "schedlab/ir/ir.h"

namespace schedlab::python {

enum class ErrorKind { Error, Schedule, Definition, Validation };

/// What a call was about, for the exception's attributes.
struct Call {
  Call(std::string p, const ir::TensorView* t = nullptr, std::optional<int> a = std::nullopt)
      : primitive(std::move(p)), tensor(t), axis(a) {}
  std::string primitive;         ///< "split", "add", "manual_execute (lower stage)"
  const ir::TensorView* tensor;  ///< the tensor it was called on, if any
  std::optional<int> axis;       ///< the axis it was given, if any
};

/// Creates the exception classes in `m`.
void bind_errors(pybind11::module_& m);

/// Raises the `kind` exception for `message` about `call`, with the Python
/// caller's file and line: str() is "FILE:LINE: error: MESSAGE".
[[noreturn]] void raise(ErrorKind kind, const std::string& message, const Call& call);
/// raise() with a core user error's message (its file:line:col first when it
/// has one: an error in a fusion file).
[[noreturn]] void raise(ErrorKind kind, const UserError& e, const Call& call);

/// Runs f(); a UserError it throws becomes the `kind` exception about `call`.
template <typename F>
decltype(auto) guarded(ErrorKind kind, const Call& call, F&& f) {
  try {
    return f();
  } catch (const UserError& e) {
    raise(kind, e, call);
  }
}

}  // namespace schedlab::python
