// schedlab/sweep/shard: a sweep cut into N disjoint, balanced parts, one per
// machine (`run --shard I/N`, one Slurm array task each; docs/cluster.md).
//
// Owns: the shard argument, the machine-independent identity of a point and
// of a (fusion, sizes) group, and which of them belong to a shard.
// May depend on: sweep/spec/spec.h, sweep/search/strategy.h, report (the hash).
// Invariants:
//   - A shard's contents depend only on the sweep (names, sizes, configs),
//     never on the machine, the plugin binaries or the run: every machine
//     computes the same cut. Units are dealt round-robin in the order of a
//     stable hash of their identity, so the N parts differ in size by at most
//     one unit and together hold each unit exactly once.
//   - The unit is a point for grid and random search, which fix their points
//     up front, and a whole (fusion, sizes) group for every other strategy
//     (shards_by_group): an adaptive search learns from its group's outcomes,
//     so it must stay on one machine. It shares what it learns with the
//     searches of its scheduler on the same shard only (SearchFamily): an
//     adaptive sweep cut into N shards proposes as that cut always does,
//     not as the whole sweep on one machine.
//   - An A/B twin ("NAME@old") is the same unit as its original, so both are
//     timed in the same interleaved rounds on the same machine.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>

#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/search/strategy.h"

namespace schedlab::sweep {

/// The I-th of N parts (0 <= index < count).
struct Shard {
  size_t index = 0;
  size_t count = 1;
};

/// Parses "I/N" (`--shard`); throws a UserError naming the argument and what
/// was expected ("--shard: expected I/N with 0 <= I < N, found '4/4'").
Shard parse_shard(std::string_view text);

/// Whether `strategy` shards by (fusion, sizes) group rather than by point:
/// every strategy but grid and random.
bool shards_by_group(const StrategySpec& strategy);

/// A point's identity across machines: fusion, sizes by name, scheduler
/// (an A/B twin's is its original's) and configuration.
std::string point_identity(const SweepSpec& spec, const Point& point);
/// A (fusion, sizes) group's identity across machines.
std::string group_identity(const SweepSpec& spec, size_t fusion, size_t sizes);

/// Which points and groups of a sweep one shard runs.
class ShardPlan {
 public:
  /// Cuts `spec` (all of it: --only filters after the cut, so every shard of
  /// a filtered run still agrees on it).
  ShardPlan(const SweepSpec& spec, Shard shard);

  /// Whether the shard runs any point of the (fusion, sizes) group.
  /// `spec` is the sweep being run: the one cut, or that one with A/B twins.
  bool has_group(const SweepSpec& spec, size_t fusion, size_t sizes) const;
  /// Whether the shard runs `point` (of a group it has) of `spec`.
  bool has_point(const SweepSpec& spec, const Point& point) const;
  /// The number of units (points, or groups) dealt to this shard and in all.
  size_t units() const { return mine_.size(); }
  size_t total_units() const { return total_; }
  bool by_group() const { return by_group_; }
  const Shard& shard() const { return shard_; }

 private:
  Shard shard_;
  bool by_group_;
  std::set<std::string> mine_;  ///< identities dealt to this shard
  size_t total_ = 0;
};

}  // namespace schedlab::sweep
