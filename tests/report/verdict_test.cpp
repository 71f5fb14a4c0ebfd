// One verdict everywhere (issue 33): the words of a ratio (verdict.h), the
// best configuration chosen by the statistic the verdict prints, ties of
// predictions said as such, and a planted 1.3x slowdown that reads the same
// in the table (console, CSV, JSON, HTML), in `watch`'s change column, in
// `compare` (text, markdown, JSON) and in the A/B lines of `--ab`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "report_test_util.h"
#include "schedlab/report/ab.h"
#include "schedlab/report/compare.h"
#include "schedlab/report/html.h"
#include "schedlab/report/table.h"
#include "schedlab/report/verdict.h"

namespace schedlab::report {
namespace {

using namespace testing_util;

RatioEstimate ratio(double r, double lo, double hi) {
  RatioEstimate e;
  e.ratio = r;
  e.lo = lo;
  e.hi = hi;
  return e;
}

TEST(VerdictText, OneConventionNoSigns) {
  EXPECT_EQ(verdict_text(ratio(1.23, 1.04, 1.27), true), "1.23x slower [1.04, 1.27]*");
  // Faster: the factor is the inverse, and so is the interval, turned.
  EXPECT_EQ(verdict_text(ratio(1 / 1.3, 1 / 1.35, 1 / 1.25), false), "1.30x faster [1.25, 1.35]");
  // A factor that rounds to 1.00 has no direction word.
  EXPECT_EQ(verdict_text(ratio(1.001, 0.98, 1.03), false), "1.00x [0.98, 1.03]");
  EXPECT_EQ(verdict_text(ratio(0.999, 0.98, 1.03), false), "1.00x [0.98, 1.03]");
  // One deterministic sample: no interval.
  EXPECT_EQ(verdict_text(ratio(2, 2, 2), true), "2.00x slower*");
  EXPECT_EQ(predicted_verdict_text(1.0), "tie (predicted)");
  EXPECT_EQ(predicted_verdict_text(1 / 1.03), "1.03x faster (predicted)");
  EXPECT_EQ(direction_of(1.2), Direction::Slower);
  EXPECT_EQ(direction_of(0.8), Direction::Faster);
  EXPECT_EQ(direction_of(1.004), Direction::Same);
}

/// Records of one interleaved group.
Record grouped(const std::string& scheduler, ConfigList config, std::vector<double> times) {
  Record r = ok_record(scheduler, std::move(config), std::move(times));
  r.group = "run-0";
  return r;
}

// The issue's case: the configuration with the lower median is the slower
// one round by round. A: 0.95x the baseline in the quiet rounds, 1.15x in
// the loaded ones (median 162.5); B: 1.10x and 1.05x (median 160). The
// paired estimate puts A at 1.05x and B at 1.07x: the table's best is A,
// and its verdict is A's.
TEST(BestByRatio, TheStatisticTheVerdictPrintsChoosesTheBest) {
  std::vector<double> base, a, b;
  for (int k = 0; k < 10; ++k) {
    const bool loaded = k % 2 == 1;
    base.push_back(loaded ? 200 : 100);
    a.push_back(loaded ? 230 : 95);
    b.push_back(loaded ? 210 : 110);
  }
  std::vector<Record> rs = {grouped("heuristic", {}, base), grouped("tuned", {{"block", "128"}}, a),
                            grouped("tuned", {{"block", "256"}}, b)};
  ASSERT_LT(rs[2].summary().median, rs[1].summary().median);
  auto tables = build_tables(rs, {"heuristic", 0.05, {}});
  const TableCell* c = tables[0].cell(tables[0].rows[0], "tuned");
  ASSERT_TRUE(c && c->best && c->estimate);
  EXPECT_EQ(c->best->config_label(), "block=128");
  EXPECT_NEAR(c->estimate->ratio, time_ratio(rs[1], rs[0]).ratio, 1e-12);
  EXPECT_LT(c->estimate->ratio, time_ratio(rs[2], rs[0]).ratio);
  EXPECT_EQ(c->verdict, verdict_text(*c->estimate, c->significant));
  // The A/B lines choose the same way.
  for (Record& r : rs) r.scheduler = r.scheduler == "heuristic" ? "tuned@old" : "tuned";
  std::vector<AbVerdict> v = ab_verdicts(rs);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].new_config, "block=128");
}

// On the CPU the table ranks by predictions; equal ones say "tie
// (predicted)" and the CPU emulation's own verdict stands beside them.
TEST(PredictedTable, TiesSaySoAndShowTheCpuRatio) {
  auto predicted = [](Record r, double us) {
    r.group = "run-0";
    r.prediction = Prediction{"h200", us, "dram", 0.5, "[]"};
    return r;
  };
  auto times = [](double us) {
    std::vector<double> v;
    for (double j : {-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 1.5, -1.5, 0.25}) v.push_back(us + j);
    return v;
  };
  std::vector<Record> rs = {predicted(ok_record("heuristic", {}, times(142)), 20),
                            predicted(ok_record("script", {}, times(517)), 20),
                            predicted(ok_record("sweep", {{"block", "64"}}, times(534)), 20),
                            predicted(ok_record("fast", {}, times(300)), 10)};
  auto tables = build_tables(rs, {"heuristic", 0.05, {}});
  ASSERT_EQ(tables[0].predicted_on, "h200");
  const TableRow& row = tables[0].rows[0];
  const TableCell* script = tables[0].cell(row, "script");
  EXPECT_EQ(script->verdict, "tie (predicted)");
  EXPECT_EQ(script->measured_verdict.rfind("3.64x slower [", 0), 0u) << script->measured_verdict;
  EXPECT_EQ(tables[0].cell(row, "fast")->verdict, "2.00x faster (predicted)");
  EXPECT_EQ(tables[0].cell(row, "heuristic")->verdict, "baseline");
  const std::string out = render_console(tables, false);
  EXPECT_TRUE(
      std::regex_search(out, std::regex(R"(  script  .*  tie \(predicted\) +3\.64x slower \[)")))
      << out;
  EXPECT_NE(out.find("  CPU vs baseline"), std::string::npos) << out;
  const std::string page = render_html(rs, {"heuristic", 0.05, {}}, {});
  EXPECT_NE(page.find(">tie (predicted)</td><td class=\"slower\">3.64x slower ["),
            std::string::npos)
      << page;
}

// ---- the planted 1.3x slowdown ----------------------------------------------

std::string data(const std::string& name) {
  return std::string(REPORT_DATA_DIR) + "/" + name;
}

/// Every "N.NNx slower|faster [..]" in `text`.
std::vector<std::string> verdicts_in(const std::string& text) {
  static const std::regex re(R"(\d+\.\d\dx (slower|faster)( \[\d+\.\d\d, \d+\.\d\d\])?\*?)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back(it->str());
  return out;
}

TEST(PlantedSlowdown, ReadsTheSameEverywhere) {
  // planted.jsonl: `mine` and `mine@old` timed in the same rounds, every
  // round's ratio 1.3 within 2 % (gen_fixtures.py).
  const std::vector<Record> rs = read_records(data("planted.jsonl")).records;
  ASSERT_EQ(rs.size(), 2u);
  const std::vector<Table> tables = build_tables(rs, {"mine@old", 0.05, {}});
  const TableCell* cell = tables[0].cell(tables[0].rows[0], "mine");
  ASSERT_TRUE(cell && cell->estimate);
  const std::string v = cell->verdict;
  EXPECT_EQ(v.rfind("1.30x slower [", 0), 0u) << v;
  EXPECT_EQ(v.back(), '*') << v;
  const std::vector<std::string> one = {v};

  // The table: console, CSV, JSON, HTML.
  EXPECT_EQ(verdicts_in(render_console(tables, false)), one);
  EXPECT_EQ(verdicts_in(render_csv(tables)), one);
  auto j = nlohmann::json::parse(render_json(tables));
  EXPECT_EQ(j["sections"][0]["rows"][0]["cells"][0]["verdict"], v);
  EXPECT_NEAR(j["sections"][0]["rows"][0]["cells"][0]["time_ratio"].get<double>(), 1.3, 0.01);
  const std::string page = render_html(rs, {"mine@old", 0.05, {}}, {});
  for (const std::string& x : verdicts_in(page)) EXPECT_EQ(x, v) << page;
  EXPECT_GE(verdicts_in(page).size(), 2u);  // the table's cell and the bar's label

  // --ab (and watch's A/B lines): the same text.
  const std::vector<AbVerdict> ab = ab_verdicts(rs);
  const std::string ab_text = render_ab(ab);
  EXPECT_NE(ab_text.find("mine: new build " + v + " than old, p="), std::string::npos) << ab_text;
  EXPECT_EQ(verdicts_in(ab_text), one);

  // watch: the table keeps the new build; the change column reads the A/B
  // verdict of the rerun, not a second estimate against the last table.
  std::vector<Record> before = {rs[1]}, after = {rs[0]};
  before[0].scheduler = "mine";
  const std::string delta =
      render_delta(build_tables(before, {}), build_tables(after, {}), false, ab);
  EXPECT_NE(delta.find(v + " vs old build"), std::string::npos) << delta;
  EXPECT_EQ(verdicts_in(delta), one) << delta;
  EXPECT_FALSE(std::regex_search(delta, std::regex(R"([+-]\d+(\.\d+)?%)"))) << delta;  // no percent

  // compare: the two builds' halves, still one group, so paired.
  CompareReport r = compare(load_result_file(data("planted_old.jsonl")),
                            load_result_file(data("planted_new.jsonl")), {});
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_TRUE(r.changes[0].ratio->paired);
  EXPECT_EQ(r.changes[0].verdict, Verdict::Regression);
  EXPECT_EQ(r.changes[0].text, v);
  EXPECT_EQ(verdicts_in(render_compare_text(r)), one);
  const std::string md = render_compare_markdown(r);
  EXPECT_NE(md.find("| " + v + " | **regression** |"), std::string::npos) << md;
  for (const std::string& x : verdicts_in(md)) EXPECT_EQ(x.rfind("1.30x slower", 0), 0u) << md;
  EXPECT_EQ(nlohmann::json::parse(render_compare_json(r))["benchmarks"][0]["text"], v);
}

}  // namespace
}  // namespace schedlab::report
