// Lowering never returns a wrong kernel (lower.h): each case in
// tests/lower/soundness is a fusion (NAME.yaml) and a schedule (NAME.sched)
// that once lowered to a kernel computing the wrong answer. The schedule's
// first line says what lowering must do now:
//   # expect: ok               the kernel validates against the reference at
//                              the file's sizes and at larger ones
//   # expect: error: MESSAGE   lowering refuses it with a user error that
//                              contains MESSAGE
// docs/lowering-rules.md lists the rule each case exercises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"

namespace schedlab::lower::testing {
namespace {

const std::string kDir = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/lower/soundness";

struct Promise {
  bool ok = false;
  std::string error;  ///< the substring the user error must contain
};

Promise read_promise(const std::string& sched) {
  std::ifstream in(sched);
  std::string first;
  std::getline(in, first);
  static const std::regex kOk(R"(^# expect: ok$)"), kError(R"(^# expect: error: (.+)$)");
  std::smatch m;
  if (std::regex_match(first, kOk)) return {true, ""};
  if (std::regex_match(first, m, kError)) return {false, m[1]};
  ADD_FAILURE() << sched << ": the first line must be '# expect: ok' or '# expect: error: MESSAGE'";
  return {};
}

/// The file's sizes, and every named size scaled up (x3 + 2), so a kernel
/// that is right only for the sizes it was written for still fails.
std::vector<ir::SizeBindings> sizes_of(const frontend::FusionDefinition& def) {
  ir::SizeBindings base = frontend::bind_sizes(def, {});
  ir::SizeBindings big = base;
  for (auto& [name, v] : big) v = v * 3 + 2;
  return {base, big};
}

class Soundness : public BackendTestWithParam<std::string> {};

TEST_P(Soundness, ValidatesOrIsRefused) {
  const std::string sched = kDir + "/" + GetParam() + ".sched";
  const std::string yaml = kDir + "/" + GetParam() + ".yaml";
  Promise promise = read_promise(sched);
  auto plain = frontend::load_fusion_file(yaml);
  auto def = frontend::load_fusion_file(yaml);
  auto all_sizes = sizes_of(def);
  if (!promise.ok) {
    // Refused by a scheduling primitive or by lowering.
    std::string err = user_error_of([&] {
      frontend::apply_schedule_file(sched, def, {});
      runtime::prepare(*def.fusion, all_sizes[0]);
    });
    EXPECT_THAT(err, ::testing::HasSubstr(promise.error))
        << "--- scheduled fusion ---\n"
        << sched::print_scheduled_fusion(*def.fusion);
    return;
  }
  frontend::apply_schedule_file(sched, def, {});
  auto p = prepare_or_report(def, all_sizes[0]);
  expect_nvrtc_accepts(p.source);
  expect_matches_at(def, plain, p, all_sizes,
                    [](const auto& pl, const auto& pk, auto& c, const ir::SizeBindings& s) {
                      return run_and_compare(pl, pk, c, s);
                    });
}

std::vector<std::string> cases() {
  std::vector<std::string> names;
  for (const auto& f : test_support::files_with_extension(kDir, ".sched"))
    names.push_back(std::filesystem::path(f).stem().string());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases, Soundness, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

TEST(SoundnessCases, DirectoryIsNotEmpty) {
  EXPECT_GE(cases().size(), 4u) << kDir;
}

}  // namespace
}  // namespace schedlab::lower::testing
