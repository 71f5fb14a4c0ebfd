// schedlab/report/merge: the parts of one sweep, run on several machines
// (`run --shard I/N`, Slurm array tasks), joined into one results file
// (`schedlab merge`; docs/cluster.md).
//
// Owns: the checks that make a merged file read as one run: every record
// comes from the same sweep (name and sweep hash), a point recorded twice
// is recorded identically (an exact duplicate, dropped), and two different
// records of one point (the same key) are refused.
// May depend on: report/record.h.
// Invariants: records are never changed, so each keeps its device and host,
// and records of different device types still never share a table (the
// table splits by device fingerprint); the merged order is the parts' order,
// first occurrence first.
#pragma once

#include <string>
#include <vector>

#include "schedlab/report/record.h"

namespace schedlab::report {

struct MergeResult {
  std::vector<Record> records;  ///< the merged records, in the parts' order
  size_t duplicates = 0;        ///< exact duplicates dropped
  size_t truncated_parts = 0;   ///< parts ending in a partial line (a killed writer)
};

/// Reads and merges `paths`. A user error, naming file:line and the point,
/// when two parts come from different sweeps or two records of one point
/// differ; nothing is written by this function.
MergeResult merge_record_files(const std::vector<std::string>& paths);

/// Writes `records` to `path` as JSONL through a temporary file renamed over
/// it, so `path` may be one of the parts and is never left half-written.
void write_records(const std::string& path, const std::vector<Record>& records);

}  // namespace schedlab::report
