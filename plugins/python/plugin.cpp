// python: the built-in plugin that serves a heuristic written as a Python
// file (docs/python.md, "Python heuristics"), through the same C ABI as
// every plugin. Written only against the plugin API.
//
// The C ABI's calls carry no instance pointer, so one copy of python.so
// serves one heuristic: the registry copies python.so beside the file's
// snapshot and calls schedlab_python_bind (below) on the copy before its
// entry point, which then describes the heuristic (its NAME, docstring,
// PRIORITY and PARAMS). All copies share the one interpreter (embed.h).
//
// Loaded as itself, unbound (every `schedlab run` loads the built-ins), it is
// the plugin `python`, never offered a segment, and explains how to use it;
// it does not start the interpreter then.
//
// Errors: a Python exception in the heuristic is SCHEDLAB_ERR_PLUGIN naming
// the file and line; a ScheduleError (a primitive the host refused) that the
// heuristic does not catch is the host's status and message with the file
// and line prefixed; schedlab_heuristic.py formats both.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bridge.h"
#include "embed.h"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
namespace py = pybind11;
namespace pp = schedlab::python_plugin;

namespace {

constexpr const char* kUnbound =
    "the python plugin serves a heuristic file: write `scheduler: {plugin: python, file: F.py}` "
    "or pass --plugin F.py";

/// The heuristic this copy serves, from schedlab_python_bind on.
struct Bound {
  std::string path;  ///< the user's file, as errors name it
  std::string name, description;
  int priority = SCHEDLAB_PRIORITY_NEVER_OFFERED;
  std::vector<pa::Param> schema;
  PyObject* heuristic = nullptr;  ///< schedlab_heuristic._Heuristic (owned; under the GIL)
};

/// Never destroyed: the interpreter outlives static destructors' order.
Bound*& bound() {
  static Bound* b = nullptr;
  return b;
}

pa::Param param_of(const py::tuple& e) {
  auto kind = e[0].cast<int>();
  auto name = e[1].cast<std::string>();
  auto doc = e[2].cast<std::string>();
  switch (kind) {
    case SCHEDLAB_PARAM_INT:
      return pa::Param::integer(name, e[3].cast<int64_t>(), e[4].cast<int64_t>(),
                                e[5].cast<int64_t>(), doc);
    case SCHEDLAB_PARAM_FLOAT:
      return pa::Param::real(name, e[3].cast<double>(), e[4].cast<double>(), e[5].cast<double>(),
                             doc);
    case SCHEDLAB_PARAM_BOOL:
      return pa::Param::boolean(name, e[3].cast<bool>(), doc);
    case SCHEDLAB_PARAM_CHOICE:
      return pa::Param::choice(name, e[6].cast<std::vector<std::string>>(),
                               e[3].cast<std::string>(), doc);
    default:
      return pa::Param::string(name, e[3].cast<std::string>(), doc);
  }
}

/// Runs the heuristic file and keeps what it declares.
void bind(const std::string& display, const std::string& source) {
  pp::ensure_interpreter();
  pp::Gil gil;
  try {
    py::tuple r = pp::heuristic_module().attr("_load")(display, source, pp::make_bridge());
    if (r[0].cast<int>() != SCHEDLAB_OK)
      throw pa::Error(r[0].cast<int>(), r[1].cast<std::string>());
    py::object h = r[2];
    auto b = std::make_unique<Bound>();
    b->path = display;
    b->name = h.attr("name").cast<std::string>();
    b->description = h.attr("description").cast<std::string>();
    b->priority = h.attr("priority").cast<int>();
    for (py::handle e : h.attr("schema")) b->schema.push_back(param_of(e.cast<py::tuple>()));
    b->heuristic = h.release().ptr();
    if (Bound* old = bound()) Py_XDECREF(old->heuristic);
    delete bound();
    bound() = b.release();
  } catch (py::error_already_set& e) {
    throw pa::Error(SCHEDLAB_ERR_PLUGIN, "python: binding '" + display + "': " + e.what());
  }
}

/// The call's values by name, as the heuristic reads them.
py::dict values_of(const pa::Params& p) {
  py::dict d;
  for (const pa::Param& s : bound()->schema) {
    const char* n = s.name.c_str();
    switch (s.kind) {
      case SCHEDLAB_PARAM_INT:
        d[n] = p.integer(s.name);
        break;
      case SCHEDLAB_PARAM_FLOAT:
        d[n] = p.real(s.name);
        break;
      case SCHEDLAB_PARAM_BOOL:
        d[n] = p.boolean(s.name);
        break;
      case SCHEDLAB_PARAM_CHOICE:
        d[n] = p.choice(s.name);
        break;
      default:
        d[n] = p.string(s.name);
        break;
    }
  }
  return d;
}

/// Calls the heuristic's `where`; `use` reads the result (under the GIL).
template <typename Use>
void call(const char* where, pa::Segment& seg, const pa::Params& p, Use&& use) {
  pp::Gil gil;
  try {
    py::handle h(bound()->heuristic);
    py::tuple r = h.attr("call")(where, reinterpret_cast<uintptr_t>(seg.handle()), values_of(p));
    if (r[0].cast<int>() != SCHEDLAB_OK)
      throw pa::Error(r[0].cast<int>(), r[1].cast<std::string>());
    use(r[2]);
  } catch (py::error_already_set& e) {
    throw pa::Error(SCHEDLAB_ERR_PLUGIN,
                    std::string("python: ") + where + " of '" + bound()->path + "': " + e.what());
  }
}

}  // namespace

class Python : public pa::Plugin {
 public:
  std::string name() const override { return bound() ? bound()->name : "python"; }
  int priority() const override {
    return bound() ? bound()->priority : SCHEDLAB_PRIORITY_NEVER_OFFERED;
  }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return bound() ? bound()->description : "a heuristic written as a Python file (docs/python.md)";
  }
  std::vector<pa::Param> params() const override {
    if (bound()) return bound()->schema;
    return {pa::Param::string("file", "", "the heuristic file (F.py); see docs/python.md")};
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params& p) override {
    if (!bound()) return pa::Verdict::no(kUnbound);
    pa::Verdict v;
    call("can_schedule", seg, p, [&](py::handle r) {
      auto t = r.cast<py::tuple>();
      v = t[0].cast<bool>() ? pa::Verdict::yes() : pa::Verdict::no(t[1].cast<std::string>());
    });
    return v;
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    if (!bound()) return;
    call("compute_params", seg, p, [&](py::handle r) {
      for (py::handle item : r) {
        auto t = item.cast<py::tuple>();
        auto n = t[0].cast<std::string>();
        switch (t[1].cast<int>()) {
          case SCHEDLAB_PARAM_INT:
            p.set_integer(n, t[2].cast<int64_t>());
            break;
          case SCHEDLAB_PARAM_FLOAT:
            p.set_real(n, t[2].cast<double>());
            break;
          case SCHEDLAB_PARAM_BOOL:
            p.set_boolean(n, t[2].cast<bool>());
            break;
          case SCHEDLAB_PARAM_CHOICE:
            p.set_choice(n, t[2].cast<std::string>());
            break;
          default:
            p.set_string(n, t[2].cast<std::string>());
            break;
        }
      }
    });
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    if (!bound()) throw pa::Error(SCHEDLAB_ERR_USER, std::string("python: ") + kUnbound);
    call("schedule", seg, p, [](py::handle) {});
  }
};

SCHEDLAB_PLUGIN(Python)

/// Binds this copy to the heuristic file at `source_path`, which errors name
/// `display_path` (the registry's snapshot and the user's file): the
/// registry calls it on its copy before the entry point
/// (core/plugin/python_file.cpp; docs/python.md, "Python heuristics").
extern "C" SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_python_bind(const char* display_path,
                                                               const char* source_path, char* error,
                                                               uint32_t error_size) {
  std::string message;
  int32_t status = SCHEDLAB_OK;
  try {
    if (display_path == nullptr || source_path == nullptr)
      throw pa::Error(SCHEDLAB_ERR_INVALID_ARGUMENT, "python: bind needs two paths");
    bind(display_path, source_path);
  } catch (const pa::Error& e) {
    status = e.status() < 0 ? e.status() : SCHEDLAB_ERR_INTERNAL;
    message = e.what();
  } catch (const std::exception& e) {
    status = SCHEDLAB_ERR_INTERNAL;
    message = std::string("python: ") + e.what();
  }
  if (error != nullptr && error_size > 0) {
    size_t n = std::min<size_t>(message.size(), error_size - 1);
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return status;
}
