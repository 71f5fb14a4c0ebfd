// `compare` on the synthetic files of tests/report/data (written by
// gen_fixtures.py, which documents what each benchmark plants).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report_test_util.h"
#include "schedlab/report/compare.h"
#include "test_support.h"

namespace schedlab::report {
namespace {

using test_support::user_error_of;
using testing_util::ok_record;

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
  return compare(load_result_file(data(a)), load_result_file(data(b)),
                 {threshold, 0.05, false, false});
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
  // Each normalization config, its best, then eager (one point: named
  // without its config, the heuristic-level match).
  ASSERT_EQ(f.benchmarks.size(), 5u);
  EXPECT_EQ(f.benchmarks[0].name, "softmax/N=1024,K=1024/normalization/block=128");
  EXPECT_EQ(f.benchmarks[3].name, "softmax/N=1024,K=1024/normalization/best");
  EXPECT_EQ(f.benchmarks[3].config, "block=256");
  EXPECT_EQ(f.benchmarks[4].name, "softmax/N=1024,K=1024/eager");
  EXPECT_EQ(f.benchmarks[4].config, "(defaults)");
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
  EXPECT_NEAR(change_of(r, "BM_regressed").ratio->ratio, 1.20, 0.01);
  EXPECT_EQ(change_of(r, "BM_regressed").text.rfind("1.20x slower [", 0), 0u);
  EXPECT_EQ(change_of(r, "BM_regressed").text.back(), '*');
  EXPECT_LT(*change_of(r, "BM_regressed").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_noise").verdict, Verdict::Unchanged);
  EXPECT_GT(*change_of(r, "BM_noise").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_improved").verdict, Verdict::Improvement);
  EXPECT_NEAR(change_of(r, "BM_improved").ratio->ratio, 0.80, 0.01);
  EXPECT_EQ(change_of(r, "BM_improved").text.rfind("1.25x faster [", 0), 0u);
  // Significant, but within the threshold.
  EXPECT_LT(*change_of(r, "BM_small_shift").p, 0.05);
  EXPECT_EQ(change_of(r, "BM_small_shift").verdict, Verdict::Unchanged);
  EXPECT_EQ(change_of(r, "BM_removed").verdict, Verdict::OnlyInBase);
  EXPECT_EQ(change_of(r, "BM_added").verdict, Verdict::OnlyInNew);
  EXPECT_TRUE(r.has_regression());
  EXPECT_EQ(r.summary(), "1 regression, 1 improvement, 3 untouched, 1 only in base, 1 only in new");
}

TEST(Compare, ThresholdBoundaryIsStrict) {
  // BM_boundary multiplies every time by exactly 1.05, significantly.
  CompareReport at = compare_files("base.json", "new.json", parse_threshold("5%"));
  const BenchmarkChange& c = change_of(at, "BM_boundary");
  EXPECT_LT(*c.p, 0.05);
  EXPECT_NEAR(c.ratio->ratio, 1.05, 1e-12);        // rounded through microseconds
  EXPECT_EQ(c.verdict, Verdict::Unchanged);        // not beyond 5%
  EXPECT_EQ(c.text, "1.05x slower [1.04, 1.06]");  // no star: it does not count
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
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/eager").verdict, Verdict::Improvement);
  // The best config moved from block=128 (now slower) to block=256 (noise).
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/normalization/best").verdict, Verdict::Unchanged);
  EXPECT_EQ(change_of(r, "softmax/N=1024,K=1024/normalization/best")
                .note.rfind("best config now picks block=256 instead of block=128: ", 0),
            0u);
  EXPECT_EQ(r.summary(), "1 regression, 1 improvement, 2 untouched, 1 broken");
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
  EXPECT_EQ(words, (std::vector<std::string>{"BM_regressed", "100", "ns", "120", "ns", "1.20x",
                                             "slower", "[1.19,", "1.21]*",
                                             words.size() > 9 ? words[9] : "?", "regression"}))
      << t;
  // Columns line up: every row's verdict starts where the heading's does.
  size_t verdict_col = t.find("verdict") - t.rfind('\n', t.find("verdict")) - 1;
  EXPECT_EQ(line.find("regression"), verdict_col) << t;
  EXPECT_EQ(t.substr(t.rfind('\n', t.size() - 2) + 1),
            "1 regression, 1 improvement, 3 untouched, 1 only in base, 1 only in new\n");
}

TEST(CompareRender, MarkdownHidesUntouchedInDetails) {
  std::string md = render_compare_markdown(compare_files("base.json", "new.json"));
  EXPECT_EQ(md.rfind("### schedlab compare\n\n⚠️ **Merging will degrade performance", 0), 0u)
      << md;
  EXPECT_NE(md.find("**: 1 regression, 1 improvement, 3 untouched, 1 only in base, 1 only in new"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `BM_regressed` | 100 ns | 120 ns | 1.20x slower [1.19, 1.21]* |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| **regression** |"), std::string::npos) << md;
  size_t details = md.find("<details><summary>3 untouched</summary>");
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_GT(md.find("`BM_noise`"), details);
  EXPECT_LT(md.find("`BM_improved`"), details);
}

// ---- sweep files: heuristic-level matching and kernel identity ----------------

/// Writes records as a JSONL file in `dir`.
std::string jsonl(const std::filesystem::path& dir, const std::string& name,
                  const std::vector<Record>& records) {
  std::string text;
  for (const Record& r : records) text += to_json(r) + "\n";
  testing_util::write_file(dir / name, text);
  return (dir / name).string();
}

std::vector<double> times_around(double centre) {
  std::vector<double> v;
  for (double j : {-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 1.5, -1.5, 0.25})
    v.push_back(centre * (1 + j / 200));
  return v;
}

TEST(CompareSweep, HeuristicThatChangesItsChoiceIsARegressionNamed) {
  // The issue's case: a plugin's default changed (per_thread 2 -> 1) and
  // silu_mul went 7987 -> 9633 us. Matched by (fusion, sizes, scheduler).
  auto dir = testing_util::temp_dir("heuristic_change");
  Record before = ok_record("heuristic", {{"block", "128"}, {"per_thread", "2"}},
                            times_around(7987), "silu_mul");
  Record after = ok_record("heuristic", {{"block", "128"}, {"per_thread", "1"}}, times_around(9633),
                           "silu_mul");
  CompareReport r = compare(load_result_file(jsonl(dir, "base.jsonl", {before})),
                            load_result_file(jsonl(dir, "new.jsonl", {after})), {});
  ASSERT_EQ(r.changes.size(), 1u);
  const BenchmarkChange& c = r.changes[0];
  EXPECT_EQ(c.name, "silu_mul/N=1024,K=1024/heuristic");
  EXPECT_EQ(c.verdict, Verdict::Regression);
  // The note words the ratio as the verdict does: one number, one direction.
  EXPECT_EQ(c.note.rfind("heuristic now picks block=128,per_thread=1 instead of "
                         "block=128,per_thread=2: 1.21x slower [",
                         0),
            0u)
      << c.note;
  EXPECT_EQ(
      c.note,
      "heuristic now picks block=128,per_thread=1 instead of block=128,per_thread=2: " + c.text);
  EXPECT_TRUE(r.has_regression());
  ASSERT_TRUE(c.ratio);
  EXPECT_NEAR(c.ratio->ratio, 9633.0 / 7987.0, 1e-3);
  EXPECT_LT(c.ratio->lo, c.ratio->ratio);
  EXPECT_GT(c.ratio->hi, c.ratio->ratio);
  // The CPU default minimum effect (10 %) applied, and said.
  EXPECT_NE(render_compare_text(r).find("threshold the sweep's minimum effect"), std::string::npos);
}

TEST(CompareSweep, UnchangedKernelIsNeverFlaggedUnlessAsked) {
  auto dir = testing_util::temp_dir("same_kernel");
  Record before = ok_record("heuristic", {{"block", "128"}}, times_around(100));
  Record after = ok_record("heuristic", {{"block", "128"}}, times_around(150));  // a busy machine
  ASSERT_EQ(before.kernel_hash, after.kernel_hash);
  ResultFile b = load_result_file(jsonl(dir, "base.jsonl", {before}));
  ResultFile n = load_result_file(jsonl(dir, "new.jsonl", {after}));
  CompareReport quiet = compare(b, n, {});
  EXPECT_EQ(quiet.changes[0].verdict, Verdict::Unchanged);
  EXPECT_EQ(quiet.changes[0].note, "same kernel");
  EXPECT_FALSE(quiet.has_regression());
  EXPECT_DOUBLE_EQ(*quiet.geomean_ratio(), 1.0);  // an unchanged kernel counts 1
  CompareOptions all;
  all.include_unchanged_kernels = true;
  EXPECT_EQ(compare(b, n, all).changes[0].verdict, Verdict::Regression);
}

// A results file from before records kept declaration order lists sizes by
// name (K first); the new file lists them as the fusion declares them (N
// first). They match, and the new file's name is shown.
TEST(CompareSweep, SizesInAnyOrderMatch) {
  auto dir = testing_util::temp_dir("size_order");
  std::vector<Record> base = {
      ok_record("sweep", {{"block", "64"}}, times_around(100), "softmax", {{"K", 1024}, {"N", 32}}),
      ok_record("sweep", {{"block", "128"}}, times_around(80), "softmax",
                {{"K", 1024}, {"N", 32}})};
  std::vector<Record> next = base;
  for (Record& r : next) r.sizes = {{"N", 32}, {"K", 1024}};
  ResultFile b = load_result_file(jsonl(dir, "base.jsonl", base));
  ResultFile n = load_result_file(jsonl(dir, "new.jsonl", next));
  EXPECT_EQ(b.benchmarks[0].name, "softmax/K=1024,N=32/sweep/block=64");
  EXPECT_EQ(n.benchmarks[0].name, "softmax/N=32,K=1024/sweep/block=64");
  CompareReport r = compare(b, n, {});
  ASSERT_EQ(r.changes.size(), 3u);
  EXPECT_EQ(r.count(Verdict::OnlyInBase) + r.count(Verdict::OnlyInNew), 0u);
  EXPECT_EQ(r.changes[0].name, "softmax/N=32,K=1024/sweep/block=64");
  EXPECT_EQ(r.changes[2].name, "softmax/N=32,K=1024/sweep/best");
  // Within one file, a resumed run appending new-order records to an old
  // file replaces the old records of the same point.
  std::vector<Record> both = base;
  for (Record r : next) {
    r.times_us = times_around(50);
    both.push_back(r);
  }
  ResultFile resumed = load_result_file(jsonl(dir, "resumed.jsonl", both));
  ASSERT_EQ(resumed.benchmarks.size(), 3u);
  EXPECT_EQ(resumed.benchmarks[0].times_us, times_around(50));
}

TEST(CompareSweep, SweptSchedulerByConfigAndBest) {
  auto dir = testing_util::temp_dir("swept");
  std::vector<Record> base = {ok_record("sweep", {{"block", "64"}}, times_around(100)),
                              ok_record("sweep", {{"block", "128"}}, times_around(80))};
  std::vector<Record> next = {ok_record("sweep", {{"block", "64"}}, times_around(60)),
                              ok_record("sweep", {{"block", "128"}}, times_around(80))};
  next[0].kernel_hash = "changed";
  CompareReport r = compare(load_result_file(jsonl(dir, "base.jsonl", base)),
                            load_result_file(jsonl(dir, "new.jsonl", next)), {});
  ASSERT_EQ(r.changes.size(), 3u);
  EXPECT_EQ(r.changes[0].name, "softmax/N=1024,K=1024/sweep/block=64");
  EXPECT_EQ(r.changes[0].verdict, Verdict::Improvement);
  EXPECT_EQ(r.changes[1].note, "same kernel");
  EXPECT_EQ(r.changes[2].name, "softmax/N=1024,K=1024/sweep/best");
  EXPECT_EQ(r.changes[2].verdict, Verdict::Improvement);
  EXPECT_EQ(r.changes[2].note.rfind(
                "best config now picks block=64 instead of block=128: 1.33x faster [", 0),
            0u)
      << r.changes[2].note;
  // Markdown: the headline, grouped by scheduler, the emulation note.
  std::string md = render_compare_markdown(r);
  EXPECT_NE(md.find("**Merging will improve performance**"), std::string::npos) << md;
  EXPECT_NE(md.find("(geometric mean of new/base: 1."), std::string::npos) << md;
  EXPECT_NE(md.find("x faster)"), std::string::npos) << md;
  EXPECT_NE(md.find("#### `sweep`\n\n| benchmark | base median | new median | new/base [95% "
                    "interval] | verdict |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("CPU emulation"), std::string::npos) << md;
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

TEST(CompareErrors, MalformedJsonlLineIsSkippedWithAWarning) {
  std::string path = data("malformed.jsonl");
  testing::internal::CaptureStderr();
  ResultFile f = load_result_file(path);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(warnings.rfind(
                "warning: " + path + ":2: skipped a line that is not a record (invalid JSON", 0),
            0u)
      << warnings;
  EXPECT_FALSE(f.benchmarks.empty());  // the good lines still count
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
