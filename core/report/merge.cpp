// Merging the parts of a sweep: see schedlab/report/merge.h.
#include "schedlab/report/merge.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "schedlab/base/error.h"

namespace schedlab::report {

namespace {

/// Where a record came from, for messages: "a.jsonl:3".
struct Origin {
  std::string path;
  int line = 0;
  std::string str() const { return fmt::format("{}:{}", path, line); }
};

std::string sweep_label(const Record& r) {
  return fmt::format(
      "sweep '{}', sweep hash {}", r.sweep,
      r.sweep_hash.empty() ? "none (written before records carried one)" : r.sweep_hash);
}

/// The fields in which two records' JSON differ, in the record's order,
/// without the figures derived from times_us (they differ with it).
std::string differing_fields(const std::string& a, const std::string& b) {
  static const std::set<std::string> derived = {"size_label", "median_us", "q1_us",
                                                "q3_us",      "iqr_us",    "min_us",
                                                "max_us",     "gbps",      "fraction_of_peak"};
  const auto ja = nlohmann::ordered_json::parse(a), jb = nlohmann::ordered_json::parse(b);
  std::string out;
  for (const auto& [k, v] : ja.items())
    if (!derived.count(k) && (!jb.contains(k) || jb[k] != v)) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

MergeResult merge_record_files(const std::vector<std::string>& paths) {
  MergeResult result;
  struct Seen {
    std::string json;
    Origin where;
  };
  std::map<std::string, Seen> by_key;
  std::optional<Record> first;  ///< the first record: the sweep every other must match
  Origin first_at;
  for (const std::string& path : paths) {
    RecordFile file = read_records(path);
    if (file.truncated_tail_bytes > 0) {
      ++result.truncated_parts;
      fmt::print(stderr,
                 "warning: {} ends in a partial record (its writer was killed mid-line); that "
                 "point is missing: run its shard again with --resume, then merge\n",
                 path);
    }
    for (size_t i = 0; i < file.records.size(); ++i) {
      Record& r = file.records[i];
      const Origin at{path, file.lines.at(i)};
      if (!first) {
        first = r;
        first_at = at;
      } else if (r.sweep != first->sweep || r.sweep_hash != first->sweep_hash) {
        user_error_at((SourceLoc{path, at.line, 0}))
            << "merge: this record is of " << sweep_label(r) << ", but " << first_at.str()
            << " is of " << sweep_label(*first)
            << "; expected the parts of one sweep (the same sweep file)";
      }
      std::string json = to_json(r);
      auto [it, fresh] = by_key.emplace(r.key, Seen{json, at});
      if (!fresh) {
        if (it->second.json == json) {
          ++result.duplicates;
          continue;
        }
        user_error_at((SourceLoc{path, at.line, 0}))
            << "merge: conflicting records of point " << r.fusion << " " << r.size_label() << " | "
            << r.scheduler << " | " << r.config_label() << " (key " << r.key << "): this one and "
            << it->second.where.str() << " differ in " << differing_fields(it->second.json, json)
            << "; expected one record per point: keep the one you trust (or re-run the point) "
               "and merge again";
      }
      result.records.push_back(std::move(r));
    }
  }
  return result;
}

void write_records(const std::string& path, const std::vector<Record>& records) {
  const std::filesystem::path target(path);
  std::error_code ec;
  if (!target.parent_path().empty()) std::filesystem::create_directories(target.parent_path(), ec);
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    user_assert(out.good()) << "cannot write '" << tmp << "': " << std::strerror(errno);
    for (const Record& r : records) out << to_json(r) << '\n';
    out.flush();
    user_assert(out.good()) << "cannot write '" << tmp << "': " << std::strerror(errno);
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    user_error << "cannot write '" << path << "': " << ec.message();
  }
}

}  // namespace schedlab::report
