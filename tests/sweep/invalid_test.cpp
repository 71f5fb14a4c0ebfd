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

#include "schedlab/base/error.h"
#include "schedlab/sweep/spec.h"
#include "sweep_test_util.h"
#include "test_support.h"

namespace {

using testing::HasSubstr;

const std::string kInvalidDir = SCHEDLAB_SOURCE_DIR "/tests/sweep/invalid";

std::vector<std::string> invalid_files() {
  return schedlab::test_support::files_with_extension(kInvalidDir, ".yaml");
}

/// The diagnostic a file's first line promises; line 0 if it has none.
struct Expectation {
  int line = 0;
  int col = 0;
  std::string message;
};

Expectation read_expectation(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  static const std::regex kExpect(R"(^# expect: (\d+):(\d+): (.+)$)");
  std::smatch m;
  if (!std::regex_match(first, m, kExpect)) return {};
  std::string message = m[3];
  for (size_t at; (at = message.find("{file}")) != std::string::npos;) message.replace(at, 6, path);
  return {std::stoi(m[1]), std::stoi(m[2]), message};
}

class InvalidSweepFile : public testing::TestWithParam<std::string> {};

TEST_P(InvalidSweepFile, Diagnoses) {
  const std::string& path = GetParam();
  const Expectation want = read_expectation(path);
  ASSERT_GT(want.line, 0) << path << ": the first line must be '# expect: LINE:COL: MESSAGE'";
  try {
    schedlab::sweep::load_sweep_file(path, schedlab::sweep::testing_util::fake_options());
    FAIL() << path << " loaded without error; expected " << want.line << ":" << want.col << ": "
           << want.message;
  } catch (const schedlab::UserError& e) {
    SCOPED_TRACE(std::string("diagnostic: ") + e.what());
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, want.line);
    EXPECT_EQ(e.loc().col, want.col);
    EXPECT_THAT(e.message(), HasSubstr(want.message));
    // The CLI prints what(): the location, then "error:", then the message.
    EXPECT_EQ(std::string(e.what()), e.loc().str() + ": error: " + e.message());
  }
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidSweepFile, testing::ValuesIn(invalid_files()),
                         schedlab::test_support::file_case_name);

// Guards against the directory going missing (zero cases would pass silently)
// and against two files testing the same thing.
TEST(InvalidSweepFiles, AtLeast25DistinctCases) {
  auto files = invalid_files();
  EXPECT_GE(files.size(), 25u) << "in " << kInvalidDir;
  std::set<std::string> messages;
  for (const auto& f : files) {
    Expectation e = read_expectation(f);
    EXPECT_TRUE(
        messages.insert(std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.message)
            .second)
        << f << " repeats another file's expectation";
  }
}

}  // namespace
