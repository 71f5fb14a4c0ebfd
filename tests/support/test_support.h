// Helpers shared by the GoogleTest suites under tests/. schedlab_test()
// (tests/CMakeLists.txt) puts tests/support on every suite's include path.
//
// The namespace is schedlab::test_support rather than schedlab::testing: the
// suites live in namespace schedlab::<module> and spell GoogleTest's
// namespace `testing::`, which a schedlab::testing would hide; ir::testing,
// runtime::testing and lower::testing already name per-module helpers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::test_support {

// ---- errors -----------------------------------------------------------------

/// The message of the UserError `fn` throws. If it throws none, the test
/// fails and the result is "(no error)", which no expected message matches.
template <typename F>
std::string user_error_of(F&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.message();
  }
  ADD_FAILURE() << "expected a UserError";
  return "(no error)";
}

/// The full diagnostic, what(), of the UserError `fn` throws:
/// "file:line:col: error: message", or "error: message" without a location.
/// For tests that assert the location too. "(no error)" and a test failure
/// if it throws none.
template <typename F>
std::string user_error_what_of(F&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "(no error)";
}

// ---- fusions ----------------------------------------------------------------

/// The source tree's configs/fusions directory.
inline std::string config_fusion_dir() {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions";
}

/// Loads configs/fusions/<name>.yaml.
inline frontend::FusionDefinition load_config_fusion(const std::string& name) {
  return frontend::load_fusion_file(config_fusion_dir() + "/" + name + ".yaml");
}

/// The tensor of `f` whose user name is `name`; fails the test and returns
/// null if there is none.
inline ir::TensorView* named(const ir::Fusion& f, const std::string& name) {
  for (ir::TensorView* tv : f.tensors())
    if (tv->user_name() == name) return tv;
  ADD_FAILURE() << "no tensor named " << name;
  return nullptr;
}

// ---- loop signatures --------------------------------------------------------

/// One axis as "<IterType><binding>{extent}", spelled as IterDomain::str
/// spells it but without the axis number: "iblockIdx.x{N}", "rS{128}",
/// "iS{4}_vect".
inline std::string axis_sig(const ir::IterDomain* id) {
  std::string s = id->str();
  size_t brace = s.find('{');
  size_t digits = brace;
  while (digits > 0 && s[digits - 1] >= '0' && s[digits - 1] <= '9') --digits;
  return s.substr(0, digits) + s.substr(brace);
}

/// axis_sig of each axis of `dom`.
inline std::vector<std::string> domain_sig(const std::vector<ir::IterDomain*>& dom) {
  std::vector<std::string> r;
  for (const ir::IterDomain* id : dom) r.push_back(axis_sig(id));
  return r;
}

/// axis_sig of each loop axis of `tv`.
inline std::vector<std::string> loop_sig(const ir::TensorView* tv) {
  return domain_sig(tv->loop());
}

// ---- data-driven suites -----------------------------------------------------

/// The paths of the files in `dir` whose extension is `ext` (".yaml"),
/// sorted; none if `dir` is missing, which the suites' guard tests catch.
inline std::vector<std::string> files_with_extension(const std::string& dir,
                                                     const std::string& ext) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ext) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// A test name for a file-path parameter: the file's stem, with every
/// character but letters and digits replaced by '_'.
inline std::string file_case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = std::filesystem::path(info.param).stem().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

}  // namespace schedlab::test_support
