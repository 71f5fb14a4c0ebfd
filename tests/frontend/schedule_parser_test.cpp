// Schedule scripts, parse only (core/frontend/schedule_ast.cpp): text to
// ParsedSchedule with no fusion anywhere, so every identifier stays a Name.
#include <gtest/gtest.h>

#include <string>

#include "schedlab/base/error.h"
#include "schedlab/frontend/schedule_ast.h"

namespace schedlab::frontend {
namespace {

using Kind = ScheduleValue::Kind;

/// "file:line:col" of a node, for compact location checks.
std::string where(const SourceLoc& loc) {
  return loc.str();
}

TEST(ScheduleParser, StatementsArgumentsAndLocations) {
  const std::string text =
      "# a comment line\n"
      "params(block=128)\n"
      "\n"
      "split(out, 0, {block}, inner_split=false)\n"
      "c = cache_after(x, cache_op=Streaming)\n"
      "reorder(c, {0: -1, 1: 0})\n"
      "inline_selected_at([c, y], out, -1)  # trailing comment\n";
  ParsedSchedule s = parse_schedule(text, "t.sched");
  EXPECT_EQ(s.path, "t.sched");
  ASSERT_EQ(s.statements.size(), 5u);

  const ScheduleStatement& params = s.statements[0];
  EXPECT_EQ(params.primitive, "params");
  EXPECT_EQ(where(params.loc), "t.sched:2:1");
  ASSERT_EQ(params.args.size(), 1u);
  EXPECT_EQ(params.args[0].keyword, "block");
  EXPECT_EQ(where(params.args[0].loc), "t.sched:2:8");
  EXPECT_EQ(params.args[0].value.kind, Kind::Int);
  EXPECT_EQ(params.args[0].value.text, "128");
  EXPECT_EQ(where(params.args[0].value.loc), "t.sched:2:14");

  const ScheduleStatement& split = s.statements[1];
  EXPECT_EQ(split.primitive, "split");
  EXPECT_FALSE(split.bind.has_value());
  EXPECT_FALSE(split.bind_loc.valid());
  ASSERT_EQ(split.args.size(), 4u);
  EXPECT_EQ(split.args[0].value.kind, Kind::Name);
  EXPECT_EQ(split.args[0].value.text, "out");
  EXPECT_EQ(split.args[0].keyword, "");
  EXPECT_EQ(where(split.args[0].loc), where(split.args[0].value.loc));
  EXPECT_EQ(split.args[1].value.kind, Kind::Int);
  EXPECT_EQ(split.args[2].value.kind, Kind::Param);
  EXPECT_EQ(split.args[2].value.text, "block");
  EXPECT_EQ(where(split.args[2].value.loc), "t.sched:4:15");
  EXPECT_EQ(split.args[3].keyword, "inner_split");
  EXPECT_EQ(split.args[3].value.kind, Kind::Name);  // true/false are resolved when applied
  EXPECT_EQ(split.args[3].value.text, "false");

  const ScheduleStatement& cache = s.statements[2];
  ASSERT_TRUE(cache.bind.has_value());
  EXPECT_EQ(*cache.bind, "c");
  EXPECT_EQ(where(cache.bind_loc), "t.sched:5:1");
  EXPECT_EQ(cache.primitive, "cache_after");
  EXPECT_EQ(where(cache.loc), "t.sched:5:5");
  EXPECT_EQ(cache.args[1].value.kind, Kind::Name);  // an enum, unresolved
  EXPECT_EQ(cache.args[1].value.text, "Streaming");

  const ScheduleValue& map = s.statements[3].args[1].value;
  EXPECT_EQ(map.kind, Kind::Map);
  EXPECT_EQ(where(map.loc), "t.sched:6:12");
  ASSERT_EQ(map.items.size(), 4u);  // key, value, key, value
  EXPECT_EQ(map.items[0].text, "0");
  EXPECT_EQ(map.items[1].text, "-1");
  EXPECT_EQ(where(map.items[1].loc), "t.sched:6:16");  // the '-'
  EXPECT_EQ(map.items[3].text, "0");

  const ScheduleValue& list = s.statements[4].args[0].value;
  EXPECT_EQ(list.kind, Kind::List);
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_EQ(list.items[1].kind, Kind::Name);
  EXPECT_EQ(list.items[1].text, "y");
  EXPECT_EQ(s.statements[4].args[2].value.text, "-1");
}

TEST(ScheduleParser, UnknownNamesAreNotCheckedWithoutAFusion) {
  // A primitive, tensor or enum that no fusion knows still parses: resolving
  // names is the applier's job.
  ParsedSchedule s = parse_schedule("frobnicate(no_such_tensor, Sideways)\n", "u.sched");
  ASSERT_EQ(s.statements.size(), 1u);
  EXPECT_EQ(s.statements[0].primitive, "frobnicate");
  EXPECT_EQ(s.statements[0].args[1].value.text, "Sideways");
}

TEST(ScheduleParser, EmptyScript) {
  EXPECT_TRUE(parse_schedule("", "e.sched").statements.empty());
  EXPECT_TRUE(parse_schedule("# only a comment\n\n", "e.sched").statements.empty());
}

TEST(ScheduleParser, SyntaxErrorIsAtTheToken) {
  try {
    parse_schedule("split(y, 0, 4)\nmerge(y, 0\n", "bad.sched");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bad.sched:2:11: error: expected ')' to close the call to 'merge' at bad.sched:2:1, "
              "found end of line");
  }
}

}  // namespace
}  // namespace schedlab::frontend
