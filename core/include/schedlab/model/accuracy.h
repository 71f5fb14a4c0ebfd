// schedlab/model: how well the predictions match measurements (on a GPU,
// the model's error is recorded: docs/gpu-check.md, docs/model.md "Calibration").
//
// Owns: comparing each measured point's median time with its prediction,
// and the summary scripts/gpu-check records: the median and largest
// relative error, and Spearman's rank correlation (does the model order the
// points as the GPU does, which is what ranking schedules needs).
// May depend on: schedlab/report (records).
// Invariants: only ok records measured on a GPU (not emulated) that carry a
// prediction count; the others are left out and counted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "schedlab/report/record.h"

namespace schedlab::model {

struct PointError {
  std::string name;         ///< "fusion/size/scheduler/config"
  double measured_us = 0;   ///< median of the repetitions
  double predicted_us = 0;  ///< the prediction
  std::string limiter;      ///< the prediction's limiter
  /// (predicted - measured) / measured: negative when the model is optimistic.
  double error() const { return (predicted_us - measured_us) / measured_us; }
};

struct Accuracy {
  std::vector<PointError> points;
  size_t skipped = 0;           ///< records without a GPU time or a prediction
  double median_abs_error = 0;  ///< of |error()|
  double max_abs_error = 0;
  double spearman = 0;  ///< rank correlation of predicted and measured; 0 below 2 points
};

/// Spearman's rho of two equally long series (ties get their average rank).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

Accuracy model_accuracy(const std::vector<report::Record>& records);

/// A table of the points and the summary line.
std::string render_accuracy(const Accuracy& a);

}  // namespace schedlab::model
