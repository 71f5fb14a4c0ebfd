// A sweep point on more than one rank (docs/sweeps.md, "Meshes"): `schedlab
// run` is one process, so each such point runs as `schedlab exec F --mesh N`
// (which starts its ranks under the launcher: mpirun, or srun inside a Slurm
// allocation) and its output becomes the point's record. The predicted time
// of the plan's communications (model::collective_us) is computed here.
#pragma once

#include <string>
#include <vector>

#include "schedlab/sweep/run/runner.h"

namespace schedlab::cli {

/// How `run` runs its mesh points: this program, the backend and plugin
/// directories its own points use.
struct MeshPointRunner {
  std::string program;                   ///< the schedlab executable
  std::string backend;                   ///< "cpu", "cuda", "auto"
  std::vector<std::string> plugin_dirs;  ///< --plugin-dir flags
  std::vector<std::string> fusion_dirs;  ///< --fusion-dir flags
  double timeout_s = 0;                  ///< the point's --timeout (0: none)
};

/// The exec command line of `q` (argv[0] the program): `exec FILE --mesh N
/// --size .. --backend B` and the scheduler's flags (--plugin P --set k=v,
/// --schedule S --param k=v, nothing for auto: the segmenter picks per step),
/// --json last.
std::vector<std::string> mesh_exec_command(const MeshPointRunner& how,
                                           const sweep::MeshPointRequest& q);

/// The outcome of `exec --mesh N --json`: its record (the last JSON line on
/// stdout: status, the slowest rank and its seconds, max_abs_error, error)
/// and its exit code; no record is a crash (or a timeout).
sweep::MeshPointOutcome parse_mesh_exec(int exit_code, const std::string& out,
                                        const std::string& err);

/// Plans the point (a sharding rule it breaks is its schedule_error), predicts
/// its communications, then runs it through exec.
sweep::MeshPointOutcome run_mesh_point(const MeshPointRunner& how,
                                       const sweep::MeshPointRequest& q);

}  // namespace schedlab::cli
