// One mesh fuzz case as one rank, and the campaign over the cases
// (schedlab/fuzz/mesh.h, docs/fuzz.md "Many devices").
//
// A case runs in this process (MPI lives in the process the launcher
// started: no forked child per run, unlike the single-device fuzzer). Each
// rank catches what its run throws and classifies it as the single-device
// runner does (runner.cpp); then the ranks' classes meet through the
// communicator and the worst stands on every rank. A run that hangs in a
// collective (a rank that threw while the others wait) is caught by the
// campaign's watchdog, which ends the rank, and the launcher the job.
#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/mesh.h"
#include "schedlab/lower/communication.h"
#include "schedlab/plugin/host.h"
#include "schedlab/point/sharded.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::fuzz {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Kernel options by case number, as the single-device campaign's
// (campaign.cpp): odd cases dynamic sizes, 2 and 3 mod 4 fast math, 2 mod 3
// native half math.
bool dynamic_case(uint64_t i) { return i % 2 == 1; }
bool fast_math_case(uint64_t i) { return i % 4 >= 2; }
bool native_half_case(uint64_t i) { return i % 3 == 2; }

/// How bad a class is, for the ranks' classes to meet: a failure over an
/// unscheduled run over a refusal over a validation.
int severity(RunClass c) {
  if (is_failure(c)) return 3;
  if (c == RunClass::Unscheduled) return 2;
  if (c == RunClass::Refused) return 1;
  return 0;
}

/// The fuzzer's stage name of a user error a sharded run threw after the
/// plan, from the last stage a local step's point began (runner.cpp's
/// stage_of for the segmenter path).
std::string stage_of(point::Stage s, const std::string& message) {
  switch (s) {
    case point::Stage::Schedule:
      return message.rfind("no scheduler accepts", 0) == 0 ? "segment" : "plugin schedule";
    case point::Stage::Sanitize:
      return "run";
    default:
      return std::string(point::stage_name(s));
  }
}

/// This rank's run of the case (no communication with the other ranks
/// beyond run_sharded's own).
MeshOutcome run_rank(const MeshCase& c, runtime::Communicator& comm, const MeshRunOptions& o) {
  MeshOutcome out;
  std::filesystem::create_directories(o.work_dir);
  const std::string path =
      (std::filesystem::path(o.work_dir) / fmt::format("fuzz_{}.yaml", c.index)).string();
  {
    std::ofstream f(path, std::ios::trunc);
    f << c.text();
    user_assert(f.good()) << "fuzz --mesh: cannot write " << path;
  }
  sweep::BoundFusion bf;
  bf.path = path;
  bf.def = frontend::parse_fusion_text(c.text(), path);
  bf.sizes = frontend::bind_sizes(bf.def, {});
  const ir::DeviceMesh mesh = ir::DeviceMesh::of_size(c.sharding.mesh);
  // The plan first, on its own: its refusal is a user error of the sharding.
  try {
    const lower::ShardedPlan plan = lower::plan_communication(*bf.def.fusion, bf.sizes, mesh);
    for (const lower::PlanStep& s : plan.steps) {
      if (const auto* k = std::get_if<lower::Communication>(&s)) {
        if (k->kind != lower::CollectiveKind::Slice)
          out.collectives.emplace_back(lower::collective_name(k->kind));
      } else {
        ++out.local_steps;
      }
    }
  } catch (const UserError& e) {
    out.plan_refused = true;
    out.outcome = {RunClass::Refused, "plan: " + first_line(e.what())};
    return out;
  }
  auto backend = sweep::make_backend("cpu", o.cache_dir);
  point::ShardedOptions so;
  const bool vary = o.vary_kernel_options;
  so.point.kernel = {vary && dynamic_case(c.index), vary && fast_math_case(c.index), true,
                     vary && native_half_case(c.index)};
  so.point.sanitize = o.sanitize;
  so.point.cache_dir = o.cache_dir;
  so.seed = o.input_seed;
  so.fast_math = vary && fast_math_case(c.index);
  point::Stage stage = point::Stage::Schedule;
  so.point.observer = [&](const point::Event& e, const point::Point&) {
    if (e.begin) stage = e.stage;
    return true;
  };
  try {
    point::ShardedResult r = point::run_sharded(std::move(bf), point::SegmenterRef{o.plugins, nullptr},
                                                mesh, backend.get(), comm, so);
    switch (r.verdict) {
      case point::Verdict::Ok:
        break;
      case point::Verdict::WrongResult:
        out.outcome = {RunClass::Wrong, r.validation ? r.validation->summary()
                                                     : "validation failed on rank 0"};
        return out;
      case point::Verdict::Racy:
        out.outcome = {RunClass::Racy, r.findings.empty() ? "a finding" : r.findings.front()};
        return out;
      case point::Verdict::Rejected:
        out.outcome = {RunClass::Unscheduled, "plugin schedule: " + r.reject_reason};
        return out;
      default:
        out.outcome = {RunClass::Internal, "run_sharded ended without a verdict"};
        return out;
    }
    if (comm.rank() != 0 || !r.validation) return out;
    const sweep::Validation& v = *r.validation;
    out.outcome.max_ratio = v.max_ratio;
    out.outcome.max_ratio_at = v.max_ratio_at;
    if (!o.mutation) return out;
    // As the single-device runner (runner.cpp): mutate rank 0's gathered
    // outputs, validate again.
    std::vector<ref::HostTensor> got = r.outputs;
    const std::vector<ref::HostTensor>& want = r.reference->want;
    const sweep::MutationEffect e = sweep::mutate(*o.mutation, got, want);
    if (e.noop()) {
      out.outcome.mutant = Mutant::Unchanged;
      out.outcome.mutant_line = "mutation " + o.mutation->str() + " changes nothing";
      return out;
    }
    const sweep::MutantVerdict m = sweep::judge_mutant(
        *o.mutation, sweep::validate(*r.reference->plain, r.fusion.sizes, got, want));
    out.outcome.mutant = m.killed ? Mutant::Killed : Mutant::Survived;
    out.outcome.mutant_line = m.line;
  } catch (const plugin::PluginFault& e) {
    out.outcome = {RunClass::Crashed, "a plugin faulted: " + first_line(e.what())};
  } catch (const UserError& e) {
    // A host-compiler failure on generated code is schedlab's bug.
    if (stage == point::Stage::Compile)
      out.outcome = {RunClass::Internal,
                     "the generated kernel does not compile (a codegen bug): " + first_line(e.what())};
    else
      out.outcome = {RunClass::Unscheduled,
                     stage_of(stage, e.message()) + ": " + first_line(e.what())};
  }
  return out;
}

}  // namespace

MeshOutcome run_mesh_case(const MeshCase& c, runtime::Communicator& comm,
                          const MeshRunOptions& o) {
  internal_assert(comm.size() == c.sharding.mesh)
      << "fuzz --mesh: " << comm.size() << " ranks for a mesh of " << c.sharding.mesh;
  MeshOutcome mine;
  try {
    mine = run_rank(c, comm, o);
  } catch (const InternalError& e) {
    mine.outcome = {RunClass::Internal, first_line(e.what())};
  } catch (const std::exception& e) {
    mine.outcome = {RunClass::Internal, first_line(e.what())};
  }
  // The classes meet: "<class index>\t<reason>" from every rank.
  const std::string line = fmt::format("{}\t{}", static_cast<int>(mine.outcome.cls),
                                       first_line(mine.outcome.reason));
  const std::vector<std::vector<std::string>> all = point::all_lines(comm, {line});
  int worst_rank = -1;
  RunClass worst = RunClass::Validated;
  std::string reason;
  for (size_t r = 0; r < all.size(); ++r) {
    internal_assert(all[r].size() == 1) << "fuzz --mesh: rank " << r << " sent no class";
    const std::string& l = all[r][0];
    const size_t tab = l.find('\t');
    const auto cls = static_cast<RunClass>(std::stoi(l.substr(0, tab)));
    if (worst_rank < 0 || severity(cls) > severity(worst)) {
      worst_rank = static_cast<int>(r);
      worst = cls;
      reason = tab == std::string::npos ? "" : l.substr(tab + 1);
    }
  }
  // Every rank ends with the worst class; a rank whose own class it is
  // keeps its own outcome (rank 0's validation, ratio and mutant).
  if (worst != mine.outcome.cls)
    mine.outcome = {worst, worst_rank == 0 ? reason : fmt::format("rank {}: {}", worst_rank, reason)};
  return mine;
}

void MeshSummary::add(const MeshOutcome& o) {
  runs.add(o.outcome);
  if (o.plan_refused) ++plan_refused;
  if (o.outcome.cls != RunClass::Validated) return;
  if (!o.collectives.empty()) ++communicated;
  for (const std::string& k : o.collectives) ++collectives[k];
}

std::string MeshSummary::detail_line() const {
  std::string kinds;
  for (const auto& [k, n] : collectives) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", k, n);
  return fmt::format("with communication: {} validated case{}{}; refused (plan): {}", communicated,
                     communicated == 1 ? "" : "s", kinds.empty() ? "" : " (" + kinds + ")",
                     plan_refused);
}

std::string MeshSummary::line() const {
  std::string l = runs.line();
  const size_t at = l.find(" cases:");
  if (at != std::string::npos) l.replace(at, 7, fmt::format(" cases on {} ranks:", ranks));
  return l;
}

std::string keep_mesh_case(const std::string& dir, const MeshCase& c, const MeshOutcome& o,
                           const std::optional<sweep::Mutation>& mutation, bool sanitize) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  user_assert(!ec) << "--keep: cannot create directory '" << dir << "': " << ec.message();
  const bool survived = o.outcome.mutant == Mutant::Survived && mutation;
  const std::string stem = fmt::format("{}-{}-mesh{}", survived ? "survived" : class_name(o.outcome.cls),
                                       c.index, c.sharding.mesh);
  const fs::path yaml = fs::path(dir) / (stem + ".yaml");
  {
    std::ofstream f(yaml, std::ios::trunc);
    f << c.text();
  }
  std::string cmd = fmt::format("schedlab exec {}.yaml --mesh {} --backend cpu", stem, c.sharding.mesh);
  if (dynamic_case(c.index)) cmd += " --dynamic-sizes";
  if (fast_math_case(c.index)) cmd += " --fast-math";
  if (native_half_case(c.index)) cmd += " --math native";
  if (sanitize || o.outcome.cls == RunClass::Racy) cmd += " --sanitize";
  if (survived) cmd += " --mutate " + mutation->str();
  const std::string line =
      survived ? fmt::format("survived case {} (mesh {}): {}", c.index, c.sharding.mesh,
                             o.outcome.mutant_line)
               : fmt::format("{} case {} (mesh {}): {}", class_name(o.outcome.cls), c.index,
                             c.sharding.mesh, o.outcome.reason);
  std::ofstream readme(fs::path(dir) / "README.md", std::ios::app);
  readme << fmt::format("- {}\n  `{}`\n", line, cmd);
  return yaml.string();
}

MeshSummary run_mesh_campaign(const MeshCampaignOptions& o, runtime::Communicator& comm) {
  std::vector<uint64_t> indices = o.only;
  if (indices.empty())
    for (uint64_t i = 0; i < o.cases; ++i) indices.push_back(i);
  MeshSummary sum;
  sum.ranks = comm.size();
  sum.runs.cases = indices.size();
  if (comm.rank() == 0 && !o.keep_dir.empty()) {
    std::filesystem::create_directories(o.keep_dir);
    std::ofstream readme(std::filesystem::path(o.keep_dir) / "README.md", std::ios::trunc);
    readme << fmt::format(
        "# schedlab fuzz --mesh {} --seed {} --cases {}{}: failing cases, not minimised\n\n"
        "Run each command from this directory.\n\n",
        comm.size(), o.seed, o.cases,
        o.only.empty() ? "" : fmt::format(" --only {}", fmt::join(o.only, ",")));
  }
  // The watchdog: a case past the timeout (a hang in a collective, a
  // kernel that never ends) ends this rank, and the launcher the others.
  std::atomic<int64_t> deadline_ms{0};  // 0: no case running
  std::atomic<uint64_t> running{0};
  std::atomic<bool> done{false};
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::thread watchdog([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const int64_t d = deadline_ms;
      if (d != 0 && now_ms() > d) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "error: fuzz --mesh: rank %d: case %llu ran past --timeout (%g s): a hang "
                     "or a rank that failed alone; stopping the ranks (rerun it with --only %llu)\n",
                     comm.rank(), static_cast<unsigned long long>(running.load()),
                     o.timeout_s, static_cast<unsigned long long>(running.load()));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done = true;
      t.join();
    }
  } join{done, watchdog};
  for (uint64_t i : indices) {
    running = i;
    deadline_ms = now_ms() + static_cast<int64_t>(o.timeout_s * 1000);
    MeshCase c;
    MeshOutcome out;
    bool generated = true;
    try {
      c = generate_mesh_case(o.seed, i, comm.size());
    } catch (const std::exception& e) {
      // The same on every rank (a pure function of the case).
      c.index = i;
      out.outcome = {RunClass::Internal, first_line(e.what())};
      generated = false;
    }
    if (generated) out = run_mesh_case(c, comm, o.run);
    deadline_ms = 0;
    sum.add(out);
    if (comm.rank() != 0) continue;
    if (o.on_case) o.on_case(c, out);
    const bool survived = out.outcome.mutant == Mutant::Survived;
    if (!o.keep_dir.empty() && generated && (is_reported(out.outcome.cls) || survived)) {
      const std::string path = keep_mesh_case(o.keep_dir, c, out, o.run.mutation, o.run.sanitize);
      if (o.on_kept) o.on_kept(c, path);
    }
  }
  return sum;
}

}  // namespace schedlab::fuzz
