// A sweep point on more than one rank, run through `schedlab exec --mesh N`
// (mesh_point.h).
#include "mesh_point.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/mesh.h"
#include "schedlab/lower/communication.h"
#include "schedlab/model/collective.h"
#include "schedlab/report/record.h"
#include "subprocess.h"

namespace schedlab::cli {

namespace {

/// The last `n` non-empty lines of `text`, joined by "; " (a failure's reason).
std::string last_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find_first_not_of(" \t") != std::string::npos) lines.push_back(l);
  std::string r;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    r += (r.empty() ? "" : "; ") + lines[i].substr(lines[i].find_first_not_of(" \t"));
  return r;
}

}  // namespace

std::vector<std::string> mesh_exec_command(const MeshPointRunner& how,
                                           const sweep::MeshPointRequest& q) {
  std::vector<std::string> a = {how.program, "exec", q.fusion_path, "--mesh",
                                std::to_string(q.mesh)};
  std::string sizes;
  for (const auto& [k, v] : q.sizes)
    sizes += (sizes.empty() ? "" : ",") + k + "=" + std::to_string(v);
  if (!sizes.empty()) a.insert(a.end(), {"--size", sizes});
  a.insert(a.end(), {"--backend", how.backend});
  const sweep::SchedulerSpec& s = *q.scheduler;
  switch (s.kind) {
    case sweep::SchedulerKind::Plugin:
      a.insert(a.end(), {"--plugin", s.plugin});
      for (const std::string& kv : q.settings) a.insert(a.end(), {"--set", kv});
      break;
    case sweep::SchedulerKind::Script:
      a.insert(a.end(), {"--schedule", s.script});
      // settings: "script=<file>" and "args=k=v,k=v" (SchedulerSpec::settings).
      for (const std::string& kv : q.settings)
        if (kv.starts_with("args=") && kv.size() > 5) a.insert(a.end(), {"--param", kv.substr(5)});
      break;
    case sweep::SchedulerKind::Auto:
      break;  // the segmenter picks a built-in for each local step
  }
  if (s.fast_math) a.push_back("--fast-math");
  if (s.native_half_math) a.insert(a.end(), {"--math", "native"});
  if (q.sanitize) a.push_back("--sanitize");
  if (q.rtol || q.atol) {
    a.insert(a.end(), {"--rtol", fmt::format("{}", q.rtol.value_or(0))});
    a.insert(a.end(), {"--atol", fmt::format("{}", q.atol.value_or(0))});
  }
  if (!q.cache_dir.empty()) a.insert(a.end(), {"--cache-dir", q.cache_dir});
  for (const std::string& d : how.plugin_dirs) a.insert(a.end(), {"--plugin-dir", d});
  for (const std::string& d : how.fusion_dirs) a.insert(a.end(), {"--fusion-dir", d});
  if (how.timeout_s > 0) a.insert(a.end(), {"--timeout", fmt::format("{}", how.timeout_s)});
  // The sweep's measure: (exec needs at least one timed repetition), and
  // the device model the one-device points are profiled on.
  a.insert(a.end(), {"--warmup", std::to_string(q.warmup), "--reps",
                     std::to_string(std::max<int64_t>(q.repetitions, 1))});
  if (q.device) a.insert(a.end(), {"--device", q.device->path.empty() ? q.device->name : q.device->path});
  a.push_back("--json");  // rank 0's record, one line
  return a;
}

sweep::MeshPointOutcome parse_mesh_exec(int exit_code, const std::string& out,
                                        const std::string& err) {
  sweep::MeshPointOutcome o;
  // exec --mesh N --json: rank 0's one line, the last JSON object on stdout.
  nlohmann::json j;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("{")) continue;
    nlohmann::json x = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (x.is_object() && x.contains("status") && x["status"].is_string()) j = std::move(x);
  }
  const std::string why = last_lines(err.empty() ? out : err, 3);
  if (j.is_null()) {
    // No record: the exec (or its launcher) died, or ran out of time.
    o.status = exit_code == 124 || why.find("timed out") != std::string::npos
                   ? report::Status::Timeout
                   : report::Status::Crashed;
    o.error = fmt::format("exec --mesh exited with {} and no record: {}", exit_code, why);
    return o;
  }
  const std::string status = j["status"].get<std::string>();
  if (j.contains("error") && j["error"].is_string()) o.error = j["error"].get<std::string>();
  if (j.contains("max_abs_error") && j["max_abs_error"].is_number())
    o.max_abs_error = j["max_abs_error"].get<double>();
  if (j.contains("rank") && j["rank"].is_number_integer()) o.slowest_rank = j["rank"].get<int>();
  if (status == "error") {
    // A user error (a sharding rule, a schedule) is the point's schedule
    // error; anything else (an internal error) its crash.
    o.status = exit_code == kExitUsage ? report::Status::ScheduleError : report::Status::Crashed;
    return o;
  }
  const std::optional<report::Status> s = report::parse_status(status);
  if (!s) {
    o.status = report::Status::Crashed;
    o.error = fmt::format("exec --mesh: unknown status '{}' in its record", status);
    return o;
  }
  o.status = *s;
  if (j.contains("record") && j["record"].is_string()) {
    // What the sweep's record takes from the point: a record's JSON line.
    const report::Record rec = report::record_from_json(j["record"].get<std::string>(),
                                                        SourceLoc{"exec --mesh --json", 1, 0});
    o.config = rec.config;
    o.bytes_moved = rec.bytes_moved;
    o.tolerance = rec.tolerance;
    o.prediction = rec.prediction;
    o.times_us = rec.times_us;
  }
  if (j.contains("comm_measured_us") && j["comm_measured_us"].is_array() &&
      !j["comm_measured_us"].empty()) {
    std::vector<double> c = j["comm_measured_us"].get<std::vector<double>>();
    std::sort(c.begin(), c.end());
    o.comm_measured_us =
        c.size() % 2 == 1 ? c[c.size() / 2] : (c[c.size() / 2 - 1] + c[c.size() / 2]) / 2;
  }
  if (o.status == report::Status::Ok) {
    if (!j.contains("seconds") || !j["seconds"].is_number()) {
      o.status = report::Status::Crashed;
      o.error = "exec --mesh: an ok record without \"seconds\"";
      return o;
    }
    o.seconds = j["seconds"].get<double>();
  }
  return o;
}

sweep::MeshPointOutcome run_mesh_point(const MeshPointRunner& how,
                                       const sweep::MeshPointRequest& q) {
  // The plan first: a sharding that breaks a rule is the point's error here,
  // and its collectives give the predicted communication.
  std::optional<double> comm_us;
  try {
    frontend::FusionDefinition def = frontend::load_fusion_file(q.fusion_path);
    const lower::ShardedPlan plan =
        lower::plan_communication(*def.fusion, q.sizes, ir::DeviceMesh::of_size(q.mesh));
    const model::DeviceModel device =
        q.device ? *q.device : model::load_device(model::kDefaultDevice, device_dirs());
    comm_us = model::communication_us(device, plan);
  } catch (const UserError& e) {
    sweep::MeshPointOutcome o;
    o.status = report::Status::ScheduleError;
    o.error = e.what();
    return o;
  }
  const std::vector<std::string> argv = mesh_exec_command(how, q);
  const ProcessResult r = run_process(argv);
  sweep::MeshPointOutcome o = parse_mesh_exec(r.status, r.out, r.err);
  o.comm_us = comm_us;
  return o;
}

}  // namespace schedlab::cli
