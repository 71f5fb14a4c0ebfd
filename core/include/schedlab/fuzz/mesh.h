// schedlab/fuzz/mesh: `schedlab fuzz --mesh N` (docs/fuzz.md, "Many
// devices"): the fuzzer's fusions with a random sharding over a mesh of N
// devices, each case run as N ranks by point::run_sharded (segmenter and
// built-in plugins per local step) and validated on rank 0 against the
// unsharded reference.
//
// Owns: the sharding draw (shard_gen.cpp) and one case as one rank, its
// class agreed by every rank, and the campaign over the cases
// (mesh_runner.cpp).
// May depend on: fuzz (the generators, the classes), point (run_sharded),
// lower (plan_communication), runtime (the communicator), frontend.
// Invariants: every rank draws the same case and the same sharding (a pure
// function of (seed, index, N)), calls the communicator in the same order
// and ends every case with the same class: each rank catches its own
// exceptions, then the ranks' classes meet (point::all_lines) and the
// worst wins. The sharding is drawn on a stream of its own, so the
// unsharded fusion of case i is the one `schedlab fuzz` draws (sizes aside:
// a sharded size is sometimes made a multiple of N).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "schedlab/fuzz/fuzz.h"
#include "schedlab/runtime/communicator.h"

namespace schedlab::fuzz {

/// One `shard:` entry: a tensor of the fusion (an input, a body name or an
/// output) and its layout as fusion text writes it: an axis index into the
/// tensor's shape, a size name (`K`), or `replicated`.
struct GenShard {
  std::string tensor;
  std::string layout;
};

/// A case's sharding: the mesh size and the declarations.
struct GenSharding {
  int mesh = 2;
  std::vector<GenShard> shards;
  /// What it exercises: shard_input, shard_two_inputs, shard_body,
  /// shard_output, replicated, reduce_scatter, size_divisible, size_indivisible.
  std::set<std::string> features;
  /// The `mesh:` and `shard:` lines ("mesh: [0, 1]\nshard: {x0: 1}\n").
  std::string keys() const;
};

/// Draws a sharding for `f` on `mesh` ranks from `rng` (the case's own
/// sharding stream): often, when `f` has a live reduction of an input over
/// one axis, that input sharded there and the result on another size (a
/// ReduceScatter); else 1 or 2 inputs sharded on a random named axis, and
/// sometimes a body tensor or an output declared `replicated` or sharded on
/// one of its named sizes (a declaration the fusion text refuses, e.g. a
/// size naming no axis or two, is dropped). Each sharded size is made a
/// multiple of `mesh` three times in four (`f.sizes` changes), and left as
/// drawn otherwise (then plan_communication may refuse it: a user error).
GenSharding generate_sharding(GenFusion& f, int mesh, std::mt19937_64& rng);

/// The fusion YAML of `f` with the sharding's `mesh:` and `shard:` keys:
/// what `schedlab exec F.yaml --mesh N` runs.
std::string sharded_text(const GenFusion& f, const GenSharding& s);

/// Case `index` of `seed` on `mesh` ranks: generate_case's fusion, then a
/// sharding drawn on a stream seeded from that case's own.
struct MeshCase {
  uint64_t index = 0;
  GenFusion fusion;
  GenSharding sharding;
  std::string text() const { return sharded_text(fusion, sharding); }
};
MeshCase generate_mesh_case(uint64_t seed, uint64_t index, int mesh);

/// How one case ended, the same on every rank.
struct MeshOutcome {
  RunOutcome outcome;
  /// Refused by lower::plan_communication (a sharding rule; a user error).
  bool plan_refused = false;
  /// The plan's collectives (allreduce, reduce_scatter, allgather; a Slice
  /// is no communication), by name, as the plan has them.
  std::vector<std::string> collectives;
  int local_steps = 0;
};

/// What a rank's run needs besides the case.
struct MeshRunOptions {
  std::vector<std::shared_ptr<const plugin::Plugin>> plugins;
  std::string cache_dir;
  bool sanitize = false;
  uint64_t input_seed = 1;
  std::optional<sweep::Mutation> mutation;
  /// Where each rank writes the case's fusion file (run_sharded's reference
  /// reads it by path); created if needed.
  std::string work_dir;
  /// Kernel options by case number, as the single-device campaign's.
  bool vary_kernel_options = true;
};

/// Runs `c` as rank comm.rank() of comm.size() (== c.sharding.mesh):
/// plan, then point::run_sharded with the segmenter on the CPU backend.
/// Every rank catches its own exceptions; the ranks' classes then meet and
/// the worst (a failure before a refusal before a validation) is returned
/// on every rank, its reason prefixed with its rank when not rank 0's.
MeshOutcome run_mesh_case(const MeshCase& c, runtime::Communicator& comm,
                          const MeshRunOptions& options);

/// Counts of a mesh campaign (one run per case).
struct MeshSummary {
  Summary runs;
  int ranks = 2;
  uint64_t plan_refused = 0;
  uint64_t communicated = 0;  ///< validated cases whose plan has a collective
  std::map<std::string, uint64_t> collectives;  ///< in validated cases, by kind
  void add(const MeshOutcome& o);
  /// "with communication: K validated cases (allgather 3, allreduce 7, ...); refused (plan): R"
  std::string detail_line() const;
  /// Summary::line() then ", N ranks".
  std::string line() const;
};

struct MeshCampaignOptions {
  uint64_t cases = 100;
  uint64_t seed = 1;
  std::vector<uint64_t> only;
  MeshRunOptions run;
  std::string keep_dir;  ///< rank 0: failures and survivors written here
  /// Seconds one case may take on a rank; past it the rank says so and
  /// exits 1 (the launcher then stops the others: no hang).
  double timeout_s = 60;
  /// Rank 0, in case order.
  std::function<void(const MeshCase&, const MeshOutcome&)> on_case;
  /// Rank 0, each kept file.
  std::function<void(const MeshCase&, const std::string& path)> on_kept;
};

/// Every case as this rank; rank 0's summary (the other ranks' are the same).
MeshSummary run_mesh_campaign(const MeshCampaignOptions& options, runtime::Communicator& comm);

/// Writes DIR/<class>-<case>-mesh<N>.yaml (the fusion with its mesh and
/// shard keys) and DIR/README.md's line with the command that replays it
/// (`schedlab exec F --mesh N --backend cpu ...`); returns the yaml's path.
std::string keep_mesh_case(const std::string& dir, const MeshCase& c, const MeshOutcome& o,
                           const std::optional<sweep::Mutation>& mutation, bool sanitize);

}  // namespace schedlab::fuzz
