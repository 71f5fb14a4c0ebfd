// The fuzz runner's classifier (core/fuzz/runner.cpp) on planted outcomes,
// then real isolated runs on the CPU backend: a schedule that validates, one
// that lowering refuses, a fusion through the built-in plugins, and the
// summary line and exit rule.
#include <gtest/gtest.h>

#include <signal.h>

#include "schedlab/fuzz/fuzz.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::fuzz {
namespace {

using Status = isolate::Outcome::Status;
using Error = isolate::Outcome::Error;

isolate::Outcome ok(const std::string& payload) {
  isolate::Outcome o;
  o.status = Status::Ok;
  o.payload = payload;
  return o;
}
isolate::Outcome failed(Error e, const std::string& message, int exit_code = 0) {
  isolate::Outcome o;
  o.status = Status::Failed;
  o.error = e;
  o.message = message;
  o.exit_code = exit_code;
  return o;
}

TEST(FuzzClassify, FinishedRuns) {
  EXPECT_EQ(classify(ok("validated"), Path::Schedule).cls, RunClass::Validated);
  // The largest error/allowed of a validated run comes back with it.
  RunOutcome v = classify(ok("validated\nratio 0.25\toutput 0 (T3 (y)) element 2 [2]\n"
                             "killed\nwrong_result under mutation zero"),
                          Path::Schedule);
  EXPECT_EQ(v.cls, RunClass::Validated);
  EXPECT_EQ(v.max_ratio, 0.25);
  EXPECT_EQ(v.max_ratio_at, "output 0 (T3 (y)) element 2 [2]");
  EXPECT_EQ(v.mutant, Mutant::Killed);
  EXPECT_EQ(v.mutant_line, "wrong_result under mutation zero");
  RunOutcome w = classify(ok("wrong\nwrong_result: output 0 (T3 (y)): 2 mismatches\nmore"),
                          Path::Segmenter);
  EXPECT_EQ(w.cls, RunClass::Wrong);
  EXPECT_EQ(w.reason, "wrong_result: output 0 (T3 (y)): 2 mismatches");
  RunOutcome r = classify(ok("racy\nrace on T2 (s) element 3"), Path::Schedule);
  EXPECT_EQ(r.cls, RunClass::Racy);
  EXPECT_EQ(r.reason, "race on T2 (s) element 3");
  RunOutcome i = classify(ok("invalid\nfuzz.yaml:7:8: error: unknown name 'v9'"), Path::Segmenter);
  EXPECT_EQ(i.cls, RunClass::Refused);
  EXPECT_EQ(i.reason, "invalid fusion text: fuzz.yaml:7:8: error: unknown name 'v9'");
  EXPECT_EQ(classify(ok("what"), Path::Schedule).cls, RunClass::Internal);
}

TEST(FuzzClassify, UserErrorsAreRefusedWithAScheduleAndUnscheduledWithout) {
  isolate::Outcome u = failed(Error::User, "lower: cannot inline T3 at position 2");
  u.loc = SourceLoc{"fuzz.sched", 4, 1};
  RunOutcome s = classify(u, Path::Schedule);
  EXPECT_EQ(s.cls, RunClass::Refused);
  EXPECT_EQ(s.reason, "fuzz.sched:4:1: error: lower: cannot inline T3 at position 2");
  EXPECT_EQ(classify(u, Path::Segmenter).cls, RunClass::Unscheduled);
}

TEST(FuzzClassify, InternalErrorsCrashesAndTimeouts) {
  EXPECT_EQ(classify(failed(Error::Internal, "internal error: boom"), Path::Schedule).cls,
            RunClass::Internal);
  EXPECT_EQ(classify(failed(Error::Exit, "", 3), Path::Schedule).cls, RunClass::Internal);
  RunOutcome e1 = classify(failed(Error::Exit, "", 1), Path::Schedule);
  EXPECT_EQ(e1.cls, RunClass::Crashed);
  EXPECT_EQ(e1.reason, "exited with status 1");
  isolate::Outcome c;
  c.status = Status::Crashed;
  c.signal = SIGSEGV;
  RunOutcome cr = classify(c, Path::Segmenter);
  EXPECT_EQ(cr.cls, RunClass::Crashed);
  EXPECT_EQ(cr.reason, "crashed (SIGSEGV)");
  isolate::Outcome t;
  t.status = Status::Timeout;
  t.timeout = std::chrono::milliseconds(1500);
  RunOutcome to = classify(t, Path::Schedule);
  EXPECT_EQ(to.cls, RunClass::Timeout);
  EXPECT_EQ(to.reason, "timeout after 1.5 s");
}

TEST(FuzzClassify, FailureClasses) {
  for (RunClass c : {RunClass::Wrong, RunClass::Racy, RunClass::Crashed, RunClass::Internal,
                     RunClass::Timeout}) {
    EXPECT_TRUE(is_failure(c)) << class_name(c);
    EXPECT_TRUE(is_reported(c)) << class_name(c);
  }
  for (RunClass c : {RunClass::Validated, RunClass::Refused, RunClass::Unscheduled})
    EXPECT_FALSE(is_failure(c)) << class_name(c);
  EXPECT_TRUE(is_reported(RunClass::Unscheduled));
  EXPECT_FALSE(is_reported(RunClass::Refused));
}

TEST(FuzzSummary, LineAndExitRule) {
  Summary s;
  s.cases = 200;
  s.counts[static_cast<size_t>(RunClass::Validated)] = 390;
  s.counts[static_cast<size_t>(RunClass::Refused)] = 8;
  s.counts[static_cast<size_t>(RunClass::Unscheduled)] = 2;
  EXPECT_EQ(s.line(),
            "200 cases: 390 validated, 8 refused, 2 unscheduled, 0 wrong, 0 racy, 0 crashed, 0 "
            "internal, 0 timeout");
  EXPECT_FALSE(s.failed());  // 1 % unscheduled is still within the bound
  s.counts[static_cast<size_t>(RunClass::Unscheduled)] = 3;
  EXPECT_TRUE(s.failed());
  s.counts[static_cast<size_t>(RunClass::Unscheduled)] = 0;
  s.counts[static_cast<size_t>(RunClass::Timeout)] = 1;
  EXPECT_EQ(s.failures(), 1u);
  EXPECT_TRUE(s.failed());
}

TEST(FuzzClassify, MutantsOfValidatedRuns) {
  RunOutcome k = classify(ok("validated\nkilled\nwrong_result under mutation zero: output 0"),
                          Path::Schedule);
  EXPECT_EQ(k.cls, RunClass::Validated);
  EXPECT_EQ(k.mutant, Mutant::Killed);
  EXPECT_EQ(k.mutant_line, "wrong_result under mutation zero: output 0");
  RunOutcome s = classify(ok("validated\nsurvived\nmutation one:0.01 survived validation: ..."),
                          Path::Segmenter);
  EXPECT_EQ(s.mutant, Mutant::Survived);
  EXPECT_EQ(s.mutant_line, "mutation one:0.01 survived validation: ...");
  EXPECT_EQ(classify(ok("validated\nunchanged\nmutation swap changes nothing: ..."),
                     Path::Schedule)
                .mutant,
            Mutant::Unchanged);
  EXPECT_EQ(classify(ok("validated"), Path::Schedule).mutant, Mutant::None);
}

TEST(FuzzSummary, MutantsAreCountedAndASurvivorFails) {
  Summary s;
  s.cases = 2;
  RunOutcome killed(RunClass::Validated, "");
  killed.mutant = Mutant::Killed;
  RunOutcome unchanged = killed;
  unchanged.mutant = Mutant::Unchanged;
  s.add(killed);
  s.add(unchanged);
  s.add(RunOutcome(RunClass::Refused, "lower: ..."));
  EXPECT_EQ(s.line(),
            "2 cases: 2 validated, 1 refused, 0 unscheduled, 0 wrong, 0 racy, 0 crashed, 0 "
            "internal, 0 timeout; mutants: 1 killed, 0 survived, 1 unchanged");
  EXPECT_FALSE(s.failed());
  RunOutcome survived = killed;
  survived.mutant = Mutant::Survived;
  s.add(survived);
  EXPECT_EQ(s.survived, 1u);
  EXPECT_TRUE(s.failed());
}

// ---- real runs ----

constexpr const char* kAdd =
    "fusion: add\n"
    "inputs:\n"
    "  x0: {dtype: f32, shape: [N, K]}\n"
    "  x1: {dtype: f32, shape: [K]}\n"
    "sizes: {N: 3, K: 5}\n"
    "body: |\n"
    "  v1 = x0 + x1\n"
    "outputs: [v1]\n";

RunOptions options() {
  RunOptions o;
  o.cache_dir = std::string(SCHEDLAB_BINARY_DIR) + "/tests/fuzz/kernel_cache";
  o.timeout = std::chrono::milliseconds(120000);
  return o;
}

TEST(FuzzRun, AScheduleThatValidates) {
  RunOutcome r = run_isolated(kAdd,
                              "merge(v1, 0)\nsplit(v1, 0, 4)\nparallelize(v1, 0, BIDx)\n"
                              "parallelize(v1, 1, TIDx)\n",
                              options());
  EXPECT_EQ(r.cls, RunClass::Validated) << r.reason;
}

TEST(FuzzRun, AValidatedRunsMutantIsJudgedByTheSameValidation) {
  const std::string schedule = "merge(v1, 0)\nsplit(v1, 0, 4)\nparallelize(v1, 0, BIDx)\n"
                               "parallelize(v1, 1, TIDx)\n";
  RunOptions o = options();
  o.mutation = sweep::parse_mutation("scale:0.99");
  RunOutcome k = run_isolated(kAdd, schedule, o);
  EXPECT_EQ(k.cls, RunClass::Validated) << k.reason;
  EXPECT_EQ(k.mutant, Mutant::Killed) << k.mutant_line;
  EXPECT_EQ(k.mutant_line.rfind("wrong_result under mutation scale:0.99: output 0 (", 0), 0u)
      << k.mutant_line;
  o.mutation = sweep::parse_mutation("one:1e-7");  // a few ulps: inside any f32 tolerance
  RunOutcome s = run_isolated(kAdd, schedule, o);
  EXPECT_EQ(s.mutant, Mutant::Survived) << s.mutant_line;
}

TEST(FuzzRun, AScheduleThatIsRefusedNamesTheStageAndTheLine) {
  RunOutcome r = run_isolated(kAdd, "merge(v1, 0)\nsplit(v1, 0, 0)\n", options());
  EXPECT_EQ(r.cls, RunClass::Refused);
  EXPECT_NE(r.reason.find("fuzz.sched:2:1: error: schedule: split: factor must be positive"),
            std::string::npos)
      << r.reason;
}

TEST(FuzzRun, TheSegmenterPathUsesTheBuiltInPlugins) {
  RunOptions o = options();
  RunOutcome none = run_isolated(kAdd, std::nullopt, o);
  EXPECT_EQ(none.cls, RunClass::Unscheduled);
  EXPECT_NE(none.reason.find("segment: no scheduler accepts"), std::string::npos) << none.reason;
  plugin::Registry registry(
      plugin::plugin_search_path({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"}));
  o.plugins = sweep::segmenter_plugins(registry);
  ASSERT_FALSE(o.plugins.empty());
  RunOutcome r = run_isolated(kAdd, std::nullopt, o);
  EXPECT_EQ(r.cls, RunClass::Validated) << r.reason;
}

TEST(FuzzRun, UnderTheSanitizerARaceBetweenBlocksIsRacy) {
  // Issue #11's reproducer 3: softmax rows merged onto blocks; every block
  // resets and accumulates the same global max and sum. Lowering may refuse
  // it; if it accepts it, the sanitizer must report the race, whether or not
  // the outputs show it in this run.
  const std::string softmax =
      "fusion: softmax\n"
      "inputs:\n"
      "  x: {dtype: f32, shape: [N, K]}\n"
      "sizes: {N: 2, K: 8}\n"
      "body: |\n"
      "  m = max(x, axis=1, keepdim=true)\n"
      "  e = exp(x - m)\n"
      "  s = sum(e, axis=1, keepdim=true)\n"
      "  y = e / s\n"
      "outputs: [y]\n";
  RunOptions o = options();
  o.sanitize = true;
  RunOutcome r = run_isolated(softmax, "merge(y, 0)\nparallelize(y, 0, BIDx)\n", o);
  EXPECT_TRUE(r.cls == RunClass::Racy || r.cls == RunClass::Refused)
      << class_name(r.cls) << ": " << r.reason;
  if (r.cls == RunClass::Racy) {
    EXPECT_NE(r.reason.find("race"), std::string::npos) << r.reason;
  }
  // The same schedule of the add fusion is clean.
  RunOutcome clean = run_isolated(kAdd, "merge(v1, 0)\nparallelize(v1, 0, BIDx)\n", o);
  EXPECT_EQ(clean.cls, RunClass::Validated) << clean.reason;
}

TEST(FuzzRun, AFusionThatDoesNotParseIsRefusedNotInternal) {
  RunOutcome r = run_isolated("fusion: bad\ninputs: {}\nbody: |\n  y = q\noutputs: [y]\n",
                              std::string(), options());
  EXPECT_EQ(r.cls, RunClass::Refused);
  EXPECT_EQ(r.reason.rfind("invalid fusion text: fuzz.yaml:", 0), 0u) << r.reason;
}

}  // namespace
}  // namespace schedlab::fuzz
