// Invalid sweep files, MLIR-style: every tests/sweep/invalid/*.yaml opens
// with
//   # expect: LINE:COL: MESSAGE
// and must fail to load with a UserError at exactly (that path, LINE, COL)
// whose message contains MESSAGE. "{file}" in MESSAGE stands for the path, for
// messages that point at a second position. Adding a case is adding a file.
// The files load against the fake plugin schemas of sweep_test_util.h and
// the fusions of configs/fusions; relative paths are relative to invalid/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "diagnostic_files.h"
#include "schedlab/base/error.h"
#include "schedlab/sweep/spec/spec.h"
#include "sweep_test_util.h"
#include "test_support.h"

namespace {

const std::string kInvalidDir = SCHEDLAB_SOURCE_DIR "/tests/sweep/invalid";

std::vector<std::string> invalid_files() {
  return schedlab::test_support::files_with_extension(kInvalidDir, ".yaml");
}

class InvalidSweepFile : public testing::TestWithParam<std::string> {};

TEST_P(InvalidSweepFile, Diagnoses) {
  schedlab::test_support::expect_diagnostic(GetParam(), [](const std::string& path) {
    schedlab::sweep::load_sweep_file(path, schedlab::sweep::testing_util::fake_options());
  });
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidSweepFile, testing::ValuesIn(invalid_files()),
                         schedlab::test_support::file_case_name);

TEST(InvalidSweepFiles, AtLeast25DistinctCases) {
  schedlab::test_support::expect_distinct_cases(invalid_files(), 25, kInvalidDir);
}

}  // namespace
