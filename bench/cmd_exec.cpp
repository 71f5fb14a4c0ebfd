// `schedlab exec`: one fusion, its sizes and its schedule (bench/fusion_point.h)
// run once through core/point and validated against the reference; the
// inputs may come from .npy files, the outputs be saved, and the validation
// itself tested with mutants (--mutate). Isolated in a child by default.
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include "cli_checks.h"
#include "command.h"
#include "exec.h"
#include "fusion_point.h"
#include "schedlab/base/error.h"
#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/npy.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/segment/segment.h"
#include "schedlab/sweep/pipeline/mutate.h"

namespace schedlab::cli {

namespace {

/// --inputs a.npy,b.npy: one file per input of f, in order, each checked
/// against the input's dtype and its shape under `sizes`.
std::vector<ref::HostTensor> read_inputs(const std::string& list, const ir::Fusion& f,
                                         const ir::SizeBindings& sizes) {
  std::vector<std::string> paths;
  std::stringstream ss(list);
  for (std::string p; std::getline(ss, p, ',');) paths.push_back(p);
  if (!list.empty() && list.back() == ',') paths.emplace_back();
  std::string names;
  for (const ir::TensorView* in : f.inputs()) names += (names.empty() ? "" : ", ") + in->describe();
  user_assert(paths.size() == f.inputs().size())
      << "--inputs: fusion '" << f.name() << "' has " << f.inputs().size() << " input"
      << (f.inputs().size() == 1 ? "" : "s") << " (" << names << "), found " << paths.size()
      << " file" << (paths.size() == 1 ? "" : "s") << " in '" << list << "'";
  std::vector<ref::HostTensor> r;
  for (size_t i = 0; i < paths.size(); ++i) {
    user_assert(!paths[i].empty())
        << "--inputs: file " << i + 1 << " of '" << list << "' is empty; expected a .npy path for "
        << f.inputs()[i]->describe();
    r.push_back(ref::read_npy_input(paths[i], f.inputs()[i], sizes));
  }
  return r;
}

}  // namespace

// ---- Shared with exec --mesh (exec.h) ----------------------------------------

void save_outputs(const std::string& dir, const ir::Fusion& f,
                  const std::vector<ref::HostTensor>& got,
                  const std::vector<ref::HostTensor>& want) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  user_assert(!ec) << "--save-outputs: cannot create directory '" << dir << "': " << ec.message();
  for (size_t i = 0; i < got.size(); ++i) {
    const ir::TensorView* out = f.outputs()[i];
    std::string base =
        (std::filesystem::path(dir) / (out->user_name().empty() ? out->str() : out->user_name()))
            .string();
    ref::write_npy(base + ".npy", got[i]);
    ref::write_npy(base + ".ref.npy", want[i]);
    ref::HostTensor bound{ir::DataType::F64, want[i].shape, want[i].error};
    bound.data.resize(static_cast<size_t>(want[i].numel()), 0.0);  // empty: exact
    ref::write_npy(base + ".bound.npy", bound);
    fmt::print("  saved output {} to {}.npy, {}.ref.npy and {}.bound.npy\n", i, base, base, base);
  }
}

void run_mutations(const std::vector<std::string>& kinds, const ir::Fusion& plain,
                   const ir::SizeBindings& sizes, const std::vector<ref::HostTensor>& got,
                   const std::vector<ref::HostTensor>& want, const sweep::Validation& v,
                   const std::optional<ref::Tolerance>& tol) {
  std::string unchanged;  // the mutations that changed nothing
  for (const std::string& kind : kinds) {
    const sweep::Mutation m = sweep::parse_mutation(kind);
    if (!v.ok) {
      fmt::print("  mutation {} not applied: the kernel's own outputs fail validation\n", m.str());
      continue;
    }
    std::vector<ref::HostTensor> mutant = got;
    const sweep::MutationEffect e = sweep::mutate(m, mutant, want);
    for (size_t i = 0; i < e.outputs.size(); ++i)
      fmt::print("  mutation {}: output {}: {}\n", m.str(), i, e.outputs[i]);
    if (e.noop()) {
      unchanged += (unchanged.empty() ? "" : ", ") + m.str();
      continue;
    }
    fmt::print("{}\n",
               sweep::judge_mutant(m, sweep::validate(plain, sizes, mutant, want, tol)).line);
  }
  user_assert(unchanged.empty())
      << "--mutate " << unchanged
      << ": expected a mutation that changes some output, but every output is unchanged (see "
         "above); try another kind";
}

void start_exec_watchdog(double timeout_s) {
  if (timeout_s <= 0) return;
  std::thread([t = timeout_s] {
    std::this_thread::sleep_for(std::chrono::duration<double>(t));
    std::fprintf(stderr, "error: exec: timed out after %g s (--timeout)\n", t);
    std::fflush(stdout);
    std::_Exit(kExitFailures);
  }).detach();
}

std::string launch_str(const sweep::SegmentKernel& k) {
  const runtime::LaunchDims& dims = k.dims;
  return fmt::format("grid ({}, {}, {}), block ({}, {}, {}), {} B shared, int{} index",
                     dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1],
                     dims.block[2], dims.shared_bytes, k.prepared.source.index_bits);
}

std::string segment_lines(const point::Point& p, const std::string& indent) {
  const segment::Segmentation& s = p.segmented()->segmentation;
  const point::Result& r = p.result();
  std::string out;
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const std::string& params = r.runs[i].params_str;
    out += fmt::format("{}segment {} ({}{}): {}\n", indent, i, s.segments[i].scheduler,
                       params.empty() ? "" : ": " + params, launch_str(r.kernels[i]));
  }
  return out;
}

void print_checks(const ExecOptions& eo, const std::vector<std::string>& findings,
                  const sweep::Validation& v) {
  if (eo.sanitize)
    fmt::print("  sanitizer: {}\n",
               findings.empty()
                   ? std::string("no findings")
                   : fmt::format("{} finding{}", findings.size(), findings.size() == 1 ? "" : "s"));
  for (const std::string& x : findings) fmt::print("    {}\n", x);
  for (size_t i = 0; i < v.outputs.size(); ++i) {
    const sweep::OutputCheck& c = v.outputs[i];
    fmt::print(
        "  output {} ({}): {} (max abs error {:.3g}; allowed {}; largest error/allowed "
        "{:.3g}{}){}\n",
        i, c.name, c.cmp.ok ? "ok" : "wrong_result", c.cmp.max_abs_error, c.tol.describe(),
        c.cmp.max_ratio, c.cmp.max_ratio > 0 ? " at " + c.cmp.max_ratio_at : "",
        c.cmp.ok
            ? ""
            : fmt::format(", {} mismatches, first at {}", c.cmp.mismatches, c.cmp.first_mismatch));
  }
}

namespace {

int run_exec_here(const FusionOptions& fo, const ExecOptions& eo) {
  auto backend = sweep::make_backend(eo.backend, eo.cache_dir);
  point::Options po;
  // A plugin schedules for the device that will run the kernel.
  if (sweep::is_cuda(*backend)) po.device = runtime::cuda_device_properties();
  po.sanitize = eo.sanitize;
  po.tolerance = eo.tolerance();
  po.cache_dir = eo.cache_dir;
  Loaded l = load(fo, backend.get(), po);
  point::Point& p = l.point;
  p.run(point::Stage::Schedule, point::Stage::Schedule);
  require_scheduled(p);
  {
    // The reference evaluates an unscheduled copy (see sweep/pipeline/pipeline.h).
    const sweep::BoundFusion& bf = p.fusion();
    frontend::FusionDefinition plain = frontend::load_fusion_file(bf.path);
    std::optional<std::vector<ref::HostTensor>> inputs;
    if (!eo.inputs.empty()) inputs = read_inputs(eo.inputs, *plain.fusion, bf.sizes);
    p.set_reference(point::make_reference(std::move(plain), bf.sizes, eo.seed, fo.fast_math,
                                          std::move(inputs)));
  }
  p.run(point::Stage::Lower, point::Stage::Validate);
  const sweep::BoundFusion& bf = p.fusion();
  const ir::Fusion& f = *bf.def.fusion;
  const point::Result& r = p.result();
  if (p.segmented()) {
    const segment::Segmentation& s = p.segmented()->segmentation;
    fmt::print("{} on {}: sizes {}, {} segment{}\n", f.name(), backend->name(),
               sweep::sizes_str(f, bf.sizes), s.segments.size(), s.segments.size() == 1 ? "" : "s");
    fmt::print("{}", segment_lines(p, "  "));
  } else {
    fmt::print("{} on {}: sizes {}, {}\n", f.name(), backend->name(), sweep::sizes_str(f, bf.sizes),
               launch_str(p.kernel()));
  }
  for (const std::string& line : r.tuned_lines) fmt::print("  {}\n", line);
  const sweep::Validation& v = *r.validation;
  std::vector<std::string> findings;
  for (const runtime::SanitizerFinding& x : r.findings) findings.push_back(x.message());
  print_checks(eo, findings, v);
  const point::Reference& ref = *p.reference();
  // Named after the unscheduled fusion's outputs: the names do not depend on the schedule.
  if (!eo.save_outputs.empty()) save_outputs(eo.save_outputs, *ref.plain, r.outputs, ref.want);
  // Killed or survived, a mutant is no correct result: exit 1 either way
  // (a survivor means the check is too weak; its line says so).
  run_mutations(eo.mutate, *ref.plain, bf.sizes, r.outputs, ref.want, v, eo.tolerance());
  return v.ok && eo.mutate.empty() ? kExitOk : kExitFailures;
}

/// By default (--isolate) the whole of exec (plugin calls, compile, launches,
/// validation and --mutate) runs in a child process. A crash or a hang is
/// reported, naming the plugin call it happened in, and exits 1; the child's
/// user and internal errors come back as such. --no-isolate runs it here,
/// for a debugger.
int run_exec(const FusionOptions& fo, const ExecOptions& eo) {
  for (const std::string& m : eo.mutate) sweep::parse_mutation(m);  // bad kinds before any work
  user_assert(eo.mutate_step.empty() || eo.mesh > 0)
      << "--mutate-step makes a step of a sharded plan wrong; it needs --mesh";
  user_assert(!eo.json || eo.mesh > 0)
      << "--json prints the record of a sharded point; it needs --mesh";
  user_assert((eo.warmup == 0 && eo.reps == 1 && eo.device.empty()) || eo.mesh > 0)
      << "--warmup, --reps and --device time and predict a sharded point; they need --mesh";
  if (eo.mesh > 0) return run_exec_mesh(fo, eo);
  if (!eo.isolate) {
    start_exec_watchdog(eo.timeout_s);
    return run_exec_here(fo, eo);
  }
  const std::chrono::milliseconds limit =
      eo.timeout_s > 0 ? std::chrono::milliseconds(static_cast<int64_t>(eo.timeout_s * 1000))
                       : std::chrono::hours(24 * 365);  // --timeout 0: none
  isolate::Outcome out = isolate::run_isolated(
      [&] {
        // The child's error frame carries a UserError's text, not its type:
        // a plugin's fault is reported here (stderr is forwarded) and comes
        // back as the exit code main() gives it.
        try {
          return std::to_string(run_exec_here(fo, eo));
        } catch (const plugin::PluginFault& e) {
          fmt::print(stderr, "{}\n", e.what());
          return std::to_string(kExitFailures);
        }
      },
      limit);
  isolate::rethrow_error(out);
  if (!out.ok()) {
    fmt::print(stderr, "error: exec: {}\n", isolate::report(out));
    return kExitFailures;
  }
  return std::stoi(out.payload);
}

}  // namespace

Command add_exec_command(CLI::App& app) {
  auto fo = std::make_shared<FusionOptions>();
  auto eo = std::make_shared<ExecOptions>();
  CLI::App* cmd = app.add_subcommand(
      "exec",
      "Lower, compile and run a (scheduled) fusion once; validate it against the reference");
  fo->add_to(cmd);
  cmd->add_option("--backend", eo->backend, "auto (CUDA when a device answers), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--cache-dir", eo->cache_dir,
                  "Compiled-kernel cache (default $SCHEDLAB_CACHE_DIR or ~/.cache/schedlab)");
  cmd->add_option("--seed", eo->seed, "Seed of the generated inputs")
      ->check(integer_in<uint64_t>(0));
  cmd->add_option("--inputs", eo->inputs,
                  "NumPy .npy files, one per fusion input in order (e.g. x.npy,w.npy), "
                  "instead of generated inputs (a bf16 input: <u2 raw bits, or <f4 rounded)");
  cmd->add_option("--save-outputs", eo->save_outputs,
                  "Directory to write each output to as <name>.npy, and the reference as "
                  "<name>.ref.npy (bf16: its raw bits as <u2, see docs/fusion-text.md)");
  cmd->add_flag("--isolate,!--no-isolate", eo->isolate,
                "Run the plugin calls, the compile and the launches in a child process (the "
                "default): a crash or hang is reported, naming the plugin call, with exit 1 "
                "instead of taking schedlab down. --no-isolate: all in this process (for a "
                "debugger)");
  cmd->add_option("--timeout", eo->timeout_s,
                  "Seconds exec may take (default 120; 0: no limit). Past it exec stops with "
                  "exit 1 (isolated: the child is killed)")
      ->check(finite_number(0, /*inclusive=*/true));
  cmd->add_flag("--sanitize", eo->sanitize,
                "Also run the kernels under the emulation sanitizer (CPU backend): races, "
                "out-of-bounds and uninitialised accesses, divergent barriers; any finding "
                "is printed and exits 1 (docs/sanitizer.md)");
  cmd->add_option("--mutate", eo->mutate,
                  "Make the outputs wrong after the launch, before validation, to test the "
                  "validation itself: zero, scale:F, one:R, swap or nan (repeatable or "
                  "comma-separated: each on its own copy; docs/mutation.md). Exits 1 either "
                  "way: 'wrong_result under mutation ...' when a mutant is killed, 'mutation "
                  "... survived validation' when it is not")
      ->delimiter(',');
  cmd->add_option("--mesh", eo->mesh,
                  "Run on a mesh of N devices, one rank each (docs/multi-device.md): the "
                  "fusion's shard: layouts over [0..N-1], the outputs gathered to rank 0 and "
                  "validated there. Started by hand, exec starts N ranks under mpirun (srun in "
                  "a Slurm job); under a launcher, the world size must be N")
      ->check(integer_in<int>(1));
  cmd->add_flag("--json", eo->json,
                "With --mesh: rank 0 prints one JSON line instead of the text: status, mesh, "
                "the slowest rank and its seconds, every rank's seconds, max_abs_error, error "
                "(a sweep's record of the point)");
  cmd->add_option("--mutate-step", eo->mutate_step,
                  "With --mesh: STEP:KIND makes the values plan step STEP produced on the last "
                  "rank wrong (KIND as --mutate), a wrong local kernel or a wrong collective, to "
                  "test that validation on rank 0 rejects it (exit 1)");
  cmd->add_option("--warmup", eo->warmup,
                  "With --mesh: untimed repetitions of the plan after the validating run "
                  "(default 0)")
      ->check(integer_in<int>(0));
  cmd->add_option("--reps", eo->reps,
                  "With --mesh: timed repetitions of the plan after the warmup (default 1), "
                  "each one every local step's kernels and every communication, the ranks "
                  "aligned by a barrier; a repetition's time is its slowest rank's, the point's "
                  "their median")
      ->check(integer_in<int>(1));
  cmd->add_option("--device", eo->device,
                  "With --mesh: profile every local step's kernels on this device model "
                  "(configs/devices; docs/model.md) and predict the point: their sum plus the "
                  "communications");
  cmd->add_option("--rtol", eo->rtol,
                  "Relative tolerance: validate with |got - want| <= atol + rtol x |want| instead "
                  "of the reference's error bounds (docs/validation.md; --atol alone: rtol 0)")
      ->check(finite_number(0, /*inclusive=*/true));
  cmd->add_option("--atol", eo->atol,
                  "Absolute tolerance, with --rtol (alone: rtol 0) instead of the error bounds")
      ->check(finite_number(0, /*inclusive=*/true));
  return {cmd, [fo, eo] { return run_exec(*fo, *eo); }};
}

}  // namespace schedlab::cli
