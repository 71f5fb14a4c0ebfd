// `schedlab slurm SWEEP --array N`: the sweep on a Slurm cluster, one shard
// per array task (docs/cluster.md). schedlab schedules nothing itself: it
// writes an sbatch script whose task I runs `schedlab run SWEEP --shard I/N
// --resume` into its own part file, and with --submit --wait hands it to
// sbatch, follows it with squeue, reads each task's end from scontrol (sacct
// where accounting is configured and the controller has forgotten the job),
// and merges the parts.
//
// Requeue and resume: the script asks for --requeue and appends to its logs;
// a task that Slurm requeues (preemption, a node failure, `scontrol
// requeue`) runs the same command again, and --resume keeps every record its
// part already holds (a record is written whole when its point is final), so
// it continues where it was stopped.
#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_checks.h"
#include "command.h"
#include "run_common.h"
#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/report/merge.h"
#include "schedlab/sweep/run/shard.h"
#include "subprocess.h"

namespace schedlab::cli {
namespace {

struct SlurmOptions {
  int64_t array = 0;
  std::string partition, time, account;
  int64_t gpus_per_task = 0;
  bool dry_run = false, submit = false, wait = false;
  std::string script;  ///< where the sbatch script goes; default in the parts directory
};

/// One argument for bash, in single quotes.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string absolute(const std::string& p) {
  return std::filesystem::absolute(p).lexically_normal().string();
}

/// A value that goes on an #SBATCH line, where nothing is quoted.
void check_sbatch_value(const char* what, const std::string& v) {
  user_assert(!v.empty() && v.find_first_of(" \t\r\n'\"\\") == std::string::npos)
      << "slurm: " << what << " goes on an #SBATCH line, which cannot quote; expected no "
      << "spaces or quotes, found '" << v << "'";
}

/// Where the parts of a sweep whose merged results go to `output` live.
std::string parts_dir(const std::string& output) {
  std::filesystem::path p = absolute(output);
  return (p.parent_path() / (p.stem().string() + ".parts")).string();
}

std::string part_file(const std::string& dir, const std::string& task) {
  return dir + "/shard-" + task + ".jsonl";
}

/// The most ranks a point of `spec` runs on (`mesh:`, docs/sweeps.md): 1
/// for a sweep without a mesh dimension.
int largest_mesh(const sweep::SweepSpec& spec) {
  int m = 1;
  for (const sweep::FusionSpec& f : spec.fusions)
    for (int n : f.meshes) m = std::max(m, n);
  return m;
}

/// `ranks`: the largest mesh of the sweep; each task asks for that many
/// Slurm tasks, and a mesh point's exec starts its ranks in the allocation
/// with `srun -n N` (runtime::launcher_command inside a Slurm job).
std::string sbatch_script(const SweepOptions& o, const SlurmOptions& s, const std::string& sweep,
                          const std::string& output, int ranks) {
  const std::string dir = parts_dir(output);
  const std::string cwd = std::filesystem::current_path().string();
  check_sbatch_value("the parts directory", dir);
  check_sbatch_value("the working directory", cwd);
  const std::string self = (std::filesystem::path(base::executable_dir()) / "schedlab").string();
  std::string text = fmt::format(
      "#!/bin/bash\n"
      "# Written by `schedlab slurm`: sweep {sweep} in {n} shards, one per array task.\n"
      "# Each task runs `schedlab run --shard I/{n} --resume` into its own part, so a\n"
      "# requeued task (preempted, a failed node, scontrol requeue) continues where it\n"
      "# stopped. When every task is done:\n"
      "#   schedlab merge {dir}/shard-*.jsonl -o {out}\n"
      "#SBATCH --job-name=schedlab-{name}\n"
      "#SBATCH --array=0-{last}\n"
      "#SBATCH --ntasks={ranks}\n"
      "#SBATCH --requeue\n"
      "#SBATCH --open-mode=append\n"
      "#SBATCH --chdir={cwd}\n"
      "#SBATCH --output={dir}/slurm-%A_%a.out\n",
      fmt::arg("sweep", sweep), fmt::arg("n", s.array), fmt::arg("dir", dir),
      fmt::arg("out", absolute(output)),
      fmt::arg("name", std::filesystem::path(sweep).stem().string()), fmt::arg("last", s.array - 1),
      fmt::arg("cwd", cwd), fmt::arg("ranks", ranks));
  if (ranks > 1)
    text.insert(text.find("#SBATCH --job-name"),
                fmt::format("# Points on a mesh of up to {0} devices: each task holds {0} Slurm "
                            "tasks, and\n# a mesh point of N ranks runs as `srun -n N schedlab "
                            "exec FILE --mesh N`.\n",
                            ranks));
  if (!s.partition.empty()) text += "#SBATCH --partition=" + s.partition + "\n";
  if (!s.account.empty()) text += "#SBATCH --account=" + s.account + "\n";
  if (!s.time.empty()) text += "#SBATCH --time=" + s.time + "\n";
  if (s.gpus_per_task > 0) text += fmt::format("#SBATCH --gpus-per-task={}\n", s.gpus_per_task);
  text += "set -euo pipefail\n";
  text +=
      "echo \"schedlab: array task ${SLURM_ARRAY_TASK_ID} on $(hostname), restart "
      "${SLURM_RESTART_COUNT:-0}\"\n";
  std::vector<std::string> args = {self, "run", sweep};
  for (const std::string& a : o.forwarded_args()) args.push_back(a);
  std::string line = "exec";
  for (const std::string& a : args) line += " " + shell_quote(a);
  line += fmt::format(" --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\"", s.array);
  line += " -o " + shell_quote(dir + "/shard-") + "\"${SLURM_ARRAY_TASK_ID}\"" + "'.jsonl'";
  line += " --resume";
  // Several GPUs a task: one measuring worker on each (run --devices), by
  // the ids Slurm gave the task.
  if (s.gpus_per_task > 1) line += " --devices \"${CUDA_VISIBLE_DEVICES}\"";
  return text + line + "\n";
}

/// One array task as Slurm last described it.
struct TaskState {
  std::string state;  ///< COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  int exit_code = 0;  ///< the script's exit code
  int signal = 0;     ///< the signal that ended it, if any
};

/// "JobState=FAILED ... ExitCode=1:0" per task, from `scontrol -o show job`;
/// empty when the controller does not know the job any more.
std::map<int64_t, TaskState> scontrol_states(const std::string& job) {
  std::map<int64_t, TaskState> tasks;
  ProcessResult r = run_process({"scontrol", "-o", "show", "job", job});
  if (r.status != 0) return tasks;
  static const std::regex task_re(R"(\bArrayTaskId=(\d+)\b)"), state_re(R"(\bJobState=(\S+))"),
      exit_re(R"(\bExitCode=(\d+):(\d+))");
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    std::smatch t, st, ex;
    if (!std::regex_search(line, t, task_re) || !std::regex_search(line, st, state_re)) continue;
    TaskState& ts = tasks[std::stoll(t[1])];
    ts.state = st[1];
    if (std::regex_search(line, ex, exit_re)) {
      ts.exit_code = std::stoi(ex[1]);
      ts.signal = std::stoi(ex[2]);
    }
  }
  return tasks;
}

/// The same from accounting (`sacct`), only where accounting is configured.
std::map<int64_t, TaskState> sacct_states(const std::string& job) {
  std::map<int64_t, TaskState> tasks;
  ProcessResult cfg = run_process({"scontrol", "show", "config"});
  if (cfg.status != 0 || cfg.out.find("accounting_storage/none") != std::string::npos ||
      cfg.out.find("AccountingStorageType") == std::string::npos)
    return tasks;
  ProcessResult r =
      run_process({"sacct", "-n", "-X", "-P", "-j", job, "-o", "JobID,State,ExitCode"});
  static const std::regex line_re(R"(^\d+_(\d+)\|(\S+?)(?: by \d+)?\|(\d+):(\d+)$)");
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    tasks[std::stoll(m[1])] = {m[2], std::stoi(m[3]), std::stoi(m[4])};
  }
  return tasks;
}

/// Waits until no task of `job` is pending, running or requeued, telling
/// what changes on stderr. squeue is polled, with a growing interval: Slurm
/// has no event to wait on that every site allows.
void wait_for(const std::string& job) {
  using namespace std::chrono;
  auto interval = milliseconds(500);
  std::string last;
  for (;;) {
    ProcessResult q = run_process({"squeue", "-h", "-r", "-j", job, "-o", "%T"});
    if (q.status != 0) {
      // The controller already forgot a finished job: squeue says so.
      user_assert(q.err.find("Invalid job id") != std::string::npos)
          << "slurm: squeue failed (exit " << q.status << "): " << q.err;
      return;
    }
    std::map<std::string, int> counts;
    std::stringstream ss(q.out);
    for (std::string st; ss >> st;) ++counts[st];
    if (counts.empty()) return;
    std::string now;
    for (const auto& [st, n] : counts)
      now += fmt::format("{}{} {}", now.empty() ? "" : ", ", n, st);
    if (now != last) fmt::print(stderr, "slurm: job {}: {}\n", job, now);
    last = now;
    std::this_thread::sleep_for(interval);
    interval = std::min<milliseconds>(interval * 3 / 2, seconds(15));
  }
}

int run_slurm(const SweepOptions& o, const SlurmOptions& s) {
  user_assert(!(s.dry_run && s.submit)) << "slurm: --dry-run and --submit exclude each other";
  user_assert(!s.wait || s.submit) << "slurm: --wait waits for a submitted job; add --submit";
  // The sweep is checked here, before any job runs, exactly as `run` checks it.
  plugin::Registry registry(plugin::plugin_search_path(o.plugin_dirs));
  const sweep::SweepSpec spec = sweep::load_sweep_file(o.sweep, o.load_options(registry));
  for (const std::string& name : o.only)
    user_assert(spec.scheduler(name) != nullptr)
        << "--only: sweep '" << spec.name << "' has no scheduler named '" << name << "'";
  const std::string output = o.output_for(spec);
  const std::string sweep = absolute(o.sweep);
  const std::string script = sbatch_script(o, s, sweep, output, largest_mesh(spec));
  const sweep::ShardPlan first(spec, {0, static_cast<size_t>(s.array)});
  if (first.total_units() < static_cast<size_t>(s.array))
    fmt::print(stderr, "note: the sweep has {} {}; {} of the {} tasks get none\n",
               first.total_units(), first.by_group() ? "(fusion, sizes) groups" : "points",
               static_cast<size_t>(s.array) - first.total_units(), s.array);
  if (s.dry_run) {
    fmt::print("{}", script);
    return kExitOk;
  }
  const std::string dir = parts_dir(output);
  std::filesystem::create_directories(dir);
  const std::string script_path = s.script.empty() ? dir + "/" + spec.name + ".sbatch" : s.script;
  write_file(script_path, script);
  if (!s.submit) {
    fmt::print("wrote {}\nsubmit it with: sbatch {}\nthen: schedlab merge {}/shard-*.jsonl -o {}\n",
               script_path, script_path, dir, output);
    return kExitOk;
  }
  ProcessResult sub = run_process({"sbatch", "--parsable", script_path});
  user_assert(sub.status == 0) << "slurm: sbatch " << script_path << " failed (exit " << sub.status
                               << "): " << sub.err << sub.out;
  const std::string job = sub.out.substr(0, sub.out.find_first_of(";\n"));
  fmt::print("submitted job {} ({} array tasks); logs in {}/slurm-{}_<task>.out\n", job, s.array,
             dir, job);
  std::fflush(stdout);  // a log or a test follows the job by it while we wait
  if (!s.wait) {
    fmt::print("when it is done: schedlab merge {}/shard-*.jsonl -o {}\n", dir, output);
    return kExitOk;
  }
  wait_for(job);
  std::map<int64_t, TaskState> states = scontrol_states(job);
  if (states.empty()) states = sacct_states(job);
  // A task is done when its run finished: exit 0, or 1 (its shard ran, and
  // found failing points, which the records say).
  std::vector<std::string> failed;
  std::vector<std::string> parts;
  for (int64_t t = 0; t < s.array; ++t) {
    const std::string part = part_file(dir, std::to_string(t));
    auto it = states.find(t);
    const std::string log = fmt::format("{}/slurm-{}_{}.out", dir, job, t);
    if (it == states.end()) {
      // A task cancelled before it started leaves no record at the
      // controller, nor does one forgotten after MinJobAge.
      failed.push_back(
          fmt::format("task {}: no record of its end (cancelled before it started, "
                      "or forgotten by the controller, and no accounting); log {}",
                      t, log));
    } else if (const TaskState& ts = it->second;
               !(ts.state == "COMPLETED" ||
                 (ts.state == "FAILED" && ts.exit_code == kExitFailures && ts.signal == 0))) {
      failed.push_back(fmt::format("task {}: {} (exit {}{}); log {}", t, ts.state, ts.exit_code,
                                   ts.signal ? fmt::format(", signal {}", ts.signal) : "", log));
    }
    if (std::filesystem::exists(part)) parts.push_back(part);
  }
  for (const std::string& f : failed) fmt::print(stderr, "error: {}\n", f);
  if (parts.empty()) {
    fmt::print(stderr, "error: no task left a results file in {}\n", dir);
    return kExitFailures;
  }
  report::MergeResult m = report::merge_record_files(parts);
  report::write_records(output, m.records);
  print_tables(m.records, spec, o);
  fmt::print("merged {} records from {} of {} tasks into {}\n", m.records.size(), parts.size(),
             s.array, output);
  if (!failed.empty()) {
    fmt::print(stderr,
               "{} of {} tasks failed; their parts resume where they stopped: resubmit with "
               "sbatch {} (or scontrol requeue {}_<task>), then merge again\n",
               failed.size(), s.array, script_path, job);
    return kExitFailures;
  }
  return failures_exit_code(m.records);
}

}  // namespace

Command add_slurm_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto s = std::make_shared<SlurmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Run a sweep on a Slurm cluster: one shard per array task, then merge");
  o->add_to(cmd);
  cmd->add_option("--array", s->array, "Array tasks: the sweep is cut into this many shards")
      ->required()
      ->check(integer_in<int64_t>(1, 100000));
  cmd->add_option("--partition", s->partition, "Slurm partition (sbatch --partition)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return std::regex_match(v, std::regex(R"([A-Za-z0-9_.,-]+)"))
                       ? std::string()
                       : "expected a partition name (letters, digits, _ . , -), "
                         "found '" +
                             v + "'";
          },
          "PARTITION"));
  cmd->add_option("--gpus-per-task", s->gpus_per_task,
                  "GPUs per array task (sbatch --gpus-per-task); with more than one, a "
                  "measuring worker runs on each (run --devices)")
      ->check(integer_in<int64_t>(1, 1024));
  cmd->add_option("--time", s->time,
                  "Time limit per task, as sbatch takes it: MINUTES, MM:SS, HH:MM:SS, D-HH, "
                  "D-HH:MM or D-HH:MM:SS")
      ->check(CLI::Validator(
          [](std::string& v) {
            static const std::regex re(
                R"(\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|UNLIMITED|INFINITE)");
            return std::regex_match(v, re) ? std::string()
                                           : "expected MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                             "D-HH:MM:SS, found '" +
                                                 v + "'";
          },
          "TIME"));
  cmd->add_option("--account", s->account, "Slurm account (sbatch --account)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return std::regex_match(v, std::regex(R"([A-Za-z0-9_.-]+)"))
                       ? std::string()
                       : "expected an account name (letters, digits, _ . -), found '" + v + "'";
          },
          "ACCOUNT"));
  cmd->add_option("--script", s->script,
                  "Write the sbatch script here (default: <output>.parts/<sweep>.sbatch)");
  cmd->add_flag("--dry-run", s->dry_run, "Print the sbatch script; write and submit nothing");
  cmd->add_flag("--submit", s->submit, "Submit the script with sbatch");
  cmd->add_flag("--wait", s->wait,
                "With --submit: wait for every task, report the failed ones by index, and "
                "merge the parts into the output");
  cmd->footer(
      "Without --dry-run or --submit the script is written and its sbatch command printed. "
      "The run options (--cache-dir, --only, --backend, ...) go to every task's run; -o is "
      "the merged file, the parts go to <output>.parts/. docs/cluster.md.");
  return {cmd, [o, s] { return run_slurm(*o, *s); }};
}

}  // namespace schedlab::cli
