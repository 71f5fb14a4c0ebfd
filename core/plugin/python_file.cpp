// Loading a Python heuristic file (python_file.h): its snapshot, the
// per-load copy of python.so, and the bind call before the entry point.
#include "python_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "host_api.h"
#include "library.h"
#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"

namespace schedlab::plugin {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBindName = "schedlab_python_bind";
constexpr const char* kOriginSuffix = ".origin";

/// The built-in python.so every load copies.
std::string builtin_python() {
  const std::string dir = base::builtin_plugin_dir();
  const fs::path so = fs::path(dir) / "python.so";
  std::error_code ec;
  user_assert(!dir.empty() && fs::is_regular_file(so, ec))
      << "the python plugin (python.so) is not in "
      << (dir.empty() ? std::string("the built-in plugin directory (none found)") : dir)
      << "; build the `python` target";
  return so.string();
}

/// Copies `from` to `to`, which the caller has just created empty.
void copy_into(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  user_assert(!ec) << "cannot copy '" << from << "' to '" << to << "': " << ec.message();
}

/// A fresh copy of python.so beside `snapshot`: the first of
/// <snapshot>.host.so, <snapshot>.host.2.so, ... that this call creates (an
/// exclusive create, so that workers loading the same snapshot at once never
/// share one).
std::string copy_beside(const std::string& python, const std::string& snapshot) {
  for (int k = 1;; ++k) {
    const std::string name =
        snapshot + ".host" + (k == 1 ? std::string() : "." + std::to_string(k)) + ".so";
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    if (fd < 0) {
      user_assert(errno == EEXIST) << "cannot create '" << name << "': " << std::strerror(errno);
      continue;
    }
    ::close(fd);
    copy_into(python, name);
    return name;
  }
}

/// A fresh copy of python.so in the temp directory (a user's file loaded in
/// place has no shadow directory to hold one).
std::string copy_to_temp(const std::string& python, const std::string& path) {
  std::string tmpl = (fs::temp_directory_path() /
                      ("schedlab-python-" + fs::path(path).stem().string() + "-XXXXXX.so"))
                         .string();
  const int fd = ::mkstemps(tmpl.data(), 3);
  user_assert(fd >= 0) << "cannot create a copy of python.so under " << fs::temp_directory_path()
                       << ": " << std::strerror(errno);
  ::close(fd);
  copy_into(python, tmpl);
  return tmpl;
}

}  // namespace

bool is_python_file(const std::string& path) {
  return path.ends_with(".py");
}

PythonLoad prepare_python_load(const std::string& path, const std::string& shadow) {
  PythonLoad l;
  l.display = path;
  l.snapshot = path;
  const std::string python = builtin_python();
  std::error_code ec;
  if (!shadow.empty()) {
    l.snapshot = is_python_file(shadow) ? shadow : shadow + ".py";
    fs::copy_file(path, l.snapshot, fs::copy_options::overwrite_existing, ec);
    user_assert(!ec) << "cannot copy Python heuristic '" << path << "' to '" << l.snapshot
                     << "': " << ec.message();
    std::ofstream(l.snapshot + kOriginSuffix, std::ios::trunc) << path << '\n';
  } else if (std::ifstream origin(path + kOriginSuffix); origin.good()) {
    std::getline(origin, l.display);  // a snapshot: name the user's file
    user_assert(!l.display.empty()) << "'" << path << kOriginSuffix << "' is empty";
  } else {
    l.host = copy_to_temp(python, path);
    l.host_is_temp = true;
    return l;
  }
  l.host = copy_beside(python, l.snapshot);
  return l;
}

void bind_python(const boost::dll::shared_library& lib, const PythonLoad& load) {
  user_assert(lib.has(kBindName)) << "'" << load.host << "' (a copy of the built-in python.so) "
                                  << "has no '" << kBindName << "': it is not the python plugin";
  auto bind = lib.get<int32_t(const char*, const char*, char*, uint32_t)>(kBindName);
  char error[8192] = {};
  int32_t status;
  {
    CallScope scope(load.display, kBindName);
    status = guarded(load.display, kBindName, [&] {
      return bind(load.display.c_str(), load.snapshot.c_str(), error, sizeof error);
    });
  }
  if (status == SCHEDLAB_OK) return;
  error[sizeof error - 1] = '\0';
  const std::string why = error[0] != '\0' ? error : "(no message)";
  if (status == SCHEDLAB_ERR_USER) user_error << why;
  throw PluginFault("Python heuristic '" + load.display + "': " + kBindName + " returned " +
                    std::string(status_name(status)) + " (" + std::to_string(status) +
                    "), not SCHEDLAB_OK or SCHEDLAB_ERR_USER: " + why);
}

void remove_python_snapshot_files(const std::string& snapshot) {
  std::error_code ec;
  fs::remove(snapshot + kOriginSuffix, ec);
  const fs::path dir = fs::path(snapshot).parent_path();
  const std::string prefix = fs::path(snapshot).filename().string() + ".host";
  std::vector<fs::path> copies;  // listed first: no removal under the iterator
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".so")) copies.push_back(e.path());
  }
  for (const fs::path& c : copies) fs::remove(c, ec);
}

}  // namespace schedlab::plugin
