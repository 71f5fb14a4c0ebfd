// `schedlab calibrate`'s fit: records generated from a synthetic device with
// known constants give those constants back; CPU-emulation records and
// records profiled for another device model are refused at file:line; the
// NNLS solver on hand-checked systems.
#include "schedlab/model/calibrate.h"
#include "schedlab/model/profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "schedlab/base/error.h"

namespace {

namespace model = schedlab::model;
namespace report = schedlab::report;
using model::Terms;

const std::vector<std::string> kDirs = {SCHEDLAB_SOURCE_DIR "/configs/devices"};

/// The synthetic device: h200 with every fitted constant moved off its
/// assumption.
model::DeviceModel synthetic_device() {
  model::DeviceModel d = model::load_device("h200", kDirs);
  d.copy_bandwidth_gbs = 4000;
  d.launch_overhead_us = 2.5;
  d.dram_latency_ns = 650;
  d.barrier_ns = 35;
  d.shuffle_ns = 9;
  d.grid_sync_ns = 800;
  d.issue_efficiency = 0.7;
  d.mma_sync_tflops = 600;
  return d;
}

/// Deterministic uniform numbers in [lo, hi).
struct Lcg {
  uint64_t s = 12345;
  double operator()(double lo, double hi) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * double(s >> 11) / double(1ull << 53);
  }
};

/// Kernels of every kind: dram-, latency-, issue-, sync- and tensor-bound
/// and tiny ones under the floor, with chains of every part.
std::vector<Terms> synthetic_terms(int n) {
  Lcg u;
  std::vector<Terms> out;
  for (int i = 0; i < n; ++i) {
    Terms t;
    const int kind = i % 6;
    t.dram_bytes_tail = kind == 0 ? u(1e7, 1e9) : kind == 1 ? u(1e6, 1e8) : u(1e4, 1e6);
    t.latency_ratio = t.dram_bytes_tail / (kind == 1 ? u(2e5, 6e5) : u(8e6, 2e7));
    t.issue_cycles = kind == 2 ? u(1e5, 1e7) : t.dram_bytes_tail / 16384;
    t.smem_cycles = kind == 2 ? 0 : u(0, 100);
    t.rounds = kind == 4 ? double(int(u(5, 20))) : double(int(u(1, 3)));
    t.read_phases = double(int(u(1, 4)));
    t.barriers = kind == 4 ? double(int(u(200, 1000))) : double(int(u(0, 9)));
    t.shuffle_levels = double(5 * int(u(0, 5)));
    t.grid_reductions = i % 3 == 0 ? 1 : 0;
    // mma.sync FLOPs: bound in kind 5 (1 to 100 ms at 600 TFLOPS).
    t.tensor_flops = kind == 5 ? u(6e11, 6e13) : 0;
    t.flops = t.tensor_flops;
    out.push_back(t);
  }
  return out;
}

std::string profile_json(const Terms& t) {
  return R"([{"kernel":"synthetic","terms":)" + model::terms_json(t) + "}]";
}

report::Record gpu_record(int i, const Terms& t, double us) {
  report::Record r;
  r.sweep = "synthetic";
  r.fusion = "synthetic";
  r.sizes = {{"I", i}};
  r.scheduler = "fixture";
  r.device = {"NVIDIA H200", "cuda", "synthetic-h200", false, 4800};
  r.times_us = {us, us, us};
  r.bytes_moved = int64_t(t.dram_bytes_tail);
  r.prediction = report::Prediction{"h200", 0, "dram", 0, profile_json(t)};
  return r;
}

/// Writes `n` records of the synthetic device to a fresh file.
std::string write_synthetic(const std::string& name, int n) {
  const model::DeviceModel truth = synthetic_device();
  const std::string path = ::testing::TempDir() + name;
  std::remove(path.c_str());
  int i = 0;
  for (const Terms& t : synthetic_terms(n))
    report::append_record(path,
                          gpu_record(i++, t, model::predict_terms(truth, t, 0).predicted_s * 1e6));
  return path;
}

TEST(Calibrate, RecoversTheSyntheticDevicesConstants) {
  const std::string path = write_synthetic("synthetic.jsonl", 80);
  const model::DeviceModel h200 = model::load_device("h200", kDirs);
  const model::CalibrationData data = model::read_calibration_data({path}, h200);
  ASSERT_EQ(data.points.size(), 80u);
  const model::Calibration c = model::calibrate(h200, data);
  const model::DeviceModel truth = synthetic_device();
  // Noise-free records: within 0.1 % (the fit is exact up to rounding once
  // each kernel's largest term is the truth's).
  const double tol = 1e-3;
  EXPECT_NEAR(c.device.copy_bandwidth_gbs, truth.copy_bandwidth_gbs, tol * 4000);
  EXPECT_NEAR(c.device.launch_overhead_us, truth.launch_overhead_us, tol * 2.5);
  EXPECT_NEAR(c.device.dram_latency_ns, truth.dram_latency_ns, tol * 650);
  EXPECT_NEAR(c.device.barrier_ns, truth.barrier_ns, tol * 35);
  EXPECT_NEAR(c.device.shuffle_ns, truth.shuffle_ns, tol * 9);
  EXPECT_NEAR(c.device.grid_sync_ns, truth.grid_sync_ns, tol * 800);
  EXPECT_NEAR(c.device.issue_efficiency, truth.issue_efficiency, tol * 0.7);
  EXPECT_NEAR(c.device.mma_sync_tflops, truth.mma_sync_tflops, tol * 600);
  for (const model::FittedConstant& k : c.constants) EXPECT_TRUE(k.fitted) << k.key;
  EXPECT_GT(c.before.median_abs_error, 0.05);
  EXPECT_LT(c.after.median_abs_error, 1e-4);
  EXPECT_LT(c.after.max_abs_error, 1e-3);
}

// tests/model/calibrate/synthetic_h200.jsonl, which the CLI test
// (model_cli_calibrate_synthetic) calibrates, is this generator's output.
TEST(Calibrate, TheCommittedFixtureIsTheGenerators) {
  const std::string path = write_synthetic("fixture.jsonl", 60);
  auto text = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(SCHEDLAB_SOURCE_DIR "/tests/model/calibrate/synthetic_h200.jsonl"), text(path))
      << "regenerate: cp " << path << " tests/model/calibrate/synthetic_h200.jsonl";
}

TEST(Calibrate, WritesADeviceModelThatLoadsWithItsValuesMarkedMeasured) {
  const std::string path = write_synthetic("synthetic_yaml.jsonl", 40);
  const model::DeviceModel h200 = model::load_device("h200", kDirs);
  const model::CalibrationData data = model::read_calibration_data({path}, h200);
  const model::Calibration c = model::calibrate(h200, data);
  const std::string yaml =
      model::calibrated_device_yaml(c, "h200-fit", "2026-12-03", {path}, data.points.size());
  const std::string out = ::testing::TempDir() + "h200-fit.yaml";
  {
    std::FILE* f = std::fopen(out.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(yaml.c_str(), f);
    std::fclose(f);
  }
  const model::DeviceModel back = model::load_device_file(out);
  EXPECT_EQ(back.name, "h200-fit");
  EXPECT_NEAR(back.copy_bandwidth_gbs, 4000, 4);
  EXPECT_NE(yaml.find("copy_bandwidth_gbs: 4000  # measured 2026-12-03: fitted to 40 records"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("launch_overhead_us: 2.5  # measured 2026-12-03"), std::string::npos);
  EXPECT_NE(yaml.find("sm_count: 132"), std::string::npos);  // published figures untouched
}

TEST(Calibrate, RefusesCpuEmulationRecordsAtTheirLine) {
  const std::string path = write_synthetic("with_cpu.jsonl", 3);
  report::Record cpu = gpu_record(9, synthetic_terms(1)[0], 1000);
  cpu.device = {"cpu (x86_64, 2 cores)", "cpu", "cpu-fp", true, 0};
  report::append_record(path, cpu);
  try {
    model::read_calibration_data({path}, model::load_device("h200", kDirs));
    FAIL() << "expected a user error";
  } catch (const schedlab::UserError& e) {
    EXPECT_EQ(e.loc().line, 4);
    EXPECT_EQ(e.loc().file, path);
    EXPECT_NE(e.message().find("a CPU-emulation record"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'h200'"), std::string::npos) << e.message();
  }
}

TEST(Calibrate, RefusesRecordsProfiledForAnotherDeviceModel) {
  const std::string path = write_synthetic("other_device.jsonl", 2);
  try {
    model::read_calibration_data({path}, model::load_device("h100-sxm", kDirs));
    FAIL() << "expected a user error";
  } catch (const schedlab::UserError& e) {
    EXPECT_EQ(e.loc().line, 1);
    EXPECT_NE(e.message().find("prediction is for device model 'h200', expected 'h100-sxm'"),
              std::string::npos)
        << e.message();
  }
}

TEST(Calibrate, NeedsTwoPoints) {
  const std::string path = write_synthetic("one.jsonl", 1);
  const model::DeviceModel h200 = model::load_device("h200", kDirs);
  EXPECT_THROW(model::calibrate(h200, model::read_calibration_data({path}, h200)),
               schedlab::UserError);
}

TEST(Nnls, MatchesLeastSquaresWhenTheSolutionIsPositive) {
  // x = (1, 2) fits exactly.
  const std::vector<std::vector<double>> a = {{1, 0}, {0, 1}, {1, 1}};
  const std::vector<double> x = model::nnls(a, {1, 2, 3});
  EXPECT_NEAR(x[0], 1, 1e-12);
  EXPECT_NEAR(x[1], 2, 1e-12);
}

TEST(Nnls, HoldsANegativeUnknownAtZero) {
  // Unconstrained: x = (2, -1); with x >= 0 the best is x = (0, 0), as b . a0 = 0.
  const std::vector<std::vector<double>> a = {{1, 1}, {1, 2}, {1, 3}};
  const std::vector<double> b = {1, 0, -1};
  const std::vector<double> x = model::nnls(a, b);
  EXPECT_NEAR(x[0], 0, 1e-12);  // b . a0 = 0
  EXPECT_NEAR(x[1], 0, 1e-12);
  const std::vector<double> y = model::nnls(a, {3, 4, 5});  // x = (2, 1)
  EXPECT_NEAR(y[0], 2, 1e-12);
  EXPECT_NEAR(y[1], 1, 1e-12);
  const std::vector<double> z = model::nnls(a, {3, 3, 3});  // x = (3, 0) exactly
  EXPECT_NEAR(z[0], 3, 1e-12);
  EXPECT_NEAR(z[1], 0, 1e-12);
}

}  // namespace
