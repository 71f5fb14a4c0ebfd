// Schedule scripts (core/frontend/schedule_script.cpp).
//
// Positive tests apply a script to one copy of a fusion and the same schedule
// through the C++ API to a second copy, and require the two printed schedules
// (sched::print_scheduled_fusion) to be equal. Invalid scripts live in
// tests/frontend/invalid_schedules/, MLIR-style: each opens with
//   # expect: LINE:COL: MESSAGE
// and may name its fusion on the next line (`# fusion: NAME`, default softmax).
// "{file}" in MESSAGE stands for the script's path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/lower/lower.h"
#include "schedlab/sched/sched.h"
#include "test_support.h"

namespace schedlab::frontend {
namespace {

using ir::Fusion;
using ir::LoopTransform;
using ir::ParallelType;
using ir::TensorView;
using test_support::load_config_fusion;
using test_support::named;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSource = SCHEDLAB_SOURCE_DIR;

/// A fusion whose output `s` is also read by `y`: for cache_fork.
const char* kForkFusion = R"(fusion: fork
inputs:
  x: {dtype: f32, shape: [N, K]}
body: |
  s = x + 1
  y = s * 2
outputs: [s, y]
)";

FusionDefinition load_any(const std::string& name) {
  return name == "fork" ? parse_fusion_text(kForkFusion, "fork.yaml") : load_config_fusion(name);
}

/// Applies `script` to one copy of `fusion` and `api` to another; both
/// schedules must print the same, and differ from the unscheduled fusion.
void expect_same(const std::string& fusion, const std::string& script,
                 const std::function<void(Fusion&)>& api, const ScheduleParams& params = {}) {
  FusionDefinition by_text = load_any(fusion);
  FusionDefinition by_api = load_any(fusion);
  const std::string before = sched::print_scheduled_fusion(*by_text.fusion);
  try {
    apply_schedule_text(script, "test.sched", by_text, params);
  } catch (const UserError& e) {
    FAIL() << e.what() << "\nscript:\n" << script;
  }
  api(*by_api.fusion);
  const std::string want = sched::print_scheduled_fusion(*by_api.fusion);
  const std::string got = sched::print_scheduled_fusion(*by_text.fusion);
  EXPECT_EQ(got, want) << "script:\n" << script;
  EXPECT_NE(got, before) << "the script changed nothing:\n" << script;
}

// ---- one test per primitive ---------------------------------------------------

TEST(ScheduleScript, Split) {
  expect_same("pointwise_add_mul", "split(out, 1, 4)\nsplit(out, 0, 2, inner_split=false)\n",
              [](Fusion& f) {
                named(f, "out")->split(1, 4);
                named(f, "out")->split(0, 2, false);
              });
  // Keyword arguments by parameter name, negative axes.
  expect_same("pointwise_add_mul", "split(tv=out, axis=-1, factor=8)",
              [](Fusion& f) { named(f, "out")->split(-1, 8); });
}

TEST(ScheduleScript, Merge) {
  expect_same("pointwise_add_mul", "merge(out, 0)", [](Fusion& f) { named(f, "out")->merge(0); });
  expect_same("broadcast_reduce", "merge(T1, 0, 1)",
              [](Fusion& f) { f.tensors()[1]->merge(0, 1); });
}

TEST(ScheduleScript, ReorderTakesAMap) {
  expect_same("transpose2d", "reorder(y, {0: 1, 1: 0})", [](Fusion& f) {
    named(f, "y")->reorder({{0, 1}, {1, 0}});
  });
  expect_same("pointwise_add_mul", "split(out, 1, 4)\nreorder(out, {-1: 0})", [](Fusion& f) {
    named(f, "out")->split(1, 4)->reorder({{-1, 0}});
  });
}

TEST(ScheduleScript, ParallelizeTypesAndLoopTransforms) {
  // Vectorize applies to copies: `out` is written from a cache_before copy.
  expect_same("pointwise_add_mul",
              "cache_before(out)\n"
              "split(out, 1, 4)\n"
              "parallelize(out, 0, BIDx)\n"
              "parallelize(out, 1, tidx)   # enum names ignore case\n"
              "parallelize(out, 2, Vectorize)\n",
              [](Fusion& f) {
                TensorView* out = named(f, "out");
                sched::cache_before(out);
                out->split(1, 4);
                out->parallelize(0, ParallelType::BIDx);
                out->parallelize(1, ParallelType::TIDx);
                out->parallelize(2, LoopTransform::Vectorize);
              });
  expect_same("pointwise_add_mul",
              "parallelize(out, 0, DIDx)\nparallelize(out, 1, Unroll)\nparallelize(out, 0, Serial)",
              [](Fusion& f) {
                TensorView* out = named(f, "out");
                out->parallelize(0, ParallelType::DIDx);
                out->parallelize(1, LoopTransform::Unroll);
                out->parallelize(0, ParallelType::Serial);
              });
}

TEST(ScheduleScript, CacheAfterAndSetMemoryType) {
  expect_same(
      "pointwise_add_mul",
      "c0 = cache_after(x)\n"
      "set_memory_type(c0, shared)\n"
      "c1 = cache_after(b, CpAsync, Streaming)\n"
      "c2 = cache_after(y, cache_op=Global)\n"
      "set_memory_type(c2, Shared)\n",
      [](Fusion& f) {
        sched::set_memory_type(sched::cache_after(named(f, "x")), ir::MemoryType::Shared);
        sched::cache_after(named(f, "b"), ir::LoadStoreOpType::CpAsync, ir::CacheOp::Streaming);
        TensorView* c2 =
            sched::cache_after(named(f, "y"), ir::LoadStoreOpType::Set, ir::CacheOp::Global);
        sched::set_memory_type(c2, ir::MemoryType::Shared);
      });
}

TEST(ScheduleScript, CacheBeforeAndFork) {
  expect_same("softmax", "c = cache_before(y)\nsplit(c, 1, 2)",
              [](Fusion& f) { sched::cache_before(named(f, "y"))->split(1, 2); });
  expect_same("fork", "c = cache_fork(s)\nsplit(c, 0, 2)\nsplit(s, 1, 4)", [](Fusion& f) {
    TensorView* s = named(f, "s");
    sched::cache_fork(s)->split(0, 2);
    s->split(1, 4);
  });
}

TEST(ScheduleScript, Rfactor) {
  expect_same("row_sum",
              "split(y, 1, 128)\n"
              "p = rfactor(y, [1])\n"
              "parallelize(y, 0, BIDx)\n"
              "parallelize(y, 1, TIDx)\n"
              "parallelize_all_like(y)\n"
              "split(p, 1, 2)\n",
              [](Fusion& f) {
                TensorView* y = named(f, "y");
                y->split(1, 128);
                TensorView* p = sched::rfactor(y, {1});
                y->parallelize(0, ParallelType::BIDx);
                y->parallelize(1, ParallelType::TIDx);
                sched::parallelize_all_like(y);
                p->split(1, 2);
              });
}

TEST(ScheduleScript, PropagateTransformation) {
  expect_same("softmax", "split(y, 1, 4)\npropagate_transformation(y)", [](Fusion& f) {
    named(f, "y")->split(1, 4);
    sched::propagate_transformation(named(f, "y"));
  });
  expect_same("softmax", "split(y, 1, 4)\npropagate_transformation(y, [e, T2])", [](Fusion& f) {
    named(f, "y")->split(1, 4);
    sched::propagate_transformation(named(f, "y"), {named(f, "e"), f.tensors()[2]});
  });
}

TEST(ScheduleScript, ParallelizeAllLike) {
  const char* prefix =
      "split(y, 1, 4)\nparallelize(y, 0, BIDx)\nparallelize(y, 2, TIDx)\n"
      "parallelize(y, 1, Unroll)\npropagate_transformation(y)\n";
  auto api_prefix = [](Fusion& f) {
    TensorView* y = named(f, "y");
    y->split(1, 4);
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(2, ParallelType::TIDx);
    y->parallelize(1, LoopTransform::Unroll);
    sched::propagate_transformation(y);
  };
  expect_same("softmax", std::string(prefix) + "parallelize_all_like(y)", [&](Fusion& f) {
    api_prefix(f);
    sched::parallelize_all_like(named(f, "y"));
  });
  expect_same("softmax", std::string(prefix) + "parallelize_all_like(y, 1, [e, m])",
              [&](Fusion& f) {
                api_prefix(f);
                sched::parallelize_all_like(named(f, "y"), 1, {named(f, "e"), named(f, "m")});
              });
  expect_same("softmax",
              std::string(prefix) + "parallelize_all_like(y, types=[TIDx], transforms=[])",
              [&](Fusion& f) {
                api_prefix(f);
                sched::parallelize_all_like(named(f, "y"), -1, {}, {ParallelType::TIDx}, {});
              });
}

TEST(ScheduleScript, Inlining) {
  const char* prefix = "split(y, 1, 4)\npropagate_transformation(y)\n";
  auto api_prefix = [](Fusion& f) {
    named(f, "y")->split(1, 4);
    sched::propagate_transformation(named(f, "y"));
  };
  expect_same("gelu", std::string(prefix) + "inline_most()", [&](Fusion& f) {
    api_prefix(f);
    sched::inline_most(f);
  });
  expect_same("gelu", std::string(prefix) + "inline_most([cdf])", [&](Fusion& f) {
    api_prefix(f);
    sched::inline_most(f, {named(f, "cdf")});
  });
  expect_same("gelu", std::string(prefix) + "inline_at(cdf, 1)\ninline_at(T1, 3, best_effort=true)",
              [&](Fusion& f) {
                api_prefix(f);
                sched::inline_at(named(f, "cdf"), 1);
                sched::inline_at(f.tensors()[1], 3, true);
              });
  expect_same("gelu", std::string(prefix) + "inline_selected_at([T1, T2], y, 2)", [&](Fusion& f) {
    api_prefix(f);
    sched::inline_selected_at({f.tensors()[1], f.tensors()[2]}, named(f, "y"), 2);
  });
}

// ---- queries and list indexing --------------------------------------------------

TEST(ScheduleScript, GetReductionTvsAndIndexing) {
  // softmax's reductions: the max, then the sum. -1 is the last, as in Python.
  expect_same("softmax", "r = get_reduction_tvs()\nsplit(r[0], 1, 2)\nsplit(r[-1], 1, 4)",
              [](Fusion& f) {
                auto r = sched::get_reduction_tvs(f);
                r[0]->split(1, 2);
                r[1]->split(1, 4);
              });
  // An index may be a {param}; a query's result can be used unbound too.
  expect_same("softmax", "get_reduction_tvs()\nr = get_reduction_tvs()\nsplit(r[{i}], 1, 2)",
              [](Fusion& f) { sched::get_reduction_tvs(f)[1]->split(1, 2); }, {{"i", 1}});
}

TEST(ScheduleScript, AllTvsExceptTakesAList) {
  const char* prefix = "split(y, 1, 4)\n";
  expect_same("softmax",
              std::string(prefix) +
                  "rest = all_tvs_except([x, m])\n"
                  "propagate_transformation(y, rest)",
              [](Fusion& f) {
                named(f, "y")->split(1, 4);
                sched::propagate_transformation(
                    named(f, "y"), sched::all_tvs_except(f, {named(f, "x"), named(f, "m")}));
              });
  // Its argument may itself be a query's list; [] excepts nothing.
  expect_same("softmax",
              std::string(prefix) +
                  "r = get_reduction_tvs()\n"
                  "rest = all_tvs_except(r)\n"
                  "all = all_tvs_except([])\n"
                  "propagate_transformation(y, rest)\n"
                  "parallelize(y, 0, BIDx)\n"
                  "parallelize_all_like(y, selected=all)",
              [](Fusion& f) {
                TensorView* y = named(f, "y");
                y->split(1, 4);
                sched::propagate_transformation(
                    y, sched::all_tvs_except(f, sched::get_reduction_tvs(f)));
                y->parallelize(0, ParallelType::BIDx);
                sched::parallelize_all_like(y, -1, sched::all_tvs_except(f, {}));
              });
}

TEST(ScheduleScript, FindReferenceFor) {
  expect_same("layernorm",
              "ref = find_reference_for()\nsplit(ref, 1, 4)\npropagate_transformation(ref)",
              [](Fusion& f) {
                TensorView* ref = sched::find_reference_for(f);
                ref->split(1, 4);
                sched::propagate_transformation(ref);
              });
}

TEST(ScheduleScript, GroupInputsOutputsByInnerDimIsAListOfLists) {
  // transpose2d: x's inner axis is y's outer one, so [[x], [y]].
  expect_same(
      "transpose2d",
      "g = group_inputs_outputs_by_inner_dim()\nsplit(g[1][0], 1, 2)\nsplit(g[-2][-1], 0, 4)",
      [](Fusion& f) {
        auto g = sched::group_inputs_outputs_by_inner_dim(f);
        g[1][0]->split(1, 2);
        g[0][0]->split(0, 4);
      });
  expect_same("pointwise_add_mul",
              "g = group_inputs_outputs_by_inner_dim()\nsplit(out, 1, 2)\n"
              "propagate_transformation(out, g[0])",
              [](Fusion& f) {
                auto g = sched::group_inputs_outputs_by_inner_dim(f);
                named(f, "out")->split(1, 2);
                sched::propagate_transformation(named(f, "out"), g[0]);
              });
}

TEST(ScheduleScript, AQueryResultIsASnapshot) {
  // r is what get_reduction_tvs() found at line 1: the rfactor producer made
  // later is not in it, and a second call sees it.
  auto def = load_config_fusion("row_sum");
  auto log = apply_schedule_text(
      "r = get_reduction_tvs()\nsplit(r[0], 1, 4)\np = rfactor(r[-1], [1])\n"
      "r2 = get_reduction_tvs()\nsplit(r2[0], 1, 2)\n",
      "t.sched", def, {});
  const std::string y = named(*def.fusion, "y")->describe();
  TensorView* p = sched::get_reduction_tvs(*def.fusion)[0];
  EXPECT_THAT(log, ElementsAre("1: r = get_reduction_tvs() -> [" + y + "]", "2: split(r[0], 1, 4)",
                               "3: p = rfactor(r[-1], [1]) -> " + p->describe(),
                               "4: r2 = get_reduction_tvs() -> [" + p->describe() + ", " + y + "]",
                               "5: split(r2[0], 1, 2)"));
  EXPECT_EQ(p->nloop(), 4);  // split by line 5
}

TEST(ScheduleScript, NestedListsInTheLog) {
  auto def = load_config_fusion("transpose2d");
  auto log =
      apply_schedule_text("g = group_inputs_outputs_by_inner_dim()\nsplit(g[{k}][0], 0, 2)\n",
                          "t.sched", def, {{"k", -1}});
  EXPECT_THAT(log, ElementsAre("1: g = group_inputs_outputs_by_inner_dim() -> [[T0 (x)], [" +
                                   named(*def.fusion, "y")->describe() + "]]",
                               "2: split(g[-1][0], 0, 2)"));
}

// ---- names, params and the log ----------------------------------------------

TEST(ScheduleScript, TensorsByNumberAndByCacheName) {
  // x_cache is the name cache_after gives; T<n> reaches any tensor.
  expect_same("gelu", "cache_after(x)\nsplit(x_cache, 0, 2)\nsplit(T1, 1, 2)", [](Fusion& f) {
    sched::cache_after(named(f, "x"))->split(0, 2);
    f.tensors()[1]->split(1, 2);
  });
}

TEST(ScheduleScript, ParamsSubstituteAndOverrideDefaults) {
  auto api = [](int64_t block) {
    return [block](Fusion& f) { named(f, "out")->merge(0)->split(0, block); };
  };
  const std::string script = "merge(out, 0)\nsplit(out, 0, {block})\n";
  expect_same("pointwise_add_mul", script, api(64), {{"block", 64}});
  expect_same("pointwise_add_mul", "params(block=32)\n" + script, api(32));
  expect_same("pointwise_add_mul", "params(block=32)\n" + script, api(256), {{"block", 256}});
  // A placeholder is an integer anywhere one is: in lists and maps too.
  expect_same("transpose2d", "reorder(y, {{a}: {b}})",
              [](Fusion& f) {
                named(f, "y")->reorder({{0, 1}});
              },
              {{"a", 0}, {"b", 1}});
}

TEST(ScheduleScript, LogHasOneLinePerStatement) {
  auto def = load_config_fusion("pointwise_add_mul");
  auto log = apply_schedule_text(
      "# comment\nparams(block=4)\n\nc0 = cache_after(x)   # trailing\nsplit(out, 1, {block}, "
      "inner_split=false)\nreorder(out, {0: 1})\n",
      "t.sched", def, {});
  EXPECT_THAT(log,
              ElementsAre("2: params(block=4)", "4: c0 = cache_after(x) -> T9 (x_cache)",
                          "5: split(out, 1, 4, inner_split=false)", "6: reorder(out, {0: 1})"));
}

TEST(ScheduleScript, SyntaxErrorAppliesNothing) {
  auto def = load_config_fusion("pointwise_add_mul");
  const std::string before = sched::print_scheduled_fusion(*def.fusion);
  EXPECT_THROW(apply_schedule_text("merge(out, 0)\nsplit(out, 0, 4\n", "t.sched", def, {}),
               UserError);
  EXPECT_EQ(sched::print_scheduled_fusion(*def.fusion), before);
}

TEST(ScheduleScript, UnreadableFile) {
  auto def = load_config_fusion("softmax");
  try {
    apply_schedule_file(kSource + "/no/such.sched", def, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr("cannot read schedule file"));
    EXPECT_THAT(e.message(), HasSubstr("no such file"));
  }
}

// ---- the example schedules in configs/schedules --------------------------------

struct Example {
  const char* schedule;
  const char* fusion;
  const char* output;
};

class ExampleSchedule : public testing::TestWithParam<Example> {};

TEST_P(ExampleSchedule, AppliesCleanly) {
  const Example& ex = GetParam();
  auto def = load_config_fusion(ex.fusion);
  const std::string path = kSource + "/configs/schedules/" + ex.schedule + ".sched";
  std::vector<std::string> log;
  try {
    log = apply_schedule_file(path, def, {});
  } catch (const UserError& e) {
    FAIL() << e.what();
  }
  SCOPED_TRACE(sched::print_scheduled_fusion(*def.fusion));
  EXPECT_FALSE(log.empty());
  EXPECT_NO_THROW(ir::verify(*def.fusion));
  EXPECT_NO_THROW(sched::validate_bindings(*def.fusion));
  TensorView* out = named(*def.fusion, ex.output);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->axis(0)->parallel_type(), ParallelType::BIDx);
  EXPECT_EQ(out->axis(1)->parallel_type(), ParallelType::TIDx);
  // Every computed tensor follows the output's grid, and reductions stay
  // serial within a thread.
  for (TensorView* tv : def.fusion->tensors()) {
    if (def.fusion->is_input(tv)) continue;
    EXPECT_EQ(tv->axis(0)->parallel_type(), ParallelType::BIDx) << tv->describe();
    for (const ir::IterDomain* id : tv->loop())
      if (id->is_reduction()) {
        EXPECT_EQ(id->parallel_type(), ParallelType::Serial) << tv->describe();
      }
  }
  // Legal all the way down: the schedule lowers to a kernel.
  try {
    lower::lower(*def.fusion);
  } catch (const UserError& e) {
    ADD_FAILURE() << "lowering failed: " << e.what();
  }
  // The block size is a parameter with a default that callers override.
  auto again = load_config_fusion(ex.fusion);
  apply_schedule_file(path, again, {{"block", 32}});
  EXPECT_EQ(named(*again.fusion, ex.output)->axis(1)->extent().str(), "32");
}

INSTANTIATE_TEST_SUITE_P(Configs, ExampleSchedule,
                         testing::Values(Example{"softmax_pointwise", "softmax", "y"},
                                         Example{"pointwise_add_mul", "pointwise_add_mul", "out"},
                                         Example{"transpose2d", "transpose2d", "y"}),
                         [](const testing::TestParamInfo<Example>& i) {
                           return std::string(i.param.schedule);
                         });

// ---- nvFuser's user-schedule tests, rewritten as scripts ----------------------------
//
// tests/python/test_schedule_ops.py in nvFuser: each script in configs/schedules
// must schedule exactly as the same steps through the C++ API, and lower.
// tests/cli runs both end to end on the CPU backend against the reference.

std::string read_schedule(const std::string& name) {
  std::ifstream in(kSource + "/configs/schedules/" + name + ".sched");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_lowers(const std::string& fusion, const std::string& schedule) {
  auto def = load_config_fusion(fusion);
  apply_schedule_text(read_schedule(schedule), schedule + ".sched", def, {});
  try {
    lower::lower(*def.fusion);
  } catch (const UserError& e) {
    ADD_FAILURE() << "lowering failed: " << e.what() << "\n"
                  << sched::print_scheduled_fusion(*def.fusion);
  }
}

// test_var_mean_user_schedule: the reductions come from get_reduction_tvs().
TEST(NvfuserUserSchedules, VarMeanRfactorsWhatGetReductionTvsFinds) {
  expect_same("var_mean", read_schedule("var_mean_rfactor"), [](Fusion& f) {
    TensorView* xc = sched::cache_after(named(f, "x"));
    sched::set_memory_type(xc, ir::MemoryType::Shared);
    sched::cache_before(named(f, "y"));
    sched::cache_fork(named(f, "mean"));
    sched::cache_fork(named(f, "invstd"));
    TensorView* ref = sched::find_reference_for(f);
    ref->split(1, 4)->split(1, 256);
    sched::propagate_transformation(ref);
    auto reductions = sched::get_reduction_tvs(f);
    ASSERT_EQ(reductions.size(), 2u);  // as nvFuser's test asserts
    for (TensorView* r : reductions) sched::rfactor(r, {-1});
    TensorView* y = named(f, "y");
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(-2, ParallelType::TIDx);
    sched::parallelize_all_like(y);
    xc->parallelize(-1, LoopTransform::Vectorize);
    y->parallelize(-1, LoopTransform::Vectorize);
    sched::set_memory_type(named(f, "mean"), ir::MemoryType::Shared);
    sched::set_memory_type(named(f, "invstd"), ir::MemoryType::Shared);
    sched::inline_most(f);
  });
  expect_lowers("var_mean", "var_mean_rfactor");
}

// test_pointwise_partial_transform_user_schedule: a selected list (here
// all_tvs_except) and an rfactor of the reduction the propagation missed.
TEST(NvfuserUserSchedules, PartialTransformWithAllTvsExcept) {
  expect_same("max_sub_add", read_schedule("max_sub_add_partial"), [](Fusion& f) {
    TensorView* x = named(f, "x");
    TensorView* b = named(f, "b");
    TensorView* y = named(f, "y");
    TensorView* m = named(f, "m");
    TensorView* xc = sched::cache_after(x);
    TensorView* bc = sched::cache_after(b);
    TensorView* yc = sched::cache_before(y);
    // mb stays Local, as in nvFuser: a block broadcast (lowering rule 2).
    for (TensorView* t : {xc, bc, yc, named(f, "d")}) sched::set_memory_type(t, ir::MemoryType::Shared);
    auto rest = sched::all_tvs_except(f, {x, b, xc});
    y->split(1, 128);
    sched::propagate_transformation(y, rest);
    EXPECT_EQ(m->nloop(), 2) << "the max is not reached through the broadcast";
    m->split(1, 128);
    sched::rfactor(m, {1});
    auto sel = sched::all_tvs_except(f, {x, b, xc});
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(-1, ParallelType::TIDx);
    sched::parallelize_all_like(y, -1, sel);
    m->parallelize(0, ParallelType::BIDx);
    m->parallelize(-1, ParallelType::TIDx);
    sched::parallelize_all_like(m, -1, sel);
    xc->split(1, 4);
    xc->parallelize(0, ParallelType::BIDx);
    xc->parallelize(1, ParallelType::TIDx);
    xc->parallelize(2, LoopTransform::Vectorize);
  });
  expect_lowers("max_sub_add", "max_sub_add_partial");
}

// ---- invalid scripts, data-driven ------------------------------------------------

const std::string kInvalidDir = kSource + "/tests/frontend/invalid_schedules";

std::vector<std::string> invalid_files() {
  return test_support::files_with_extension(kInvalidDir, ".sched");
}

struct Expectation {
  int line = 0;
  int col = 0;
  std::string message;
  std::string fusion = "softmax";
};

Expectation read_expectation(const std::string& path) {
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  static const std::regex kExpect(R"(^# expect: (\d+):(\d+): (.+)$)");
  static const std::regex kFusion(R"(^# fusion: (\w+)\s*$)");
  std::smatch m;
  if (!std::regex_match(first, m, kExpect)) return {};
  Expectation e{std::stoi(m[1]), std::stoi(m[2]), m[3]};
  for (size_t at; (at = e.message.find("{file}")) != std::string::npos;)
    e.message.replace(at, 6, path);
  if (std::regex_match(second, m, kFusion)) e.fusion = m[1];
  return e;
}

class InvalidSchedule : public testing::TestWithParam<std::string> {};

TEST_P(InvalidSchedule, Diagnoses) {
  const std::string& path = GetParam();
  const Expectation want = read_expectation(path);
  ASSERT_GT(want.line, 0) << path << ": the first line must be '# expect: LINE:COL: MESSAGE'";
  auto def = load_any(want.fusion);
  try {
    apply_schedule_file(path, def, {{"block", 128}});
    FAIL() << path << " applied without error; expected " << want.line << ":" << want.col << ": "
           << want.message;
  } catch (const UserError& e) {
    SCOPED_TRACE(std::string("diagnostic: ") + e.what());
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, want.line);
    EXPECT_EQ(e.loc().col, want.col);
    EXPECT_THAT(e.message(), HasSubstr(want.message));
  }
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidSchedule, testing::ValuesIn(invalid_files()),
                         test_support::file_case_name);

// Guards against the directory going missing and two files testing one thing.
TEST(InvalidSchedules, AtLeast12DistinctCases) {
  auto files = invalid_files();
  EXPECT_GE(files.size(), 12u) << "in " << kInvalidDir;
  std::set<std::string> messages;
  for (const auto& f : files) {
    Expectation e = read_expectation(f);
    EXPECT_TRUE(messages.insert(e.message).second) << f << " repeats another file's expectation";
  }
}

}  // namespace
}  // namespace schedlab::frontend
