// schedlab/sweep/tuned_file: the tuned database. A tuned file keeps, per
// scheduler and (fusion, size bucket), the configuration `schedlab tune`
// chose (tuned.h); `run --tuned`, `exec --tuned` and a sweep's `tuned:`
// offer it to the plugin's compute_params (ABI 1.4, SchedlabParamSet.tuned)
// (docs/tuning.md has the format and an example).
//
// Owns: the tuned file's YAML (schema "schedlab.tuned.v1") both ways and the
// lookup that turns an entry into a plugin::TunedOffer.
// May depend on: schedlab/base, ir (sizes), sweep/spec/bucket.h, plugin (schemas,
// TunedOffer), report (ConfigList), yaml-cpp (privately).
// Invariants: loading a tuned file either returns every entry checked or
// throws a UserError at its file:line:col; writing goes through a temporary
// file and a rename, so a reader never sees half a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/ir/size_expr.h"
#include "schedlab/plugin/host.h"
#include "schedlab/report/record.h"
#include "schedlab/sweep/spec/bucket.h"

namespace schedlab::sweep {

/// One tuned configuration.
struct TunedEntry {
  std::string scheduler;  ///< the sweep scheduler whose search found it
  std::string plugin;     ///< the plugin that serves it (its own name)
  std::string fusion;     ///< the fusion's name
  Bucket bucket;          ///< the sizes it is served at
  report::ConfigList config;  ///< every parameter, name -> value as `--set` takes it
  /// One line per size of the bucket that was measured, in the sweep's
  /// order: the sizes, the objective there and its kernel.
  struct Figure {
    std::string sizes;        ///< "N=1024,K=4096"
    double objective_us = 0;  ///< the objective (median or prediction), microseconds
    double gbps = 0;          ///< bytes moved over the median; 0 when unknown
    std::string kernel_hash;
  };
  std::vector<Figure> figures;
  /// The geometric mean, over the bucket's sizes, of objective / the best
  /// any configuration of this scheduler reached there (1.0: best at every size).
  double relative = 1.0;
  int64_t candidates = 0;  ///< configurations compared
  /// With a timed objective: the configuration with the best geometric mean
  /// when the timings could not tell it from `config`, evaluated earlier
  /// (choose_tuned); empty otherwise.
  report::ConfigList fastest;
  // Provenance.
  std::string objective;  ///< "measured", "predicted", "cpu"
  std::string strategy;   ///< "grid", "evolution", ...
  std::string device;     ///< the device the figures are from
  std::string date;       ///< when `schedlab tune` ran, ISO 8601 UTC
  SourceLoc loc;          ///< where a loaded entry is in its file
};

/// A tuned file.
struct TunedFile {
  std::string path;        ///< as loaded or written
  std::string sweep;       ///< the sweep's name
  std::string sweep_hash;  ///< report::Record::sweep_hash of its records
  std::vector<BucketRule> buckets;  ///< the rules (informative once written)
  std::vector<TunedEntry> entries;

  /// The entries `plugin` serves for `fusion` at `sizes` (all of the
  /// fusion's named sizes bound), best first: those whose bucket contains
  /// every size, by fewest `any` ranges (the most specific), then by the
  /// smallest objective at the figures' geometric mean, then file order.
  std::vector<const TunedEntry*> matches(const std::string& plugin, const std::string& fusion,
                                         const ir::SizeBindings& sizes) const;
  /// The offer for a plugin's compute_params: the first match's
  /// configuration as the plugin's values, and "FILE:LINE: fusion bucket" as
  /// its source; nullopt when nothing matches. user_error naming the entry
  /// when its configuration does not fit the plugin's schema (a plugin
  /// rebuilt with other parameters since the file was written).
  std::optional<plugin::TunedOffer> offer(const plugin::Plugin& p, const std::string& fusion,
                                          const ir::SizeBindings& sizes) const;
  /// Entry e's configuration as p's values: every parameter of p's schema
  /// must be set, and nothing else. user_error at the entry otherwise.
  plugin::ParamValues values_for(const TunedEntry& e, const plugin::Plugin& p) const;
  /// "tuned.yaml:12: softmax N=any K=[4096, 8191]".
  std::string source_of(const TunedEntry& e) const;
};

/// The geometric mean of positive values (0 for none): how entries and
/// configurations are ranked across the sizes of a bucket.
double geomean(const std::vector<double>& xs);

/// The YAML text of a tuned file.
std::string tuned_yaml(const TunedFile& t);
/// Writes it to `path` through a temporary file and a rename, so a reader
/// never sees half a file. user_error when it cannot be written.
void write_tuned_file(const std::string& path, const TunedFile& t);
/// Reads and checks a tuned file: every key, type and bucket, at its
/// file:line:col. user_error when it cannot be read.
TunedFile load_tuned_file(const std::string& path);
/// Parses tuned-file text; `path` names it in diagnostics.
TunedFile parse_tuned_text(const std::string& text, const std::string& path);

}  // namespace schedlab::sweep
