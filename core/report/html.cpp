#include "schedlab/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "heatmap.h"
#include "plot.h"
#include "schedlab/report/curves.h"
#include "schedlab/report/format.h"
#include "schedlab/report/verdict.h"

namespace schedlab::report {

namespace {

std::string esc(const std::string& s) {
  return html_escape(s);
}

/// `s` escaped, with a line break opportunity (<wbr>) after each ',' and
/// '_': long configurations and names wrap between their parts.
std::string wrappable(const std::string& s) {
  std::string r;
  for (char c : s) {
    r += esc(std::string(1, c));
    if (c == ',' || c == '_') r += "<wbr>";
  }
  return r;
}

constexpr const char* kCss = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; width: 100%; table-layout: auto; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
th { background: #f4f4f4; }
td.name, th.name { text-align: left; white-space: normal; overflow-wrap: break-word; }
td.scheduler, td.config { text-align: left; white-space: normal; overflow-wrap: anywhere; }
td.config { min-width: 8em; }
td.none { text-align: left; color: #8a6d00; white-space: normal; overflow-wrap: anywhere; }
tr.baseline td { font-weight: 600; }
.faster { color: #1a7f37; } .slower { color: #c62828; }
.emulated { background: #fff4d6; border: 1px solid #e0b000; padding: 6px 10px; font-weight: 600; }
.legend, .note { color: #555; }
.plots { display: flex; flex-wrap: wrap; gap: 0 16px; }
svg { max-width: 100%; height: auto; }
svg text { font: 12px system-ui, sans-serif; }
)";

/// A scheduler's colour in every chart of a section: its place in the table.
std::string colour_of(const Table& t, const std::string& scheduler) {
  // Tableau 10: distinguishable, and fair to the common colour blindnesses.
  constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#9c755f", "#ff9da7", "#bab0ac"};
  auto it = std::find(t.schedulers.begin(), t.schedulers.end(), scheduler);
  size_t i = static_cast<size_t>(it - t.schedulers.begin());
  return kPalette[i % std::size(kPalette)];
}

/// The class of a verdict's cell: faster (green) or slower (red) when it
/// counts, as the console colours it.
std::string verdict_class(double ratio, bool counts) {
  if (!counts) return "";
  Direction d = direction_of(ratio);
  return d == Direction::Slower   ? " class=\"slower\""
         : d == Direction::Faster ? " class=\"faster\""
                                  : "";
}

std::string html_table(const Table& t) {
  const bool predicted = !t.predicted_on.empty();
  std::string h = fmt::format(
      "<table>\n<tr><th class=\"name\">fusion</th><th class=\"name\">size</th>"
      "<th class=\"name\">scheduler</th><th class=\"name\">best config</th>{}<th>median</th>"
      "<th>IQR</th><th>min – max</th><th>GB/s</th><th>% peak</th><th class=\"name\">vs "
      "baseline</th>{}<th>p</th></tr>\n",
      predicted ? "<th>predicted " + esc(t.predicted_on) + "</th>" : "",
      predicted ? "<th class=\"name\">CPU vs baseline</th>" : "");
  for (const TableRow& row : t.rows) {
    for (const TableCell& c : row.cells) {
      if (c.points == 0) continue;
      bool base = c.scheduler == t.baseline;
      h += fmt::format(
          "<tr{}><td class=\"name\">{}</td><td class=\"name\">{}</td>"
          "<td class=\"scheduler\">{}</td>",
          base ? " class=\"baseline\"" : "", wrappable(row.fusion), wrappable(row.label()),
          wrappable(c.scheduler) + (base ? " (baseline)" : ""));
      if (!c.best) {
        h += fmt::format("<td class=\"none\" colspan=\"{}\">no valid point: {}</td></tr>\n",
                         predicted ? 10 : 8, esc(c.why_none));
        continue;
      }
      const Summary& s = *c.stats;
      double gbps = c.best->gbps();
      auto peak = c.best->fraction_of_peak();
      const std::string cls = verdict_class(1 / c.speedup.value_or(1), predicted || c.significant);
      const std::string cpu =
          !predicted
              ? ""
              : fmt::format("<td{}>{}</td>",
                            c.estimate ? verdict_class(c.estimate->ratio, c.significant) : "",
                            esc(c.measured_verdict));
      h += fmt::format(
          "<td class=\"config\">{}</td>{}<td>{}</td><td>{}</td><td>{} – {}</td>"
          "<td>{}</td><td>{}</td><td{}>{}</td>{}<td>{}</td></tr>\n",
          wrappable(c.best->config_label()),
          predicted ? "<td>" + format_time_us(c.best->prediction->predicted_us) + "</td>" : "",
          format_time_us(s.median), format_time_us(s.iqr()), format_time_us(s.min),
          format_time_us(s.max), gbps > 0 ? format_gbps(gbps) : "–",
          peak ? fmt::format("{:.1f}%", *peak * 100) : "–", cls,
          c.verdict.empty() ? "–" : esc(c.verdict), cpu,
          !c.p           ? "–"
          : *c.p < 0.001 ? "&lt; 0.001"
                         : fmt::format("{:.3f}", *c.p));
    }
  }
  return h + "</table>\n";
}

/// A row of legend entries (a swatch and a name each) at `y`, wrapped at
/// `width`; returns the height used.
int legend_rows(std::string& body, const std::vector<std::pair<std::string, std::string>>& entries,
                int x0, int y, int width) {
  int x = x0, rows = 1;
  for (const auto& [colour, name] : entries) {
    int w = 26 + 7 * static_cast<int>(std::min<size_t>(name.size(), 40));
    if (x > x0 && x + w > width) x = x0, y += 18, ++rows;
    body += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{}\" stroke=\"#666\" "
        "stroke-width=\"0.5\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        x, y, colour, x + 18, y + 10, esc(name.size() > 40 ? name.substr(0, 39) + "…" : name));
    x += w;
  }
  return rows * 18;
}

/// What a bar draws: the cell's time over the baseline's best, the very
/// ratio its verdict words (the prediction's ratio in a predicted table, the
/// measured estimate otherwise; 1 for the baseline and its own kernel), and
/// the estimate's interval when there is one. Nullopt without a verdict.
struct Bar {
  double ratio = 1, lo = 1, hi = 1;
};
std::optional<Bar> bar_of(const Table& t, const TableCell& c) {
  if (!c.best || !c.speedup) return std::nullopt;
  if (!t.predicted_on.empty() || !c.estimate)
    return Bar{1 / *c.speedup, 1 / *c.speedup, 1 / *c.speedup};
  return Bar{c.estimate->ratio, c.estimate->lo, c.estimate->hi};
}

/// Horizontal bars: per fusion and size, each scheduler's time relative to
/// the baseline's best, the ratio the table's verdict gives (bar_of), with
/// its 95% interval as a whisker, labelled with the verdict itself; scaled
/// to the longest of the group. A legend of the schedulers' colours heads it.
std::string bar_chart(const Table& t) {
  const int label_w = 200, bar_w = 420, value_w = 260, bar_h = 16, gap = 4, group_gap = 14;
  const int width = label_w + bar_w + value_w;
  std::string body;
  std::vector<std::pair<std::string, std::string>> entries;
  for (const std::string& s : t.schedulers)
    entries.push_back({colour_of(t, s), s == t.baseline ? s + " (baseline, outlined)" : s});
  int y = 4 + legend_rows(body, entries, 0, 4, width) + 10;
  for (const TableRow& row : t.rows) {
    double longest = 0;
    for (const TableCell& c : row.cells)
      if (auto b = bar_of(t, c)) longest = std::max({longest, b->ratio, b->hi});
    body += fmt::format("<text x=\"0\" y=\"{}\" font-weight=\"bold\">{} {}</text>\n", y + 12,
                        esc(row.fusion), esc(row.label()));
    y += bar_h + gap;
    for (const TableCell& c : row.cells) {
      if (c.points == 0) continue;
      // Long names are cut to the label column; the full name is the tooltip.
      const std::string shown =
          c.scheduler.size() > 28 ? c.scheduler.substr(0, 27) + "…" : c.scheduler;
      body +=
          fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>\n",
                      label_w - 8, y + 12, esc(shown), esc(c.scheduler));
      const std::optional<Bar> b = bar_of(t, c);
      if (b && longest > 0) {
        auto x_of = [&](double v) { return std::max(1.0, v / longest * bar_w); };
        const double w = x_of(b->ratio);
        body += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}><title>{}: {}; "
            "median {} (IQR {})</title></rect>\n",
            label_w, y, w, bar_h, colour_of(t, c.scheduler),
            c.scheduler == t.baseline ? " stroke=\"#222\" stroke-width=\"1.5\"" : "",
            esc(c.scheduler), esc(c.verdict), format_time_us(c.stats->median),
            format_time_us(c.stats->iqr()));
        if (b->lo < b->hi)
          body += fmt::format(
              "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#222\" "
              "stroke-width=\"1.5\"/>\n",
              label_w + x_of(b->lo), label_w + x_of(b->hi), y + bar_h / 2, y + bar_h / 2);
        body += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
                            label_w + std::max(w, x_of(b->hi)) + 6, y + 12, esc(c.verdict));
      } else {
        body += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#8a6d00\">{}</text>\n", label_w, y + 12,
                            c.best ? "no baseline to compare with" : "no valid point");
      }
      y += bar_h + gap;
    }
    y += group_gap;
  }
  return fmt::format(
      "<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"time relative to the baseline per scheduler\">\n{2}</svg>\n",
      width, y, body);
}

/// The product of a point's sizes: where it lies on a size axis.
double element_count(const SizeList& sizes) {
  double n = 1;
  for (const auto& [name, v] : sizes) n *= static_cast<double>(v);
  return n;
}

/// Per fusion of `t` with two sizes or more: each scheduler's best time
/// against size, and its GB/s where the bytes are known. Sizes are ordered by
/// their element count (the product of the sizes; ties keep the table's
/// order), and placed by it when the counts differ, else evenly.
std::string size_plots(const Table& t, const std::vector<const Record*>& records) {
  const bool predicted = !t.predicted_on.empty();
  std::map<std::pair<std::string, std::string>, SizeList> sizes_of;
  for (const Record* r : records) sizes_of.try_emplace({r->fusion, r->size_key()}, r->sizes);
  std::vector<std::string> fusions;
  for (const TableRow& row : t.rows)
    if (std::find(fusions.begin(), fusions.end(), row.fusion) == fusions.end())
      fusions.push_back(row.fusion);
  std::string out;
  for (const std::string& fusion : fusions) {
    std::vector<const TableRow*> rows;
    for (const TableRow& row : t.rows)
      if (row.fusion == fusion) rows.push_back(&row);
    if (rows.size() < 2) continue;
    auto count = [&](const TableRow* r) { return element_count(sizes_of[{fusion, r->size_key}]); };
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const TableRow* a, const TableRow* b) { return count(a) < count(b); });
    const SizeList first = sizes_of[{fusion, rows.front()->size_key}];
    // One size variable: its values on the axis, named in the axis title.
    bool one_size = first.size() == 1;
    for (const TableRow* r : rows)
      one_size = one_size && sizes_of[{fusion, r->size_key}].size() == 1 &&
                 sizes_of[{fusion, r->size_key}].front().first == first.front().first;
    LineChart time, bw;
    for (const TableRow* r : rows) {
      time.x_labels.push_back(one_size
                                  ? std::to_string(sizes_of[{fusion, r->size_key}].front().second)
                                  : r->size_label);
      time.x_values.push_back(count(r));
    }
    std::string names;
    for (const auto& [name, v] : first) names += (names.empty() ? "" : "·") + name;
    time.x_title = one_size ? names : "size, by element count (" + names + ")";
    time.label =
        fusion + ": best " + (predicted ? "predicted time" : "median time") + " against size";
    time.y_title = predicted ? "predicted time on " + t.predicted_on : "best median time";
    time.y_tick = [](double v) { return format_time_us(v, 3, true); };
    time.y_value = [](double v) { return format_time_us(v); };
    bw.x_labels = time.x_labels;
    bw.x_values = time.x_values;
    bw.x_title = time.x_title;
    bw.label = fusion + ": GB/s against size";
    bw.y_title = predicted ? "GB/s at the predicted time" : "GB/s at the best median";
    bw.y_tick = [](double v) { return format_sig(v, 3, true); };
    bw.y_value = [](double v) { return format_gbps(v) + " GB/s"; };
    bool any_bytes = false;
    for (const std::string& s : t.schedulers) {
      PlotSeries ts{s, colour_of(t, s), {}, s == t.baseline};
      PlotSeries bs = ts;
      bool present = false;  // a scheduler with no valid point here has no line
      for (const TableRow* r : rows) {
        const TableCell* c = t.cell(*r, s);
        present |= c && c->best;
        if (!c || !c->best) {
          ts.y.push_back(std::nullopt);
          bs.y.push_back(std::nullopt);
          continue;
        }
        double us = predicted ? c->best->prediction->predicted_us : c->stats->median;
        ts.y.push_back(us);
        if (c->best->bytes_moved > 0 && us > 0) {
          bs.y.push_back(static_cast<double>(c->best->bytes_moved) / us / 1e3);
          any_bytes = true;
        } else {
          bs.y.push_back(std::nullopt);
        }
      }
      if (!present) continue;
      time.series.push_back(std::move(ts));
      bw.series.push_back(std::move(bs));
    }
    out += fmt::format("<h3>{}: {} and bandwidth against size, per scheduler{}</h3>\n", esc(fusion),
                       predicted ? "predicted time" : "best median time",
                       t.device.emulated ? " (CPU emulation)" : "");
    out += "<div class=\"plots\">\n" + line_chart_svg(time);
    if (any_bytes) out += line_chart_svg(bw);
    out += "</div>\n";
  }
  return out;
}

/// The searches' best-so-far curves (curves.h): a chart per device, fusion
/// and sizes, a line per scheduler and strategy, against evaluations.
std::string curve_charts(const std::vector<Record>& records) {
  const std::vector<Curve> curves = best_so_far_curves(records);
  if (curves.empty()) return "";
  std::string out =
      "<section>\n<h2>Search: best so far</h2>\n<p class=\"note\">The best objective each "
      "search had found after each evaluation (the prediction under objective predicted, the "
      "median otherwise); lower is better, and a curve that flattens early found its best "
      "early.</p>\n<div class=\"plots\">\n";
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Curve*>> charts;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const Curve& c : curves) {
    auto key = std::tuple(c.device, c.fusion, c.size_label);
    if (!charts.count(key)) order.push_back(key);
    charts[key].push_back(&c);
  }
  constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  for (const auto& key : order) {
    const std::vector<const Curve*>& here = charts[key];
    size_t n = 0;
    for (const Curve* c : here) n = std::max(n, c->best.size());
    LineChart chart;
    chart.label = std::get<1>(key) + " " + std::get<2>(key) + ": best so far against evaluations";
    for (size_t k = 1; k <= n; ++k) chart.x_labels.push_back(std::to_string(k));
    chart.x_title =
        std::get<1>(key) + " " + std::get<2>(key) + " on " + std::get<0>(key) + ": evaluations";
    chart.y_title = "best so far";
    chart.y_tick = [](double v) { return format_time_us(v, 3, true); };
    chart.y_value = [](double v) { return format_time_us(v); };
    for (size_t i = 0; i < here.size(); ++i) {
      const Curve& c = *here[i];
      PlotSeries s{c.scheduler + ": " + c.strategy + " (" + c.objective + ")",
                   kPalette[i % std::size(kPalette)], c.best, false};
      s.y.resize(n);
      chart.series.push_back(std::move(s));
    }
    out += line_chart_svg(chart);
  }
  return out + "</div>\n</section>\n";
}

}  // namespace

std::string render_html(const std::vector<Record>& records, const TableOptions& table,
                        const HtmlOptions& o) {
  std::vector<Table> tables = build_tables(records, table);
  std::optional<HeatmapChoice> hm = choose_heatmap(records, o);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"note\">{} records. Spread is "
      "the IQR (q3 - q1) of the repetitions. \"vs baseline\" is this time over the baseline's "
      "best, from the per-round ratios of the interleaved rounds (two-sample when not timed "
      "together), with its 95% interval, \"N.NNx slower [lo, hi]\" or \"N.NNx faster [lo, hi]\"; * "
      "marks a difference: "
      "Wilcoxon signed-rank (Mann-Whitney U when unpaired) p &lt; {:g} and beyond the minimum "
      "effect (docs/reports.md).</p>\n",
      esc(o.title), kCss, esc(o.title), records.size(), table.alpha);
  for (const Table& t : tables) {
    out += fmt::format("<section>\n<h2>{} on {} ({}){}</h2>\n", esc(t.sweep), esc(t.device.name),
                       esc(t.device.backend),
                       t.device.emulated ? std::string(" — ") + kEmulationLabel : "");
    if (t.device.emulated)
      out += fmt::format(
          "<p class=\"emulated\">{}: the kernels ran on the CPU backend, which executes the "
          "generated CUDA source on the host. These times say nothing about GPU speed; rerun "
          "on a GPU for timings.</p>\n",
          kEmulationLabel);
    out += fmt::format(
        "<p class=\"legend\">baseline: {}{}.{} Each scheduler's best configuration is the one its "
        "verdict puts fastest; <span class=\"faster\">green</span> significantly faster, <span "
        "class=\"slower\">red</span> significantly slower.</p>\n",
        esc(t.baseline), t.baseline_defaulted ? " (the first scheduler; the sweep named none)" : "",
        t.predicted_on.empty()
            ? ""
            : " Ranked by the predicted time on the " + esc(t.predicted_on) +
                  " device model (docs/model.md): the verdict is the ratio of predictions (\"tie\" "
                  "when "
                  "they are equal), the CPU column the CPU emulation's own estimate, and the "
                  "median is the CPU emulation's time.");
    out += html_table(t);
    std::vector<const Record*> mine, here_device;
    for (const Record& r : records)
      if (r.device.fingerprint == t.device.fingerprint) here_device.push_back(&r);
    out += size_plots(t, here_device);
    out += fmt::format(
        "<h3>Time relative to the baseline's best, per scheduler ({}; the label is the table's "
        "verdict; shorter is faster)</h3>\n",
        t.predicted_on.empty() ? "the paired estimate with its 95% interval"
                               : "the ratio of predicted times on " + esc(t.predicted_on));
    out += bar_chart(t);
    for (const Record* r : here_device)
      if (hm && r->scheduler == hm->scheduler) mine.push_back(r);
    for (const TableRow& row : t.rows) {
      std::vector<const Record*> here;
      for (const Record* r : mine)
        if (r->fusion == row.fusion && r->size_key() == row.size_key) here.push_back(r);
      if (here.empty()) continue;
      out += fmt::format(
          "<h3>{}: median time over {} and {}, {} {} (best over the other "
          "parameters)</h3>\n",
          esc(hm->scheduler), esc(hm->x), esc(hm->y), esc(row.fusion), esc(row.label()));
      out += heatmap_svg(here, hm->x, hm->y);
    }
    out += "</section>\n";
  }
  if (!hm) out += "<p class=\"note\">No scheduler varies two parameters: no heatmap.</p>\n";
  out += curve_charts(records);
  return out + "</body>\n</html>\n";
}

}  // namespace schedlab::report
