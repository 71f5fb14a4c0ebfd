// A fuzz campaign: cases 0..N-1 over --jobs worker threads, each forking
// its runs, results reported in case order; then, with a keep directory,
// every reported run minimised and written out (schedlab/fuzz/fuzz.h).
//
// Threads only wait here: each worker generates its case, then blocks in
// isolate::run_isolated while a child runs it, so J workers are J children at
// once. isolate is built for that (a pidfd per call; the children make their
// own CPU backend, the plugins were loaded before the first fork).
#include <fmt/core.h>
#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/fuzz.h"

namespace schedlab::fuzz {

Case generate_case(uint64_t seed, uint64_t index) {
  std::mt19937_64 rng = case_rng(seed, index);
  Case c;
  c.index = index;
  c.fusion = generate_fusion(rng, "fuzz_" + std::to_string(index));
  const std::string text = c.fusion.text();
  frontend::FusionDefinition def;
  try {
    def = frontend::parse_fusion_text(text, "fuzz.yaml");
  } catch (const UserError& e) {
    internal_error << "fuzz: case " << index << " of seed " << seed
                   << " is a fusion that does not parse (a generator bug): " << e.what() << "\n"
                   << text;
  }
  c.schedule = generate_schedule(*def.fusion, frontend::bind_sizes(def, {}), rng);
  return c;
}

uint64_t Summary::failures() const {
  uint64_t n = 0;
  for (int c = 0; c < kRunClassCount; ++c)
    if (is_failure(static_cast<RunClass>(c))) n += counts[static_cast<size_t>(c)];
  return n;
}

void Summary::add(const RunOutcome& o) {
  ++counts[static_cast<size_t>(o.cls)];
  killed += o.mutant == Mutant::Killed;
  survived += o.mutant == Mutant::Survived;
  unchanged += o.mutant == Mutant::Unchanged;
}

std::string Summary::line() const {
  std::string r = fmt::format("{} cases:", cases);
  for (int c = 0; c < kRunClassCount; ++c)
    r += fmt::format("{} {} {}", c ? "," : "", counts[static_cast<size_t>(c)],
                     class_name(static_cast<RunClass>(c)));
  if (killed + survived + unchanged > 0)
    r +=
        fmt::format("; mutants: {} killed, {} survived, {} unchanged", killed, survived, unchanged);
  return r;
}

std::string Summary::tensor_core_line() const {
  uint64_t n = 0;
  std::string classes;
  for (int c = 0; c < kRunClassCount; ++c) {
    const uint64_t k = tensor_cores[static_cast<size_t>(c)];
    n += k;
    if (k > 0) classes += fmt::format(", {} {}", k, class_name(static_cast<RunClass>(c)));
  }
  return n == 0 ? "" : fmt::format("tensor-core schedules (fuse_mma + mma_tile): {}{}", n, classes);
}

bool Summary::failed() const {
  return failures() > 0 || survived > 0 || count(RunClass::Unscheduled) * 100 > cases;
}

std::string failure_line(uint64_t index, Path path, const RunOutcome& o) {
  std::string reason = o.reason;
  if (reason.size() > 240) reason = reason.substr(0, 237) + "...";
  return fmt::format("{} case {} ({}): {}", class_name(o.cls), index,
                     path == Path::Schedule ? "schedule" : "segmenter", reason);
}

namespace {

void write_text(const std::filesystem::path& p, const std::string& text, bool append = false) {
  std::ofstream out(p, append ? std::ios::app : std::ios::trunc);
  out << text;
  user_assert(out.good()) << "--keep: cannot write '" << p.string() << "'";
}

/// Runs work(i) for i in 0..n-1 on `jobs` threads.
void parallel_for(uint64_t n, int jobs, const std::function<void(uint64_t)>& work) {
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    for (uint64_t i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(jobs, 1); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

/// Odd cases compile their kernels with dynamic sizes, even ones with the
/// sizes compiled in: both index paths are fuzzed.
bool dynamic_case(uint64_t i) { return i % 2 == 1; }
/// Cases 2 and 3 mod 4 compile f32 math to the hardware approximations:
/// every combination with dynamic sizes, and the fast-math error bounds of
/// the validation are fuzzed too.
bool fast_math_case(uint64_t i) { return i % 4 >= 2; }
/// Cases 2 mod 3 compute half ops natively (`--math native`: __hmul2 and the
/// like); with the two above, every combination recurs every 12 cases.
bool native_half_case(uint64_t i) { return i % 3 == 2; }

/// Both runs of case i; a case the generator cannot produce is internal.
CaseResult run_case(uint64_t seed, uint64_t i, const RunOptions& run) {
  CaseResult r;
  r.index = i;
  try {
    const Case c = generate_case(seed, i);
    const std::string text = c.fusion.text();
    RunOptions o = run;
    o.dynamic_sizes = dynamic_case(i);
    o.fast_math = fast_math_case(i);
    o.native_half_math = native_half_case(i);
    r.tensor_cores = c.schedule.features.count("mma_tile") > 0;
    r.scheduled = run_isolated(text, c.schedule.text(), o);
    r.segmented = run_isolated(text, std::nullopt, o);
  } catch (const std::exception& e) {
    r.scheduled = r.segmented = {RunClass::Internal, e.what()};
  }
  return r;
}

}  // namespace

std::string keep_failure(const std::string& dir, const Failure& f,
                         const std::optional<sweep::Mutation>& mutation) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  user_assert(!ec) << "--keep: cannot create directory '" << dir << "': " << ec.message();
  const bool survived = f.outcome.mutant == Mutant::Survived && mutation;
  const std::string stem =
      fmt::format("{}-{}{}", survived ? "survived" : class_name(f.outcome.cls), f.case_index,
                  f.path == Path::Segmenter ? "-segmenter" : "");
  const fs::path base = fs::path(dir) / stem;
  write_text(base.string() + ".yaml", f.fusion.text());
  std::string cmd = "schedlab exec " + stem + ".yaml";
  if (f.path == Path::Schedule) {
    write_text(base.string() + ".sched", GenSchedule{f.schedule, {}}.text());
    cmd += " --schedule " + stem + ".sched";
  }
  cmd += " --backend cpu";
  if (dynamic_case(f.case_index)) cmd += " --dynamic-sizes";
  if (fast_math_case(f.case_index)) cmd += " --fast-math";
  if (native_half_case(f.case_index)) cmd += " --math native";
  if (f.outcome.cls == RunClass::Racy) cmd += " --sanitize";
  if (survived) cmd += " --mutate " + mutation->str();
  // exec isolates by default: a crash or a hang reproduces as its verdict.
  const std::string line =
      survived ? fmt::format("survived case {} ({}): {}", f.case_index,
                             f.path == Path::Schedule ? "schedule" : "segmenter",
                             f.outcome.mutant_line)
               : failure_line(f.case_index, f.path, f.outcome);
  write_text(fs::path(dir) / "README.md", fmt::format("- {}\n  `{}`\n", line, cmd),
             /*append=*/true);
  return base.string();
}

Summary run_campaign(const CampaignOptions& o) {
  std::vector<uint64_t> indices = o.only;
  if (indices.empty())
    for (uint64_t i = 0; i < o.cases; ++i) indices.push_back(i);
  const uint64_t n = indices.size();
  Summary sum;
  sum.cases = n;
  std::vector<std::optional<CaseResult>> results(n);
  std::mutex mu;
  uint64_t reported = 0;  // results [0, reported) went to on_case
  parallel_for(n, o.jobs, [&](uint64_t k) {
    CaseResult r = run_case(o.seed, indices[k], o.run);
    std::lock_guard<std::mutex> lock(mu);
    results[k] = std::move(r);
    for (; reported < n && results[reported]; ++reported) {
      const CaseResult& done = *results[reported];
      sum.add(done.scheduled);
      sum.add(done.segmented);
      if (done.tensor_cores) ++sum.tensor_cores[static_cast<size_t>(done.scheduled.cls)];
      if (o.on_case) o.on_case(done);
    }
  });
  if (o.keep_dir.empty()) return sum;

  std::vector<Failure> failures, survivors;
  for (const auto& r : results) {
    for (Path path : {Path::Schedule, Path::Segmenter}) {
      const RunOutcome& out = path == Path::Schedule ? r->scheduled : r->segmented;
      const bool survived = out.mutant == Mutant::Survived;
      if (!is_reported(out.cls) && !survived) continue;
      Failure f;
      f.case_index = r->index;
      f.path = path;
      f.outcome = out;
      try {
        const Case c = generate_case(o.seed, r->index);
        f.fusion = c.fusion;
        if (path == Path::Schedule) f.schedule = c.schedule.lines;
      } catch (const std::exception&) {
        continue;  // the generator's own failure: nothing to shrink or keep
      }
      (survived ? survivors : failures).push_back(std::move(f));
    }
  }
  std::filesystem::create_directories(o.keep_dir);
  write_text(std::filesystem::path(o.keep_dir) / "README.md",
             fmt::format("# schedlab fuzz --seed {} --cases {}{}: minimised failures\n\n"
                         "Run each command from this directory.\n\n",
                         o.seed, o.cases,
                         o.only.empty() ? "" : fmt::format(" --only {}", fmt::join(o.only, ","))));
  std::vector<Failure> minimised(failures.size());
  parallel_for(failures.size(), o.jobs, [&](uint64_t k) {
    const Failure& f = failures[k];
    Oracle oracle = [&](const GenFusion& g, const std::vector<std::string>& lines) {
      return run_isolated(g.text(),
                          f.path == Path::Schedule
                              ? std::optional<std::string>(GenSchedule{lines, {}}.text())
                              : std::nullopt,
                          o.run);
    };
    // A hang costs the whole timeout per try.
    const int budget = f.outcome.cls == RunClass::Timeout ? 8 : o.minimise_budget;
    minimised[k] = minimise(f, oracle, budget);
  });
  for (const Failure& m : minimised) {
    const std::string base = keep_failure(o.keep_dir, m);
    if (o.on_kept) o.on_kept(m, base);
  }
  // A surviving mutant is kept whole: shrinking by class (validated) would
  // not keep it surviving.
  for (const Failure& m : survivors) {
    const std::string base = keep_failure(o.keep_dir, m, o.run.mutation);
    if (o.on_kept) o.on_kept(m, base);
  }
  return sum;
}

}  // namespace schedlab::fuzz
