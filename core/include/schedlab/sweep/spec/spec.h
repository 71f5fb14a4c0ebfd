// schedlab/sweep: sweep files (configs/sweeps/*.yaml) parsed into a
// SweepSpec, the plan of a sweep (the format is
// documented with a complete example in docs/sweeps.md).
//
// Owns: the YAML schema of a sweep, and every check that can be made before
// anything runs: keys, types, fusions and their named sizes, plugins and
// their parameter schemas, script placeholders, constraints, the strategy,
// the baseline, and that no scheduler's space is empty at any size.
// May depend on: schedlab/base, ir, frontend (fusion files, schedule
// scripts), plugin (schemas only, through PluginLookup), yaml-cpp.
// Invariants: loading either returns a complete SweepSpec whose every point
// is well-formed against the schemas it was checked with, or throws a
// UserError at the file:line:col of the offending key or value saying what
// was expected and what was found; nothing runs on an error. Relative paths
// in a sweep file (fusion files, scripts, plugin .so files) are relative to
// the sweep file's directory, and the spec holds them resolved.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/ir/size_expr.h"
#include "schedlab/plugin/host.h"
#include "schedlab/sweep/spec/constraint.h"
#include "schedlab/sweep/spec/space.h"
#include "schedlab/sweep/spec/bucket.h"

namespace schedlab::plugin {
class Registry;
}

namespace schedlab::sweep {

/// What the loader needs to know about a plugin.
struct PluginSchema {
  std::string name;                       ///< the plugin's own name
  std::vector<plugin::ParamDesc> params;  ///< its parameter schema
  /// Under --isolate, a plugin that failed while loading (plugin::LoadFault):
  /// why, and the record status its points get ("crashed", "timeout",
  /// "plugin_error"). Empty when it loaded.
  std::string load_failure, load_failure_status;
};
/// Finds a plugin by registry name or .so path; throws a UserError saying
/// why when there is none (the loader re-raises it at the `plugin:` value).
using PluginLookup = std::function<PluginSchema(const std::string& name_or_path)>;
/// A PluginLookup over a real registry: Registry::get for a name, and for a
/// path the plugin already serving that file or Registry::add.
PluginLookup registry_lookup(plugin::Registry& registry);

/// The largest `mesh:` a sweep may ask for (ranks of one point).
inline constexpr int kMaxMesh = 1024;

/// One fusion of the sweep and the sizes it runs at.
struct FusionSpec {
  std::string name;                     ///< the fusion's own name
  std::string path;                     ///< its file, resolved
  /// Each binds every named size; file order, no repeats. With `mesh:`,
  /// each binding once per mesh (the mesh fastest): no (binding, mesh)
  /// repeats.
  std::vector<ir::SizeBindings> sizes;
  /// `mesh: [1, 2, 4]` (docs/multi-device.md): the number of ranks of each
  /// entry of `sizes`, parallel to it; empty when the entry has no `mesh:`.
  std::vector<int> meshes;
  /// The fusion's named sizes in declaration order (Fusion::size_symbols):
  /// the order records and reports list sizes in ("N=32,K=1024").
  std::vector<std::string> size_names;
  SourceLoc loc;                        ///< the entry in the sweep file

  /// The ranks of sizes[z]'s points: 0 without a mesh dimension (one
  /// device, the fusion unsharded), else its `mesh:` value.
  int mesh_of(size_t z) const { return meshes.empty() ? 0 : meshes.at(z); }
  /// Whether the entry has a mesh dimension.
  bool has_mesh() const { return !meshes.empty(); }
};

/// What schedules a scheduler's points (each point gets a point::PluginRef:
/// the plugin, the `script` plugin with the script, or auto's pick).
enum class SchedulerKind {
  Plugin,  ///< `plugin: NAME` or `plugin: FILE.so`
  Script,  ///< `script: FILE`: a schedule script, run by the kScriptPlugin plugin
  Auto,    ///< `plugin: auto`: per point, the first built-in that takes the fusion
};
/// The plugin that runs a sweep's schedule scripts (its records name it).
inline constexpr const char* kScriptPlugin = "script";
/// How sweep files and records spell SchedulerKind::Auto.
inline constexpr const char* kAutoSpelling = "auto";

/// One scheduler: a plugin, a schedule script run by the `script` plugin, or auto.
struct SchedulerSpec {
  std::string name;    ///< display name, unique in the sweep
  SchedulerKind kind = SchedulerKind::Plugin;
  /// The plugin its points load: Plugin: registry name or .so path (resolved);
  /// Script: kScriptPlugin; Auto: "" (picked per point).
  std::string plugin;
  std::string script;  ///< Script: the schedule script (resolved); "" otherwise
  /// The plugin's schema when the sweep was loaded (empty for a script).
  std::vector<plugin::ParamDesc> schema;
  /// The swept parameters (or placeholders); no dimension means one point,
  /// the heuristic's own choice (compute_params) overlaid by `fixed`.
  ParamSpace space;
  Config fixed;                         ///< `set:`, the same for every point
  /// A script's params(...) defaults: its own choice, as compute_params is a
  /// plugin's (the adaptive strategies' warm start). Empty for a plugin.
  Config script_defaults;
  std::vector<Constraint> constraints;  ///< all must hold
  /// `fusions:`, the names of the sweep's fusions it runs on; empty: all.
  std::vector<std::string> fusions;
  /// `fast_math:` (default the sweep's): its kernels compute f32 math through
  /// the hardware approximations, validated with their error bounds
  /// (runtime::KernelOptions::fast_math). The same plugin listed twice, with
  /// and without, compares them side by side.
  bool fast_math = false;
  /// `math: native` (default `default`): its kernels compute f16/bf16 +, -,
  /// *, neg and abs with __hadd2/__hmul2 and the like
  /// (runtime::KernelOptions::native_half_math); the same bits, so the
  /// reference is the same.
  bool native_half_math = false;
  SourceLoc loc;                        ///< the entry in the sweep file
  SourceLoc space_loc;                  ///< `constraints:` or `space:`, for empty-space errors
  /// The plugin failed while loading in an isolated worker (PluginSchema::
  /// load_failure): every point of it is recorded with this status and
  /// message, and its space is not read (there is no schema to read it by).
  std::string load_failure, load_failure_status;

  /// Whether it runs on the fusion called `fusion` (see `fusions`).
  bool applies_to(const std::string& fusion) const;
  /// True when the point is the plugin's compute_params choice plus `fixed`.
  bool uses_heuristic() const { return space.dims.empty(); }
  /// Whether every constraint holds for `config` at `sizes`.
  bool admits(const Config& config, const ir::SizeBindings& sizes) const;
  /// The settings (`--set` style "key=value") a point hands the plugin on top
  /// of its compute_params choice: `fixed`, then `config`. For a script:
  /// "script=<file>" and "args=k=v,k=v" with the placeholder values.
  std::vector<std::string> settings(const Config& config) const;
};

/// How configurations are chosen from each space (strategy.h runs it).
struct StrategySpec {
  enum class Kind {
    Grid,       ///< every point that satisfies the constraints
    Random,     ///< `budget` distinct such points, drawn with `seed`
    Halving,    ///< successive halving over repetitions, from `budget` random points
    Evolution,  ///< mutation and crossover, `budget` evaluations
    Model,      ///< an XGBoost cost model trained online, `budget` evaluations
  };
  /// What an adaptive strategy minimises (grid and random only record it).
  enum class Objective {
    Measured,   ///< the timed median, on whichever backend the sweep runs
    Predicted,  ///< the performance model's prediction (needs a device model)
    Cpu,        ///< the CPU emulation's timed median (the sweep must run on the CPU)
  };
  Kind kind = Kind::Grid;
  /// Random, halving: the points drawn; evolution, model: the evaluations;
  /// per (fusion, sizes, scheduler). 0 for grid. `n:` is random's old name.
  uint64_t budget = 0;
  uint64_t seed = 0;
  Objective objective = Objective::Measured;
  /// Evolution and model: once an outcome says what the scheduler itself
  /// would choose (Outcome::own_choice), propose the point of the space
  /// nearest to it next, unless already proposed. `warm_start: false` turns
  /// it off, to see the search alone.
  bool warm_start = true;
  SourceLoc loc;            ///< the `strategy:` value
  SourceLoc objective_loc;  ///< the `objective:` value, or `loc` when not given

  /// Whether it learns from outcomes (observe), so that its points cannot
  /// be listed before the sweep runs.
  bool adaptive() const { return kind != Kind::Grid && kind != Kind::Random; }
};
std::string_view strategy_name(StrategySpec::Kind kind);
std::string_view objective_name(StrategySpec::Objective objective);

/// `validation:`; an unset tolerance is the reference's per-dtype default.
struct ValidationSpec {
  std::optional<double> rtol;
  std::optional<double> atol;
  /// Validate each kernel under the emulation sanitizer (runtime/sanitizer.h)
  /// the first time it is validated; a finding makes the point `racy`.
  bool sanitize = true;
};

/// `measure:`.
struct MeasureSpec {
  int64_t repetitions = 10;  ///< timed samples per point (Google Benchmark repetitions)
  int64_t warmup = 1;        ///< untimed launches before the first sample
  double min_time = 0;       ///< seconds each sample runs at least; 0: one launch per sample
  bool flush_l2 = true;      ///< on a GPU, evict L2 before each launch (cold-cache timing)
  /// The smallest speedup or slowdown reported as a difference (0.02 = 2 %);
  /// unset: report::default_min_effect of the device (2 % GPU, 10 % CPU).
  std::optional<double> min_effect;
  /// The seed of the interleaved rounds' orders; unset: a fresh one per run
  /// (recorded in every record either way).
  std::optional<uint64_t> seed;
};

enum class Backend { Auto, Cpu, Cuda };
std::string_view backend_name(Backend b);

/// A whole sweep file.
struct SweepSpec {
  std::string name;         ///< `sweep:`, default the file's stem
  std::string description;  ///< may be empty
  std::string path;         ///< the file, as given
  std::vector<FusionSpec> fusions;
  std::vector<SchedulerSpec> schedulers;
  StrategySpec strategy;
  std::string baseline;  ///< a scheduler's name; default the first scheduler
  ValidationSpec validation;
  MeasureSpec measure;
  Backend backend = Backend::Auto;
  /// `dynamic_sizes: true`: kernels read their sizes at run time instead of
  /// having each point's sizes compiled in (runtime::KernelOptions).
  bool dynamic_sizes = false;
  /// `fast_math: true`: every scheduler's default for its own `fast_math`.
  bool fast_math = false;
  /// `buckets:`: how `schedlab tune` groups sizes (tuned.h); a size without
  /// a rule is its own bucket.
  std::vector<BucketRule> buckets;
  /// `tuned:`: a tuned file (resolved) offered to the heuristic rows'
  /// plugins (`run --tuned` overrides it); "" for none.
  std::string tuned;
  SourceLoc tuned_loc;  ///< the `tuned:` value

  /// The scheduler called `name`, or null.
  const SchedulerSpec* scheduler(const std::string& name) const;
};

struct LoadOptions {
  std::vector<std::string> fusion_dirs;    ///< where fusion names are looked up
  std::vector<std::string> schedule_dirs;  ///< where script names (NAME.sched) are looked up
  PluginLookup plugins;                    ///< plugin schemas (required)
};

/// Parses YAML text; `path` names the file in diagnostics and anchors
/// relative paths.
SweepSpec parse_sweep_text(const std::string& text, const std::string& path,
                           const LoadOptions& options);
/// Reads and parses a file. user_error if it cannot be read.
SweepSpec load_sweep_file(const std::string& path, const LoadOptions& options);

}  // namespace schedlab::sweep
