// Invalid fusion files, MLIR-style: every tests/frontend/invalid/*.yaml opens
// with
//   # expect: LINE:COL: MESSAGE
// and must fail to load with a UserError at exactly (that path, LINE, COL)
// whose message contains MESSAGE. "{file}" in MESSAGE stands for the path, for
// messages that point at a second position. Adding a case is adding a file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "diagnostic_files.h"
#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "test_support.h"

namespace {

const std::string kInvalidDir = SCHEDLAB_SOURCE_DIR "/tests/frontend/invalid";

std::vector<std::string> invalid_files() {
  return schedlab::test_support::files_with_extension(kInvalidDir, ".yaml");
}

class InvalidFusionFile : public testing::TestWithParam<std::string> {};

TEST_P(InvalidFusionFile, Diagnoses) {
  schedlab::test_support::expect_diagnostic(
      GetParam(), [](const std::string& path) { schedlab::frontend::load_fusion_file(path); });
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidFusionFile, testing::ValuesIn(invalid_files()),
                         schedlab::test_support::file_case_name);

TEST(InvalidFusionFiles, AtLeast25DistinctCases) {
  schedlab::test_support::expect_distinct_cases(invalid_files(), 25, kInvalidDir);
}

}  // namespace
