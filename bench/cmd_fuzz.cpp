// `schedlab fuzz`: the differential fuzzer (core/fuzz, docs/fuzz.md). Random
// fusions with random schedules, each run with its schedule and through the
// segmenter's built-in plugins on the CPU backend, in forked children; one
// line per failure, a progress line on a terminal, and the summary last.
// Exit 1 when a run was wrong, racy, crashed, internal or timed out, when
// more than 1 % of the cases were unscheduled, or (--mutate) when a mutant of
// a validated run survived validation.
#include <fmt/core.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "cli_checks.h"
#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/fuzz/mesh.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "subprocess.h"


namespace schedlab::cli {
namespace {

struct FuzzOptions {
  uint64_t cases = 100;
  uint64_t seed = 1;
  std::vector<uint64_t> only;
  int jobs = 1;
  bool sanitize = false;
  std::string keep;
  double timeout_s = 60;
  int budget = 150;
  std::string cache_dir;
  std::vector<std::string> plugin_dirs;
  std::string mutate;  ///< --mutate KIND; "" for none
  int mesh = 1;        ///< --mesh N: sharded cases as N ranks (docs/fuzz.md, "Many devices")
};

/// "[120/1000] 231 validated, 7 refused, ..." on a terminal's stderr.
class Progress {
 public:
  explicit Progress(uint64_t total) : total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() { clear(); }
  void update(uint64_t done, const fuzz::Summary& s) {
    if (!enabled_) return;
    std::string line = s.line();
    line = fmt::format("[{}/{}] {}", done, total_, line.substr(line.find(':') + 2));
    if (line.size() > 120) line = line.substr(0, 117) + "...";
    fmt::print(stderr, "\r\033[K{}", line);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  uint64_t total_;
  bool enabled_;
  bool shown_ = false;
};

/// `fuzz --mesh N`: started by hand, N ranks of this command under the
/// launcher; as a rank, every case sharded and run by every rank, rank 0
/// printing (docs/fuzz.md, "Many devices").
int run_fuzz_mesh(const FuzzOptions& o) {
  const std::optional<int> world = runtime::launcher_world_size();
  if (!world) {
    if (!o.keep.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o.keep, ec);
      user_assert(!ec && std::filesystem::is_directory(o.keep))
          << "--keep: cannot create directory '" << o.keep << "'"
          << (ec ? ": " + ec.message() : ": a file of that name exists");
    }
    for (uint64_t i : o.only)
      user_assert(i < o.cases) << "--only: case " << i << " is not among the " << o.cases
                               << " cases of --cases; expected an index below " << o.cases;
    if (!o.mutate.empty()) sweep::parse_mutation(o.mutate);
    std::fflush(stdout);
    return relaunch_as_ranks(o.mesh, "fuzz --mesh");
  }
  std::unique_ptr<runtime::Communicator> comm = runtime::make_mpi_communicator();
  const int rank = comm->rank();
  user_assert(comm->size() == o.mesh)
      << "--mesh " << o.mesh << ": this process was started with " << comm->size() << " rank"
      << (comm->size() == 1 ? "" : "s") << " (mpirun -n or srun -n); expected " << o.mesh;
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  std::vector<std::string> errors;
  fuzz::MeshCampaignOptions c;
  c.run.plugins = sweep::segmenter_plugins(registry, {}, &errors);
  if (rank == 0)
    for (const std::string& e : errors) fmt::print(stderr, "warning: {}\n", e);
  c.cases = o.cases;
  c.only = o.only;
  c.seed = o.seed;
  c.keep_dir = o.keep;
  c.timeout_s = o.timeout_s;
  c.run.cache_dir = o.cache_dir;
  c.run.sanitize = o.sanitize;
  if (!o.mutate.empty()) c.run.mutation = sweep::parse_mutation(o.mutate);
  // Each rank's copy of the case's fusion file (the reference reads it by path).
  const std::filesystem::path work =
      std::filesystem::temp_directory_path() /
      fmt::format("schedlab-fuzz-mesh-{}-rank{}", getpid(), rank);
  c.run.work_dir = work.string();
  std::vector<uint64_t> survivors;
  fuzz::RunOutcome closest;
  uint64_t closest_case = 0;
  c.on_case = [&](const fuzz::MeshCase& mc, const fuzz::MeshOutcome& out) {
    const fuzz::RunOutcome& r = out.outcome;
    if (r.max_ratio > closest.max_ratio) {
      closest = r;
      closest_case = mc.index;
    }
    if (r.mutant == fuzz::Mutant::Survived) {
      survivors.push_back(mc.index);
      fmt::print("survived case {} (mesh {}): {}\n", mc.index, o.mesh, r.mutant_line);
    }
    if (fuzz::is_reported(r.cls)) {
      fmt::print("{} case {} (mesh {}): {}\n", fuzz::class_name(r.cls), mc.index, o.mesh, r.reason);
      // Wrong, racy and crashed cases with what replays them: the fusion
      // with its mesh and shard keys (`schedlab exec F --mesh N`).
      if (r.cls == fuzz::RunClass::Wrong || r.cls == fuzz::RunClass::Racy ||
          r.cls == fuzz::RunClass::Crashed || r.cls == fuzz::RunClass::Internal) {
        fmt::print("  shard declarations: {}", mc.sharding.keys());
        std::istringstream lines(mc.text());
        for (std::string l; std::getline(lines, l);) fmt::print("  | {}\n", l);
      }
    }
    std::fflush(stdout);
  };
  c.on_kept = [&](const fuzz::MeshCase&, const std::string& path) {
    fmt::print("kept {}\n", path);
    std::fflush(stdout);
  };
  fuzz::MeshSummary s = fuzz::run_mesh_campaign(c, *comm);
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  bool failed = s.runs.failed();
  if (rank == 0) {
    if (!survivors.empty()) {
      std::string only;
      for (uint64_t i : survivors) only += (only.empty() ? "" : ",") + std::to_string(i);
      fmt::print("{} mutant{} survived; to rerun those cases: schedlab fuzz --mesh {} --seed {} "
                 "--cases {} --only {} --mutate {}\n",
                 s.runs.survived, s.runs.survived == 1 ? "" : "s", o.mesh, o.seed, o.cases, only,
                 c.run.mutation->str());
    }
    if (closest.max_ratio > 0)
      fmt::print("largest error/allowed of a validated run: {:.3g}, case {}: {}\n",
                 closest.max_ratio, closest_case, closest.max_ratio_at);
    fmt::print("{}\n", s.detail_line());
    fmt::print("{}\n", s.line());
  }
  // Rank 0 alone knows the mutants: its verdict is every rank's exit code,
  // and no rank leaves before rank 0 has printed.
  std::fflush(stdout);
  std::fflush(stderr);
  const bool ok = comm->all(rank == 0 ? !failed : true);
  return ok ? kExitOk : kExitFailures;
}

int run_fuzz(const FuzzOptions& o) {
  if (o.mesh > 1) return run_fuzz_mesh(o);
  if (!o.keep.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.keep, ec);
    user_assert(!ec && std::filesystem::is_directory(o.keep))
        << "--keep: cannot create directory '" << o.keep << "'"
        << (ec ? ": " + ec.message() : ": a file of that name exists");
  }
  // Plugins are loaded here, before the first fork; each child uses them.
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  std::vector<std::string> errors;
  fuzz::CampaignOptions c;
  c.run.plugins = sweep::segmenter_plugins(registry, {}, &errors);
  for (const std::string& e : errors) fmt::print(stderr, "warning: {}\n", e);
  for (uint64_t i : o.only)
    user_assert(i < o.cases) << "--only: case " << i << " is not among the " << o.cases
                             << " cases of --cases; expected an index below " << o.cases;
  c.cases = o.cases;
  c.only = o.only;
  c.seed = o.seed;
  c.jobs = o.jobs;
  c.keep_dir = o.keep;
  c.minimise_budget = o.budget;
  c.run.cache_dir = o.cache_dir;
  c.run.sanitize = o.sanitize;
  c.run.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  if (!o.mutate.empty()) c.run.mutation = sweep::parse_mutation(o.mutate);

  Progress progress(o.only.empty() ? o.cases : o.only.size());
  fuzz::Summary running;
  uint64_t done = 0;
  std::vector<uint64_t> survivors;  // case indices, in order
  // The validated run closest to its tolerance (docs/validation.md).
  fuzz::RunOutcome closest;
  std::string closest_run;
  c.on_case = [&](const fuzz::CaseResult& r) {
    ++done;
    for (auto [path, out] : {std::pair{fuzz::Path::Schedule, &r.scheduled},
                             std::pair{fuzz::Path::Segmenter, &r.segmented}}) {
      running.add(*out);
      if (out->max_ratio > closest.max_ratio) {
        closest = *out;
        closest_run = fmt::format("case {} ({})", r.index,
                                  path == fuzz::Path::Schedule ? "schedule" : "segmenter");
      }
      if (out->mutant == fuzz::Mutant::Survived) {
        if (survivors.empty() || survivors.back() != r.index) survivors.push_back(r.index);
        progress.clear();
        fmt::print("survived case {} ({}): {}\n", r.index,
                   path == fuzz::Path::Schedule ? "schedule" : "segmenter", out->mutant_line);
        std::fflush(stdout);
      }
      if (!fuzz::is_reported(out->cls)) continue;
      progress.clear();
      fmt::print("{}\n", fuzz::failure_line(r.index, path, *out));
      std::fflush(stdout);
    }
    progress.update(done, running);
  };
  c.on_kept = [&](const fuzz::Failure& m, const std::string& base) {
    progress.clear();
    fmt::print("kept {}: {} statement{}, {} schedule line{}\n", base, m.fusion.body.size(),
               m.fusion.body.size() == 1 ? "" : "s", m.schedule.size(),
               m.schedule.size() == 1 ? "" : "s");
  };
  fuzz::Summary s = fuzz::run_campaign(c);
  progress.clear();
  if (!survivors.empty()) {
    std::string only;
    for (uint64_t i : survivors) only += (only.empty() ? "" : ",") + std::to_string(i);
    fmt::print(
        "{} mutant{} survived; to rerun those cases: schedlab fuzz --seed {} --cases {} "
        "--only {} --mutate {}\n",
        s.survived, s.survived == 1 ? "" : "s", o.seed, o.cases, only, c.run.mutation->str());
  }
  if (closest.max_ratio > 0)
    fmt::print("largest error/allowed of a validated run: {:.3g}, {}: {}\n", closest.max_ratio,
               closest_run, closest.max_ratio_at);
  if (!s.tensor_core_line().empty()) fmt::print("{}\n", s.tensor_core_line());
  fmt::print("{}\n", s.line());
  return s.failed() ? kExitFailures : kExitOk;
}

}  // namespace

Command add_fuzz_command(CLI::App& app) {
  auto o = std::make_shared<FuzzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "Differential fuzzing: random fusions with random schedules, each run with its schedule "
      "and through the built-in plugins on the CPU backend, checked against the reference");
  cmd->add_option("--cases", o->cases, "How many cases (each is two runs)")
      ->check(integer_in<uint64_t>(1));
  cmd->add_option("--seed", o->seed, "Seed: the same seed gives the same cases")
      ->check(integer_in<uint64_t>(0));
  cmd->add_option("--only", o->only,
                  "Run only these cases (indices below --cases), e.g. --only 17,204 --keep DIR "
                  "to keep failures a longer run printed")
      ->delimiter(',')
      ->check(integer_in<uint64_t>(0));
  cmd->add_option("--jobs", o->jobs, "Runs at once, each in its own child process")
      ->check(integer_in(1, 256));
  cmd->add_flag("--sanitize", o->sanitize,
                "Also run each scheduled kernel under the CPU backend's emulation sanitizer "
                "(a finding is class `racy`)");
  cmd->add_option("--keep", o->keep,
                  "Minimise every failure and write DIR/<class>-<case>.yaml/.sched and "
                  "DIR/README.md with the command that reproduces each");
  cmd->add_option("--timeout", o->timeout_s, "Seconds one run may take before it is killed")
      ->check(finite_number(0, /*inclusive=*/false));
  cmd->add_option("--budget", o->budget, "With --keep: runs the minimiser may spend per failure")
      ->check(integer_in(1, 100000));
  cmd->add_option("--cache-dir", o->cache_dir,
                  "Compiled-kernel cache (default $SCHEDLAB_CACHE_DIR or ~/.cache/schedlab)");
  add_plugin_dir_option(cmd, o->plugin_dirs);
  cmd->add_option("--mesh", o->mesh,
                  "Shard every case over a mesh of N devices and run it as N ranks (started "
                  "under mpirun by itself): the segmenter's plugins per local step, validated "
                  "on rank 0 (docs/fuzz.md, Many devices)")
      ->check(integer_in(1, 1024));
  cmd->add_option("--mutate", o->mutate,
                  "Also mutate the outputs of every validated run (zero, scale:F, one:R, swap "
                  "or nan, as `exec --mutate`) and validate again; count killed and surviving "
                  "mutants and exit 1 if any survived (docs/mutation.md)");
  return {cmd, [o] { return run_fuzz(*o); }};
}

}  // namespace schedlab::cli
