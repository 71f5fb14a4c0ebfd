// Best-so-far curves (report/curves.h): from records to curves, the console
// summary, the HTML charts, and the record's `search` field round trip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_test_util.h"
#include "schedlab/report/curves.h"
#include "schedlab/report/html.h"

namespace schedlab::report {
namespace {

using testing_util::ok_record;

Record searched(const std::string& scheduler, int64_t evaluation, double median_us,
                std::optional<double> predicted_us = std::nullopt,
                const std::string& strategy = "evolution",
                const std::string& objective = "measured") {
  Record r = ok_record(scheduler, {{"block", std::to_string(32 * evaluation)}},
                       {median_us, median_us, median_us});
  r.strategy = strategy;
  r.objective = objective;
  r.evaluation = evaluation;
  if (predicted_us) r.prediction = Prediction{"h200", *predicted_us, "dram", 0.5, ""};
  return r;
}

TEST(Curves, BestSoFarIsNonIncreasingAndFailuresImproveNothing) {
  std::vector<Record> rs = {searched("a", 1, 30), searched("a", 2, 20), searched("a", 3, 25),
                            searched("a", 4, 10)};
  rs[1].status = Status::WrongResult;
  rs[1].times_us.clear();
  std::vector<Curve> c = best_so_far_curves(rs);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_THAT(c[0].best, testing::ElementsAre(30, 30, 25, 10));
  EXPECT_EQ(c[0].strategy, "evolution");
}

TEST(Curves, PredictedObjectiveUsesThePredictionAndOrderIsByEvaluation) {
  // Out of order in the file (rounds of several searches interleave).
  std::vector<Record> rs = {searched("a", 2, 1, 5.0, "model", "predicted"),
                            searched("a", 1, 9, 7.0, "model", "predicted"),
                            searched("a", 3, 2, std::nullopt, "model", "predicted")};
  std::vector<Curve> c = best_so_far_curves(rs);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_THAT(c[0].best, testing::ElementsAre(7.0, 5.0, 5.0));
}

TEST(Curves, OneCurvePerSearchAndTheLatestRecordOfAnEvaluationStands) {
  std::vector<Record> rs = {searched("a", 1, 30), searched("b", 1, 8),  searched("a", 2, 20),
                            searched("b", 2, 9),  searched("a", 2, 15),  // re-timed (halving)
                            searched("c", 1, 5)};                        // one evaluation: no curve
  rs.push_back(ok_record("d", {}, {1, 1, 1}));                           // no search
  std::vector<Curve> c = best_so_far_curves(rs);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].scheduler, "a");
  EXPECT_THAT(c[0].best, testing::ElementsAre(30, 15));
  EXPECT_EQ(c[1].scheduler, "b");
  EXPECT_THAT(c[1].best, testing::ElementsAre(8, 8));
}

TEST(Curves, ConsoleSummaryNamesTheSearchTheBestAndWhereItWasFound) {
  std::vector<Record> rs;
  for (int64_t e = 1; e <= 5; ++e) rs.push_back(searched("a", e, e == 3 ? 10 : 40 - e));
  const std::string text = render_curves(best_so_far_curves(rs));
  EXPECT_THAT(text, testing::HasSubstr("Best so far"));
  EXPECT_THAT(
      text, testing::HasSubstr("softmax N=1024,K=1024 | a | evolution, measured: best 10.00 us at "
                               "evaluation 3 of 5 (1: 39 us, 2: 38 us, 4: 10 us, 5: 10 us)"));
  EXPECT_EQ(render_curves({}), "");
}

TEST(Curves, HtmlDrawsAChartPerSearchGroup) {
  std::vector<Record> rs = {searched("a", 1, 30), searched("a", 2, 20)};
  const std::string html = render_html(rs, {}, {});
  EXPECT_THAT(html, testing::HasSubstr("Search: best so far"));
  EXPECT_THAT(html, testing::HasSubstr("a: evolution (measured)"));
  rs = {ok_record("a", {}, {1, 2, 3})};
  EXPECT_THAT(render_html(rs, {}, {}), testing::Not(testing::HasSubstr("Search: best so far")));
}

TEST(Curves, RecordKeepsItsSearchThroughJson) {
  Record r = searched("a", 7, 30, 12.0, "halving", "cpu");
  r.key = "k";
  r.timestamp = "2026-12-02T00:00:00Z";
  Record back = record_from_json(to_json(r), {"x.jsonl", 1, 0});
  EXPECT_EQ(back.strategy, "halving");
  EXPECT_EQ(back.objective, "cpu");
  EXPECT_EQ(back.evaluation, 7);
  // Without a search, no "search" field, and it reads back empty.
  r.strategy.clear();
  EXPECT_EQ(to_json(r).find("\"search\""), std::string::npos);
  EXPECT_EQ(record_from_json(to_json(r), {"x.jsonl", 1, 0}).evaluation, 0);
}

}  // namespace
}  // namespace schedlab::report
