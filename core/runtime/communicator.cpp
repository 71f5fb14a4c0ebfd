// The one-rank communicator and the launcher: which launcher started this
// process, and the command that starts N ranks (docs/multi-device.md, Ranks).
#include "schedlab/runtime/communicator.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "schedlab/base/error.h"

namespace schedlab::runtime {
namespace {

/// A mesh of one: every collective gives back this rank's own value (the
/// reductions and gathers over one rank are identities).
class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "self"; }
  void allreduce(ref::HostTensor&, ir::ReductionOpType) override {}
  ref::HostTensor allgather(const ref::HostTensor& piece, int axis) override {
    check_axis(piece, axis, "allgather");
    return piece;
  }
  ref::HostTensor reduce_scatter(const ref::HostTensor& t, int axis, ir::ReductionOpType) override {
    check_axis(t, axis, "reduce_scatter");
    return t;
  }
  ref::HostTensor gather_to_root(const ref::HostTensor& piece, int axis) override {
    check_axis(piece, axis, "gather_to_root");
    return piece;
  }
  double max_over_ranks(double v) override { return v; }
  bool all(bool ok) override { return ok; }

 private:
  /// The same contract as the MPI communicator's, so that a wrong axis fails
  /// on one rank as it would on many.
  static void check_axis(const ref::HostTensor& t, int axis, const char* what) {
    internal_assert(axis >= 0 && axis < static_cast<int>(t.shape.size()))
        << what << ": axis " << axis << " of a " << t.shape.size() << "-D tensor";
  }
};

/// The positive integer in environment variable `name`, or nullopt when it
/// is unset or not one.
std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n <= 0 || n > 1 << 20) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace

std::unique_ptr<Communicator> make_self_communicator() {
  return std::make_unique<SelfCommunicator>();
}

std::optional<int> launcher_world_size() {
  // Open MPI's mpirun, then MPICH's Hydra (and other PMI launchers).
  if (auto n = env_int("OMPI_COMM_WORLD_SIZE")) return n;
  if (auto n = env_int("PMI_SIZE")) return n;
  // srun: a task of a job step. A batch script also has SLURM_PROCID and
  // SLURM_NTASKS but no step id: it was not started as one rank of N.
  if (std::getenv("SLURM_PROCID") != nullptr && std::getenv("SLURM_STEP_ID") != nullptr) {
    if (auto n = env_int("SLURM_STEP_NUM_TASKS")) return n;
    if (auto n = env_int("SLURM_NTASKS")) return n;
  }
  return std::nullopt;
}

LaunchEnvironment launch_environment() {
  LaunchEnvironment env;
  env.root = ::geteuid() == 0;
  env.in_slurm_job = std::getenv("SLURM_JOB_ID") != nullptr;
  // The mpirun of the MPI that CMake found (its libraries are the ones linked
  // in); PATH's when that one is gone (a moved installation).
  env.mpirun = SCHEDLAB_MPIEXEC;
  if (env.mpirun.empty() || ::access(env.mpirun.c_str(), X_OK) != 0) env.mpirun = "mpirun";
  return env;
}

std::vector<std::string> launcher_command(int n, const std::vector<std::string>& argv,
                                          const LaunchEnvironment& env) {
  internal_assert(n > 0 && !argv.empty())
      << "launcher_command: " << n << " ranks of " << argv.size() << " words";
  std::vector<std::string> cmd;
  if (env.in_slurm_job) {
    // PMIx: how Debian's Open MPI (the one linked in) meets Slurm's tasks,
    // whatever the site's MpiDefault.
    cmd = {"srun", "--mpi=pmix", "-n", std::to_string(n)};
  } else {
    cmd = {env.mpirun, "-n", std::to_string(n), "--oversubscribe"};
    if (env.root) cmd.push_back("--allow-run-as-root");
    // Shared memory and loopback only: one host, and no network is needed
    // (nor probed, which is slow or fails in a sandbox).
    for (const char* w : {"--mca", "btl", "self,vader"}) cmd.push_back(w);
  }
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return cmd;
}

std::vector<std::string> launcher_command(int n, const std::vector<std::string>& argv) {
  return launcher_command(n, argv, launch_environment());
}

}  // namespace schedlab::runtime
