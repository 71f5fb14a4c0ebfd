// schedlab/sweep: parameter values, configurations and parameter spaces
// (the file format is in docs/sweeps.md).
//
// Owns: the value a sweep gives one parameter, a configuration (one value
// per swept or fixed parameter), and a space: an ordered list of dimensions,
// each a finite list of values, whose points are the cross product.
// May depend on: schedlab/base only; the plugin schema is checked by the
// spec loader (spec.h), not here.
// Invariants: a space's point order is the odometer order of its dimensions
// in file order, the last dimension fastest (itertools.product), so
// point(i) is the same configuration on every run and machine. Values keep
// the text the user wrote, so `settings()` hands the plugin exactly that.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::sweep {

/// One parameter value as a sweep file gives it.
struct Value {
  enum class Kind {
    Int,     ///< an integer (Int params, script placeholders, sizes)
    Float,   ///< a real number (Float params)
    Bool,    ///< true or false (Bool params)
    String,  ///< a choice name, or text for a string parameter
  };
  Kind kind = Kind::Int;
  int64_t i = 0;  ///< Int; Bool as 0 or 1
  double f = 0;   ///< Float
  std::string s;  ///< String

  static Value integer(int64_t v) { return {Kind::Int, v, 0, {}}; }
  static Value real(double v) { return {Kind::Float, 0, v, {}}; }
  static Value boolean(bool v) { return {Kind::Bool, v ? 1 : 0, 0, {}}; }
  static Value string(std::string v) { return {Kind::String, 0, 0, std::move(v)}; }

  /// How `--set key=VALUE` spells it: "128", "0.5", "true", "inner".
  std::string str() const;
  bool operator==(const Value& o) const;
};

/// One value per parameter, by name; the order is the space's (or the
/// file's) so that printing is stable.
struct Config {
  std::vector<std::pair<std::string, Value>> values;

  /// The value of `name`, or null.
  const Value* find(const std::string& name) const;
  /// "block=128, vector=4"; "" for the empty configuration.
  std::string str() const;
  bool empty() const { return values.empty(); }
  bool operator==(const Config& o) const { return values == o.values; }
};

/// One swept parameter and the values it takes, in order, without repeats.
struct Dimension {
  std::string name;           ///< the parameter (or script placeholder)
  std::vector<Value> values;  ///< non-empty
  SourceLoc loc;              ///< the key in the sweep file
};

/// The most points a space may have for its points to be listed (by the
/// grid strategy, or one range); larger spaces can only be sampled.
inline constexpr uint64_t kMaxGridPoints = 1'000'000;

/// The cross product of its dimensions.
struct ParamSpace {
  std::vector<Dimension> dims;  ///< file order; names unique

  /// The number of points, saturating at UINT64_MAX; 1 for no dimension
  /// (the single empty configuration).
  uint64_t size() const;
  /// Point `index` (< size()) in odometer order, last dimension fastest.
  Config point(uint64_t index) const;
};

}  // namespace schedlab::sweep
