// The fuzz minimiser (core/fuzz/minimize.cpp) on planted failing
// predicates: ddmin finds the failure-inducing units, and minimise shrinks a
// fusion and its schedule while the class (and a refusal's stage) holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/ir.h"

namespace schedlab::fuzz {
namespace {

bool has(const std::vector<size_t>& v, size_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(FuzzDdmin, FindsThePairThatFails) {
  int calls = 0;
  auto fails = [&](const std::vector<size_t>& kept) {
    ++calls;
    return has(kept, 3) && has(kept, 7);
  };
  int spent = 0;
  EXPECT_EQ(ddmin(10, fails, 1000, &spent), (std::vector<size_t>{3, 7}));
  EXPECT_EQ(spent, calls);
}

TEST(FuzzDdmin, TheEmptySetWhenNothingIsNeeded) {
  EXPECT_TRUE(ddmin(6, [](const std::vector<size_t>&) { return true; }, 100).empty());
  EXPECT_TRUE(ddmin(0, [](const std::vector<size_t>&) { return false; }, 100).empty());
}

TEST(FuzzDdmin, StopsAtItsBudgetWithAFailingSet) {
  int calls = 0;
  auto fails = [&](const std::vector<size_t>& kept) {
    ++calls;
    return has(kept, 1) && has(kept, 20) && has(kept, 38);
  };
  std::vector<size_t> r = ddmin(40, fails, 5);
  EXPECT_LE(calls, 5);
  EXPECT_TRUE(has(r, 1) && has(r, 20) && has(r, 38));
}

/// x0 [N, K], x1 [K]; exp reaches v5 through v4; v3 is a second output.
Failure planted() {
  Failure f;
  f.case_index = 12;
  f.path = Path::Schedule;
  f.outcome = {RunClass::Wrong, "wrong_result: output 0"};
  GenFusion& g = f.fusion;
  g.name = "fuzz_12";
  g.inputs = {{"x0", "f32", {"N", "K"}}, {"x1", "f32", {"K"}}, {"x2", "f32", {"N", "1"}}};
  g.sizes = {{"N", 17}, {"K", 33}};
  g.body = {{"v1", "x0 + x1", {"x0", "x1"}}, {"v2", "exp(v1)", {"v1"}},
            {"v3", "abs(x0)", {"x0"}},       {"v4", "v2 * v3", {"v2", "v3"}},
            {"v5", "tanh(v4)", {"v4"}},      {"v6", "neg(x2)", {"x2"}}};
  g.outputs = {"v5", "v3"};
  f.schedule = {"merge(v5, 0)", "split(v5, 0, 4)", "parallelize(v5, 0, BIDx)", "inline_most()"};
  return f;
}

/// "Wrong" while an exp is live (read by an output), the schedule inlines
/// and N >= 2; "validated" otherwise.
RunOutcome planted_oracle(const GenFusion& g, const std::vector<std::string>& schedule) {
  std::set<std::string> live(g.outputs.begin(), g.outputs.end());
  bool exp_live = false;
  for (auto it = g.body.rbegin(); it != g.body.rend(); ++it)
    if (live.count(it->name)) {
      live.insert(it->uses.begin(), it->uses.end());
      exp_live = exp_live || it->expr.find("exp(") != std::string::npos;
    }
  const bool inl = std::find(schedule.begin(), schedule.end(), "inline_most()") != schedule.end();
  if (exp_live && inl && g.sizes.at("N") >= 2) return {RunClass::Wrong, "wrong_result: small"};
  return {RunClass::Validated, ""};
}

TEST(FuzzMinimise, ShrinksScheduleStatementsOutputsInputsAndSizes) {
  int calls = 0;
  Oracle oracle = [&](const GenFusion& g, const std::vector<std::string>& s) {
    ++calls;
    return planted_oracle(g, s);
  };
  Failure m = minimise(planted(), oracle, 200);
  EXPECT_EQ(m.schedule, (std::vector<std::string>{"inline_most()"}));
  std::vector<std::string> names;
  for (const GenStatement& s : m.fusion.body) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"v1", "v2", "v3", "v4", "v5"}));
  EXPECT_EQ(m.fusion.outputs, (std::vector<std::string>{"v5"}));
  ASSERT_EQ(m.fusion.inputs.size(), 2u);  // x2 was read only by the dead v6
  EXPECT_EQ(m.fusion.sizes.at("N"), 2);
  EXPECT_EQ(m.fusion.sizes.at("K"), 1);
  EXPECT_EQ(m.outcome.cls, RunClass::Wrong);
  EXPECT_EQ(m.outcome.reason, "wrong_result: small");
  EXPECT_LE(calls, 200);
}

TEST(FuzzMinimise, RespectsItsBudget) {
  int calls = 0;
  Oracle oracle = [&](const GenFusion& g, const std::vector<std::string>& s) {
    ++calls;
    return planted_oracle(g, s);
  };
  Failure m = minimise(planted(), oracle, 3);
  EXPECT_LE(calls, 3);
  EXPECT_EQ(m.outcome.cls, RunClass::Wrong);
  EXPECT_EQ(planted_oracle(m.fusion, m.schedule).cls, RunClass::Wrong);
}

TEST(FuzzMinimise, AnUnscheduledRunKeepsItsStage) {
  // The plugin's schedule fails in lowering unless K is 1, where no plugin
  // takes the fusion at all: a different failure, which must not be kept.
  Failure f = planted();
  f.path = Path::Segmenter;
  f.schedule.clear();
  f.outcome = {RunClass::Unscheduled, "error: lower: T5 cannot be inlined"};
  Oracle oracle = [](const GenFusion& g, const std::vector<std::string>& s) -> RunOutcome {
    EXPECT_TRUE(s.empty());
    if (g.sizes.at("K") == 1) return {RunClass::Unscheduled, "error: segment: no scheduler"};
    return {RunClass::Unscheduled, "error: lower: T" + std::to_string(g.body.size()) + " cannot"};
  };
  Failure m = minimise(f, oracle, 200);
  EXPECT_EQ(m.fusion.sizes.at("K"), 2);
  EXPECT_EQ(m.fusion.sizes.at("N"), 1);
  EXPECT_EQ(m.fusion.body.size(), 1u);
  EXPECT_EQ(m.outcome.reason.rfind("error: lower:", 0), 0u);
}

TEST(FuzzMinimise, ScheduleNamesOfUnnamedTensorsFollowDroppedStatements) {
  // x0 is T0, v1 T1, the keepdim sum's reduction T2 (unnamed), v2 T3. Once
  // v1 goes, the reduction is T1, and the schedule must still name it.
  Failure f;
  f.path = Path::Schedule;
  f.outcome = {RunClass::Internal, "internal error: boom"};
  f.fusion.name = "t";
  f.fusion.inputs = {{"x0", "f32", {"N", "K"}}};
  f.fusion.sizes = {{"N", 2}, {"K", 3}};
  f.fusion.body = {{"v1", "abs(x0)", {"x0"}}, {"v2", "sum(x0, axis=1, keepdim=true)", {"x0"}}};
  f.fusion.outputs = {"v2", "v1"};
  f.schedule = {"split(T2, 1, 4)"};
  Oracle oracle = [](const GenFusion& g, const std::vector<std::string>& s) -> RunOutcome {
    // Fails while the split names the reduction tensor.
    auto def = frontend::parse_fusion_text(g.text(), "t.yaml");
    for (const ir::Expr* e : def.fusion->exprs())
      if (e->is<ir::ReductionOp>() && !s.empty() && s[0] == "split(" + e->out()->str() + ", 1, 4)")
        return {RunClass::Internal, "internal error: boom"};
    return {RunClass::Validated, ""};
  };
  Failure m = minimise(f, oracle, 100);
  ASSERT_EQ(m.fusion.body.size(), 1u);
  EXPECT_EQ(m.fusion.body[0].name, "v2");
  EXPECT_EQ(m.schedule, (std::vector<std::string>{"split(T1, 1, 4)"}));
}

TEST(FuzzMinimise, KeepsFilesThatReproduce) {
  const std::string dir = std::string(SCHEDLAB_BINARY_DIR) + "/tests/fuzz/kept_test";
  std::filesystem::remove_all(dir);
  Failure f = planted();
  const std::string base = keep_failure(dir, f);
  EXPECT_EQ(base, dir + "/wrong-12");
  std::ifstream sched(base + ".sched"), readme(dir + "/README.md");
  std::string text((std::istreambuf_iterator<char>(sched)), {});
  EXPECT_EQ(text, "merge(v5, 0)\nsplit(v5, 0, 4)\nparallelize(v5, 0, BIDx)\ninline_most()\n");
  std::string r((std::istreambuf_iterator<char>(readme)), {});
  EXPECT_EQ(r,
            "- wrong case 12 (schedule): wrong_result: output 0\n"
            "  `schedlab exec wrong-12.yaml --schedule wrong-12.sched --backend cpu`\n");
  f.path = Path::Segmenter;
  f.outcome.cls = RunClass::Unscheduled;
  EXPECT_EQ(keep_failure(dir, f), dir + "/unscheduled-12-segmenter");
  EXPECT_TRUE(std::filesystem::exists(dir + "/unscheduled-12-segmenter.yaml"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/unscheduled-12-segmenter.sched"));
}

}  // namespace
}  // namespace schedlab::fuzz
