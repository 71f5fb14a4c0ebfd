// The built-in `script` plugin (plugins/script), loaded from the build's
// plugin directory: scripts found by name and by path, placeholder values
// from `args`, and every error of a script reaching the caller unchanged
// with its file:line:col.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "schedlab/plugin/host.h"
#include "schedlab/runtime/cuda_backend.h"
#include "sp_test_util.h"

namespace schedlab::plugin {
namespace {

using sp_testing::user_error_what_of;
using sp_testing::nvrtc_errors;
using sp_testing::run_and_compare;
using sp_testing::Scheduled;
using sp_testing::segment_of;
using sp_testing::TempFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::shared_ptr<const Plugin> script_plugin() {
  static auto p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/script.so");
  return p;
}

std::string schedules() {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules";
}

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Schedules `fusion` with the script plugin and `settings`, checks it on the
/// CPU backend and with NVRTC; returns the scheduled fusion.
Scheduled run_script(const std::string& fusion, const ir::SizeBindings& sizes,
                     const std::vector<std::string>& settings) {
  auto p = script_plugin();
  Scheduled s = segment_of(fusion, sizes);
  ParamValues params = p->with_settings(p->compute_params(s.seg), settings);
  Verdict v = p->can_schedule(s.seg, params);
  EXPECT_TRUE(v.accepted) << v.reason;
  if (!v.accepted) return s;
  p->schedule(s.seg, params);
  EXPECT_EQ(run_and_compare(s), "") << fusion << " with " << p->format(params);
  EXPECT_EQ(nvrtc_errors(s), "") << fusion << " with " << p->format(params);
  return s;
}

TEST(ScriptPlugin, SchemaIsTwoStringsWithNothingToChoose) {
  auto p = script_plugin();
  EXPECT_EQ(p->name(), "script");
  EXPECT_EQ(p->abi_str(), "1.10");
  EXPECT_EQ(p->format(p->defaults()), "script=\"\", args=\"\"");
  Scheduled s = segment_of("softmax", {});
  EXPECT_EQ(p->format(p->compute_params(s.seg)), "script=\"\", args=\"\"");
}

TEST(ScriptPlugin, EveryExampleScheduleValidatesByName) {
  struct Case {
    std::string fusion, script;
    ir::SizeBindings sizes;
  };
  for (const Case& c :
       std::vector<Case>{{"softmax", "softmax_block.sched", {{"N", 7}, {"K", 100}}},
                         {"softmax", "softmax_pointwise", {{"N", 37}, {"K", 20}}},
                         {"pointwise_add_mul", "pointwise_add_mul", {{"N", 33}, {"K", 65}}},
                         {"layernorm", "layernorm_block", {{"N", 5}, {"K", 48}}},
                         {"rmsnorm", "rmsnorm_block", {{"N", 3}, {"K", 17}}},
                         {"row_sum", "row_sum_grid", {{"N", 3}, {"K", 9000}}},
                         {"transpose2d", "transpose2d", {{"N", 9}, {"K", 13}}}}) {
    SCOPED_TRACE(c.fusion + " with " + c.script);
    run_script(c.fusion, c.sizes, {"script=" + c.script});
  }
}

TEST(ScriptPlugin, ByPathRelativeOrAbsolute) {
  run_script("softmax", {{"N", 5}, {"K", 33}}, {"script=" + schedules() + "/softmax_block.sched"});
  // A name that is an existing file is taken as a path.
  std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(schedules());
  run_script("pointwise_add_mul", {{"N", 4}, {"K", 5}}, {"script=./pointwise_add_mul.sched"});
  std::filesystem::current_path(cwd);
}

TEST(ScriptPlugin, ArgsSubstitutePlaceholders) {
  Scheduled s = run_script("pointwise_add_mul", {{"N", 10}, {"K", 7}},
                           {"script=pointwise_add_mul.sched", "args=block=32"});
  EXPECT_EQ(s.def.fusion->outputs()[0]->axis(1)->extent().str(), "32");
  Scheduled d =
      run_script("pointwise_add_mul", {{"N", 10}, {"K", 7}}, {"script=pointwise_add_mul.sched"});
  EXPECT_EQ(d.def.fusion->outputs()[0]->axis(1)->extent().str(), "128");  // params(block=128)
  // softmax_block: {persist} chunks per row; the row split into 3 (an uneven split).
  Scheduled p =
      run_script("softmax", {{"N", 4}, {"K", 50}}, {"script=softmax_block", "args=persist=3"});
  for (ir::TensorView* tv : p.def.fusion->outputs()) EXPECT_EQ(tv->axis(1)->extent().str(), "3");
  run_script("row_sum", {{"N", 2}, {"K", 1000}},
             {"script=row_sum_grid", "args=chunk=256, threads=32"});
}

TEST(ScriptPlugin, ScheduleSearchPathComesFirst) {
  TempFile mine("mine.sched",
                "params(block=64)\nmerge(out, 0)\nsplit(out, 0, {block})\n"
                "parallelize(out, 0, BIDx)\nparallelize(out, 1, TIDx)\n"
                "propagate_transformation(out)\nparallelize_all_like(out)\n"
                "inline_most()\n");
  ScopedEnv env("SCHEDLAB_SCHEDULE_PATH", "/nonexistent:" + mine.dir());
  Scheduled s = run_script("pointwise_add_mul", {{"N", 3}, {"K", 100}}, {"script=mine"});
  EXPECT_EQ(s.def.fusion->outputs()[0]->axis(1)->extent().str(), "64");
}

TEST(ScriptPlugin, CanScheduleSaysWhyNot) {
  auto p = script_plugin();
  Scheduled s = segment_of("softmax", {});
  EXPECT_EQ(p->can_schedule(s.seg, p->defaults()).reason,
            "no schedule script given; set one with --set script=NAME_OR_PATH (a name in "
            "configs/schedules, e.g. softmax_block.sched)");
  ScopedEnv env("SCHEDLAB_SCHEDULE_PATH", "/nonexistent");
  EXPECT_EQ(p->can_schedule(s.seg, p->with_settings(p->defaults(), {"script=nope"})).reason,
            "no schedule script 'nope' in the working directory or in /nonexistent, " +
                schedules() +
                " (tried 'nope' and 'nope.sched'; $SCHEDLAB_SCHEDULE_PATH adds directories)");
  EXPECT_EQ(
      p->can_schedule(s.seg, p->with_settings(p->defaults(), {"script=/no/such.sched"})).reason,
      "schedule script '/no/such.sched' does not exist or is not a regular file");
}

TEST(ScriptPlugin, ScheduleWithoutAScriptIsAUserError) {
  auto p = script_plugin();
  Scheduled s = segment_of("softmax", {});
  EXPECT_THAT(user_error_what_of([&] { p->schedule(s.seg, p->defaults()); }),
              StartsWith("error: script: no schedule script given"));
}

TEST(ScriptPlugin, ParseErrorReachesTheCallerIntact) {
  auto p = script_plugin();
  Scheduled s = segment_of("transpose2d", {});
  std::string f = std::string(SP_FIXTURE_DIR) + "/syntax_error.sched";
  auto params = p->with_settings(p->defaults(), {"script=" + f});
  EXPECT_EQ(user_error_what_of([&] { p->schedule(s.seg, params); }),
            "error: " + f + ":4:21: expected ',' or ')' in the call to 'split', found '2'");
  // The whole file is parsed first: line 3's merge was not applied.
  EXPECT_EQ(s.def.fusion->outputs()[0]->nloop(), 2);
}

TEST(ScriptPlugin, ApplyErrorsReachTheCallerIntact) {
  auto p = script_plugin();
  std::string f = std::string(SP_FIXTURE_DIR) + "/bad_factor.sched";
  Scheduled s = segment_of("transpose2d", {});
  auto params = p->with_settings(p->defaults(), {"script=" + f, "args=factor=0"});
  EXPECT_THAT(user_error_what_of([&] { p->schedule(s.seg, params); }),
              StartsWith("error: " + f + ":3:1: split: factor must be positive, got 0 (T"));
  // A name the fusion lacks: the script is for another fusion.
  Scheduled softmax = segment_of("softmax", {});
  auto other = p->with_settings(p->defaults(), {"script=pointwise_add_mul"});
  EXPECT_THAT(user_error_what_of([&] { p->schedule(softmax.seg, other); }),
              StartsWith("error: " + schedules() +
                         "/pointwise_add_mul.sched:5:7: unknown tensor 'out'; expected a fusion "
                         "name, T<n> or a name bound earlier in the script"));
}

TEST(ScriptPlugin, ArgsErrors) {
  auto p = script_plugin();
  Scheduled s = segment_of("pointwise_add_mul", {});
  auto typo = p->with_settings(p->defaults(), {"script=pointwise_add_mul", "args=blok=64"});
  EXPECT_EQ(user_error_what_of([&] { p->schedule(s.seg, typo); }),
            "error: args: 'blok' is not a placeholder of schedule script '" + schedules() +
                "/pointwise_add_mul.sched' (its placeholders: block)");
  auto bad = p->with_settings(p->defaults(), {"script=pointwise_add_mul", "args=block=big"});
  EXPECT_EQ(user_error_what_of([&] { p->schedule(s.seg, bad); }),
            "error: args: block must be an integer, found 'big'");
  // A placeholder with no value anywhere: the applier's error, at the use.
  TempFile f("nodefault.sched", "merge(out, 0)\nsplit(out, 0, {block})\n");
  auto missing = p->with_settings(p->defaults(), {"script=" + f.path()});
  EXPECT_EQ(user_error_what_of([&] { p->schedule(s.seg, missing); }),
            "error: " + f.path() +
                ":2:15: no value for parameter '{block}'; known params: (none) (declare a "
                "default with params(block=...))");
}

}  // namespace
}  // namespace schedlab::plugin
