// YAML helpers shared by the YAML file formats (fusion definitions, sweeps,
// tuned files, device models): the one reader of a file's root
// (YamlReader::root_mapping, in yaml_reader.cpp), located keys and scalars.
// Private to libschedlab: only .cpp files include it, since yaml-cpp is a
// private dependency.
//
// Needs: the raw text next to the parsed document, so that positions inside
// scalars map back to the file. Guarantees: every location is the file:line:col
// the user sees in an editor (1-based), and check_keys rejects duplicate and
// unknown keys with a "did you mean" hint.
#pragma once

// GCC 12 reports a false -Wdangling-pointer inside yaml-cpp's inline node code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/base/suggest.h"

namespace schedlab {

inline bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

inline std::optional<int64_t> as_int(const std::string& s) {
  // The whole int64 range; a wider number is nullopt (too_large() says so).
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

/// True for an integer literal that does not fit in int64, for a message
/// better than "not an integer".
inline bool too_large(const std::string& s) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(s[j]))) return false;
  return !as_int(s);
}

inline std::optional<double> as_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

inline std::string kind_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return n.size() == 0 ? "an empty mapping" : "a mapping";
    case YAML::NodeType::Sequence:
      return n.size() == 0 ? "an empty list" : "a list";
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Null:
      return "nothing";
    default:
      return "an undefined node";
  }
}

/// A document's root mapping and where it starts (YamlReader::root_mapping).
struct YamlRoot {
  YAML::Node map;
  SourceLoc top;  ///< the document's first token; line 1, column 1 for an empty document
};

/// The YAML document plus the raw text, for positions.
class YamlReader {
 public:
  YamlReader(std::string text, std::string path) : text_(std::move(text)), path_(std::move(path)) {
    std::istringstream is(text_);
    for (std::string l; std::getline(is, l);) lines_.push_back(l);
  }

  SourceLoc loc(const YAML::Mark& m) const { return {path_, m.line + 1, m.column + 1}; }
  SourceLoc loc(const YAML::Node& n) const { return loc(n.Mark()); }
  const std::string& path() const { return path_; }
  /// The number of lines of the raw text.
  size_t lines() const { return lines_.size(); }
  /// Line `i` (0-based, as in YAML::Mark) of the raw text; "" past the end.
  const std::string& line(int i) const {
    static const std::string kNone;
    return i >= 0 && static_cast<size_t>(i) < lines_.size() ? lines_[static_cast<size_t>(i)]
                                                            : kNone;
  }

  /// Parses the raw text as the root of a file format (yaml_reader.cpp): a
  /// syntax error is a user error at its mark ("invalid YAML: ..."); a root
  /// that is not a mapping, one at the document's first token ("expected
  /// <what>; found <kind>"); then the root's keys are checked against
  /// `allowed` (check_keys, `where` naming the document) and each key of
  /// `required` must be there ("missing required key 'k'", at the top).
  YamlRoot root_mapping(const std::string& what, const std::vector<std::string>& allowed,
                        const std::vector<std::string>& required, const std::string& where) const;

  /// Checks the mapping's keys against `allowed` and for duplicates.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                  const std::string& where) const {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;  // a copy: it-> yields a temporary proxy
      std::string key = k.IsScalar() ? k.Scalar() : "";
      if (auto s = seen.find(key); s != seen.end())
        user_error_at(loc(k)) << "duplicate key '" << key << "' in " << where << " (first at "
                              << loc(s->second).str() << ")";
      seen.emplace(key, k.Mark());
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list, hint = closest_name(key, allowed);
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        user_error_at(loc(k)) << "unknown key '" << key << "' in " << where << "; expected one of "
                              << list << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
      }
    }
  }

 private:
  std::string text_;
  std::string path_;
  std::vector<std::string> lines_;
};

}  // namespace schedlab
