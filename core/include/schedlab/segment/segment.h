// schedlab/segment: splitting a fusion that no single scheduler accepts into
// segments that some scheduler does (docs/segments.md).
//
// Owns: the segmentation algorithm and its record (segments, the scheduler
// chosen for each, and every offer made with every scheduler's reason).
// May depend on: schedlab/base and schedlab/ir only. Schedulers are plain
// callbacks (Scheduler::accepts), so this module knows nothing of plugins;
// the plugin-backed schedulers and running the segments live in
// schedlab/sweep/pipeline/pipeline.h.
//
// The algorithm, deterministic for a given fusion and list of schedulers:
//  1. Offer the whole fusion (its live expressions) to every scheduler, in
//     the list's order (the priority order); the first that accepts takes it.
//  2. Otherwise start from one group per expression and merge greedily.
//     A pass walks the expressions in topological order (Fusion::exprs) and,
//     for each, its operands in order: a producer in another group proposes
//     merging the producer's group into the consumer's. A merge that would
//     close a cycle in the graph of groups (a path between the two through a
//     third group) is refused without asking anyone; otherwise the union is
//     offered and the merge stands only if some scheduler accepts it. Each
//     union is considered once. Passes repeat until one merges nothing.
//  3. Each group never accepted (an expression no merge took in) is offered
//     alone. If no scheduler takes it, the segmentation is incomplete:
//     Segmentation::complete() is false and require_complete() says why.
//  4. Forwarding: a tensor crossing segments that is made by a chain of
//     broadcasts (casts and sets among them) from a value of its producer's
//     segment, and that only one other segment reads, moves there with its
//     chain (broadcasts are cheap to recompute; a segment input should not
//     carry broadcast axes). Both changed segments are offered again; the
//     move stands only if both are accepted. Tensors in topological order.
//  5. Segments come out in a topological order of the group graph (ties by
//     their first expression), which is the order to run them in.
// Invariants: every offer is a fresh ir::extract of the original fusion, so
// no scheduler's inspection can touch the original; a tensor that crosses
// segments is an output of its producer's segment and an input of each
// consumer's, i.e. it goes through global memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "schedlab/ir/extract.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::segment {

/// A scheduler's answer to an offer.
struct Verdict {
  bool accepted = false;
  std::string reason;  ///< why not, when !accepted
};

/// A scheduler as the segmenter sees it.
struct Scheduler {
  std::string name;  ///< printed in the log ("reduction")
  /// Does it take this standalone fusion (a fresh extraction, bound by
  /// `sizes`)? It may inspect the fusion but must not schedule it. An
  /// exception propagates out of segment().
  std::function<Verdict(ir::Fusion& candidate, const ir::SizeBindings& sizes)> accepts;
};

/// One scheduler's "no".
struct Rejection {
  std::string scheduler;
  std::string reason;
};

/// One step of the log: a union offered to the schedulers, or a merge refused.
struct Offer {
  enum class Kind {
    Whole,  ///< the whole fusion (step 1)
    Merge,  ///< the union of two groups (step 2)
    Alone,  ///< a group no merge took in, offered by itself (step 3)
    Cycle,  ///< a merge refused without an offer: it would close a cycle
    /// A broadcast chain crossing segments, with the group that reads it
    /// (step 4): groups = {chain, reader group}; the union is offered.
    Forward,
    /// The producer's group without a chain accepted by the Forward offer
    /// before it: groups = {what is left, chain}; what is left is offered.
    Remainder,
  };
  Kind kind = Kind::Whole;
  /// The groups involved (Merge, Cycle: producer then consumer; otherwise one),
  /// each as its expressions in topological order.
  std::vector<std::vector<const ir::Expr*>> groups;
  std::string accepted_by;            ///< empty when nobody accepted (or Cycle)
  std::vector<Rejection> rejections;  ///< in priority order, up to the one that accepted
  /// Cycle: a group on the path between the two.
  std::vector<const ir::Expr*> through;
};

/// One segment (nvFuser's SegmentedGroup): a group of the original's
/// expressions, its standalone copy, and the scheduler that took it. What
/// that scheduler is handed is the copy (a plugin: as a plugin::HostSegment).
struct SegmentedGroup {
  std::vector<const ir::Expr*> exprs;  ///< the original's, in topological order
  ir::Extraction fusion;               ///< the copy a scheduler schedules and a kernel runs
  std::string scheduler;               ///< who accepted it; empty if nobody
  std::vector<Rejection> rejections;   ///< the schedulers before it that refused it
};

/// The result of segment().
struct Segmentation {
  const ir::Fusion* fusion = nullptr;    ///< the original (must outlive this)
  std::vector<std::string> schedulers;   ///< the names offered to, in priority order
  std::vector<SegmentedGroup> segments;  ///< in the order to run them
  std::vector<Offer> log;                ///< every offer, in the order made
  /// True when every segment has a scheduler.
  bool complete() const;
};

/// Segments `f` (unscheduled; it is not modified) for `schedulers` in
/// priority order; see the top of this header. Extracted fusions are named
/// <f.name()>_s<index> in the result.
Segmentation segment(const ir::Fusion& f, const ir::SizeBindings& sizes,
                     const std::vector<Scheduler>& schedulers);

/// user_error unless s.complete(): names the first segment nobody takes,
/// with each scheduler's reason.
void require_complete(const Segmentation& s);

/// "{T1, T2 (m)}": a group by its expressions' outputs.
std::string group_str(const std::vector<const ir::Expr*>& exprs);
/// The log and the segments, as `schedlab show --segments` prints them
/// (docs/segments.md has the format).
std::string print_segmentation(const Segmentation& s);

}  // namespace schedlab::segment
