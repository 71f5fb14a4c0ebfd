// Helpers for the plugin suites: where the test plugins are, temporary
// directories, file writes, and what the process has mapped and resident.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "test_support.h"

namespace schedlab::plugin::testing {

/// A test plugin built by tests/plugin/CMakeLists.txt (in PLUGIN_DIR, or
/// PLUGIN_OTHER_DIR for those a directory load refuses).
inline std::string plugin_file(const std::string& target) {
  std::string good = std::string(PLUGIN_DIR) + "/" + target + ".so";
  return std::filesystem::exists(good) ? good
                                       : std::string(PLUGIN_OTHER_DIR) + "/" + target + ".so";
}

/// configs/fusions/<name>.yaml.
inline frontend::FusionDefinition load_fusion(const std::string& name) {
  return frontend::load_fusion_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/" + name +
                                    ".yaml");
}

/// The full what() of the UserError `fn` throws ("error: ..." with the
/// location, if any); "(no error)" and a test failure if it throws none. The
/// plugin suites assert the whole diagnostic: test_support::user_error_what_of.
template <typename F>
std::string user_error_of(F&& fn) {
  return test_support::user_error_what_of(std::forward<F>(fn));
}

/// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "schedlab-plugin-test-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Overwrites `path` in place (truncate, write, close), as cp does: the
/// hardest case for a loader, since the inode stays the same.
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Resident set size of this process, in bytes.
inline long rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

/// How many lines of /proc/self/maps mention `needle`.
inline int mapped_count(const std::string& needle) {
  std::ifstream in("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

}  // namespace schedlab::plugin::testing
