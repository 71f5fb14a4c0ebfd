// core/report: the HTML report's heatmap, in inline SVG (private to
// core/report; html.cpp is its user).
//
// Owns: the median time over two parameters of one scheduler at one fusion
// and size (best over the other parameters) with its colour legend, and the
// choice of scheduler and parameters (HtmlOptions, or the first scheduler
// that varies two). May depend on record.h and html.h.
// Invariant: the SVG is well-formed XML; a cell's label fits its cell.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/report/html.h"
#include "schedlab/report/record.h"

namespace schedlab::report {

/// The heatmap the page shows: a scheduler and two of its parameters.
struct HeatmapChoice {
  std::string scheduler;  ///< display name
  std::string x;          ///< parameter along the x axis
  std::string y;          ///< parameter along the y axis
};

/// What `o` asks for, checked against the records (a scheduler or parameter
/// that is not there is a user error naming those there are), with the
/// empty fields chosen; nullopt when nothing is asked and no scheduler
/// varies two parameters.
std::optional<HeatmapChoice> choose_heatmap(const std::vector<Record>& records,
                                            const HtmlOptions& o);

/// The heatmap of `recs`, the records of one scheduler at one fusion and
/// size, over parameters x and y, with its legend.
std::string heatmap_svg(const std::vector<const Record*>& recs, const std::string& x,
                        const std::string& y);

}  // namespace schedlab::report
