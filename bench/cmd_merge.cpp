// `schedlab merge PART.jsonl... -o ALL.jsonl`: the parts of one sweep run on
// several machines (`run --shard I/N`, Slurm array tasks) joined into one
// results file that `report` and `compare` read as one run
// (schedlab/report/merge.h has the rules; docs/cluster.md the workflow).
#include <fmt/core.h>
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <set>

#include "command.h"
#include "schedlab/base/error.h"
#include "schedlab/report/merge.h"

namespace schedlab::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> parts;
  std::string output;
};

int run_merge(const MergeOptions& o) {
  report::MergeResult m = report::merge_record_files(o.parts);
  report::write_records(o.output, m.records);
  std::set<std::string> devices, hosts;
  for (const report::Record& r : m.records) {
    devices.insert(r.device.name);
    hosts.insert(r.host.empty() ? "(unrecorded)" : r.host);
  }
  fmt::print("merged {} records from {} files into {} ({} exact duplicates dropped)\n",
             m.records.size(), o.parts.size(), o.output, m.duplicates);
  if (!m.records.empty())
    fmt::print("devices: {}; hosts: {}\n", fmt::join(devices, ", "), fmt::join(hosts, ", "));
  return kExitOk;
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Join the results files of one sweep's parts (run --shard, Slurm array tasks)");
  cmd->add_option("parts", o->parts, "Results files (JSONL) of the same sweep")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--output,-o", o->output,
                  "The merged results file (may be one of the parts; written whole, then renamed)")
      ->required();
  return {cmd, [o] { return run_merge(*o); }};
}

}  // namespace schedlab::cli
