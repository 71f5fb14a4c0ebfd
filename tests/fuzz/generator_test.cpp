// The fuzz generators (core/fuzz/fusion_gen.cpp, schedule_gen.cpp):
// determinism per (seed, case), every generated text valid, and coverage of
// every feature issue #11 asks for within the first few hundred cases.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_ast.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/verifier.h"

namespace schedlab::fuzz {
namespace {

constexpr uint64_t kCoverageCases = 300;

std::string case_text(const Case& c) { return c.fusion.text() + "---\n" + c.schedule.text(); }

TEST(FuzzGenerator, SameSeedAndIndexGiveTheSameCase) {
  for (uint64_t i : {0u, 1u, 17u, 299u})
    EXPECT_EQ(case_text(generate_case(42, i)), case_text(generate_case(42, i))) << "case " << i;
}

TEST(FuzzGenerator, ACaseDoesNotDependOnTheCasesDrawnBeforeIt) {
  // --jobs changes the order cases are generated in, never their content.
  const std::string late = case_text(generate_case(5, 9));
  for (uint64_t i = 0; i < 9; ++i) generate_case(5, i);
  EXPECT_EQ(case_text(generate_case(5, 9)), late);
}

TEST(FuzzGenerator, SeedsAndIndicesGiveDifferentCases) {
  std::set<std::string> texts;
  for (uint64_t seed : {1u, 2u})
    for (uint64_t i = 0; i < 20; ++i) texts.insert(case_text(generate_case(seed, i)));
  EXPECT_GE(texts.size(), 38u);
  EXPECT_NE(case_rng(1, 2)(), case_rng(2, 1)());
}

TEST(FuzzGenerator, EveryFusionParsesVerifiesAndBindsItsSizes) {
  for (uint64_t i = 0; i < kCoverageCases; ++i) {
    const Case c = generate_case(3, i);
    const std::string text = c.fusion.text();
    SCOPED_TRACE(text);
    frontend::FusionDefinition def = frontend::parse_fusion_text(text, "fuzz.yaml");
    EXPECT_NO_THROW(ir::verify(*def.fusion));
    EXPECT_NO_THROW(frontend::bind_sizes(def, {}));
    EXPECT_EQ(def.fusion->outputs().size(), c.fusion.outputs.size());
    // Schedules are plausible, not always legal, but always well-formed text.
    EXPECT_NO_THROW(frontend::parse_schedule(c.schedule.text(), "fuzz.sched"))
        << c.schedule.text();
  }
}

TEST(FuzzGenerator, EveryFeatureAppearsInTheFirstCases) {
  std::set<std::string> fusion, schedule;
  for (uint64_t i = 0; i < kCoverageCases; ++i) {
    const Case c = generate_case(1, i);
    fusion.insert(c.fusion.features.begin(), c.fusion.features.end());
    schedule.insert(c.schedule.features.begin(), c.schedule.features.end());
  }
  for (const char* f :
       {"unary", "binary", "where", "cast", "broadcast_size1", "broadcast_rank",
        "broadcast_explicit", "input_size1_axis", "input_lower_rank", "input_0d", "input_f16",
        "input_bf16", "input_i32", "half_math", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
        "reduce_mean", "reduce_keepdim", "reduce_no_keepdim", "reduce_axis_0", "reduce_axis_1",
        "reduce_axis_2", "reduce_several_axes", "reduce_all_axes", "softmax", "layernorm",
        "dead_statement", "multiple_outputs", "copy", "output_f16", "output_bf16", "extent_1",
        "extent_prime", "extent_not_multiple_of_4", "reshape"})
    EXPECT_TRUE(fusion.count(f)) << "no fusion feature " << f << " in " << kCoverageCases
                                 << " cases";
  for (const char* f :
       {"split", "split_outer", "merge", "reorder", "BIDx", "BIDy", "TIDx", "TIDy",
        "cache_after_local", "cache_after_shared", "cache_before_local", "cache_before_shared",
        "rfactor", "Vectorize", "Unroll", "Unswitch", "propagate_transformation",
        "parallelize_all_like", "inline_most", "inline_at", "inline_selected_at", "pad_shared",
        "swizzle", "cache_op_AllLevels", "cache_op_Global", "cache_op_Streaming"})
    EXPECT_TRUE(schedule.count(f)) << "no schedule feature " << f << " in " << kCoverageCases
                                   << " cases";
}

TEST(FuzzGenerator, FusionTextListsOnlyTheSizesItsInputsUse) {
  GenFusion f;
  f.name = "t";
  f.inputs = {{"x0", "f32", {"N", "1"}}, {"x1", "f16", {}}};
  f.sizes = {{"N", 3}, {"K", 5}};
  f.body = {{"v1", "x0 + x1", {"x0", "x1"}}, {"v2", "sum(v1, axis=0)", {"v1"}}};
  f.outputs = {"v2", "v1"};
  EXPECT_EQ(f.text(),
            "fusion: t\n"
            "inputs:\n"
            "  x0: {dtype: f32, shape: [N, 1]}\n"
            "  x1: {dtype: f16, shape: []}\n"
            "sizes: {N: 3}\n"
            "body: |\n"
            "  v1 = x0 + x1\n"
            "  v2 = sum(v1, axis=0)\n"
            "outputs: [v2, v1]\n");
  EXPECT_NO_THROW(frontend::parse_fusion_text(f.text(), "t.yaml"));
}

}  // namespace
}  // namespace schedlab::fuzz
