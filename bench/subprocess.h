// Running other programs from the CLI: Slurm's commands (`schedlab slurm`),
// one `schedlab run` worker per GPU (`run --devices`) and the ranks of
// `exec --mesh` and `fuzz --mesh` (this program again, under the launcher). posix_spawn, so
// no shell ever sees an argument.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace schedlab::cli {

/// What a finished program gave back.
struct ProcessResult {
  int status = 0;   ///< its exit code, or 128 + the signal that ended it
  std::string out;  ///< its stdout
  std::string err;  ///< its stderr
};

/// Runs argv (argv[0] looked up on PATH) to the end with its output captured.
/// A program that cannot be started is a user error naming it and the reason.
ProcessResult run_process(const std::vector<std::string>& argv);

/// Starts argv with `env` set on top of this environment and stdout and stderr
/// appended to `log`; returns its pid.
pid_t start_process(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env, const std::string& log);
/// Waits for `pid`: its exit code, or 128 + the signal that ended it.
int wait_process(pid_t pid);

/// Starts this program again, with the arguments it was started with
/// (/proc/self), as `ranks` ranks under the launcher (runtime::
/// launcher_command: mpirun, or srun in a Slurm job) attached to this
/// process's stdin, stdout and stderr, and waits: the launcher's exit code.
/// `what` ("exec --mesh") names the caller in the error when the launcher
/// cannot be started.
int relaunch_as_ranks(int ranks, const std::string& what);

}  // namespace schedlab::cli
