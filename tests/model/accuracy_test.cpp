// The model's error against GPU measurements: Spearman's rho on known
// series, and which records count.
#include "schedlab/model/accuracy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using schedlab::model::model_accuracy;
using schedlab::model::spearman;
using schedlab::report::Record;

TEST(Spearman, KnownSeries) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks (1, 2, 3) and (1, 3, 2): 1 - 6 * 2 / (3 * 8) = 0.5.
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3}, {1, 3, 2}), 0.5);
  // Ties share their average rank: (1.5, 1.5, 3) against (1, 2, 3).
  EXPECT_NEAR(spearman({5, 5, 9}, {1, 2, 3}), 0.8660254037844386, 1e-12);
  EXPECT_EQ(spearman({1}, {1}), 0);
}

Record point(const std::string& fusion, double measured, double predicted, bool emulated) {
  Record r;
  r.fusion = fusion;
  r.scheduler = "s";
  r.device.emulated = emulated;
  r.times_us = {measured, measured, measured};
  if (predicted > 0)
    r.prediction = schedlab::report::Prediction{"h200", predicted, "dram", 0.5, ""};
  return r;
}

TEST(Accuracy, CountsGpuPointsWithPredictionsOnly) {
  std::vector<Record> rs = {point("a", 100, 90, false), point("b", 200, 260, false),
                            point("c", 50, 40, true), point("d", 80, 0, false)};
  auto a = model_accuracy(rs);
  ASSERT_EQ(a.points.size(), 2u);
  EXPECT_EQ(a.skipped, 2u);
  EXPECT_DOUBLE_EQ(a.points[0].error(), -0.1);
  EXPECT_DOUBLE_EQ(a.points[1].error(), 0.3);
  EXPECT_DOUBLE_EQ(a.median_abs_error, 0.2);
  EXPECT_DOUBLE_EQ(a.max_abs_error, 0.3);
  EXPECT_DOUBLE_EQ(a.spearman, 1.0);
  EXPECT_THAT(schedlab::model::render_accuracy(a),
              testing::HasSubstr("model error over 2 points: median |error| 20.0%, largest "
                                 "30.0%, Spearman rank correlation 1.000 (2 records"));
}

}  // namespace
