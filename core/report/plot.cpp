// The report's line chart in inline SVG (plot.h): Triton's perf_report is
// the model, one line per provider over the x values, a legend, and ticks
// that read as numbers with units.
#include "plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace schedlab::report {

namespace {

/// Maps data values onto [0, 1] of an axis, linear or log.
struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double operator()(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

/// The y axis for values in [lo, hi] (lo > 0) and its ticks: log when the
/// values span more than a decade (times grow with size), else linear from 0.
Scale y_scale(double lo, double hi, std::vector<double>& ticks) {
  Scale s;
  if (hi / lo > 10) {
    s.log = true;
    s.lo = lo / 1.25;
    s.hi = hi * 1.25;
    const int k0 = static_cast<int>(std::floor(std::log10(s.lo)));
    const int k1 = static_cast<int>(std::ceil(std::log10(s.hi)));
    // 1-2-5 ticks over a decade or two; only powers of ten beyond that.
    std::vector<double> mantissas =
        k1 - k0 <= 2 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
    for (int k = k0; k <= k1; ++k)
      for (double m : mantissas) {
        double t = m * std::pow(10.0, k);
        if (t >= s.lo && t <= s.hi) ticks.push_back(t);
      }
    return s;
  }
  // A 1-2-5 step giving about five ticks from zero.
  double raw = hi / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  s.lo = 0;
  s.hi = std::ceil(hi * 1.05 / step) * step;
  for (int i = 0; i * step <= s.hi * (1 + 1e-9); ++i) ticks.push_back(i * step);
  return s;
}

std::vector<std::string> split_lines(const std::string& label) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t comma; (comma = label.find(',', start)) != std::string::npos; start = comma + 1)
    lines.push_back(label.substr(start, comma - start));
  lines.push_back(label.substr(start));
  return lines;
}

/// `s` cut to `n` characters with an ellipsis (counting UTF-8 code points).
std::string shorten(const std::string& s, size_t n) {
  size_t chars = 0, i = 0;
  for (; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80 && chars++ == n) break;
  return i < s.size() ? s.substr(0, i) + "…" : s;
}

}  // namespace

std::string html_escape(const std::string& s) {
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

std::string line_chart_svg(const LineChart& c) {
  const size_t n = c.x_labels.size();
  size_t label_lines = 1, label_chars = 1;
  for (const std::string& l : c.x_labels)
    for (const std::string& line : split_lines(l)) label_chars = std::max(label_chars, line.size());
  for (const std::string& l : c.x_labels)
    label_lines = std::max(label_lines, split_lines(l).size());
  const int width = 580, left = 78, legend_w = 150, top = 14, plot_h = 220, pad = 18;
  const int plot_w = width - left - legend_w - 12;
  // Tall enough for the axis labels and for the legend.
  const int height = std::max(top + plot_h + 12 + 14 * static_cast<int>(label_lines) + 24,
                              top + 18 * static_cast<int>(c.series.size()) + 10);
  const int bottom = top + plot_h;
  std::string body;

  // x positions in pixels.
  std::vector<double> px(n);
  bool numeric = c.x_values.size() == n && n > 1 && c.x_values.front() > 0 &&
                 std::is_sorted(c.x_values.begin(), c.x_values.end()) &&
                 std::adjacent_find(c.x_values.begin(), c.x_values.end()) == c.x_values.end();
  Scale xs;
  if (numeric) {
    xs.lo = c.x_values.front();
    xs.hi = c.x_values.back();
    xs.log = xs.hi / xs.lo > 10;
  }
  for (size_t i = 0; i < n; ++i) {
    double f = numeric ? xs(c.x_values[i]) : (i + 0.5) / static_cast<double>(n);
    if (n == 1) f = 0.5;
    px[i] = left + pad + f * (plot_w - 2 * pad);
  }

  // y scale over every value.
  double lo = INFINITY, hi = 0;
  for (const PlotSeries& s : c.series)
    for (const auto& v : s.y)
      if (v && *v > 0) lo = std::min(lo, *v), hi = std::max(hi, *v);
  std::vector<double> ticks;
  Scale ys;
  if (hi > 0) {
    if (hi == lo) lo = hi / 2, hi = hi * 1.5;  // one value: a band around it
    ys = y_scale(lo, hi, ticks);
  }
  auto py = [&](double v) { return bottom - ys(v) * plot_h; };

  for (double t : ticks)
    body += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        left, py(t), left + plot_w, py(t), left - 6, py(t) + 4, html_escape(c.y_tick(t)));
  body += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#888\"/>\n",
      left, top, bottom, left + plot_w);
  // x ticks at the points; a label that would overlap the last one drawn is
  // left out (its tick and markers stay).
  const double min_gap = 6.5 * static_cast<double>(std::min<size_t>(label_chars, 14)) + 6;
  double last_label = -1e9;
  for (size_t i = 0; i < n; ++i) {
    body +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#888\"/>",
                    px[i], bottom, bottom + 4);
    if (px[i] - last_label < min_gap) {
      body += "\n";
      continue;
    }
    last_label = px[i];
    body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">", px[i], bottom + 4);
    for (const std::string& line : split_lines(c.x_labels[i]))
      body += fmt::format("<tspan x=\"{:.1f}\" dy=\"14\">{}</tspan>", px[i],
                          html_escape(shorten(line, 14)));
    body += "</text>\n";
  }
  body += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n"
      "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">{}{}</text>\n",
      left + plot_w / 2, height - 6, html_escape(c.x_title),
      numeric && xs.log ? " (log scale)" : "", top + plot_h / 2, top + plot_h / 2,
      html_escape(c.y_title), ys.log ? " (log scale)" : "");
  if (hi <= 0)
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no valid point</text>\n",
                        left + plot_w / 2, top + plot_h / 2);

  // One polyline through each series' points, in x order, and its markers.
  for (size_t si = 0; si < c.series.size(); ++si) {
    const PlotSeries& s = c.series[si];
    std::string points, markers;
    for (size_t i = 0; i < n && i < s.y.size(); ++i) {
      if (!s.y[i] || *s.y[i] <= 0) continue;
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px[i], py(*s.y[i]));
      markers += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}, {}: {}</title>"
          "</circle>\n",
          px[i], py(*s.y[i]), s.colour, html_escape(s.name), html_escape(c.x_labels[i]),
          html_escape(c.y_value(*s.y[i])));
    }
    body += fmt::format(
        "<polyline data-series=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\"/>\n{}",
        html_escape(s.name), points, s.colour, s.emphasis ? 3 : 2, markers);
    int ly = top + 8 + 18 * static_cast<int>(si), lx = left + plot_w + 14;
    body += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>"
        "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}<title>{}</title></text>\n",
        lx, ly, lx + 22, ly, s.colour, s.emphasis ? 3 : 2, lx + 11, ly, s.colour, lx + 28, ly + 4,
        html_escape(shorten(s.name, 16)), html_escape(s.name));
  }
  return fmt::format(
      "<svg class=\"plot\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"{2}\">\n{3}</svg>\n",
      width, height, html_escape(c.label), body);
}

}  // namespace schedlab::report
