// schedlab/model: fitting a device model's assumed constants to GPU
// measurements (`schedlab calibrate`, docs/model.md "Calibration").
//
// Owns: reading the time model's Terms back from sweep records' profiles,
// the fit, and writing the fitted device model.
// May depend on: model/device.h, model/roofline.h, model/accuracy.h,
// schedlab/report (records).
// Invariants: only Ok records measured on a GPU with a profile for the same
// device model enter the fit; a CPU-emulation record is a user error at its
// file:line (its times say nothing about a GPU). The fit is non-negative
// least squares (Lawson and Hanson) on relative errors over the constants
// the time is linear in, once each kernel's largest term is fixed; the
// largest terms are re-chosen under the fitted constants and the fit
// repeated until they stop changing. A constant no record exercises keeps
// its assumed value and is reported as not fitted.
#pragma once

#include <string>
#include <vector>

#include "schedlab/model/accuracy.h"
#include "schedlab/model/device.h"
#include "schedlab/model/roofline.h"
#include "schedlab/report/record.h"

namespace schedlab::model {

/// One measured point: its kernels' terms and its median time.
struct CalibrationPoint {
  report::Record record;     ///< as read
  std::string where;         ///< "file:line"
  std::vector<Terms> terms;  ///< one per kernel of the profile
  double ideal_bytes = 0;
};

/// The points of `files` usable for `device`, and how many were left out.
struct CalibrationData {
  std::vector<CalibrationPoint> points;
  std::vector<std::string> files;
  size_t skipped = 0;  ///< not ok, no time, no prediction, or no terms (an older profile)
};

/// Reads the records. user_error at file:line for the first record that ran
/// on the CPU emulation, or whose prediction is for another device model.
CalibrationData read_calibration_data(const std::vector<std::string>& files,
                                      const DeviceModel& device);

/// One fitted constant: the device model's key, before and after.
struct FittedConstant {
  std::string key;  ///< e.g. "copy_bandwidth_gbs"
  double before = 0;
  double after = 0;
  bool fitted = false;  ///< false: no point exercises it, or the fit put it at 0 (kept)
};

struct Calibration {
  DeviceModel device;  ///< the input with the fitted constants
  std::vector<FittedConstant> constants;
  int iterations = 0;  ///< fits until the largest terms settled
  Accuracy before, after;
};

/// Fits copy_bandwidth_gbs, dram_latency_ns, launch_overhead_us,
/// barrier_ns, shuffle_ns, grid_sync_ns and issue_efficiency to the points.
/// user_error with fewer than two points.
Calibration calibrate(const DeviceModel& device, const CalibrationData& data);

/// Non-negative least squares: x >= 0 minimising |A x - b| (Lawson and
/// Hanson's active-set method). A is row-major, rows x cols.
std::vector<double> nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b);

/// The device model's file text with the fitted constants replaced, each
/// marked measured with `date` and the records' files, and `name` as its
/// name (a device file's name is its stem).
std::string calibrated_device_yaml(const Calibration& c, const std::string& name,
                                   const std::string& date, const std::vector<std::string>& files,
                                   size_t points);

}  // namespace schedlab::model
