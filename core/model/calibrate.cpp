// Fitting a device model's assumed constants to GPU records (calibrate.h).
#include "schedlab/model/calibrate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "schedlab/base/error.h"

namespace schedlab::model {
namespace {

/// The fitted unknowns, each a device constant or its inverse, in seconds
/// (the time is linear in these): what the key's value is made from.
enum Unknown {
  kLaunch,
  kLatency,
  kBarrier,
  kShuffle,
  kGridSync,
  kSecondsPerByte,
  kIssue,
  kSecondsPerMmaFlop,
  kCount
};

const char* const kKeys[kCount] = {"launch_overhead_us", "dram_latency_ns", "barrier_ns",
                                   "shuffle_ns",         "grid_sync_ns",    "copy_bandwidth_gbs",
                                   "issue_efficiency",   "mma_sync_tflops"};

std::vector<double> unknowns_of(const DeviceModel& d) {
  return {d.launch_overhead_us * 1e-6, d.dram_latency_ns * 1e-9,
          d.barrier_ns * 1e-9,         d.shuffle_ns * 1e-9,
          d.grid_sync_ns * 1e-9,       1 / (d.copy_bandwidth_gbs * 1e9),
          1 / d.issue_efficiency,      1 / (d.mma_sync_tflops * 1e12)};
}

double key_value(int u, double x) {
  switch (u) {
    case kLaunch:
      return x * 1e6;
    case kSecondsPerByte:
      return 1 / x / 1e9;
    case kIssue:
      return 1 / x;
    case kSecondsPerMmaFlop:
      return 1 / x / 1e12;
    default:
      return x * 1e9;
  }
}

void set_key(DeviceModel& d, int u, double v) {
  double* fields[kCount] = {&d.launch_overhead_us, &d.dram_latency_ns, &d.barrier_ns,
                            &d.shuffle_ns,         &d.grid_sync_ns,    &d.copy_bandwidth_gbs,
                            &d.issue_efficiency,   &d.mma_sync_tflops};
  *fields[u] = v;
}

Terms terms_of(const nlohmann::json& j) {
  Terms t;
  t.tail = j.at("tail").get<double>();
  t.dram_bytes_tail = j.at("dram_bytes_tail").get<double>();
  t.smem_cycles = j.at("smem_cycles").get<double>();
  t.issue_cycles = j.at("issue_cycles").get<double>();
  t.latency_ratio = j.at("latency_ratio").get<double>();
  t.rounds = j.at("rounds").get<double>();
  t.read_phases = j.at("read_phases").get<double>();
  t.barriers = j.at("barriers").get<double>();
  t.shuffle_levels = j.at("shuffle_levels").get<double>();
  t.grid_reductions = j.at("grid_reductions").get<double>();
  t.grid_barriers = j.value("grid_barriers", 0.0);  // grid-persistent kernels only
  t.conflicts = j.at("conflicts").get<bool>();
  // Absent from profiles written before the compute terms (issue 36).
  t.tensor_flops = j.value("tensor_flops", 0.0);
  t.fp32_flops = j.value("fp32_flops", 0.0);
  t.flops = j.value("flops", 0.0);
  return t;
}

/// The largest term of predict_terms: 0 dram, 1 shared, 2 issue, 3 latency,
/// 4 sync, 5 tensor, 6 fp32.
int top_term(const Prediction& p) {
  const double t[] = {p.dram_s, p.smem_s, p.issue_s, p.latency_s, p.sync_s, p.tensor_s, p.fp32_s};
  return int(std::max_element(std::begin(t), std::end(t)) - std::begin(t));
}

/// Solves the small symmetric system m x = v (Gaussian elimination with
/// partial pivoting); a singular pivot leaves its unknown at 0.
std::vector<double> solve(std::vector<std::vector<double>> m, std::vector<double> v) {
  const size_t n = v.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r][c]) > std::abs(m[p][c])) p = r;
    std::swap(m[c], m[p]);
    std::swap(v[c], v[p]);
    if (std::abs(m[c][c]) < 1e-300) continue;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = m[r][c] / m[c][c];
      for (size_t k = c; k < n; ++k) m[r][k] -= f * m[c][k];
      v[r] -= f * v[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t c = n; c-- > 0;) {
    if (std::abs(m[c][c]) < 1e-300) continue;
    double s = v[c];
    for (size_t k = c + 1; k < n; ++k) s -= m[c][k] * x[k];
    x[c] = s / m[c][c];
  }
  return x;
}

/// Unconstrained least squares over the columns in `cols` (normal equations).
std::vector<double> least_squares(const std::vector<std::vector<double>>& a,
                                  const std::vector<double>& b, const std::vector<size_t>& cols) {
  const size_t n = cols.size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0));
  std::vector<double> v(n, 0);
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t i = 0; i < n; ++i) {
      v[i] += a[r][cols[i]] * b[r];
      for (size_t j = 0; j < n; ++j) m[i][j] += a[r][cols[i]] * a[r][cols[j]];
    }
  return solve(m, v);
}

/// A copy of the points' records with the predictions of `device`.
Accuracy accuracy_under(const DeviceModel& device, const CalibrationData& data) {
  std::vector<report::Record> records;
  for (const CalibrationPoint& pt : data.points) {
    report::Record r = pt.record;
    double us = 0;
    std::string limiter;
    for (const Terms& t : pt.terms) {
      const Prediction p = predict_terms(device, t, pt.ideal_bytes);
      us += p.predicted_s * 1e6;
      limiter = p.limiter;
    }
    r.prediction->predicted_us = us;
    r.prediction->limiter = limiter;
    records.push_back(std::move(r));
  }
  return model_accuracy(records);
}

}  // namespace

CalibrationData read_calibration_data(const std::vector<std::string>& files,
                                      const DeviceModel& device) {
  CalibrationData data;
  data.files = files;
  for (const std::string& file : files) {
    const report::RecordFile rf = report::read_records(file);
    for (size_t i = 0; i < rf.records.size(); ++i) {
      const report::Record& r = rf.records[i];
      const SourceLoc where{file, rf.lines[i], 1};
      if (r.device.emulated || r.device.backend == "cpu")
        user_error_at(where) << "calibrate: a CPU-emulation record (" << r.fusion << " "
                             << r.size_label() << ", device '" << r.device.name
                             << "'); the GPU device model '" << device.name
                             << "' is fitted to times measured on a GPU only";
      if (r.prediction && r.prediction->device != device.name)
        user_error_at(where) << "calibrate: the record's prediction is for device model '"
                             << r.prediction->device << "', expected '" << device.name
                             << "' (profile the sweep with --device " << device.name << ")";
      if (r.status != report::Status::Ok || r.times_us.empty() || !r.prediction) {
        ++data.skipped;
        continue;
      }
      const auto profile = nlohmann::json::parse(r.prediction->profile, nullptr, false);
      CalibrationPoint pt{r, fmt::format("{}:{}", file, rf.lines[i]), {}, double(r.bytes_moved)};
      if (profile.is_array())
        for (const auto& k : profile)
          if (k.is_object() && k.contains("terms")) pt.terms.push_back(terms_of(k.at("terms")));
      if (pt.terms.empty()) {
        ++data.skipped;  // profiled before the profile carried its terms
        continue;
      }
      data.points.push_back(std::move(pt));
    }
  }
  return data;
}

std::vector<double> nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b) {
  const size_t n = a.empty() ? 0 : a[0].size();
  std::vector<double> x(n, 0);
  std::vector<bool> passive(n, false);
  auto gradient = [&] {
    std::vector<double> w(n, 0);
    for (size_t r = 0; r < a.size(); ++r) {
      double res = b[r];
      for (size_t j = 0; j < n; ++j) res -= a[r][j] * x[j];
      for (size_t j = 0; j < n; ++j) w[j] += a[r][j] * res;
    }
    return w;
  };
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::abs(v));
  const double tol = 1e-12 * std::max(1.0, scale) * double(std::max<size_t>(a.size(), 1));
  for (size_t outer = 0; outer < 3 * n + 3; ++outer) {
    std::vector<double> w = gradient();
    size_t best = n;
    for (size_t j = 0; j < n; ++j)
      if (!passive[j] && w[j] > tol && (best == n || w[j] > w[best])) best = j;
    if (best == n) break;
    passive[best] = true;
    for (size_t inner = 0; inner < 3 * n + 3; ++inner) {
      std::vector<size_t> cols;
      for (size_t j = 0; j < n; ++j)
        if (passive[j]) cols.push_back(j);
      const std::vector<double> s = least_squares(a, b, cols);
      bool feasible = true;
      for (double v : s) feasible = feasible && v > 0;
      if (feasible) {
        for (size_t i = 0; i < cols.size(); ++i) x[cols[i]] = s[i];
        break;
      }
      // Step from x towards s until the first passive unknown reaches 0,
      // which becomes active (held at 0) again.
      double alpha = 1;
      for (size_t i = 0; i < cols.size(); ++i)
        if (s[i] <= 0) alpha = std::min(alpha, x[cols[i]] / (x[cols[i]] - s[i]));
      for (size_t i = 0; i < cols.size(); ++i) {
        x[cols[i]] += alpha * (s[i] - x[cols[i]]);
        if (x[cols[i]] <= 1e-15 * std::max(1.0, std::abs(s[i]))) {
          x[cols[i]] = 0;
          passive[cols[i]] = false;
        }
      }
    }
  }
  return x;
}

Calibration calibrate(const DeviceModel& device, const CalibrationData& data) {
  user_assert(data.points.size() >= 2)
      << "calibrate: expected at least 2 ok GPU records with a profile of device model '"
      << device.name << "', found " << data.points.size() << " (" << data.skipped
      << " left out: not ok, no time, no prediction, or profiled by a schedlab older than the "
         "profile's terms)";
  Calibration c;
  c.device = device;
  c.before = accuracy_under(device, data);
  const double clock_hz = device.sm_clock_mhz * 1e6;
  std::vector<int> tops, previous;
  std::vector<bool> exercised(kCount, false);
  for (c.iterations = 1; c.iterations <= 20; ++c.iterations) {
    // Rows: one per point, the kernels' terms summed, divided by the
    // measured time so that the fit minimises relative errors.
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    tops.clear();
    for (const CalibrationPoint& pt : data.points) {
      std::vector<double> row(kCount, 0);
      double constant = 0;
      for (const Terms& t : pt.terms) {
        const int top = top_term(predict_terms(c.device, t, pt.ideal_bytes));
        tops.push_back(top);
        const double m = top == 4 ? t.rounds : 1;  // sync: every round is a chain
        row[kLaunch] += 1;
        row[kLatency] += m * t.read_phases + (top == 3 ? t.latency_ratio : 0);
        row[kBarrier] += m * t.barriers;
        row[kShuffle] += m * t.shuffle_levels;
        row[kGridSync] += m * t.grid_reductions;
        if (top == 0) row[kSecondsPerByte] += t.dram_bytes_tail;
        if (top == 2) row[kIssue] += t.issue_cycles / clock_hz;
        if (top == 5) row[kSecondsPerMmaFlop] += t.tensor_flops;
        if (top == 1) constant += t.smem_cycles / clock_hz;  // the clock is published
        if (top == 6) constant += t.fp32_flops / (c.device.fp32_tflops * 1e12);  // published
      }
      const double measured = pt.record.summary().median * 1e-6;
      for (double& v : row) v /= measured;
      a.push_back(row);
      b.push_back((measured - constant) / measured);
    }
    if (tops == previous) break;
    previous = tops;
    // Scale the columns to a largest entry of 1; a zero column is an
    // unknown no point exercises.
    std::vector<double> scale(kCount, 0);
    for (const auto& row : a)
      for (int j = 0; j < kCount; ++j)
        scale[size_t(j)] = std::max(scale[size_t(j)], row[size_t(j)]);
    std::vector<size_t> cols;
    for (int j = 0; j < kCount; ++j)
      if (scale[size_t(j)] > 0) cols.push_back(size_t(j));
    std::vector<std::vector<double>> as;
    for (const auto& row : a) {
      std::vector<double> r;
      for (size_t j : cols) r.push_back(row[j] / scale[j]);
      as.push_back(r);
    }
    const std::vector<double> y = nnls(as, b);
    DeviceModel next = device;
    std::fill(exercised.begin(), exercised.end(), false);
    for (size_t i = 0; i < cols.size(); ++i) {
      const double x = y[i] / scale[cols[i]];
      if (x <= 0) continue;  // fit at 0: keep the assumption
      exercised[cols[i]] = true;
      set_key(next, int(cols[i]), key_value(int(cols[i]), x));
    }
    next.copy_bandwidth_gbs = std::min(next.copy_bandwidth_gbs, next.dram_bandwidth_gbs);
    next.mma_sync_tflops = std::min(next.mma_sync_tflops, next.tensor_tflops);
    c.device = next;
  }
  const std::vector<double> before = unknowns_of(device), after = unknowns_of(c.device);
  for (int u = 0; u < kCount; ++u)
    c.constants.push_back({kKeys[u], key_value(u, before[size_t(u)]),
                           key_value(u, after[size_t(u)]), exercised[size_t(u)]});
  c.after = accuracy_under(c.device, data);
  return c;
}

std::string calibrated_device_yaml(const Calibration& c, const std::string& name,
                                   const std::string& date, const std::vector<std::string>& files,
                                   size_t points) {
  std::ifstream in(c.device.path);
  user_assert(bool(in)) << "calibrate: cannot read device model '" << c.device.path << "'";
  const std::string text(std::istreambuf_iterator<char>(in), {});
  std::string sources;
  for (const std::string& f : files) sources += (sources.empty() ? "" : ", ") + f;
  std::string out = fmt::format(
      "# Calibrated by `schedlab calibrate` on {} from {} GPU records ({}), starting\n"
      "# from {}. Values marked \"measured\" were fitted (docs/model.md, \"Calibration\").\n",
      date, points, sources, c.device.path);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("name:", 0) == 0) {
      out += "name: " + name + "\n";
      continue;
    }
    const FittedConstant* fit = nullptr;
    for (const FittedConstant& k : c.constants)
      if (k.fitted && line.rfind(k.key + ":", 0) == 0) fit = &k;
    if (!fit) {
      out += line + "\n";
      continue;
    }
    out += fmt::format("{}: {:.6g}  # measured {}: fitted to {} records ({}); was {:.6g}\n",
                       fit->key, fit->after, date, points, sources, fit->before);
  }
  return out;
}

}  // namespace schedlab::model
