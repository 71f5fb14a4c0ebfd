// The model's error against GPU measurements (accuracy.h).
#include "schedlab/model/accuracy.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace schedlab::model {
namespace {

/// 1-based ranks, ties sharing their average rank.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = double(i + j) / 2 + 1;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return 0;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = double(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

Accuracy model_accuracy(const std::vector<report::Record>& records) {
  Accuracy a;
  for (const report::Record& r : records) {
    if (r.status != report::Status::Ok || r.device.emulated || r.times_us.empty() ||
        !r.prediction || r.prediction->predicted_us <= 0) {
      ++a.skipped;
      continue;
    }
    a.points.push_back(
        {r.fusion + "/" + r.size_label() + "/" + r.scheduler + "/" + r.config_label(),
         r.summary().median, r.prediction->predicted_us, r.prediction->limiter});
  }
  if (a.points.empty()) return a;
  std::vector<double> errors, measured, predicted;
  for (const PointError& p : a.points) {
    errors.push_back(std::abs(p.error()));
    measured.push_back(p.measured_us);
    predicted.push_back(p.predicted_us);
  }
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  a.median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  a.max_abs_error = errors.back();
  a.spearman = spearman(predicted, measured);
  return a;
}

std::string render_accuracy(const Accuracy& a) {
  std::string out = fmt::format("{:<60} {:>12} {:>12} {:>8}  {}\n", "point", "measured us",
                                "predicted us", "error", "limiter");
  for (const PointError& p : a.points)
    out += fmt::format("{:<60} {:>12.2f} {:>12.2f} {:>+7.1f}%  {}\n", p.name, p.measured_us,
                       p.predicted_us, 100 * p.error(), p.limiter);
  out += fmt::format(
      "model error over {} points: median |error| {:.1f}%, largest {:.1f}%, Spearman rank "
      "correlation {:.3f}{}\n",
      a.points.size(), 100 * a.median_abs_error, 100 * a.max_abs_error, a.spearman,
      a.skipped
          ? fmt::format(" ({} records without a GPU time or a prediction left out)", a.skipped)
          : "");
  return out;
}

}  // namespace schedlab::model
