// core/report: the line chart of the HTML report, in inline SVG (private to
// core/report; html.cpp is its user).
//
// Owns: axes (linear or log, chosen from the data), ticks with readable
// labels, one polyline with markers per series, and the legend. Draws
// nothing it was not given: the caller chooses the points and their order.
// Invariant: the SVG is well-formed XML and scales with its viewBox.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace schedlab::report {

/// One line of a chart: a value (or none) per x position.
struct PlotSeries {
  std::string name;                      ///< the legend's label
  std::string colour;                    ///< "#4e79a7"
  std::vector<std::optional<double>> y;  ///< parallel to LineChart::x_labels
  bool emphasis = false;                 ///< drawn thicker (the baseline)
};

/// A chart of several series over the same x positions.
struct LineChart {
  std::string label;  ///< aria-label of the SVG
  /// The tick label of each x position; a comma starts a new line
  /// ("N=32,K=1024" is two lines).
  std::vector<std::string> x_labels;
  /// Where the positions lie: numbers > 0 in increasing order (then the axis
  /// is log when they span more than a decade, else linear), or empty for
  /// evenly spaced positions.
  std::vector<double> x_values;
  std::string x_title;  ///< under the x axis
  std::string y_title;  ///< beside the y axis
  /// A y tick's label ("100 us"); y values are positive.
  std::function<std::string(double)> y_tick;
  /// A point's value in its tooltip ("159.9 us").
  std::function<std::string(double)> y_value;
  std::vector<PlotSeries> series;
};

/// The chart as one <svg> element.
std::string line_chart_svg(const LineChart& c);

/// `s` escaped for HTML text and attribute values.
std::string html_escape(const std::string& s);

}  // namespace schedlab::report
