#include "schedlab/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "schedlab/base/error.h"

namespace schedlab::report {

namespace {

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      case '\'':
        r += "&#39;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

constexpr const char* kCss = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
td.name, th.name { text-align: left; }
td.none { text-align: left; color: #8a6d00; white-space: normal; }
tr.baseline td { font-weight: 600; }
.faster { color: #1a7f37; } .slower { color: #c62828; }
.emulated { background: #fff4d6; border: 1px solid #e0b000; padding: 6px 10px; font-weight: 600; }
.legend, .note { color: #555; }
svg text { font: 12px system-ui, sans-serif; }
)";

/// Bar colours, one per scheduler (cycled).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string us(double v) {
  return fmt::format("{:.4g}", v);
}

std::string html_table(const Table& t) {
  std::string h =
      "<table>\n<tr><th class=\"name\">fusion</th><th class=\"name\">size</th>"
      "<th class=\"name\">scheduler</th><th class=\"name\">best config</th><th>median (us)</th>"
      "<th>IQR (us)</th><th>min – max (us)</th><th>GB/s</th><th>% peak</th><th>speedup</th>"
      "<th>p</th></tr>\n";
  for (const TableRow& row : t.rows) {
    for (const TableCell& c : row.cells) {
      if (c.points == 0) continue;
      bool base = c.scheduler == t.baseline;
      h += fmt::format(
          "<tr{}><td class=\"name\">{}</td><td class=\"name\">{}</td>"
          "<td class=\"name\">{}</td>",
          base ? " class=\"baseline\"" : "", esc(row.fusion), esc(row.size_label),
          esc(c.scheduler) + (base ? " (baseline)" : ""));
      if (!c.best) {
        h += fmt::format("<td class=\"none\" colspan=\"8\">no valid point: {}</td></tr>\n",
                         esc(c.why_none));
        continue;
      }
      const Summary& s = *c.stats;
      double gbps = c.best->gbps();
      auto peak = c.best->fraction_of_peak();
      std::string cls = !c.significant   ? ""
                        : *c.speedup > 1 ? " class=\"faster\""
                                         : " class=\"slower\"";
      h += fmt::format(
          "<td class=\"name\">{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f} – {:.2f}</td>"
          "<td>{}</td><td>{}</td><td{}>{}</td><td>{}</td></tr>\n",
          esc(c.best->config_label()), s.median, s.iqr(), s.min, s.max,
          gbps > 0 ? fmt::format("{:.1f}", gbps) : "–",
          peak ? fmt::format("{:.1f}%", *peak * 100) : "–", cls,
          c.speedup ? fmt::format("{:.2f}x{}", *c.speedup, c.significant ? "*" : "") : "–",
          c.p ? fmt::format("{:.3g}", *c.p) : "–");
    }
  }
  return h + "</table>\n";
}

/// Horizontal bars: per fusion and size, each scheduler's best median,
/// scaled to the slowest of that group (times differ by orders of magnitude
/// between sizes).
std::string bar_chart(const Table& t) {
  const int label_w = 200, bar_w = 420, value_w = 260, bar_h = 16, gap = 4, group_gap = 14;
  std::string body;
  int y = 10;
  for (const TableRow& row : t.rows) {
    double slowest = 0;
    for (const TableCell& c : row.cells)
      if (c.best) slowest = std::max(slowest, c.stats->median);
    body += fmt::format("<text x=\"0\" y=\"{}\" font-weight=\"bold\">{} {}</text>\n", y + 12,
                        esc(row.fusion), esc(row.size_label));
    y += bar_h + gap;
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const TableCell& c = row.cells[i];
      if (c.points == 0) continue;
      body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 8,
                          y + 12, esc(c.scheduler));
      if (c.best) {
        double w = slowest > 0 ? std::max(1.0, c.stats->median / slowest * bar_w) : 1.0;
        body += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}><title>{}: {} "
            "us (IQR {})</title></rect>\n",
            label_w, y, w, bar_h, kPalette[i % std::size(kPalette)],
            c.scheduler == t.baseline ? " stroke=\"#222\" stroke-width=\"1.5\"" : "",
            esc(c.scheduler), us(c.stats->median), us(c.stats->iqr()));
        body += fmt::format(
            "<text x=\"{:.1f}\" y=\"{}\">{} us{}</text>\n", label_w + w + 6, y + 12,
            us(c.stats->median),
            c.speedup ? fmt::format(", {:.2f}x{}", *c.speedup, c.significant ? "*" : "") : "");
      } else {
        body += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#8a6d00\">no valid point</text>\n",
                            label_w, y + 12);
      }
      y += bar_h + gap;
    }
    y += group_gap;
  }
  return fmt::format(
      "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"best median per scheduler\">\n{}</svg>\n",
      label_w + bar_w + value_w, y, label_w + bar_w + value_w, y, body);
}

/// Parameter values in axis order: numeric when every value is a number.
std::vector<std::string> axis_values(std::vector<std::string> v) {
  bool numeric = std::all_of(v.begin(), v.end(), [](const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
  });
  if (numeric)
    std::stable_sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
      return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
    });
  return v;
}

const std::string* config_value(const Record& r, const std::string& name) {
  for (const auto& [k, v] : r.config)
    if (k == name) return &v;
  return nullptr;
}

/// Parameters of `scheduler` with at least two values, in config order.
std::vector<std::string> varying_params(const std::vector<Record>& records,
                                        const std::string& scheduler,
                                        std::vector<std::string>* all = nullptr) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::string>> values;
  for (const Record& r : records) {
    if (r.scheduler != scheduler) continue;
    for (const auto& [k, v] : r.config) {
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
      auto& vs = values[k];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  }
  if (all) *all = names;
  std::vector<std::string> varying;
  for (const std::string& n : names)
    if (values[n].size() >= 2) varying.push_back(n);
  return varying;
}

/// Heatmap colour for t in [0, 1], green (fast) through yellow to red (slow).
std::string heat_colour(double t) {
  auto mix = [](int a, int b, double f) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  int r, g, b;
  if (t < 0.5) {
    r = mix(0x1a, 0xfe, t * 2), g = mix(0x98, 0xe0, t * 2), b = mix(0x50, 0x8b, t * 2);
  } else {
    r = mix(0xfe, 0xd7, t * 2 - 1), g = mix(0xe0, 0x30, t * 2 - 1), b = mix(0x8b, 0x27, t * 2 - 1);
  }
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

/// A status that fits a heatmap cell.
std::string short_status(Status s) {
  switch (s) {
    case Status::Rejected:
      return "rejected";
    case Status::ScheduleError:
      return "sched err";
    case Status::CompileError:
      return "compile err";
    case Status::WrongResult:
      return "wrong";
    case Status::Crashed:
      return "crashed";
    case Status::Timeout:
      return "timeout";
    case Status::Racy:
      return "racy";
    case Status::Ok:
      break;
  }
  return std::string(status_name(s));
}

/// One heatmap for the records of one scheduler at one fusion and size.
std::string heatmap(const std::vector<const Record*>& recs, const std::string& x,
                    const std::string& y) {
  std::vector<std::string> xs, ys;
  struct CellData {
    std::optional<double> best;
    std::string failure;
  };
  std::map<std::pair<std::string, std::string>, CellData> cells;
  for (const Record* r : recs) {
    const std::string* xv = config_value(*r, x);
    const std::string* yv = config_value(*r, y);
    if (!xv || !yv) continue;
    if (std::find(xs.begin(), xs.end(), *xv) == xs.end()) xs.push_back(*xv);
    if (std::find(ys.begin(), ys.end(), *yv) == ys.end()) ys.push_back(*yv);
    CellData& d = cells[{*xv, *yv}];
    if (r->status == Status::Ok) {
      double m = r->summary().median;
      if (!d.best || m < *d.best) d.best = m;
    } else if (d.failure.empty()) {
      d.failure = short_status(r->status);
    }
  }
  xs = axis_values(xs);
  ys = axis_values(ys);
  double lo = INFINITY, hi = 0;
  for (const auto& [k, d] : cells)
    if (d.best) lo = std::min(lo, *d.best), hi = std::max(hi, *d.best);
  const int cw = 64, ch = 30, left = 110, top = 46;
  std::string body = fmt::format(
      "<text x=\"{}\" y=\"14\" text-anchor=\"middle\">{} →</text>\n"
      "<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">{} "
      "→</text>\n",
      left + cw * static_cast<int>(xs.size()) / 2, esc(x),
      top + ch * static_cast<int>(ys.size()) / 2, top + ch * static_cast<int>(ys.size()) / 2,
      esc(y));
  for (size_t i = 0; i < xs.size(); ++i)
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                        left + cw * static_cast<int>(i) + cw / 2, top - 8, esc(xs[i]));
  for (size_t j = 0; j < ys.size(); ++j) {
    int cy = top + ch * static_cast<int>(j);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8,
                        cy + ch / 2 + 4, esc(ys[j]));
    for (size_t i = 0; i < xs.size(); ++i) {
      int cx = left + cw * static_cast<int>(i);
      auto it = cells.find({xs[i], ys[j]});
      std::string fill = "#ffffff", label, tip = "not run";
      if (it != cells.end() && it->second.best) {
        double t = hi > lo
                       ? (std::log(*it->second.best) - std::log(lo)) / (std::log(hi) - std::log(lo))
                       : 0;
        fill = heat_colour(t);
        label = us(*it->second.best);
        tip = label + " us";
      } else if (it != cells.end()) {
        fill = "#bbbbbb";
        label = it->second.failure;
        tip = it->second.failure;
      }
      body += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\">"
          "<title>{}={}, {}={}: {}</title></rect>\n"
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
          cx, cy, cw, ch, fill, esc(x), esc(xs[i]), esc(y), esc(ys[j]), esc(tip), cx + cw / 2,
          cy + ch / 2 + 4, esc(label.substr(0, 10)));
    }
  }
  int w = left + cw * static_cast<int>(xs.size()) + 10,
      h = top + ch * static_cast<int>(ys.size()) + 10;
  return fmt::format(
      "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"median time over {} and {}\">\n{}</svg>\n",
      w, h, w, h, esc(x), esc(y), body);
}

struct HeatmapChoice {
  std::string scheduler, x, y;
};

std::optional<HeatmapChoice> choose_heatmap(const std::vector<Record>& records,
                                            const HtmlOptions& o) {
  std::vector<std::string> schedulers;
  for (const Record& r : records)
    if (std::find(schedulers.begin(), schedulers.end(), r.scheduler) == schedulers.end())
      schedulers.push_back(r.scheduler);
  if (o.heatmap_scheduler.empty()) {
    user_assert(o.heatmap_x.empty() && o.heatmap_y.empty())
        << "heatmap: parameters given without a scheduler";
    for (const std::string& s : schedulers) {
      auto v = varying_params(records, s);
      if (v.size() >= 2) return HeatmapChoice{s, v[0], v[1]};
    }
    return std::nullopt;
  }
  user_assert(std::find(schedulers.begin(), schedulers.end(), o.heatmap_scheduler) !=
              schedulers.end())
      << "heatmap: no scheduler '" << o.heatmap_scheduler << "'; the schedulers are "
      << fmt::format("{}", fmt::join(schedulers, ", "));
  std::vector<std::string> all;
  auto v = varying_params(records, o.heatmap_scheduler, &all);
  HeatmapChoice c{o.heatmap_scheduler, o.heatmap_x, o.heatmap_y};
  for (const std::string* p : {&c.x, &c.y}) {
    if (p->empty()) continue;
    user_assert(std::find(all.begin(), all.end(), *p) != all.end())
        << "heatmap: scheduler '" << c.scheduler << "' has no parameter '" << *p
        << "'; its parameters are "
        << (all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", ")));
  }
  for (std::string* p : {&c.x, &c.y}) {
    if (!p->empty()) continue;
    for (const std::string& n : v)
      if (n != c.x && n != c.y) {
        *p = n;
        break;
      }
    user_assert(!p->empty()) << "heatmap: scheduler '" << c.scheduler
                             << "' varies fewer than two parameters ("
                             << (v.empty() ? "none" : fmt::format("{}", fmt::join(v, ", "))) << ")";
  }
  return c;
}

}  // namespace

std::string render_html(const std::vector<Record>& records, const TableOptions& table,
                        const HtmlOptions& o) {
  std::vector<Table> tables = build_tables(records, table);
  std::optional<HeatmapChoice> hm = choose_heatmap(records, o);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"note\">{} records. Spread is "
      "the IQR (q3 - q1) of the repetitions; * marks a difference from the baseline: "
      "Wilcoxon signed-rank over the interleaved rounds (Mann-Whitney U when unpaired) "
      "p &lt; {:g} and beyond the minimum effect (docs/reports.md).</p>\n",
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
    out += fmt::format("<p class=\"legend\">baseline: {}{}</p>\n", esc(t.baseline),
                       t.baseline_defaulted ? " (the first scheduler; the sweep named none)" : "");
    out += html_table(t);
    out +=
        "<h3>Best median per scheduler (bar length relative to the slowest of each group; "
        "shorter is faster)</h3>\n";
    out += bar_chart(t);
    std::vector<const Record*> mine;
    for (const Record& r : records)
      if (hm && r.scheduler == hm->scheduler && r.device.fingerprint == t.device.fingerprint)
        mine.push_back(&r);
    for (const TableRow& row : t.rows) {
      std::vector<const Record*> here;
      for (const Record* r : mine)
        if (r->fusion == row.fusion && r->size_label() == row.size_label) here.push_back(r);
      if (here.empty()) continue;
      out += fmt::format(
          "<h3>{}: median time (us) over {} and {}, {} {} (best over the other "
          "parameters; grey: no valid point)</h3>\n",
          esc(hm->scheduler), esc(hm->x), esc(hm->y), esc(row.fusion), esc(row.size_label));
      out += heatmap(here, hm->x, hm->y);
    }
    out += "</section>\n";
  }
  if (!hm) out += "<p class=\"note\">No scheduler varies two parameters: no heatmap.</p>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace schedlab::report
