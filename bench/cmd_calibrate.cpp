// `schedlab calibrate RECORDS... --device h200 -o DEVICE.yaml`: the device
// model's assumed constants (copy bandwidth, DRAM latency, launch, barrier,
// shuffle and grid-sync costs, issue efficiency) fitted to sweep records
// measured on a GPU (schedlab/model/calibrate.h has the method,
// docs/model.md "Calibration" the workflow). The model's error over the
// records is printed before and after.
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/model/calibrate.h"

namespace schedlab::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> records;
  std::string device = model::kDefaultDevice;
  std::string output;
};

int run_calibrate(const CalibrateOptions& o) {
  const model::DeviceModel device = model::load_device(o.device, device_dirs());
  const model::CalibrationData data = model::read_calibration_data(o.records, device);
  const model::Calibration c = model::calibrate(device, data);
  const std::string name = std::filesystem::path(o.output).stem().string();
  const std::string date = report::now_timestamp().substr(0, 10);
  const std::string yaml =
      model::calibrated_device_yaml(c, name, date, o.records, data.points.size());
  // Whatever is written must load: the same checks as any device file.
  {
    std::ofstream out(o.output);
    user_assert(bool(out)) << "calibrate: cannot write '" << o.output << "'";
    out << yaml;
  }
  model::load_device_file(o.output);

  fmt::print("calibrating {} ({}) on {} GPU records ({} left out)\n\n", device.name, device.path,
             data.points.size(), data.skipped);
  fmt::print("before, with {}'s constants:\n{}\n", device.name, model::render_accuracy(c.before));
  fmt::print("{:<20} {:>14} {:>14}  {}\n", "constant", "before", "after", "");
  for (const model::FittedConstant& k : c.constants)
    fmt::print("{:<20} {:>14.6g} {:>14.6g}  {}\n", k.key, k.before, k.after,
               k.fitted ? "measured" : "not fitted (no record exercises it): kept");
  fmt::print("({} fits until each kernel's largest term settled)\n\n", c.iterations);
  fmt::print("after, with the fitted constants:\n{}\n", model::render_accuracy(c.after));
  fmt::print("wrote {} (device model '{}')\n", o.output, name);
  return kExitOk;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit a device model's assumed constants to records measured on a GPU");
  cmd->add_option("records", o->records, "Results files (JSONL) of sweeps run on the GPU, profiled")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", o->device, "The device model to start from (a name or a .yaml path)")
      ->capture_default_str();
  cmd->add_option("--output,-o", o->output,
                  "The calibrated device model to write (its name is the file's stem)")
      ->required();
  return {cmd, [o] { return run_calibrate(*o); }};
}

}  // namespace schedlab::cli
