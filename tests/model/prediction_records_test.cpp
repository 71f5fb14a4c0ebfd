// Predictions in sweep records and what reads them: the JSONL round trip,
// the CPU-emulated table ranked by the predicted time (CPU time beside it),
// and `compare --metric predicted` (deterministic: no test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../report/report_test_util.h"
#include "schedlab/report/compare.h"
#include "schedlab/report/table.h"

namespace schedlab::report {
namespace {

using namespace testing_util;
using testing::HasSubstr;

Record predicted(const std::string& scheduler, ConfigList config, double cpu_us,
                 double predicted_us, Device device = cpu_device()) {
  Record r = ok_record(scheduler, std::move(config), {cpu_us, cpu_us * 1.01, cpu_us * 0.99},
                       "softmax", {{"N", 1024}, {"K", 1024}}, std::move(device));
  r.prediction = Prediction{"h200", predicted_us, "dram", 0.8, R"([{"registers":32}])"};
  return r;
}

TEST(PredictionRecords, RoundTripThroughJson) {
  Record r = predicted("eager", {}, 100, 12.5);
  Record back = record_from_json(to_json(r), {"x.jsonl", 1, 0});
  ASSERT_TRUE(back.prediction);
  EXPECT_EQ(back.prediction->device, "h200");
  EXPECT_DOUBLE_EQ(back.prediction->predicted_us, 12.5);
  EXPECT_EQ(back.prediction->limiter, "dram");
  EXPECT_DOUBLE_EQ(back.prediction->bandwidth_fraction, 0.8);
  EXPECT_EQ(nlohmann::json::parse(back.prediction->profile)[0]["registers"], 32);
  EXPECT_FALSE(record_from_json(to_json(ok_record("eager", {}, {1.0})), {"x", 1, 0}).prediction);
}

TEST(PredictionRecords, AnEmulatedTableRanksByThePrediction) {
  // The CPU prefers block=128; the model prefers block=256.
  std::vector<Record> rs = {predicted("eager", {}, 100, 20),
                            predicted("norm", {{"block", "128"}}, 50, 15),
                            predicted("norm", {{"block", "256"}}, 80, 10)};
  auto tables = build_tables(rs, {"eager", 0.05, {}});
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].predicted_on, "h200");
  const TableCell* n = tables[0].cell(tables[0].rows[0], "norm");
  EXPECT_EQ(n->best->config_label(), "block=256");
  EXPECT_DOUBLE_EQ(*n->speedup, 2.0);
  EXPECT_EQ(n->verdict, "2.00x faster (predicted)");  // report/verdict.h's words
  std::string text = render_console(tables, false);
  EXPECT_THAT(text, HasSubstr("best config: the lowest predicted time on the h200 device model"));
  EXPECT_THAT(text, HasSubstr("predicted h200"));
  EXPECT_THAT(text, HasSubstr("10.00"));  // the prediction
  EXPECT_THAT(text, HasSubstr("80.00"));  // the CPU time beside it
  auto j = nlohmann::json::parse(render_json(tables));
  EXPECT_EQ(j["sections"][0]["ranked_by"], "predicted h200");
  EXPECT_EQ(j["sections"][0]["rows"][0]["cells"][1]["predicted_us"], 10.0);
}

TEST(PredictionRecords, GpuTablesAndPartlyPredictedTablesRankByTheMedian) {
  std::vector<Record> gpu = {predicted("eager", {}, 100, 20, gpu_device()),
                             predicted("norm", {{"block", "128"}}, 50, 15, gpu_device()),
                             predicted("norm", {{"block", "256"}}, 80, 10, gpu_device())};
  auto t = build_tables(gpu, {"eager", 0.05, {}});
  EXPECT_EQ(t[0].predicted_on, "");
  EXPECT_EQ(t[0].cell(t[0].rows[0], "norm")->best->config_label(), "block=128");
  std::vector<Record> partly = {predicted("eager", {}, 100, 20), ok_record("norm", {}, {50.0})};
  EXPECT_EQ(build_tables(partly, {"eager", 0.05, {}})[0].predicted_on, "");
}

TEST(PredictionRecords, ComparePredictedIsDeterministic) {
  auto dir = temp_dir("compare_predicted");
  auto write = [&](const std::string& name, double norm_us) {
    std::string path = (dir / name).string();
    std::ofstream out(path);
    out << to_json(predicted("eager", {}, 100, 20)) << "\n"
        << to_json(predicted("norm", {}, 50, norm_us)) << "\n";
    return path;
  };
  std::string base = write("base.jsonl", 10), next = write("next.jsonl", 10.2);
  CompareOptions o;
  o.threshold = 0;
  o.deterministic = true;
  CompareReport r = compare(load_result_file(base, Metric::Predicted),
                            load_result_file(next, Metric::Predicted), o);
  EXPECT_EQ(r.count(Verdict::Regression), 1u);  // +2 %: no noise, so it is real
  EXPECT_EQ(r.count(Verdict::Unchanged), 1u);
  EXPECT_FALSE(r.changes[0].p);
  // Measured times of the same files: one sample each, no significance.
  CompareReport t = compare(load_result_file(base), load_result_file(next), CompareOptions{});
  EXPECT_EQ(t.count(Verdict::Regression), 0u);
  // A record without a prediction fails under --metric predicted.
  std::string bare = (dir / "bare.jsonl").string();
  std::ofstream(bare) << to_json(ok_record("eager", {}, {1.0})) << "\n";
  EXPECT_THAT(load_result_file(bare, Metric::Predicted).benchmarks[0].failure,
              HasSubstr("no prediction"));
}

}  // namespace
}  // namespace schedlab::report
