// schedlab/report: the sweep record, one per (fusion, size, scheduler,
// config) point, and its JSONL file (docs/reports.md, "The sweep record").
//
// Owns: the record type, its JSON form (schema "schedlab.sweep.v1", one
// object per line), reading and appending JSONL files, and the hashes that
// key a point for resume and caching. May depend on schedlab/base and the
// statistics in schedlab/report/stats.h; nothing from the pipeline, so that
// `compare` and the report renderers read results without a GPU or plugins.
// Invariants: the writer emits a whole line, newline included, in one write,
// so only the last line of a file can be partial (a sweep killed mid-write);
// readers skip exactly that case and reject every other malformed line with
// file:line. Derived figures (median, spread, GB/s, fraction of peak) are
// computed from times_us and bytes_moved, never stored separately, so they
// cannot disagree; the JSON carries them for other tools and readers ignore
// them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/report/stats.h"

namespace schedlab::report {

/// The JSON schema tag every record line carries.
inline constexpr std::string_view kRecordSchema = "schedlab.sweep.v1";

/// What happened to a point. Only Ok points have times.
enum class Status {
  Ok,             ///< validated and benchmarked
  Rejected,       ///< the plugin declined the segment (reason in `error`)
  ScheduleError,  ///< the plugin's schedule raised a user error
  CompileError,   ///< lowering, codegen or compilation failed
  WrongResult,    ///< ran, but the outputs differ from the reference
  Crashed,        ///< the plugin or the kernel crashed
  Timeout,        ///< the point exceeded its time limit
  /// the sanitizer found a race, an out-of-bounds or uninitialised access or
  /// a divergent barrier (runtime/sanitizer.h): wrong_result-class, never timed
  Racy,
  /// the plugin broke the ABI (plugin::PluginFault): an exception through
  /// the C ABI, a status that is no SCHEDLAB_* code, a value out of its
  /// schema. The plugin's failure, not the user's schedule (schedule_error)
  PluginError,
};

/// "ok", "rejected", "schedule_error", "compile_error", "wrong_result",
/// "crashed", "timeout", "racy", "plugin_error".
std::string_view status_name(Status s);
/// The inverse of status_name; nullopt for anything else.
std::optional<Status> parse_status(std::string_view name);

/// The machine the point ran on.
struct Device {
  std::string name;         ///< e.g. "NVIDIA H200" or "cpu (x86_64, 2 cores)"
  std::string backend;      ///< "cpu" or "cuda"
  std::string fingerprint;  ///< identifies device + driver + toolkit; part of the key
  bool emulated = false;    ///< true when the CUDA source ran on the CPU backend
  double peak_gbps = 0;     ///< peak DRAM bandwidth in GB/s (1e9 B/s); 0 when unknown
};

/// The validation criterion a record's outputs passed (ref::Tolerance,
/// docs/validation.md): the reference's error bounds, |got - want| <=
/// factor x bound + floor (JSON {"mode": "error_bound", "factor", "floor"}),
/// or the user's |got - want| <= atol + rtol x |want| ({"mode": "user",
/// "rtol", "atol"}; records written before the mode existed read as this).
struct Tolerance {
  enum class Mode { ErrorBound, User };
  Mode mode = Mode::ErrorBound;
  double factor = 0;  ///< ErrorBound: C
  double floor = 0;   ///< ErrorBound: the first output's dtype floor
  double rtol = 0;    ///< User: relative part
  double atol = 0;    ///< User: absolute part
};

/// Ordered name -> value lists: sizes and configs keep the order the fusion
/// and the plugin schema declare them in, which is the order users read.
using SizeList = std::vector<std::pair<std::string, int64_t>>;
using ConfigList = std::vector<std::pair<std::string, std::string>>;

/// The performance model's prediction for a point's kernel on a device model
/// (docs/model.md). Deterministic: the same kernel predicts the same.
struct Prediction {
  std::string device;          ///< the device model, e.g. "h200"
  double predicted_us = 0;     ///< the roofline's time
  std::string limiter;         ///< "dram", "bank conflicts", "issue", ...
  double bandwidth_fraction = 0;  ///< ideal bytes / predicted time / peak bandwidth
  std::string profile;         ///< the whole profile, a JSON array (model::profiles_json)
  // Compute (issue 36), as predicted_us is; 0 in records written before them.
  double flops = 0;             ///< floating-point operations
  double tensor_us = 0;         ///< mma.sync FLOPs at the device's mma.sync rate
  double compute_fraction = 0;  ///< flops / predicted time / the relevant peak
};

/// One sweep point and its outcome.
struct Record {
  std::string sweep;                    ///< the sweep's name
  std::string fusion;                   ///< the fusion's name
  SizeList sizes;                       ///< bound sizes, in declaration order
  std::string scheduler;                ///< the scheduler's display name in the sweep
  std::string plugin;                   ///< the plugin's own name
  std::string plugin_version;           ///< the plugin's version string
  std::string plugin_hash;              ///< hash of the plugin binary
  ConfigList config;                    ///< parameter name -> formatted value, in schema order
  std::string config_hash;              ///< hash of `config` (config_hash())
  std::string kernel_hash;              ///< hash of the generated CUDA source; empty if none
  Device device;                        ///< where it ran
  Status status = Status::Ok;           ///< the outcome
  std::string error;                    ///< the reason or error text when status != Ok
  std::vector<double> times_us;         ///< every repetition's time in microseconds
  int64_t bytes_moved = 0;              ///< bytes read + written by one run; 0 if unknown
  std::optional<double> max_abs_error;  ///< from validation; nullopt if not validated
  Tolerance tolerance;                  ///< the tolerance validation used
  std::optional<Prediction> prediction; ///< the model's, when the sweep profiled the point
  std::string key;                      ///< record_key() of this point
  std::string timestamp;                ///< when it finished, ISO 8601 UTC
  // What the sweep said and how the times were taken (all optional in the
  // JSON: files written before they existed read as the defaults).
  std::string baseline;              ///< the sweep's `baseline:`; "" when it named none
  std::optional<double> min_effect;  ///< the sweep's `measure: min_effect` (0.02 = 2 %)
  /// The interleaved measurement this record's times come from: records with
  /// the same non-empty group took times_us[k] in the same round k (paired).
  std::string group;
  uint64_t seed = 0;  ///< the seed of the group's round orders
  /// The launch configuration, "grid=4x1x1 block=128x1x1 smem=0"; "" if unknown.
  std::string launch;
  /// The benchmark name of the point that was timed for this one (the same
  /// kernel and launch in the same group); "" when it was timed itself.
  std::string same_kernel_as;
  bool reused = false;  ///< the times are an earlier run's (unchanged kernel)
  /// A hash of the sweep file the point came from: parts of one sweep run on
  /// several machines agree on it (`schedlab merge` checks). "" in files
  /// from before it was recorded.
  std::string sweep_hash;
  std::string host;  ///< the machine's host name; "" in files from before it was recorded
  /// The search that proposed the point (optional in the JSON, "search"):
  /// its strategy ("grid", "evolution", ...), what it minimised ("measured",
  /// "predicted", "cpu"), and the point's evaluation number in its search,
  /// from 1 (the x of the best-so-far curve, report/curves.h); 0: unknown.
  std::string strategy;
  std::string objective;
  int64_t evaluation = 0;
  /// The tuned configuration the plugin's compute_params served for this
  /// point (its source, "tuned.yaml:12: softmax N=any K=[4096, 8191]"; JSON
  /// "tuned", optional); "" when it chose by its heuristic.
  std::string tuned;
  /// For a point of a space: what the scheduler itself would choose at this
  /// fusion and sizes, its plugin's compute_params values before the point's
  /// were set (schema order), or its script's params(...) defaults (JSON
  /// search.own_choice, optional). Empty for a heuristic row, which runs it.
  /// The adaptive strategies start from it (StrategySpec::warm_start).
  ConfigList own_choice;
  /// A point of a sweep over meshes (`mesh: [1, 2, 4]`, docs/multi-device.md):
  /// the number of ranks it ran on (JSON "mesh", optional); 0 when the sweep
  /// has no mesh dimension. A mesh point's times are the slowest rank's.
  int mesh = 0;
  /// The predicted time of its communications (model::collective_us summed
  /// over the plan's collectives; JSON "comm_us", optional): 0 on one rank.
  std::optional<double> comm_us;
  /// A mesh point's measured communication time: the median over its
  /// repetitions of the largest time any rank spent in collectives, waiting
  /// for the others included (JSON "comm_measured_us", optional).
  std::optional<double> comm_measured_us;

  /// "N=1024,K=1024", in the order of `sizes` (the fusion's declaration order).
  std::string size_label() const;
  /// The sizes by name, "K=1024,N=1024": what identifies a point's sizes
  /// across files and tables (a mesh point's ends in ",mesh=N": a table row
  /// per mesh). Files written before records kept declaration order list
  /// sizes by name; matching on the key pairs them with new ones.
  std::string size_key() const;
  /// `sizes`, with ("mesh", N) last for a mesh point: what record_key hashes.
  SizeList key_sizes() const;
  /// "block=128,vec=4"; "(defaults)" when the config is empty.
  std::string config_label() const;
  /// Statistics over times_us; only for records with times.
  Summary summary() const;
  /// bytes_moved / median time, in GB/s (1e9 B/s); 0 when unknown.
  double gbps() const;
  /// gbps / device.peak_gbps; nullopt when the peak is unknown, the timings
  /// are CPU emulation, or bytes_moved is unknown.
  std::optional<double> fraction_of_peak() const;
};

/// Whether a and b ran the same kernel: equal non-empty kernel hashes, and
/// equal launch configurations where both are known.
bool same_kernel(const Record& a, const Record& b);
/// Whether a's and b's times are paired: the same interleaved group and as
/// many samples.
bool paired(const Record& a, const Record& b);
/// The smallest change that counts when none is set: 10 % for CPU
/// emulation (timings of a shared host), 2 % on a GPU.
double default_min_effect(const Device& d);
/// r.min_effect, else default_min_effect(r.device).
double min_effect_of(const Record& r);

/// One line of JSON (no trailing newline) in schema kRecordSchema.
std::string to_json(const Record& r);
/// Parses one line; a malformed line is a user error at `where`
/// ("results.jsonl:12: error: ...").
Record record_from_json(std::string_view line, const SourceLoc& where);

/// A JSONL file as read.
struct RecordFile {
  std::vector<Record> records;  ///< in file order
  std::vector<int> lines;       ///< each record's line in the file (1-based)
  /// Bytes of a partial last line that was skipped (a sweep killed while
  /// writing it); 0 when the file ends with a newline.
  size_t truncated_tail_bytes = 0;
  /// Complete lines that are not records (garbage, a hand edit, a record of
  /// an unknown schema): skipped, with a warning on stderr, and left in the
  /// file untouched (kept, never deleted).
  struct SkippedLine {
    int line;
    std::string reason;
  };
  std::vector<SkippedLine> skipped;
};

/// Reads every record of `path`. Blank lines are skipped; a last line without
/// its newline that does not parse is skipped and counted (a killed write);
/// every other bad line is skipped, listed in `skipped` and warned about on
/// stderr ("warning: path:line: skipped a line that is not a record: ...").
/// A file that cannot be read is a user error.
RecordFile read_records(const std::string& path);
/// Appends `r` as one line, written with a single write and flushed.
void append_record(const std::string& path, const Record& r);
/// Cuts a partial last line off `path` (what read_records skipped), so that
/// appending can resume; returns the bytes removed. A missing file is fine.
size_t drop_truncated_tail(const std::string& path);

/// FNV-1a (64 bits) of `data` as 16 hex digits: stable across runs and machines.
std::string hash_hex(std::string_view data);
/// The hash of a config: its name=value pairs in order.
std::string config_hash(const ConfigList& config);
/// The cache/resume key of a point: a hash of the plugin hash, the config
/// hash, the fusion, the sizes (by name, so that their order does not
/// matter) and the device fingerprint.
std::string record_key(std::string_view plugin_hash, std::string_view config_hash,
                       std::string_view fusion, const SizeList& sizes,
                       std::string_view device_fingerprint);
/// The current time as ISO 8601 UTC, "2026-11-30T19:06:06Z".
std::string now_timestamp();

}  // namespace schedlab::report
