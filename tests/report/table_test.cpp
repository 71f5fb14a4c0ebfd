// The side-by-side table: best configs, speedups, significance, failures,
// device separation, and its console / CSV / JSON / delta / HTML renderings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "report_test_util.h"
#include "schedlab/report/html.h"
#include "schedlab/report/table.h"
#include "test_support.h"

namespace schedlab::report {
namespace {

using namespace testing_util;
using test_support::user_error_of;

std::vector<double> around(double centre) {
  std::vector<double> v;
  for (double j : {-2.0, -1.5, -1.0, -0.5, -0.25, 0.25, 0.5, 1.0, 1.5, 2.0})
    v.push_back(centre + j * centre / 200);
  return v;
}

/// eager (baseline) at 100 us; normalization with three configs, the best
/// at 50 us; close (not significantly different from eager); pointwise
/// rejected; broken: two wrong results and a crash.
std::vector<Record> sweep() {
  std::vector<Record> r;
  r.push_back(ok_record("eager", {}, around(100)));
  r.push_back(ok_record("normalization", {{"block", "128"}, {"vec", "1"}}, around(80)));
  r.push_back(ok_record("normalization", {{"block", "256"}, {"vec", "4"}}, around(50)));
  r.push_back(ok_record("normalization", {{"block", "128"}, {"vec", "4"}}, around(60)));
  r.push_back(ok_record("normalization", {{"block", "256"}, {"vec", "1"}}, around(70)));
  std::vector<double> close = around(100);
  for (double& t : close) t += 0.1;
  r.push_back(ok_record("close", {}, close));
  r.push_back(failed_record("pointwise", Status::Rejected,
                            "pointwise schedules fusions without reductions"));
  r.push_back(failed_record("broken", Status::WrongResult, "max abs error 0.5", {{"block", "1"}}));
  r.push_back(failed_record("broken", Status::WrongResult, "max abs error 0.7", {{"block", "2"}}));
  r.push_back(failed_record("broken", Status::Crashed, "SIGSEGV", {{"block", "3"}}));
  return r;
}

TEST(Table, BestConfigSpeedupSignificance) {
  auto tables = build_tables(sweep(), {"eager", 0.05, {}});
  ASSERT_EQ(tables.size(), 1u);
  const Table& t = tables[0];
  EXPECT_EQ(t.schedulers,
            (std::vector<std::string>{"eager", "normalization", "close", "pointwise", "broken"}));
  ASSERT_EQ(t.rows.size(), 1u);
  const TableCell* n = t.cell(t.rows[0], "normalization");
  ASSERT_TRUE(n && n->best);
  EXPECT_EQ(n->best->config_label(), "block=256,vec=4");
  EXPECT_EQ(n->points, 4u);
  EXPECT_EQ(n->ok_points, 4u);
  EXPECT_DOUBLE_EQ(*n->speedup, 100.0 / 50.0);
  EXPECT_TRUE(n->significant);
  const TableCell* e = t.cell(t.rows[0], "eager");
  EXPECT_DOUBLE_EQ(*e->speedup, 1.0);
  EXPECT_FALSE(e->p);  // the baseline is not tested against itself
  const TableCell* c = t.cell(t.rows[0], "close");
  EXPECT_GT(*c->p, 0.05);
  EXPECT_FALSE(c->significant);
}

TEST(Table, WhyNoValidPoint) {
  auto tables = build_tables(sweep(), {"eager", 0.05, {}});
  const Table& t = tables[0];
  EXPECT_EQ(t.cell(t.rows[0], "pointwise")->why_none,
            "rejected: pointwise schedules fusions without reductions");
  EXPECT_EQ(t.cell(t.rows[0], "broken")->why_none,
            "wrong_result in 2 configs: max abs error 0.5; crashed: SIGSEGV");
  EXPECT_FALSE(t.cell(t.rows[0], "broken")->best);
}

TEST(Table, DevicesNeverShareATable) {
  std::vector<Record> rs = sweep();
  rs.push_back(
      ok_record("eager", {}, around(10), "softmax", {{"N", 1024}, {"K", 1024}}, gpu_device()));
  rs.push_back(ok_record("normalization", {}, around(5), "softmax", {{"N", 1024}, {"K", 1024}},
                         gpu_device()));
  auto tables = build_tables(rs, {"eager", 0.05, {}});
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_TRUE(tables[0].device.emulated);
  EXPECT_EQ(tables[1].device.backend, "cuda");
  EXPECT_EQ(tables[1].schedulers, (std::vector<std::string>{"eager", "normalization"}));
  EXPECT_DOUBLE_EQ(*tables[1].cell(tables[1].rows[0], "normalization")->speedup, 2.0);
}

TEST(Table, BaselineDefaultsToTheFirstScheduler) {
  auto tables = build_tables(sweep(), {});
  EXPECT_EQ(tables[0].baseline, "eager");
  EXPECT_TRUE(tables[0].baseline_defaulted);
}

TEST(Table, BaselineFromTheRecords) {
  // `report` on recorded results: the sweep's baseline, as the records carry it.
  std::vector<Record> rs = sweep();
  for (Record& r : rs) r.baseline = "normalization";
  auto tables = build_tables(rs, {});
  EXPECT_EQ(tables[0].baseline, "normalization");
  EXPECT_FALSE(tables[0].baseline_defaulted);
  EXPECT_EQ(render_console(tables, false).find("none was named"), std::string::npos);
  EXPECT_EQ(build_tables(rs, {"eager", 0.05, {}})[0].baseline, "eager");  // asked for wins
}

TEST(Table, PairedIntervalAndSameKernel) {
  // One interleaved group: a load spike in rounds 2-4 hits every point.
  std::vector<double> base = {100, 101, 300, 310, 290, 99, 100, 102, 98, 101};
  std::vector<double> faster, twin = base;
  for (double t : base) faster.push_back(t / 1.25);
  std::vector<Record> rs = {ok_record("heuristic", {{"block", "128"}}, base),
                            ok_record("tuned", {{"block", "256"}}, faster),
                            ok_record("sweep", {{"block", "128"}}, twin)};
  for (Record& r : rs) {
    r.group = "run-0";
    r.min_effect = 0.02;
  }
  rs[2].kernel_hash = rs[0].kernel_hash;  // the sweep found the heuristic's own kernel
  auto tables = build_tables(rs, {"heuristic", 0.05, {}});
  const Table& t = tables[0];
  EXPECT_DOUBLE_EQ(t.min_effect, 0.02);
  const TableCell* tuned = t.cell(t.rows[0], "tuned");
  ASSERT_TRUE(tuned->estimate);
  EXPECT_TRUE(tuned->estimate->paired);
  EXPECT_NEAR(*tuned->speedup, 1.25, 1e-9);
  EXPECT_NEAR(tuned->estimate->ratio, 0.8, 1e-9);  // this time / the baseline's
  EXPECT_NEAR(tuned->estimate->hi, 0.8, 1e-9);     // every round says 0.8
  EXPECT_TRUE(tuned->significant);
  const TableCell* same = t.cell(t.rows[0], "sweep");
  EXPECT_EQ(same->same_kernel_as, "heuristic");
  EXPECT_FALSE(same->estimate);
  std::string out = render_console(tables, false);
  EXPECT_NE(out.find("1.25x faster [1.25, 1.25]*"), std::string::npos) << out;
  EXPECT_EQ(tuned->verdict, "1.25x faster [1.25, 1.25]*");
  EXPECT_NE(out.find("same kernel as `heuristic`"), std::string::npos) << out;
}

TEST(Table, UnknownBaseline) {
  EXPECT_EQ(user_error_of([] {
              build_tables(sweep(), {"eagr", 0.05, {}});
            }),
            "baseline scheduler 'eagr' has no records; the schedulers are eager, normalization, "
            "close, pointwise, broken");
}

// ---- console ----------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> r;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
    r.push_back(s.substr(start, nl - start));
  return r;
}

TEST(Console, LabelsEmulationAndAlignsColumns) {
  std::string out = render_console(build_tables(sweep(), {"eager", 0.05, {}}), false);
  auto l = lines_of(out);
  ASSERT_GE(l.size(), 11u) << out;
  EXPECT_EQ(l[0], "test_sweep on cpu (test) (cpu) — CPU emulation — not GPU timings");
  EXPECT_EQ(l[1], "baseline: eager");
  EXPECT_EQ(l[2].rfind("best config: the configuration the vs-baseline estimate puts fastest", 0),
            0u)
      << l[2];
  EXPECT_EQ(l[3].rfind("vs baseline: this time over the baseline's, from the per-round ratios", 0),
            0u)
      << l[3];
  // Right-aligned numbers end in the same column as their heading.
  size_t median_end = l[4].find("median") + 6;
  EXPECT_EQ(l[5].rfind("100.00", median_end), median_end - 6) << out;
  EXPECT_NE(l[5].find("softmax  N=1024,K=1024  eager"), std::string::npos) << out;
  EXPECT_NE(l[5].find("  baseline"), std::string::npos) << out;
  EXPECT_NE(l[6].find("block=256,vec=4"), std::string::npos) << out;
  EXPECT_NE(l[6].find("2.00x faster ["), std::string::npos) << out;
  EXPECT_NE(l[6].find("]*"), std::string::npos) << out;
  EXPECT_NE(l[7].find("1.00x ["), std::string::npos) << out;  // close: no word, no star
  EXPECT_EQ(l[7].find("]*"), std::string::npos) << out;
  EXPECT_NE(l[8].find("pointwise      no valid point"), std::string::npos) << out;
  EXPECT_EQ(l[9], "    pointwise: rejected: pointwise schedules fusions without reductions");
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

TEST(Console, ColourOnlyWhenAsked) {
  std::string out = render_console(build_tables(sweep(), {"eager", 0.05, {}}), true);
  EXPECT_NE(out.find("\x1b[32m"), std::string::npos);  // significantly faster
  EXPECT_NE(out.find("\x1b[0m"), std::string::npos);
}

TEST(Console, NoColourOffATerminalOrWithNoColor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(colour_enabled(fds[1]));
  close(fds[0]);
  close(fds[1]);
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(colour_enabled(0));
  EXPECT_FALSE(colour_enabled(1));
  unsetenv("NO_COLOR");
}

TEST(Delta, ShowsPerCellChange) {
  std::vector<Record> before = sweep(), after = sweep();
  // normalization got faster with a new best config; close now fails;
  // pointwise now validates; a new scheduler appears.
  after[2].times_us = around(40);
  after[3].times_us = around(30);  // block=128,vec=4 is now the best
  after[5] = failed_record("close", Status::Crashed, "SIGABRT");
  after[6] = ok_record("pointwise", {{"block", "128"}}, around(90));
  after.push_back(ok_record("fresh", {}, around(95)));
  std::string out = render_delta(build_tables(before, {"eager", 0.05, {}}),
                                 build_tables(after, {"eager", 0.05, {}}), false);
  auto l = lines_of(out);
  auto line_of = [&](const std::string& scheduler) {
    for (const std::string& s : l)
      if (s.find("  " + scheduler + " ") != std::string::npos) return s;
    return std::string("(none)");
  };
  EXPECT_NE(l[4].find("change"), std::string::npos);
  // Two runs: an unpaired estimate with its interval, in the verdict's words.
  EXPECT_NE(line_of("normalization").find("1.67x faster ["), std::string::npos) << out;
  EXPECT_NE(line_of("normalization").find("]* vs last run (was 50.00, was block=256,vec=4)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("% ["), std::string::npos) << out;  // never a percent change
  EXPECT_EQ(out.find("-40"), std::string::npos) << out;
  // Not re-run (the same record, the same times): "=".
  EXPECT_EQ(line_of("eager").substr(line_of("eager").size() - 3), "  =") << out;
  EXPECT_NE(line_of("close").find("now failing"), std::string::npos) << out;
  EXPECT_NE(line_of("pointwise").find("now valid"), std::string::npos) << out;
  EXPECT_NE(line_of("fresh").find("new"), std::string::npos) << out;
  EXPECT_NE(line_of("broken").find("still failing"), std::string::npos) << out;
}

TEST(Delta, UnchangedIsEqualsAndARerunOfTheSameKernelSaysSo) {
  std::vector<Record> before = sweep();
  before[5].kernel_hash = "";  // close: no kernel to compare (used to print "+0.0% [...]")
  std::vector<Record> after = before;
  after[0].times_us = around(101);  // eager re-run: the same kernel, new times
  std::string out = render_delta(build_tables(before, {"eager", 0.05, {}}),
                                 build_tables(after, {"eager", 0.05, {}}), false);
  auto line_of = [&](const std::string& scheduler) {
    for (const std::string& s : lines_of(out))
      if (s.find("  " + scheduler + " ") != std::string::npos) return s;
    return std::string("(none)");
  };
  EXPECT_NE(line_of("eager").find("same kernel (was 100.00)"), std::string::npos) << out;
  for (const char* unchanged : {"normalization", "close"}) {
    const std::string l = line_of(unchanged);
    EXPECT_EQ(l.substr(l.size() - 3), "  =") << out;
  }
  EXPECT_EQ(out.find("+0.0%"), std::string::npos) << out;
}

// Rows match on the sizes by name: a file from before declaration-order
// sizes (K first) and a new one (N first) make one row, labelled as first seen.
TEST(Table, RowsMatchSizesInAnyOrder) {
  std::vector<Record> rs = {
      ok_record("eager", {}, around(100)),
      ok_record("tuned", {}, around(50), "softmax", {{"K", 1024}, {"N", 1024}})};
  auto tables = build_tables(rs, {"eager", 0.05, {}});
  ASSERT_EQ(tables[0].rows.size(), 1u);
  EXPECT_EQ(tables[0].rows[0].size_label, "N=1024,K=1024");
  EXPECT_EQ(tables[0].rows[0].size_key, "K=1024,N=1024");
  EXPECT_DOUBLE_EQ(*tables[0].cell(tables[0].rows[0], "tuned")->speedup, 2.0);
  // watch's delta pairs them too.
  std::vector<Record> old_order = rs;
  for (Record& r : old_order) r.sizes = {{"K", 1024}, {"N", 1024}};
  std::string out = render_delta(build_tables(old_order, {"eager", 0.05, {}}), tables, false);
  EXPECT_EQ(out.find("new"), std::string::npos) << out;
}

// ---- CSV and JSON -------------------------------------------------------------

TEST(Csv, OneLinePerCellWithQuoting) {
  std::string csv = render_csv(build_tables(sweep(), {"eager", 0.05, {}}));
  auto l = lines_of(csv);
  ASSERT_EQ(l.size(), 6u);  // header + 5 schedulers
  EXPECT_EQ(l[0].rfind("sweep,device,backend,emulated,fusion,size,scheduler,baseline,", 0), 0u);
  EXPECT_EQ(l[2].rfind("test_sweep,cpu (test),cpu,true,softmax,\"N=1024,K=1024\",normalization,"
                       "false,4,4,\"block=256,vec=4\",10,50,",
                       0),
            0u)
      << l[2];
  // Columns by the header's names.
  auto field = [&](const std::string& line, const std::string& name) {
    std::vector<std::string> head, f;
    auto split = [](const std::string& s) {
      std::vector<std::string> out(1);
      bool quoted = false;
      for (char c : s) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted)
          out.emplace_back();
        else if (c != '"')
          out.back() += c;
      }
      return out;
    };
    head = split(l[0]);
    f = split(line);
    auto at = std::find(head.begin(), head.end(), name);
    return at == head.end() || f.size() != head.size() ? std::string("?")
                                                       : f[static_cast<size_t>(at - head.begin())];
  };
  EXPECT_NEAR(std::stod(field(l[2], "speedup")), 2.0, 1e-9);
  EXPECT_NEAR(std::stod(field(l[2], "time_ratio")), 0.5, 1e-9);
  EXPECT_EQ(field(l[2], "verdict").rfind("2.00x faster [", 0), 0u);
  EXPECT_EQ(field(l[1], "verdict"), "baseline");
  // Failed cells keep the column count and say why in the last column.
  auto columns = [](const std::string& s) {
    size_t n = 1;
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      n += c == ',' && !quoted;
    }
    return n;
  };
  for (const std::string& s : l) EXPECT_EQ(columns(s), columns(l[0])) << s;
  EXPECT_EQ(field(l[5], "no_valid_point"),
            "wrong_result in 2 configs: max abs error 0.5; crashed: SIGSEGV");
}

TEST(Json, SectionsCarryDeviceAndTimingsLabel) {
  auto j = nlohmann::json::parse(render_json(build_tables(sweep(), {"eager", 0.05, {}})));
  EXPECT_EQ(j["schema"], "schedlab.table.v1");
  const auto& s = j["sections"][0];
  EXPECT_EQ(s["timings"], "CPU emulation — not GPU timings");
  EXPECT_EQ(s["spread"], "iqr");
  EXPECT_EQ(s["baseline"], "eager");
  const auto& cells = s["rows"][0]["cells"];
  EXPECT_EQ(cells[1]["config"]["block"], "256");
  EXPECT_DOUBLE_EQ(cells[1]["speedup"].get<double>(), 2.0);
  EXPECT_TRUE(cells[1]["fraction_of_peak"].is_null());
  EXPECT_EQ(cells[3]["no_valid_point"], "rejected: pointwise schedules fusions without reductions");
}

// ---- HTML ---------------------------------------------------------------------

TEST(Html, SelfContainedWithChartsAndHeatmap) {
  std::string page = render_html(sweep(), {"eager", 0.05, {}}, {});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("CPU emulation — not GPU timings</h2>"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos);
  EXPECT_NE(page.find("aria-label=\"time relative to the baseline per scheduler\""),
            std::string::npos);
  // The heatmap is chosen: normalization is the first to vary two parameters.
  EXPECT_NE(page.find("<h3>normalization: median time over block and vec, softmax N=1024,K=1024"),
            std::string::npos);
  EXPECT_NE(page.find("<title>block=256, vec=4: 50.00 us</title>"), std::string::npos);
  // Its colour legend: the fastest and slowest cells, and the non-times.
  EXPECT_NE(page.find(">slowest (log scale)</text>"), std::string::npos);
  EXPECT_NE(page.find(">no valid point</text>"), std::string::npos);
  // One size: no line plot.
  EXPECT_EQ(page.find("<polyline"), std::string::npos);
}

TEST(Html, EscapesNames) {
  std::vector<Record> rs = {ok_record("a<b>&\"c", {}, around(1))};
  std::string page = render_html(rs, {}, {});
  EXPECT_NE(page.find("a&lt;b&gt;&amp;&quot;c"), std::string::npos);
  EXPECT_EQ(page.find("a<b>"), std::string::npos);
  EXPECT_NE(page.find("No scheduler varies two parameters: no heatmap."), std::string::npos);
}

TEST(Html, HeatmapErrors) {
  HtmlOptions o;
  o.heatmap_scheduler = "eagr";
  EXPECT_EQ(user_error_of([&] { render_html(sweep(), {}, o); }),
            "heatmap: no scheduler 'eagr'; the schedulers are eager, normalization, close, "
            "pointwise, broken");
  o.heatmap_scheduler = "normalization";
  o.heatmap_x = "blok";
  EXPECT_EQ(user_error_of([&] { render_html(sweep(), {}, o); }),
            "heatmap: scheduler 'normalization' has no parameter 'blok'; its parameters are "
            "block, vec");
  o.heatmap_scheduler = "broken";
  o.heatmap_x = "";
  EXPECT_EQ(user_error_of([&] { render_html(sweep(), {}, o); }),
            "heatmap: scheduler 'broken' varies fewer than two parameters (block)");
  o.heatmap_scheduler = "";
  o.heatmap_x = "block";
  EXPECT_EQ(user_error_of([&] { render_html(sweep(), {}, o); }),
            "heatmap: parameters given without a scheduler");
}

TEST(Html, ChosenAxes) {
  HtmlOptions o;
  o.heatmap_scheduler = "normalization";
  o.heatmap_x = "vec";
  std::string page = render_html(sweep(), {}, o);
  EXPECT_NE(page.find("over vec and block"), std::string::npos);
}

/// softmax at four sizes, written out of order (element counts 65536,
/// 262144, 4194304, 1048576 for N = 64, 256, 4096, 1024 at K = 1024), with
/// eager and a tuned scheduler whose long configuration must wrap.
std::vector<Record> four_sizes(Device device = cpu_device()) {
  std::vector<Record> r;
  for (int64_t n : {64, 256, 4096, 1024}) {
    double t = 10.0 * static_cast<double>(n);
    SizeList sizes = {{"N", n}, {"K", 1024}};
    r.push_back(ok_record("eager", {}, around(t), "softmax", sizes, device));
    r.push_back(ok_record("tuned",
                          {{"block", "256"}, {"vector", "4"}, {"persistent_rows_per_block", "8"}},
                          around(t / 2), "softmax", sizes, device));
  }
  return r;
}

/// The <svg> element whose aria-label is `label`, or "".
std::string svg_labelled(const std::string& page, const std::string& label, size_t from = 0) {
  size_t at = page.find("aria-label=\"" + label + "\"", from);
  if (at == std::string::npos) return "";
  size_t start = page.rfind("<svg", at);
  return page.substr(start, page.find("</svg>", at) + 6 - start);
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Html, LinePlotsOfTimeAndBandwidthAgainstSize) {
  std::string page = render_html(four_sizes(), {"eager", 0.05, {}}, {});
  const std::string time = svg_labelled(page, "softmax: best median time against size");
  const std::string bw = svg_labelled(page, "softmax: GB/s against size");
  ASSERT_FALSE(time.empty()) << page;
  ASSERT_FALSE(bw.empty()) << page;
  for (const std::string& svg : {time, bw}) {
    // One polyline per scheduler through its four sizes, a marker at each.
    EXPECT_EQ(count_of(svg, "<polyline"), 2u) << svg;
    EXPECT_NE(svg.find("<polyline data-series=\"eager\""), std::string::npos);
    EXPECT_NE(svg.find("<polyline data-series=\"tuned\""), std::string::npos);
    EXPECT_EQ(count_of(svg, "<circle"), 2u * 4 + 2) << svg;  // + the legend's
    // Sizes by element count, not as recorded; 64 to 4096 spans decades.
    size_t a = svg.find(">N=64<"), b = svg.find(">N=256<"), c = svg.find(">N=1024<"),
           d = svg.find(">N=4096<");
    EXPECT_TRUE(a < b && b < c && c < d && d != std::string::npos) << svg;
    EXPECT_NE(svg.find("size, by element count (N·K) (log scale)"), std::string::npos);
  }
  // Readable ticks and tooltips: units, no exponents.
  EXPECT_NE(time.find(">1 ms</text>"), std::string::npos) << time;
  EXPECT_NE(time.find(": 40.96 ms</title>"), std::string::npos) << time;
  EXPECT_EQ(page.find("e+0"), std::string::npos);
  // The table: times with units; the configuration wraps between its parts.
  EXPECT_NE(page.find("<td class=\"config\">block=256,<wbr>vector=4,<wbr>persistent_<wbr>rows_<wbr>"
                      "per_<wbr>block=8</td><td>20.48 ms</td>"),
            std::string::npos)
      << page;
}

TEST(Html, OneSizeVariableIsTheAxis) {
  std::vector<Record> rs;
  for (int64_t n : {1000, 2000, 3000})
    rs.push_back(ok_record("eager", {}, around(static_cast<double>(n)), "row_sum", {{"N", n}}));
  std::string page = render_html(rs, {}, {});
  const std::string time = svg_labelled(page, "row_sum: best median time against size");
  ASSERT_FALSE(time.empty()) << page;
  // Values on the axis, its title the size's name; linear (within a decade).
  EXPECT_NE(time.find(">2000</tspan>"), std::string::npos) << time;
  EXPECT_NE(time.find(">N</text>"), std::string::npos) << time;
  EXPECT_EQ(time.find("log scale"), std::string::npos) << time;
}

TEST(Html, DevicesNeverSharePlots) {
  std::vector<Record> rs = four_sizes();
  for (Record& r : four_sizes(gpu_device())) {
    r.scheduler = r.scheduler == "tuned" ? "gpu_only" : r.scheduler;
    rs.push_back(r);
  }
  std::string page = render_html(rs, {"eager", 0.05, {}}, {});
  const std::string label = "softmax: best median time against size";
  size_t gpu_section = page.find("<section>", page.find("<section>") + 1);
  const std::string cpu_plot = svg_labelled(page, label);
  const std::string gpu_plot = svg_labelled(page, label, gpu_section);
  ASSERT_FALSE(cpu_plot.empty());
  ASSERT_FALSE(gpu_plot.empty());
  EXPECT_LT(page.find(cpu_plot), gpu_section);
  EXPECT_EQ(cpu_plot.find("gpu_only"), std::string::npos);
  EXPECT_EQ(gpu_plot.find("data-series=\"tuned\""), std::string::npos);
  EXPECT_NE(gpu_plot.find("data-series=\"gpu_only\""), std::string::npos);
}

}  // namespace
}  // namespace schedlab::report
