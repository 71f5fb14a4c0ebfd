// `schedlab exec F --mesh N` (docs/multi-device.md, "Ranks"): started by
// hand, the flags and the plan are checked once and N ranks of the same
// command start under mpirun (srun in a Slurm job); under a launcher this
// process is one rank of the point (core/point's run_sharded), rank 0
// printing what a one-device exec prints, with the plan in between.
#include <fmt/core.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "command.h"
#include "exec.h"
#include "schedlab/base/error.h"
#include "schedlab/lower/communication.h"
#include "schedlab/model/collective.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/point/sharded.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/pipeline/mutate.h"
#include "schedlab/sweep/run/runner.h"
#include "subprocess.h"


namespace schedlab::cli {

namespace {

/// --mutate-step STEP:KIND: the plan step and the mutation applied, on the
/// last rank, to the values that step made.
point::ShardedFault parse_mutate_step(const std::string& text, int ranks) {
  const size_t colon = text.find(':');
  size_t step = 0;
  bool ok = colon != std::string::npos && colon > 0;
  for (size_t i = 0; ok && i < colon; ++i) ok = std::isdigit(static_cast<unsigned char>(text[i]));
  user_assert(ok) << "--mutate-step: expected STEP:KIND (a plan step's number, then zero, "
                     "scale:F, one:R, swap or nan), found '"
                  << text << "'";
  step = std::stoul(text.substr(0, colon));
  return {step, ranks - 1, sweep::parse_mutation(text.substr(colon + 1), "--mutate-step")};
}

/// The status of a verdict, as a sweep record spells it.
std::string verdict_status(point::Verdict v) {
  switch (v) {
    case point::Verdict::Ok:
      return "ok";
    case point::Verdict::WrongResult:
      return "wrong_result";
    case point::Verdict::Racy:
      return "racy";
    case point::Verdict::Rejected:
      return "rejected";
    default:
      return "error";
  }
}

/// `exec --mesh N --json`'s one line (rank 0's, on stdout): "status",
/// "mesh", and per outcome "rank" (the slowest), "seconds" (its time),
/// "rank_seconds", "max_abs_error", "error", "findings".
nlohmann::json mesh_record(int mesh, const std::string& status, const std::string& error = "") {
  nlohmann::json j{{"status", status}, {"mesh", mesh}};
  if (!error.empty()) j["error"] = error;
  return j;
}

/// Rank `rank` of a mesh runs on GPU mesh.devices[rank]: CUDA_VISIBLE_DEVICES
/// narrowed to that one before the driver starts, when this node shows at
/// least as many GPUs as the mesh has devices (the ones CUDA_VISIBLE_DEVICES
/// lists, or /proc/driver/nvidia/gpus). With fewer (one GPU, or a launcher
/// that gave each task its own already) the ranks keep what they were given.
void pick_rank_gpu(const ir::DeviceMesh& mesh, int rank) {
  std::vector<std::string> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ',');)
      if (!d.empty()) visible.push_back(d);
  } else {
    std::error_code ec;
    int n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      visible.push_back(std::to_string(n++));
  }
  const int device = mesh.devices.at(static_cast<size_t>(rank));
  if (static_cast<int>(visible.size()) < mesh.size() || device >= static_cast<int>(visible.size()))
    return;
  setenv("CUDA_VISIBLE_DEVICES", visible[static_cast<size_t>(device)].c_str(), 1);
}

/// One rank's run of the point; rank 0 prints what a one-device exec prints
/// (the plan with each local step's kernels, the communications, the
/// checks), the others print nothing. Every rank returns the same code.
int run_mesh_rank(const FusionOptions& fo, const ExecOptions& eo, runtime::Communicator& comm) {
  if (eo.backend != "cpu" && comm.size() > 1)
    pick_rank_gpu(ir::DeviceMesh::of_size(eo.mesh), comm.rank());
  auto backend = sweep::make_backend(eo.backend, eo.cache_dir);
  // On GPUs the collectives go through NCCL where it loads (docs/multi-device.md,
  // NCCL), made here, after the rank's GPU is picked; MPI otherwise. Every
  // rank gets nullptr alike.
  std::unique_ptr<runtime::Communicator> nccl;
  if (sweep::is_cuda(*backend) && comm.size() > 1) {
    std::string why;
    nccl = runtime::make_nccl_communicator({}, &why);
    if (nccl == nullptr && comm.rank() == 0)
      fmt::print(stderr, "note: collectives go through MPI, not NCCL: {}\n", why);
  }
  runtime::Communicator& coll = nccl != nullptr ? *nccl : comm;
  point::ShardedOptions so;
  if (sweep::is_cuda(*backend)) so.point.device = runtime::cuda_device_properties();
  so.point.sanitize = eo.sanitize;
  so.point.tolerance = eo.tolerance();
  so.point.cache_dir = eo.cache_dir;
  so.seed = eo.seed;
  so.fast_math = fo.fast_math;
  if (!eo.mutate_step.empty()) so.fault = parse_mutate_step(eo.mutate_step, eo.mesh);
  so.warmup = eo.warmup;
  so.repetitions = eo.reps;
  // --device: rank 0 profiles the steps' kernels on the model, traced on a
  // CPU backend (this one, or one made for it on CUDA).
  std::optional<model::DeviceModel> device;
  std::unique_ptr<runtime::Backend> tracer;
  if (!eo.device.empty()) {
    device = model::load_device(eo.device, device_dirs());
    so.profile_device = &*device;
    if (sweep::is_cuda(*backend)) {
      tracer = sweep::make_backend("cpu", eo.cache_dir);
      so.point.profile_backend = tracer.get();
    }
    so.point.profile.cache_dir = eo.cache_dir;
  }
  Loaded l = load(fo, backend.get(), so.point);
  so.point.kernel = l.point.options().kernel;
  const ir::DeviceMesh mesh = ir::DeviceMesh::of_size(eo.mesh);
  const point::ShardedResult r = point::run_sharded(
      std::move(l.point.fusion()), l.point.scheduler(), mesh, backend.get(), coll, so);
  if (r.verdict == point::Verdict::Rejected) {
    // Every rank declined alike: rank 0 says so, as a user error would.
    if (r.rank == 0 && eo.json) {
      nlohmann::json j = mesh_record(eo.mesh, "rejected");
      j["error"] = r.reject_reason;
      fmt::print("{}\n", j.dump());
    } else if (r.rank == 0) {
      fmt::print(stderr, "error: {} on mesh {}: {}\n", r.fusion.def.fusion->name(), mesh.str(),
                 r.reject_reason);
    }
    return kExitUsage;
  }
  const int code = r.verdict == point::Verdict::Ok && eo.mutate.empty() ? kExitOk : kExitFailures;
  if (r.rank != 0) return code;
  if (eo.json) {
    nlohmann::json j = mesh_record(eo.mesh, verdict_status(r.verdict));
    j["rank"] = r.slowest_rank;
    j["seconds"] = r.max_seconds;
    j["rank_seconds"] = r.rank_seconds;
    j["max_abs_error"] = r.validation->max_abs_error;
    if (r.verdict != point::Verdict::Ok) j["error"] = r.validation->summary();
    if (!r.findings.empty()) j["findings"] = r.findings;
    std::vector<double> times_us, comm_us;
    for (double t : r.times) times_us.push_back(t * 1e6);
    for (double t : r.comm_times) comm_us.push_back(t * 1e6);
    j["times_us"] = times_us;
    if (!comm_us.empty()) j["comm_measured_us"] = comm_us;
    // What a sweep's record takes from the point, as one line of the
    // record's own JSON (report::to_json, in a string: the config keeps its
    // order): config, bytes_moved, tolerance, prediction, times.
    report::Record rec;
    rec.status = report::parse_status(verdict_status(r.verdict)).value_or(report::Status::Crashed);
    rec.device.backend = sweep::is_cuda(*backend) ? "cuda" : "cpu";
    rec.config = r.config;
    rec.config_hash = report::config_hash(r.config);
    rec.times_us = times_us;
    rec.bytes_moved = r.bytes_moved;
    rec.max_abs_error = r.validation->max_abs_error;
    if (!r.validation->outputs.empty())
      rec.tolerance = sweep::record_tolerance(r.validation->outputs[0].tol);
    rec.prediction = r.prediction;
    rec.mesh = eo.mesh;
    j["record"] = report::to_json(rec);  // a string: the record's own key order
    fmt::print("{}\n", j.dump());
    return code;
  }

  const ir::Fusion& f = *r.fusion.def.fusion;
  fmt::print("{} on {}: sizes {}, mesh {} ({} ranks, {}), slowest rank {:.3g} s\n", f.name(),
             backend->name(), sweep::sizes_str(f, r.fusion.sizes), mesh.str(), r.ranks, coll.name(),
             r.max_seconds);
  // The plan, each local step's kernels under its line (as rank 0 ran them;
  // every rank runs the same kernels at the same local sizes).
  std::vector<const point::StepRun*> by_step(r.plan.steps.size(), nullptr);
  for (const point::StepRun& s : r.steps) by_step[s.step] = &s;
  const std::string plan = lower::print_plan(r.plan, [&](size_t step) -> std::string {
    if (!by_step[step]) return "";
    const point::Point& p = *by_step[step]->point;
    if (p.segmented()) return segment_lines(p, "");
    return "kernel " + p.fusion().def.fusion->name() + ": " + launch_str(p.kernel()) + "\n";
  });
  std::istringstream lines(plan);
  for (std::string line; std::getline(lines, line);) fmt::print("  {}\n", line);
  if (!r.comm_times.empty())
    fmt::print("  timed: {} repetition{} after {} warmup, the slowest rank's each, median {:.3g} s\n",
               r.times.size(), r.times.size() == 1 ? "" : "s", eo.warmup, r.max_seconds);
  if (r.prediction)
    fmt::print("  predicted {:.3g} us on {} (limited by {}): the kernels plus {:.3g} us of "
               "communication\n",
               r.prediction->predicted_us, r.prediction->device, r.prediction->limiter,
               model::communication_us(*device, r.plan));
  print_checks(eo, r.findings, *r.validation);
  const point::Reference& ref = *r.reference;
  if (!eo.save_outputs.empty()) save_outputs(eo.save_outputs, *ref.plain, r.outputs, ref.want);
  run_mutations(eo.mutate, *ref.plain, r.fusion.sizes, r.outputs, ref.want, *r.validation,
                eo.tolerance());
  return code;
}

/// `exec --mesh N`: started by hand with N > 1, check the flags and the plan
/// once (a sharding that breaks a rule is one error, not one per rank) and
/// start N ranks of this command under the launcher; started by a launcher,
/// run as one rank of a world that must be N ranks. In process (no isolated
/// child): MPI must be initialised by the process the launcher started.
int run_exec_mesh_here(const FusionOptions& fo, const ExecOptions& eo) {
  user_assert(eo.inputs.empty())
      << "--inputs with --mesh: not supported yet (every rank generates the same inputs from "
         "--seed); drop --inputs or --mesh";
  const std::optional<int> world = runtime::launcher_world_size();
  if (!world && eo.mesh > 1) {
    Loaded l = load(fo, nullptr, {}, /*segment=*/false);
    const lower::ShardedPlan plan = lower::plan_communication(
        *l.point.fusion().def.fusion, l.point.fusion().sizes, ir::DeviceMesh::of_size(eo.mesh));
    if (!eo.mutate_step.empty()) {
      const size_t step = parse_mutate_step(eo.mutate_step, eo.mesh).step;
      user_assert(step < plan.steps.size())
          << "--mutate-step " << eo.mutate_step << ": the plan of " << plan.fusion->name() << " on "
          << eo.mesh << " ranks has steps 0 to " << plan.steps.size() - 1 << ", found step "
          << step;
    }
    std::fflush(stdout);
    return relaunch_as_ranks(eo.mesh, "exec --mesh");
  }
  start_exec_watchdog(eo.timeout_s);
  // The world the launcher made, even a wrong one: its ranks then say so
  // with their rank.
  std::unique_ptr<runtime::Communicator> comm =
      world.value_or(1) > 1 ? runtime::make_mpi_communicator() : runtime::make_self_communicator();
  const int rank = comm->rank();
  // Rank 0 reports an error as main() does for a one-device exec (a record
  // with --json); the others name their rank.
  auto report = [&](const std::exception& e, int code) {
    if (rank != 0) {
      fmt::print(stderr, "rank {}: {}\n", rank, e.what());
      return code;
    }
    if (eo.json) fmt::print("{}\n", mesh_record(eo.mesh, "error", e.what()).dump());
    fmt::print(stderr, "{}\n", e.what());
    return code;
  };
  int code = kExitOk;
  try {
    user_assert(comm->size() == eo.mesh)
        << "--mesh " << eo.mesh << ": this process was started with " << comm->size() << " rank"
        << (comm->size() == 1 ? "" : "s") << " (mpirun -n or srun -n); expected " << eo.mesh
        << ", one per device of the mesh";
    code = run_mesh_rank(fo, eo, *comm);
  } catch (const plugin::PluginFault& e) {
    code = report(e, kExitFailures);
  } catch (const UserError& e) {
    code = report(e, kExitUsage);
  } catch (const InternalError& e) {
    code = report(e, kExitInternal);
  }
  // No rank leaves before every rank has written what it has to say: one
  // that exits non-zero makes the launcher stop the others, mid-line.
  std::fflush(stdout);
  std::fflush(stderr);
  comm->all(true);
  return code;
}

}  // namespace

/// run_exec_mesh_here; with --json, an error of the starter (before any
/// rank: bad flags, a broken sharding rule) is a record too, "status":
/// "error" (a rank's errors are recorded by rank 0 above).
int run_exec_mesh(const FusionOptions& fo, const ExecOptions& eo) {
  if (!eo.json) return run_exec_mesh_here(fo, eo);
  try {
    return run_exec_mesh_here(fo, eo);
  } catch (const std::exception& e) {
    fmt::print("{}\n", mesh_record(eo.mesh, "error", e.what()).dump());
    std::fflush(stdout);
    throw;
  }
}

}  // namespace schedlab::cli
