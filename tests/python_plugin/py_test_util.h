// Helpers for the python_plugin suites: a heuristic file bound in its own
// copy of the built python.so, as the registry binds one (the contract in
// docs/python.md): copy python.so, dlopen the copy, call
// schedlab_python_bind, then load_plugin on the same path, which maps the
// already-open (bound) copy and calls its entry point.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"
#include "sp_test_util.h"

namespace schedlab::plugin::py_testing {

using sp_testing::TempFile;

/// What schedlab_python_bind said.
struct Bind {
  int32_t status = SCHEDLAB_OK;
  std::string error;
};

/// The built-in python.so copied to a fresh file in `dir`, dlopened (kept:
/// python.so pins itself once bound), and bound to `display` read from
/// `source`.
inline Bind bind_copy(const std::string& dir, const std::string& display, const std::string& source,
                      std::string* copy_path = nullptr) {
  static int copies = 0;
  std::string copy = dir + "/python-" + std::to_string(++copies) + ".host.so";
  std::filesystem::copy_file(std::string(BUILTIN_PLUGIN_DIR) + "/python.so", copy);
  void* lib = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  if (copy_path != nullptr) *copy_path = copy;
  if (lib == nullptr) return {SCHEDLAB_ERR_INTERNAL, "dlopen failed"};
  using BindFn = int32_t (*)(const char*, const char*, char*, uint32_t);
  auto fn = reinterpret_cast<BindFn>(dlsym(lib, "schedlab_python_bind"));
  EXPECT_NE(fn, nullptr);
  char error[4096] = {0};
  Bind b;
  b.status = fn(display.c_str(), source.c_str(), error, sizeof error);
  b.error = error;
  return b;
}

/// A heuristic file with `text`, bound and loaded as a plugin.
class Heuristic {
 public:
  /// A file `file_name` holding `text`, in a fresh directory.
  Heuristic(const std::string& file_name, const std::string& text)
      : file_(file_name, text), path_(file_.path()) {
    bind_and_load();
  }
  /// An existing file (an example); the copy of python.so goes to a fresh directory.
  static std::unique_ptr<Heuristic> of_file(const std::string& path) {
    return std::unique_ptr<Heuristic>(new Heuristic(path));
  }
  const Bind& bind() const { return bind_; }
  const Plugin& plugin() const {
    EXPECT_TRUE(plugin_) << "bind failed: " << bind_.error;
    return *plugin_;
  }
  const std::string& path() const { return path_; }

 private:
  explicit Heuristic(const std::string& path) : file_("none", ""), path_(path) { bind_and_load(); }
  void bind_and_load() {
    std::string copy;
    bind_ = bind_copy(file_.dir(), path_, path_, &copy);
    if (bind_.status == SCHEDLAB_OK) plugin_ = load_plugin(copy);
  }
  TempFile file_;  ///< the file, or a placeholder in the directory the copy goes to
  std::string path_;
  Bind bind_;
  std::shared_ptr<const Plugin> plugin_;
};

/// Schedules `fusion` at `sizes` with the plugin's own choice and runs it on
/// the CPU backend against the reference: "" when every output matches.
inline std::string schedule_and_run(const Plugin& p, const std::string& fusion,
                                    const ir::SizeBindings& sizes) {
  auto s = sp_testing::segment_of(fusion, sizes);
  Verdict v = p.can_schedule(s.seg, p.defaults());
  if (!v.accepted) return "refused: " + v.reason;
  p.schedule(s.seg, p.compute_params(s.seg));
  return sp_testing::run_and_compare(s);
}

/// The what() of the error of type E that scheduling `fusion` with the
/// plugin's defaults throws ("" and a test failure when none does).
template <typename E>
std::string schedule_error(const Plugin& p, const std::string& fusion,
                           const ir::SizeBindings& sizes) {
  auto s = sp_testing::segment_of(fusion, sizes);
  try {
    p.schedule(s.seg, p.defaults());
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

/// can_schedule's reason on `fusion` at its default sizes: how the tests read
/// what a heuristic computed in Python.
inline std::string reason_on(const Plugin& p, const std::string& fusion,
                             const ir::SizeBindings& sizes = {}) {
  auto s = sp_testing::segment_of(fusion, sizes);
  Verdict v = p.can_schedule(s.seg, p.defaults());
  return v.accepted ? "(accepted)" : v.reason;
}

}  // namespace schedlab::plugin::py_testing
