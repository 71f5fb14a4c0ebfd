// Builders of sweep records for the report tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "schedlab/report/record.h"

namespace schedlab::report::testing_util {

/// The CPU-emulation device the CPU backend reports.
inline Device cpu_device() {
  return {"cpu (test)", "cpu", "cpu-test-fp", true, 0};
}
/// A GPU with a known peak.
inline Device gpu_device() {
  return {"NVIDIA H200", "cuda", "h200-test-fp", false, 4800};
}

/// An ok record of `scheduler` for softmax at `sizes` with the given times.
inline Record ok_record(const std::string& scheduler, ConfigList config, std::vector<double> times,
                        const std::string& fusion = "softmax",
                        SizeList sizes = {{"N", 1024}, {"K", 1024}}, Device device = cpu_device()) {
  Record r;
  r.sweep = "test_sweep";
  r.fusion = fusion;
  r.sizes = std::move(sizes);
  r.scheduler = scheduler;
  r.plugin = scheduler + "_plugin";
  r.plugin_version = "1.0";
  r.plugin_hash = hash_hex(r.plugin);
  r.config = std::move(config);
  r.config_hash = config_hash(r.config);
  r.kernel_hash = hash_hex(r.scheduler + r.config_label());
  r.device = std::move(device);
  r.times_us = std::move(times);
  r.bytes_moved = 8 * 1024 * 1024;
  r.max_abs_error = 1e-7;
  r.tolerance.factor = 2, r.tolerance.floor = 0x1p-126;  // the default criterion, f32
  r.key = record_key(r.plugin_hash, r.config_hash, r.fusion, r.sizes, r.device.fingerprint);
  r.timestamp = "2026-11-30T19:00:00Z";
  return r;
}

/// A record of `scheduler` that failed with `status` and `error`.
inline Record failed_record(const std::string& scheduler, Status status, const std::string& error,
                            ConfigList config = {}, Device device = cpu_device()) {
  Record r = ok_record(scheduler, std::move(config), {}, "softmax", {{"N", 1024}, {"K", 1024}},
                       std::move(device));
  r.status = status;
  r.error = error;
  r.max_abs_error.reset();
  return r;
}

/// A fresh empty directory for one test's files.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("schedlab_report_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace schedlab::report::testing_util
