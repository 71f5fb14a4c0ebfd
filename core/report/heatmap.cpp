// The report's heatmap (heatmap.h): one scheduler's median over two of its
// parameters, and which scheduler and parameters the page shows.
#include "heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "plot.h"
#include "schedlab/base/error.h"
#include "schedlab/report/format.h"

namespace schedlab::report {

namespace {

std::string esc(const std::string& s) {
  return html_escape(s);
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

/// Where `v` lies between lo and hi on a log scale, in [0, 1].
double heat_fraction(double v, double lo, double hi) {
  return hi > lo ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0;
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
    case Status::PluginError:
      return "plugin err";
    case Status::Ok:
      break;
  }
  return std::string(status_name(s));
}

}  // namespace

std::string heatmap_svg(const std::vector<const Record*>& recs, const std::string& x,
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
  // A cell holds "15.99 ms" or "compile err" at 10 px; axis values are cut
  // to fit their column or the label column, in full in the tooltips.
  const int cw = 72, ch = 30, left = 110, top = 46;
  const int grid_w = cw * static_cast<int>(xs.size()), grid_h = ch * static_cast<int>(ys.size());
  auto fit = [](const std::string& v, size_t n) {
    return v.size() > n ? v.substr(0, n - 1) + "…" : v;
  };
  std::string body = fmt::format(
      "<text x=\"{}\" y=\"14\" text-anchor=\"middle\">{} →</text>\n"
      "<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">{} "
      "→</text>\n",
      left + grid_w / 2, esc(x), top + grid_h / 2, top + grid_h / 2, esc(y));
  for (size_t i = 0; i < xs.size(); ++i)
    body += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}<title>{}</title></text>\n",
        left + cw * static_cast<int>(i) + cw / 2, top - 8, esc(fit(xs[i], 10)), esc(xs[i]));
  for (size_t j = 0; j < ys.size(); ++j) {
    int cy = top + ch * static_cast<int>(j);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>\n",
                        left - 8, cy + ch / 2 + 4, esc(fit(ys[j], 12)), esc(ys[j]));
    for (size_t i = 0; i < xs.size(); ++i) {
      int cx = left + cw * static_cast<int>(i);
      auto it = cells.find({xs[i], ys[j]});
      std::string fill = "#ffffff", label, tip = "not run";
      if (it != cells.end() && it->second.best) {
        fill = heat_colour(heat_fraction(*it->second.best, lo, hi));
        label = format_time_us(*it->second.best);
        tip = label;
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
          cy + ch / 2 + 4, esc(fit(label, 11)));
    }
  }
  // The legend: the colour ramp from the fastest to the slowest cell (log
  // scale, as the cells), then the two colours that are not times.
  int ly = top + grid_h + 16;
  const int ramp_w = 200, steps = 20;
  if (hi > 0) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8,
                        ly + 11, format_time_us(lo));
    for (int k = 0; k < steps; ++k)
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\"/>",
                          left + k * ramp_w / steps, ly, ramp_w / steps + 1,
                          heat_colour((k + 0.5) / steps));
    body += fmt::format(
        "\n<text x=\"{}\" y=\"{}\">{}</text>\n"
        "<text x=\"{}\" y=\"{}\" font-size=\"10\">fastest</text>"
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">slowest (log scale)</text>\n",
        left + ramp_w + 6, ly + 11, format_time_us(hi), left, ly + 26, left + ramp_w, ly + 26);
    ly += 36;
  }
  body += fmt::format(
      "<rect x=\"{0}\" y=\"{1}\" width=\"14\" height=\"12\" fill=\"#bbbbbb\"/>"
      "<text x=\"{2}\" y=\"{3}\">no valid point</text>"
      "<rect x=\"{4}\" y=\"{1}\" width=\"14\" height=\"12\" fill=\"#ffffff\" stroke=\"#999\"/>"
      "<text x=\"{5}\" y=\"{3}\">not run</text>\n",
      left, ly, left + 18, ly + 10, left + 118, left + 136);
  int w = std::max(left + grid_w + 10, left + ramp_w + 80), h = ly + 20;
  return fmt::format(
      "<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"median time over {2} and {3}\">\n{4}</svg>\n",
      w, h, esc(x), esc(y), body);
}

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

}  // namespace schedlab::report
