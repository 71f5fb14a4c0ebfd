// Malformed-input suites (tests/frontend/invalid, tests/sweep/invalid): each
// file's first line promises its diagnostic, "# expect: LINE:COL: MESSAGE"
// ({file} stands for the file's path), and the test checks that loading the
// file throws exactly that UserError.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::test_support {

/// The diagnostic a file's first line promises; line 0 if it has none.
struct Expectation {
  int line = 0;
  int col = 0;
  std::string message;
};

inline Expectation read_expectation(const std::string& path) {
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

/// Runs `load` on `path` and checks the UserError against the file's promise:
/// location, message, and what() as the CLI prints it.
template <typename Load>
void expect_diagnostic(const std::string& path, Load&& load) {
  const Expectation want = read_expectation(path);
  ASSERT_GT(want.line, 0) << path << ": the first line must be '# expect: LINE:COL: MESSAGE'";
  try {
    load(path);
    FAIL() << path << " loaded without error; expected " << want.line << ":" << want.col << ": "
           << want.message;
  } catch (const UserError& e) {
    SCOPED_TRACE(std::string("diagnostic: ") + e.what());
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, want.line);
    EXPECT_EQ(e.loc().col, want.col);
    EXPECT_THAT(e.message(), testing::HasSubstr(want.message));
    // The CLI prints what(): the location, then "error:", then the message.
    EXPECT_EQ(std::string(e.what()), e.loc().str() + ": error: " + e.message());
  }
}

/// Guards a suite against its directory going missing (zero cases would pass
/// silently) and against two files testing the same thing.
inline void expect_distinct_cases(const std::vector<std::string>& files, size_t at_least,
                                  const std::string& dir) {
  EXPECT_GE(files.size(), at_least) << "in " << dir;
  std::set<std::string> messages;
  for (const auto& f : files) {
    Expectation e = read_expectation(f);
    EXPECT_TRUE(
        messages.insert(std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.message)
            .second)
        << f << " repeats another file's expectation";
  }
}

}  // namespace schedlab::test_support
