// What `exec` (cmd_exec.cpp) and `exec --mesh` (exec_mesh.cpp) share: the
// verb's options and the lines both print about a point's kernels and its
// checks, and the saving and mutating of its outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fusion_point.h"
#include "schedlab/point/point.h"

namespace schedlab::cli {

/// `exec`'s flags beside the fusion's (FusionOptions).
struct ExecOptions {
  std::string backend = "auto";
  std::string cache_dir;
  uint64_t seed = 1;
  std::string inputs;        ///< --inputs: comma-separated .npy files, one per fusion input
  std::string save_outputs;  ///< --save-outputs: a directory for <name>.npy and <name>.ref.npy
  bool isolate = true;       ///< --isolate (default) / --no-isolate: run in a child process
  bool sanitize = false;     ///< --sanitize: run the kernels under the emulation sanitizer
  double timeout_s = 120;    ///< --timeout (0: none)
  std::vector<std::string> mutate;   ///< --mutate KIND (repeatable; docs/mutation.md)
  std::optional<double> rtol, atol;  ///< --rtol/--atol: a user tolerance (docs/validation.md)
  int mesh = 0;                      ///< --mesh N: run on N ranks (0: not given)
  bool json = false;                 ///< --json (with --mesh): one JSON line on rank 0
  std::string mutate_step;           ///< --mutate-step STEP:KIND (with --mesh)
  /// --warmup W --reps R (with --mesh): after the validating run, W untimed
  /// and R timed repetitions of the plan (point::ShardedOptions).
  int warmup = 0, reps = 1;
  std::string device;  ///< --device MODEL (with --mesh): predict the point on it
  /// The user's tolerance when --rtol or --atol was given (the other one 0,
  /// as the sweep key `validation: {rtol, atol}`), else the error bound's.
  std::optional<ref::Tolerance> tolerance() const {
    if (!rtol && !atol) return std::nullopt;
    return ref::Tolerance::user(rtol.value_or(0), atol.value_or(0));
  }
};

/// "grid (2, 1, 1), block (128, 1, 1), 0 B shared, int32 index": how a kernel launched.
std::string launch_str(const sweep::SegmentKernel& k);
/// "<indent>segment 0 (reduction: block=128): grid ..." for each segment of a
/// segmented point.
std::string segment_lines(const point::Point& p, const std::string& indent);
/// The sanitizer's findings (with --sanitize) and each output's check.
void print_checks(const ExecOptions& eo, const std::vector<std::string>& findings,
                  const sweep::Validation& v);
/// --save-outputs DIR: each output as DIR/<name>.npy, the reference as
/// DIR/<name>.ref.npy and the reference's per-element error bound (f64, the
/// B of docs/validation.md) as DIR/<name>.bound.npy, <name> being the
/// output's name in the fusion or T<n>.
void save_outputs(const std::string& dir, const ir::Fusion& f,
                  const std::vector<ref::HostTensor>& got,
                  const std::vector<ref::HostTensor>& want);
/// --mutate: each mutation applied to a copy of the outputs `got`, which
/// validated (`v`), validated again and judged; its effect and verdict
/// printed. When `v` failed there is nothing to test: it says so. A mutation
/// that changes no output cannot be killed: a user error, after the others.
void run_mutations(const std::vector<std::string>& kinds, const ir::Fusion& plain,
                   const ir::SizeBindings& sizes, const std::vector<ref::HostTensor>& got,
                   const std::vector<ref::HostTensor>& want, const sweep::Validation& v,
                   const std::optional<ref::Tolerance>& tol);

/// --timeout S (S > 0) of an exec in this process: after S seconds a thread
/// reports the time-out and ends the process (kExitFailures), so that an
/// emulated kernel that never ends (a schedule that loops over a huge tensor
/// per thread) cannot hang a script. S = 0: nothing.
void start_exec_watchdog(double timeout_s);

/// `exec --mesh N` (exec_mesh.cpp, docs/multi-device.md "Ranks"): started
/// by hand, N ranks of this command under the launcher; under one, this
/// process as one rank.
int run_exec_mesh(const FusionOptions& fo, const ExecOptions& eo);

}  // namespace schedlab::cli
