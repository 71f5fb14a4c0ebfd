// The embedded interpreter (embed.h).
#include "embed.h"

#include <dlfcn.h>
#include <pthread.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::embedded {
extern const std::string_view schedlab_heuristic_py;  // schedlab_heuristic.py (CMakeLists.txt)
}

#ifndef SCHEDLAB_PYTHON_EXECUTABLE
#error "SCHEDLAB_PYTHON_EXECUTABLE: the pinned interpreter (plugins/python/CMakeLists.txt)"
#endif

namespace schedlab::python_plugin {

namespace pa = schedlab::plugin_api;
namespace py = pybind11;

namespace {

#define SCHEDLAB_STR2(x) #x
#define SCHEDLAB_STR(x) SCHEDLAB_STR2(x)
/// The soname of the libpython this copy links (Debian: libpython3.11.so.1.0).
constexpr const char* kLibPython =
    "libpython" SCHEDLAB_STR(PY_MAJOR_VERSION) "." SCHEDLAB_STR(PY_MINOR_VERSION) ".so.1.0";

/// The file this copy of python.so was mapped from.
std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_path), &info) == 0 || info.dli_fname == nullptr)
    return "";
  return info.dli_fname;
}

// An isolated worker is a fork of the host, which may fork while another
// thread runs Python: a child that inherited the GIL held would hang on its
// first call. As os.fork() does, hold the GIL (and Python's fork state)
// across fork() and reinitialize the child's. Registered by the copy that
// started the interpreter, which stays mapped.
PyGILState_STATE fork_gil;
void before_fork() {
  fork_gil = PyGILState_Ensure();
  PyOS_BeforeFork();
}
void after_fork_parent() {
  PyOS_AfterFork_Parent();
  PyGILState_Release(fork_gil);
}
void after_fork_child() {
  PyOS_AfterFork_Child();
  PyGILState_Release(fork_gil);
}

void start() {
  // Python objects (the bridge's functions) will point into this copy's
  // code: it must outlive them, and the interpreter is never finalized.
  std::string self = own_path();
  if (self.empty() || dlopen(self.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr)
    throw pa::Error(SCHEDLAB_ERR_INTERNAL, "python: cannot pin its own library '" + self + "'");
  // The host dlopened us RTLD_LOCAL, so libpython's symbols are not global
  // and the stdlib's extension modules (lib-dynload), which do not link
  // libpython, would not load.
  if (dlopen(kLibPython, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr)
    throw pa::Error(SCHEDLAB_ERR_INTERNAL,
                    std::string("python: cannot make ") + kLibPython + " global: " + dlerror());
  if (Py_IsInitialized()) return;  // the `schedlab` module's interpreter: use it
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // SIGINT stays the host's
  config.parse_argv = 0;
  config.configure_c_stdio = 0;
  // The pinned interpreter's prefix and stdlib, whatever python3 PATH finds.
  PyStatus status =
      PyConfig_SetBytesString(&config, &config.program_name, SCHEDLAB_PYTHON_EXECUTABLE);
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status))
    throw pa::Error(SCHEDLAB_ERR_INTERNAL,
                    std::string("python: cannot start the interpreter: ") +
                        (status.err_msg != nullptr ? status.err_msg : "unknown error"));
  // Released, so that any thread, or a forked isolate worker, can take it.
  PyEval_SaveThread();
  pthread_atfork(&before_fork, &after_fork_parent, &after_fork_child);
}

}  // namespace

void ensure_interpreter() {
  static std::mutex mutex;
  static bool started = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (started) return;
  start();
  started = true;
}

py::module_ heuristic_module() {
  const char* name = "schedlab_heuristic";
  py::dict modules = py::module_::import("sys").attr("modules");
  if (modules.contains(name)) return modules[name];
  std::filesystem::path dir = std::filesystem::path(own_path()).parent_path();
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / (std::string(name) + ".py"), ec)) {
    py::module_::import("sys").attr("path").attr("insert")(0, dir.string());
    return py::module_::import(name);
  }
  // A copy of python.so (the registry's <shadow>.host.so) has no module
  // beside it: run the text this build embedded.
  py::module_ m = py::module_::import("types").attr("ModuleType")(name);
  std::string origin = "<schedlab_heuristic.py embedded in python.so>";
  m.attr("__file__") = origin;
  modules[name] = m;
  py::object code =
      py::module_::import("builtins")
          .attr("compile")(std::string(embedded::schedlab_heuristic_py), origin, "exec");
  try {
    py::module_::import("builtins").attr("exec")(code, m.attr("__dict__"));
  } catch (py::error_already_set&) {
    modules.attr("pop")(name);  // no half-made module for the next bind
    throw;
  }
  return m;
}

}  // namespace schedlab::python_plugin
