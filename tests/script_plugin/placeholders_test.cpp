// The frontend functions ABI 1.1's script entries are built on:
// schedule_placeholders (what names a caller may set), parse_schedule_args
// ("k=v,k=v"), parse_schedule_file, and apply_parsed_schedule on a bare fusion.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedlab/frontend/schedule_script.h"
#include "sp_test_util.h"

namespace schedlab::frontend {
namespace {

using plugin::sp_testing::TempFile;
using plugin::sp_testing::user_error_what_of;

std::string names_of(const std::vector<SchedulePlaceholder>& ps) {
  std::string r;
  for (const auto& p : ps) {
    r += (r.empty() ? "" : " ") + p.name + (p.used ? "" : "(unused)");
    if (p.default_value) r += "=" + std::to_string(*p.default_value);
  }
  return r;
}

TEST(SchedulePlaceholders, UsesAndDeclarationsInOrderOfFirstAppearance) {
  ParsedSchedule s = parse_schedule(
      "split(y, 0, {block})\n"
      "params(unroll=2, block=-3)\n"
      "reorder(y, {0: {first}, 1: 0})\n"
      "rfactor(y, [{axis}, 1, {block}])\n"
      "params(spare=7)\n",
      "p.sched");
  auto ps = schedule_placeholders(s);
  EXPECT_EQ(names_of(ps), "block=-3 unroll(unused)=2 first axis spare(unused)=7");
  EXPECT_EQ(ps[0].loc.str(), "p.sched:1:13");  // the first use, not the declaration
  EXPECT_EQ(ps[1].loc.str(), "p.sched:2:8");
  EXPECT_EQ(ps[2].loc.str(), "p.sched:3:16");  // inside a map
}

TEST(SchedulePlaceholders, AnIndexCanBeAPlaceholder) {
  ParsedSchedule s = parse_schedule(
      "g = group_inputs_outputs_by_inner_dim()\n"
      "split(g[{i}][{j}], 0, 2)\n",
      "p.sched");
  auto ps = schedule_placeholders(s);
  EXPECT_EQ(names_of(ps), "i j");
  EXPECT_EQ(ps[1].loc.str(), "p.sched:2:14");  // the second index's {
}

TEST(SchedulePlaceholders, EveryExampleScriptsPlaceholdersAreDeclared) {
  // The example schedules run without args: each placeholder has a default.
  for (const auto& [file, want] : std::vector<std::pair<std::string, std::string>>{
           {"pointwise_add_mul.sched", "block=128"},
           {"softmax_block.sched", "persist=8"},
           {"row_sum_grid.sched", "chunk=4096 threads=128"},
           {"transpose2d.sched", "block=128"},
           {"var_mean_rfactor.sched", "threads=256 vector=4"},
           {"max_sub_add_partial.sched", "block=128 vector=4"}}) {
    auto ps =
        schedule_placeholders(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/" + file);
    EXPECT_EQ(names_of(ps), want) << file;
  }
}

TEST(SchedulePlaceholders, BadParamsAreTheApplierErrors) {
  ParsedSchedule twice = parse_schedule("params(b=1)\nparams(b=2)\n", "t.sched");
  EXPECT_EQ(user_error_what_of([&] { schedule_placeholders(twice); }),
            "t.sched:2:8: error: params: 'b' already has a default (1)");
  ParsedSchedule positional = parse_schedule("params(4)\n", "t.sched");
  EXPECT_EQ(user_error_what_of([&] { schedule_placeholders(positional); }),
            "t.sched:1:8: error: params: expected name=integer, such as params(block=128), found "
            "'4'");
  EXPECT_EQ(user_error_what_of([&] { schedule_placeholders(std::string("/nonexistent.sched")); }),
            "error: cannot read schedule file '/nonexistent.sched': no such file");
}

TEST(ScheduleArgs, ParsesIntegersWithSpacesAndSigns) {
  EXPECT_EQ(parse_schedule_args("", "args"), ScheduleParams{});
  EXPECT_EQ(parse_schedule_args("block=128, persist = -2 ,x_1=+3", "args"),
            (ScheduleParams{{"block", 128}, {"persist", -2}, {"x_1", 3}}));
}

TEST(ScheduleArgs, ErrorsNameTheItem) {
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("block", "args"); }),
            "error: args: expected NAME=INTEGER, found 'block' in 'block'");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("a=1,,b=2", "args"); }),
            "error: args: expected NAME=INTEGER, found '' in 'a=1,,b=2'");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("2x=1", "args"); }),
            "error: args: expected a placeholder name before '=', found '2x' in '2x=1'");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("a=1.5", "args"); }),
            "error: args: a must be an integer, found '1.5'");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("a=", "args"); }),
            "error: args: a must be an integer, found ''");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("a=99999999999999999999", "args"); }),
            "error: args: a must be an integer, found '99999999999999999999'");
  EXPECT_EQ(user_error_what_of([&] { parse_schedule_args("a=1,a=2", "args"); }),
            "error: args: a is given twice");
}

TEST(ApplyParsedSchedule, OnABareFusionAsOnADefinition) {
  TempFile f("s.sched", "params(block=16)\nmerge(out, 0)\nsplit(out, 0, {block})\n");
  ParsedSchedule s = parse_schedule_file(f.path());
  EXPECT_EQ(s.path, f.path());
  auto bare = plugin::sp_testing::load("pointwise_add_mul");
  auto def = plugin::sp_testing::load("pointwise_add_mul");
  auto log1 = apply_parsed_schedule(s, *bare.fusion, {{"block", 8}});
  auto log2 = apply_parsed_schedule(s, def, {{"block", 8}});
  EXPECT_EQ(log1, log2);
  EXPECT_THAT(log1, ::testing::ElementsAre("1: params(block=16)", "2: merge(out, 0)",
                                           "3: split(out, 0, 8)"));
  EXPECT_EQ(bare.fusion->outputs()[0]->axis(1)->extent().str(), "8");
}

}  // namespace
}  // namespace schedlab::frontend
