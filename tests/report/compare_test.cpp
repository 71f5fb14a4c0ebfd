// `compare` on the synthetic files of tests/report/data (written by
// gen_fixtures.py, which documents what each benchmark plants).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "report_test_util.h"
#include "schedlab/report/compare.h"
#include "test_support.h"

namespace schedlab::report {
namespace {

using test_support::user_error_of;

std::string data(const std::string& name) {
  return std::string(REPORT_DATA_DIR) + "/" + name;
}

const BenchmarkChange& change_of(const CompareReport& r, const std::string& name) {
  for (const BenchmarkChange& c : r.changes)
    if (c.name == name) return c;
  ADD_FAILURE() << "no benchmark " << name;
  static BenchmarkChange none;
  return none;
}

CompareReport compare_files(const std::string& a, const std::string& b, double threshold = 0.05) {
  return compare(load_result_file(data(a)), load_result_file(data(b)), {threshold, 0.05});
}

TEST(ResultFile, GoogleBenchmarkRepetitions) {
  ResultFile f = load_result_file(data("base.json"));
  EXPECT_EQ(f.kind, "google-benchmark");
  ASSERT_EQ(f.benchmarks.size(), 6u);  // aggregates fold into their run, not separate benchmarks
  EXPECT_EQ(f.benchmarks[0].name, "BM_regressed");
  ASSERT_EQ(f.benchmarks[0].times_us.size(), 10u);
  EXPECT_DOUBLE_EQ(f.benchmarks[0].times_us[0], 0.098);  // 98 ns
}

TEST(ResultFile, SweepJsonl) {
  ResultFile f = load_result_file(data("sweep_new.jsonl"));
  EXPECT_EQ(f.kind, "schedlab-jsonl");
  ASSERT_EQ(f.benchmarks.size(), 4u);
  EXPECT_EQ(f.benchmarks[0].name, "softmax/N=1024,K=1024/normalization/block=128");
  EXPECT_EQ(f.benchmarks[3].name, "softmax/N=1024,K=1024/eager/(defaults)");
  EXPECT_EQ(f.benchmarks[2].failure, "wrong_result: max abs error 0.5 > atol 1e-06");
  EXPECT_EQ(f.devices, std::vector<std::string>{"cpu (fixture)"
                                                " (CPU emulation)"});
}

TEST(ResultFile, AggregatesOnly) {
  auto dir = testing_util::temp_dir("aggregates");
  auto path = dir / "agg.json";
  testing_util::write_file(path, R"({"benchmarks": [
    {"name": "BM_a_mean", "run_name": "BM_a", "run_type": "aggregate", "aggregate_name": "mean",
     "real_time": 3.0, "time_unit": "ms"},
    {"name": "BM_a_median", "run_name": "BM_a", "run_type": "aggregate", "aggregate_name": "median",
     "real_time": 2.0, "time_unit": "ms"}]})");
  ResultFile f = load_result_file(path.string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  EXPECT_EQ(f.benchmarks[0].times_us, std::vector<double>{2000.0});
  // One sample against one: no test can be significant, so no verdict.
  CompareReport r = compare(f, f, {});
  EXPECT_EQ(r.changes[0].verdict, Verdict::Unchanged);
  EXPECT_EQ(r.changes[0].note, "one sample: run with --benchmark_repetitions for a test");
}

TEST(Compare, PlantedOutcomes) {
  CompareReport r = compare_files("base.json", "new.json");
  EXPECT_EQ(change_of(r, "BM_regressed").verdict, Verdict::Regression);
  EXPECT_NEAR(change_of(r, "BM_regressed").change, 0.20, 1e-12);
  EXPECT_LT(*change_of(r, "BM_regressed").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_noise").verdict, Verdict::Unchanged);
  EXPECT_GT(*change_of(r, "BM_noise").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_improved").verdict, Verdict::Improvement);
  EXPECT_NEAR(change_of(r, "BM_improved").change, -0.20, 1e-12);
  // Significant, but within the threshold.
  EXPECT_LT(*change_of(r, "BM_small_shift").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_small_shift").verdict, Verdict::Unchanged);
  EXPECT_EQ(change_of(r, "BM_removed").verdict, Verdict::OnlyInBase);
  EXPECT_EQ(change_of(r, "BM_added").verdict, Verdict::OnlyInNew);
  EXPECT_TRUE(r.has_regression());
  EXPECT_EQ(r.summary(), "1 regression, 1 improvement, 3 untouched, 1 only in base, 1 only in new");
}

TEST(Compare, ThresholdBoundaryIsStrict) {
  // BM_boundary moves its median from 100 to exactly 105, significantly.
  CompareReport at = compare_files("base.json", "new.json", parse_threshold("5%"));
  const BenchmarkChange& c = change_of(at, "BM_boundary");
  EXPECT_LT(*c.p, 0.05);
  EXPECT_NEAR(c.change, 0.05, 1e-12);        // 105 ns / 100 ns, rounded through microseconds
  EXPECT_EQ(c.verdict, Verdict::Unchanged);  // not beyond 5%
  CompareReport below = compare_files("base.json", "new.json", parse_threshold("4.9"));
  EXPECT_EQ(change_of(below, "BM_boundary").verdict, Verdict::Regression);
}

TEST(Compare, CleanRunHasNoRegression) {
  CompareReport r = compare_files("base.json", "clean.json");
  EXPECT_FALSE(r.has_regression());
  EXPECT_EQ(r.summary(), "0 regressions, 0 improvements, 6 untouched");
}

TEST(Compare, SweepJsonlVerdicts) {
  CompareReport r = compare_files("sweep_base.jsonl", "sweep_new.jsonl");
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/normalization/block=128").verdict,
            Verdict::Regression);
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/normalization/block=256").verdict,
            Verdict::Unchanged);
  const BenchmarkChange& broken = change_of(r, "softmax/N=1024,K=1024/normalization/block=512");
  EXPECT_EQ(broken.verdict, Verdict::Broken);
  EXPECT_EQ(broken.note, "wrong_result: max abs error 0.5 > atol 1e-06");
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/eager/(defaults)").verdict, Verdict::Improvement);
  EXPECT_EQ(r.summary(), "1 regression, 1 improvement, 1 untouched, 1 broken");
  // Swapped: the broken point is fixed, which is no regression by itself.
  CompareReport back = compare_files("sweep_new.jsonl", "sweep_base.jsonl");
  EXPECT_EQ(back.count(Verdict::Fixed), 1u);
}

TEST(Compare, DifferentMachinesAreNoted) {
  CompareReport r = compare_files("base.json", "sweep_base.jsonl");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0],
            "the files come from different machines: base ci-runner, new cpu (fixture) (CPU "
            "emulation)");
}

// ---- renderings -------------------------------------------------------------

TEST(CompareRender, Text) {
  std::string t = render_compare_text(compare_files("base.json", "new.json"));
  EXPECT_NE(t.find("BM_regressed"), std::string::npos);
  size_t row = t.find("\nBM_regressed ");
  ASSERT_NE(row, std::string::npos) << t;
  std::string line = t.substr(row + 1, t.find('\n', row + 1) - row - 1);
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  EXPECT_EQ(words, (std::vector<std::string>{"BM_regressed", "100", "ns", "120", "ns", "+20.0%",
                                             words.size() > 6 ? words[6] : "?", "regression"}))
      << t;
  // Columns line up: every row's verdict starts where the heading's does.
  size_t verdict_col = t.find("verdict") - t.rfind('\n', t.find("verdict")) - 1;
  EXPECT_EQ(line.find("regression"), verdict_col) << t;
  EXPECT_EQ(t.substr(t.rfind('\n', t.size() - 2) + 1),
            "1 regression, 1 improvement, 3 untouched, 1 only in base, 1 only in new\n");
}

TEST(CompareRender, MarkdownHidesUntouchedInDetails) {
  std::string md = render_compare_markdown(compare_files("base.json", "new.json"));
  EXPECT_EQ(md.rfind("### schedlab compare\n\n**1 regression, 1 improvement, 3 untouched", 0), 0u)
      << md;
  EXPECT_NE(md.find("| `BM_regressed` | 100 ns | 120 ns | +20.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| **regression** |"), std::string::npos) << md;
  size_t details = md.find("<details><summary>3 untouched</summary>");
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_GT(md.find("`BM_noise`"), details);
  EXPECT_LT(md.find("`BM_improved`"), details);
}

TEST(CompareRender, Json) {
  auto j = nlohmann::json::parse(render_compare_json(compare_files("base.json", "new.json")));
  EXPECT_EQ(j["schema"], "schedlab.compare.v1");
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["counts"]["regression"], 1);
  EXPECT_EQ(j["counts"]["unchanged"], 3);
  EXPECT_EQ(j["benchmarks"][0]["name"], "BM_regressed");
  EXPECT_EQ(j["benchmarks"][0]["verdict"], "regression");
  EXPECT_DOUBLE_EQ(j["benchmarks"][0]["new"]["median_us"].get<double>(), 0.12);
  EXPECT_TRUE(j["benchmarks"][5]["base"].is_null());  // BM_added
}

// ---- errors -----------------------------------------------------------------

TEST(CompareErrors, MalformedJsonlNamesTheLine) {
  std::string path = data("malformed.jsonl");
  try {
    load_result_file(path);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().line, 2);
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2: error: invalid JSON", 0), 0u) << e.what();
  }
}

TEST(CompareErrors, MalformedGoogleBenchmarkJson) {
  std::string path = data("malformed.json");
  try {
    load_result_file(path);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": error: invalid JSON", 0), 0u) << e.what();
  }
}

TEST(CompareErrors, Files) {
  auto dir = testing_util::temp_dir("compare_errors");
  testing_util::write_file(dir / "empty.json", "  \n");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "empty.json").string()); }),
            "empty results file; expected Google Benchmark JSON or schedlab sweep JSONL");
  testing_util::write_file(dir / "other.json", R"({"results": []})");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "other.json").string()); }),
            "neither Google Benchmark JSON (an object with a 'benchmarks' array) nor schedlab "
            "sweep JSONL (one record per line)");
  testing_util::write_file(
      dir / "unit.json",
      R"({"benchmarks": [{"name": "BM_a", "real_time": 1, "time_unit": "fs"}]})");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "unit.json").string()); }),
            "benchmark 'BM_a': unknown time_unit 'fs'; expected ns, us, ms or s");
  testing_util::write_file(dir / "notime.json", R"({"benchmarks": [{"name": "BM_a"}]})");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "notime.json").string()); }),
            "benchmark 'BM_a' has no numeric real_time");
  testing_util::write_file(dir / "noname.json", R"({"benchmarks": [{"real_time": 1}]})");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "noname.json").string()); }),
            "benchmark 1 has no name");
  testing_util::write_file(dir / "notarray.json", R"({"benchmarks": {}})");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "notarray.json").string()); }),
            "'benchmarks' must be an array");
  EXPECT_EQ(user_error_of([&] { load_result_file((dir / "missing.json").string()); }),
            "cannot read results file '" + (dir / "missing.json").string() + "'");
}

TEST(CompareErrors, Threshold) {
  EXPECT_DOUBLE_EQ(parse_threshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_threshold("2.5"), 0.025);
  EXPECT_EQ(user_error_of([] { parse_threshold("five"); }),
            "--threshold: expected a non-negative percentage such as 5%, found 'five'");
  EXPECT_EQ(user_error_of([] { parse_threshold("-1%"); }),
            "--threshold: expected a non-negative percentage such as 5%, found '-1%'");
  EXPECT_EQ(user_error_of([] { parse_threshold("5%%"); }),
            "--threshold: expected a non-negative percentage such as 5%, found '5%%'");
}

}  // namespace
}  // namespace schedlab::report
