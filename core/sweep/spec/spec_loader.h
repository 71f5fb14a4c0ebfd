// The sweep file's loader, one class over the file being read (spec.cpp:
// the document, fusions, strategy, validation and measure; spec_schedulers.cpp:
// the schedulers, their spaces and constraints). Internal to core/sweep/spec: the
// public interface is schedlab/sweep/spec/spec.h.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../../base/yaml_reader.h"
#include "schedlab/sweep/spec/spec.h"
#include "bucket_yaml.h"
#include "param_values.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::sweep::detail {

namespace fs = std::filesystem;
using schedlab::kind_name;

inline const std::vector<std::string> kTopKeys = {"sweep",      "description", "fusions",
                                           "schedulers", "strategy",    "baseline",
                                           "validation", "measure",     "backend",
                                           "dynamic_sizes", "fast_math",   "buckets",
                                           "tuned"};
inline const std::vector<std::string> kFusionKeys = {"fusion", "sizes", "mesh"};
inline const std::vector<std::string> kSchedulerKeys = {"name",        "plugin",  "script",
                                                 "space",       "set",     "constraints",
                                                 "fusions",     "fast_math", "file",
                                                 "math"};
inline const std::vector<std::string> kStrategyKeys = {"method", "n",         "budget",
                                                "seed",   "objective", "warm_start"};
inline const std::vector<std::string> kValidationKeys = {"rtol", "atol", "sanitize"};
inline const std::vector<std::string> kMeasureKeys = {"repetitions", "warmup",     "min_time",
                                               "flush_l2",    "min_effect", "seed"};

/// "a, b, c", or "(none)".
std::string join(const std::vector<std::string>& v);
/// "N=8, K=4096" in the fusion's declaration order.
std::string sizes_str(const FusionSpec& f, const ir::SizeBindings& sizes);

class Loader {
 public:
  Loader(const std::string& text, const std::string& path, const LoadOptions& options)
      : r_(text, path), options_(options), dir_(fs::path(path).parent_path()) {
    internal_assert(options_.plugins) << "LoadOptions::plugins is not set";
  }

  SweepSpec run();

 private:
  /// A scalar's text; user_error naming `key` and `expected` otherwise.
  std::string text_of(const YAML::Node& n, const std::string& key, const char* expected) const;
  int64_t int_of(const YAML::Node& n, const std::string& key, int64_t min) const;
  double real_of(const YAML::Node& n, const std::string& key) const;
  /// A percentage in [0, 100), "2%" or 2; returns the fraction (0.02).
  double percent_of(const YAML::Node& n, const std::string& key) const;
  bool bool_of(const YAML::Node& n, const std::string& key) const;
  void require_map(const YAML::Node& n, const std::string& key, const char* example) const;
  void require_list(const YAML::Node& n, const std::string& key, const char* example) const;
  /// A path from the sweep file, relative to the file's directory.
  std::string resolve(const std::string& p) const;

  /// A script path (relative to the sweep file), or a name looked up as
  /// NAME.sched in the schedule directories.
  std::string resolve_script(const std::string& written, const YAML::Node& at) const;

  /// `plugin: python, file: F.py`: the heuristic file (relative to the sweep
  /// file), which the registry serves as a plugin of its own; "" for any
  /// other scheduler (`found`: "plugin: NAME" or "script: FILE"). user_error
  /// at file:line:col for `file:` beside another scheduler, `plugin: python`
  /// without it, or a file that is missing or not a .py.
  std::string resolve_python_file(const YAML::Node& entry, const std::string& found) const;

  // ---- buckets -----------------------------------------------------------------

  /// `buckets:`: each name must be a named size of one of the sweep's fusions.
  void parse_buckets(const YAML::Node& n);

  // ---- strategy, validation, measure ---------------------------------------

  void parse_strategy(const YAML::Node& n);

  void parse_validation(const YAML::Node& n);

  void parse_measure(const YAML::Node& n);

  // ---- fusions and sizes -----------------------------------------------------

  void parse_fusions(const YAML::Node& list);

  int64_t size_value(const YAML::Node& v, const std::string& fusion, const std::string& key);

  /// Adds `given` over the fusion file's defaults, once.
  void bind(FusionSpec& f, const frontend::FusionDefinition& def,
            const std::vector<std::string>& symbols, const ir::SizeBindings& given,
            const SourceLoc& at);

  // ---- schedulers ------------------------------------------------------------

  void parse_schedulers(const YAML::Node& list);

  SchedulerSpec parse_scheduler(const YAML::Node& entry);

  /// The keys of a mapping, for check_keys' duplicate check (the schema check
  /// is ValueReader::param's, which knows the parameters).
  static std::vector<std::string> keys_of(const YAML::Node& map);

  static std::string space_size_str(const ParamSpace& space);

  /// Maps a column of a one-line constraint scalar to the file: a quoted
  /// scalar's text starts one column after its quote.
  ColumnLocator column_locator(const YAML::Node& c) const;

  /// The plugin's schema; its lookup error re-raised at `at`.
  PluginSchema lookup(const std::string& name, const YAML::Node& at, const std::string& context);

  /// Every (fusion, sizes) must leave each scheduler's space some point, and
  /// every constraint must evaluate at every point (no division by zero).
  void check_spaces();

  YamlReader r_;
  const LoadOptions& options_;
  fs::path dir_;
  SweepSpec spec_;
  std::vector<std::vector<std::string>> fusion_symbols_;  ///< per fusion entry
  std::vector<std::string> common_sizes_;                 ///< sizes every fusion has
};

}  // namespace schedlab::sweep::detail
