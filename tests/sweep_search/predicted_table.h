// The performance model's prediction for every admissible configuration of
// every parameter space in configs/sweeps/ (fixtures/predicted.tsv), so that
// the search strategies are tested on the real model's landscape without
// profiling hundreds of kernels on each test run (a profile compiles the
// kernel twice and traces it: about a second each).
//
// One line per configuration, tab-separated:
//   sweep  fusion  sizes(by name)  scheduler  config(Config::str)  status
//   predicted_us  sector_bytes  occupancy  registers  instructions
// status is "ok" or the step that failed ("rejected", "schedule_error",
// "compile_error"); the figures are empty then. predicted_table_gen writes
// it (see fixtures/README.md); a space that changed is missing from it, and
// the tests say so and how to regenerate it.
#pragma once

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "schedlab/model/profile.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/search/strategy.h"

namespace schedlab::sweep::testing_util {

/// "K=1024,N=256": sizes by name, as the table keys them.
inline std::string sizes_key(const ir::SizeBindings& sizes) {
  std::string r;
  for (const auto& [k, v] : sizes) r += (r.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return r;
}

/// The table's key of one configuration of one search.
inline std::string table_key(const std::string& sweep, const SearchProblem& p, const Config& c) {
  return sweep + "\t" + p.fusion->name + "\t" + sizes_key(*p.sizes) + "\t" + p.scheduler->name +
         "\t" + c.str();
}

/// The table's columns after the key for configuration `c` of `p`: status,
/// then the figures (empty unless "ok"), tab-separated, from scheduling it
/// with the real plugin, lowering and profiling it on `device` as `schedlab
/// run` profiles a point (runner.cpp, SweepRun::profile), without validating
/// or timing it. `error` gets a failure's message.
inline std::string table_columns(const SweepSpec& spec, const SearchProblem& p, const Config& c,
                                 plugin::Registry& registry, runtime::Backend& cpu,
                                 const model::DeviceModel& device, const model::ProfileOptions& po,
                                 const std::vector<std::string>& fusion_dirs, std::string* error) {
  std::string status = "ok", figures = "\t\t\t\t";
  try {
    BoundFusion bf = bind_fusion(p.fusion->path, fusion_dirs, *p.sizes);
    const int64_t bytes = io_bytes(*bf.def.fusion, bf.sizes);
    PluginRun run =
        schedule_with_plugin(*registry.get(p.scheduler->plugin), bf, std::nullopt,
                             p.scheduler->settings(c));
    if (!run.accepted) {
      status = "rejected";
    } else {
      status = "compile_error";
      runtime::PreparedKernel k =
          runtime::prepare(*bf.def.fusion, bf.sizes, {},
                           runtime::KernelOptions{spec.dynamic_sizes, p.scheduler->fast_math});
      model::KernelProfile prof =
          model::profile_kernel(cpu, k, *bf.def.fusion, bf.sizes, bytes, device, po, p.fusion->name);
      status = "ok";
      figures = fmt::format("{:.9g}\t{:.9g}\t{:.9g}\t{}\t{:.9g}", prof.prediction.predicted_s * 1e6,
                            prof.sector_bytes, prof.occupancy.occupancy, prof.resources.registers,
                            prof.instructions_per_thread);
    }
  } catch (const UserError& e) {
    if (status == "ok") status = "schedule_error";
    if (error) *error = e.what();
  }
  return status + "\t" + figures;
}

/// The table: key -> the outcome a run with objective predicted would report.
class PredictedTable {
 public:
  explicit PredictedTable(const std::string& path) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
      f.resize(11);
      Outcome o;
      o.status = f[5];
      if (o.ok()) {
        o.predicted_s = std::stod(f[6]) * 1e-6;
        for (size_t k = 7; k < 11; ++k) o.profile.push_back(std::stod(f[k]));
      }
      rows_[f[0] + "\t" + f[1] + "\t" + f[2] + "\t" + f[3] + "\t" + f[4]] = o;
    }
  }
  size_t size() const { return rows_.size(); }
  const Outcome* find(const std::string& key) const {
    auto it = rows_.find(key);
    return it == rows_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Outcome> rows_;
};

}  // namespace schedlab::sweep::testing_util
