// The segmenter: whole fusion first, then greedy acyclic merges of
// expression groups. See schedlab/segment/segment.h.
#include "schedlab/segment/segment.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <unordered_map>

#include "schedlab/base/error.h"
#include "schedlab/ir/frozen.h"

namespace schedlab::segment {

bool Segmentation::complete() const {
  return std::all_of(segments.begin(), segments.end(),
                     [](const SegmentedGroup& s) { return !s.scheduler.empty(); });
}

std::string group_str(const std::vector<const ir::Expr*>& exprs) {
  std::string s = "{";
  for (size_t i = 0; i < exprs.size(); ++i) s += (i ? ", " : "") + exprs[i]->out()->describe();
  return s + "}";
}

namespace {

/// The grouping state: live expressions by topological index, and which
/// group each belongs to (a group is named by its smallest index).
class Grouping {
 public:
  Grouping(const ir::Fusion& f, const ir::SizeBindings& sizes,
           const std::vector<Scheduler>& schedulers, std::vector<Offer>& log)
      : f_(f), sizes_(sizes), schedulers_(schedulers), log_(log) {
    const std::vector<ir::Expr*> live = f.exprs_for_outputs();
    const std::set<const ir::Expr*> live_set(live.begin(), live.end());
    for (const ir::Expr* e : f.exprs())
      if (live_set.count(e)) {
        index_[e] = static_cast<int>(exprs_.size());
        exprs_.push_back(e);
      }
    producers_.resize(exprs_.size());
    consumers_.resize(exprs_.size());
    for (size_t i = 0; i < exprs_.size(); ++i) {
      for (const ir::Val* v : exprs_[i]->inputs()) {
        // Every producer of a live expression is live.
        if (const ir::Expr* d = v->definition()) producers_[i].push_back(index_.at(d));
      }
      for (int p : producers_[i]) consumers_[static_cast<size_t>(p)].insert(static_cast<int>(i));
    }
    for (size_t i = 0; i < exprs_.size(); ++i) {
      group_of_.push_back(static_cast<int>(i));
      members_[static_cast<int>(i)] = {static_cast<int>(i)};
    }
    succ_.resize(exprs_.size());
    pred_.resize(exprs_.size());
    for (size_t i = 0; i < exprs_.size(); ++i)
      for (int c : consumers_[i]) {
        succ_[i].insert(c);
        pred_[static_cast<size_t>(c)].insert(static_cast<int>(i));
      }
  }

  size_t size() const { return exprs_.size(); }

  std::vector<const ir::Expr*> exprs_of(const std::vector<int>& idx) const {
    std::vector<const ir::Expr*> r;
    for (int i : idx) r.push_back(exprs_[static_cast<size_t>(i)]);
    return r;
  }

  /// Offers the union of `idx` to each scheduler in order; the first "yes" wins.
  /// `logged` groups are recorded in the offer after `groups` but not offered.
  Offer offer(Offer::Kind kind, std::vector<std::vector<int>> groups,
              const std::vector<std::vector<int>>& logged = {}) {
    Offer o;
    o.kind = kind;
    std::vector<const ir::Expr*> all;
    for (const auto& g : groups) {
      o.groups.push_back(exprs_of(g));
      all.insert(all.end(), o.groups.back().begin(), o.groups.back().end());
    }
    for (const auto& g : logged) o.groups.push_back(exprs_of(g));
    for (const Scheduler& s : schedulers_) {
      ir::Extraction x = ir::extract(f_, all, f_.name());
      Verdict v = s.accepts(*x.fusion, sizes_);
      if (v.accepted) {
        o.accepted_by = s.name;
        break;
      }
      o.rejections.push_back({s.name, v.reason});
    }
    log_.push_back(o);
    return o;
  }

  /// The greedy merge passes (step 2 of the header).
  void merge_greedily() {
    // "Each union is considered once": a union is named by its two groups,
    // and a group by (smallest index, size). Groups only grow, so a group
    // with the same smallest index and size is the same set, and the two
    // groups of a union are the only split of it into groups. This key costs
    // O(1) where comparing the sorted unions cost O(n). The whole fusion was
    // offered already (step 1): two groups that make it up are not offered.
    std::set<std::array<int, 4>> considered;
    const int n = static_cast<int>(exprs_.size());
    for (bool merged = true; merged;) {
      merged = false;
      for (size_t i = 0; i < exprs_.size(); ++i) {
        for (int p : producers_[i]) {
          const int pg = group_of_[static_cast<size_t>(p)];
          const int cg = group_of_[i];
          if (pg == cg) continue;
          const int ps = static_cast<int>(members_.at(pg).size());
          const int cs = static_cast<int>(members_.at(cg).size());
          if (ps + cs == n) continue;
          if (!considered.insert(std::min(std::array{pg, ps, cg, cs}, std::array{cg, cs, pg, ps}))
                   .second)
            continue;
          if (std::optional<int> via = path_through_third(pg, cg)) {
            Offer o;
            o.kind = Offer::Kind::Cycle;
            o.groups = {exprs_of(members_.at(pg)), exprs_of(members_.at(cg))};
            o.through = exprs_of(members_.at(*via));
            log_.push_back(std::move(o));
            continue;
          }
          Offer o = offer(Offer::Kind::Merge, {members_.at(pg), members_.at(cg)});
          if (o.accepted_by.empty()) continue;
          join(pg, cg, o);
          merged = true;
        }
      }
    }
  }

  /// Step 3: every group no merge was accepted for is offered alone.
  void offer_the_rest() {
    for (auto& [g, m] : members_)
      if (!accepted_.count(g)) {
        Offer o = offer(Offer::Kind::Alone, {m});
        if (!o.accepted_by.empty())
          accepted_[g] = o;
        else
          rejected_[g] = o;
      }
  }

  /// Step 4: a tensor that crosses groups and is made by a chain of
  /// broadcasts (with casts and sets) from a value of its producer's group
  /// moves, chain and all, into the one group that reads it, if both changed
  /// groups are accepted. Tensors in topological order of their definitions.
  void forward_broadcasts() {
    for (size_t t = 0; t < exprs_.size(); ++t) {
      const int pg = group_of_[t];
      std::set<int> readers;  // other groups reading exprs_[t]'s result
      bool read_inside = false;
      for (int c : consumers_[t]) {
        if (group_of_[static_cast<size_t>(c)] == pg)
          read_inside = true;
        else
          readers.insert(group_of_[static_cast<size_t>(c)]);
      }
      // Moving, not duplicating: one reader group, nothing else needs it.
      if (readers.size() != 1 || read_inside || f_.is_output(exprs_[t]->out())) continue;
      const int cg = *readers.begin();
      std::vector<int> chain = broadcast_chain(static_cast<int>(t), pg);
      if (chain.empty()) continue;
      std::sort(chain.begin(), chain.end());
      std::vector<int> remainder, into;
      std::set_difference(members_.at(pg).begin(), members_.at(pg).end(), chain.begin(),
                          chain.end(), std::back_inserter(remainder));
      std::merge(members_.at(cg).begin(), members_.at(cg).end(), chain.begin(), chain.end(),
                 std::back_inserter(into));
      Offer fo = offer(Offer::Kind::Forward, {chain, members_.at(cg)});
      if (fo.accepted_by.empty()) continue;
      Offer ro = offer(Offer::Kind::Remainder, {remainder}, {chain});
      if (ro.accepted_by.empty()) continue;
      // Apply: pg keeps its name (its smallest index precedes the chain);
      // the reader group is renamed by its new smallest index.
      const int ng = into.front();
      members_.erase(cg);
      accepted_.erase(cg);
      rejected_.erase(cg);
      rejected_.erase(pg);
      members_[pg] = std::move(remainder);
      accepted_[pg] = ro;
      for (int i : into) group_of_[static_cast<size_t>(i)] = ng;
      members_[ng] = std::move(into);
      accepted_[ng] = fo;
      rebuild_edges();
    }
  }

  /// Step 5: the groups in topological order, ties by first expression.
  std::vector<int> ordered_groups() const {
    std::map<int, int> indegree;
    for (const auto& [g, m] : members_) indegree[g];
    for (const auto& [g, m] : members_)
      for (int s : succ_[static_cast<size_t>(g)]) ++indegree[s];
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (const auto& [g, d] : indegree)
      if (d == 0) ready.push(g);
    std::vector<int> order;
    while (!ready.empty()) {
      int g = ready.top();
      ready.pop();
      order.push_back(g);
      for (int s : succ_[static_cast<size_t>(g)])
        if (--indegree[s] == 0) ready.push(s);
    }
    internal_assert(order.size() == members_.size()) << "segment: the group graph has a cycle";
    return order;
  }

  std::vector<SegmentedGroup> segments() const {
    std::vector<SegmentedGroup> r;
    for (int g : ordered_groups()) {
      SegmentedGroup s;
      s.exprs = exprs_of(members_.at(g));
      s.fusion = ir::extract(f_, s.exprs, f_.name() + "_s" + std::to_string(r.size()));
      auto it = accepted_.find(g);
      const Offer& o = it != accepted_.end() ? it->second : rejected_.at(g);
      s.scheduler = o.accepted_by;
      s.rejections = o.rejections;
      r.push_back(std::move(s));
    }
    return r;
  }

  /// Makes every live expression one accepted group (step 1 succeeded).
  void accept_whole(const Offer& o) {
    members_.clear();
    for (int& g : group_of_) g = 0;
    members_[0] = all_indices();
    accepted_[0] = o;
    for (auto& s : succ_) s.clear();
    for (auto& p : pred_) p.clear();
  }

  std::vector<int> all_indices() const {
    std::vector<int> all;
    for (size_t i = 0; i < exprs_.size(); ++i) all.push_back(static_cast<int>(i));
    return all;
  }

 private:
  /// The groups that read a result of group g (its edges in the group graph).
  const std::set<int>& successors(int g) const { return succ_[static_cast<size_t>(g)]; }

  /// A group other than `from` and `to` on a path from `from` to `to`: the
  /// merge of the two would then close a cycle through it.
  std::optional<int> path_through_third(int from, int to) const {
    for (int start : successors(from)) {
      if (start == to) continue;
      std::set<int> seen{start};
      std::vector<int> stack{start};
      while (!stack.empty()) {
        int g = stack.back();
        stack.pop_back();
        if (g == to) return start;
        for (int s : successors(g))
          if (seen.insert(s).second) stack.push_back(s);
      }
    }
    return std::nullopt;
  }

  /// The chain that forward_broadcasts() moves for expression t of group pg:
  /// t and the expressions it is made from, back to the first broadcast, each
  /// a broadcast, a cast or a set of pg whose result only the chain reads,
  /// the first broadcast reading a value of pg. Empty when there is none.
  std::vector<int> broadcast_chain(int t, int pg) const {
    std::vector<int> chain;
    size_t through_broadcast = 0;  // chain[0, this) ends at a broadcast
    for (int e = t;;) {
      const ir::Expr* x = exprs_[static_cast<size_t>(e)];
      const bool copy_like =
          x->is<ir::BroadcastOp>() || x->is<ir::CastOp>() ||
          (x->is<ir::LoadStoreOp>() && x->as<ir::LoadStoreOp>()->op() == ir::LoadStoreOpType::Set);
      if (!copy_like || group_of_[static_cast<size_t>(e)] != pg) break;
      if (e != t && (consumers_[static_cast<size_t>(e)] != std::set<int>{chain.back()} ||
                     f_.is_output(x->out())))
        break;
      const std::vector<int>& from = producers_[static_cast<size_t>(e)];
      if (from.size() != 1 || x->inputs().size() != 1) break;
      chain.push_back(e);
      const bool from_pg = group_of_[static_cast<size_t>(from.front())] == pg;
      if (x->is<ir::BroadcastOp>() && from_pg) through_broadcast = chain.size();
      if (!from_pg) break;
      e = from.front();
    }
    chain.resize(through_broadcast);
    return chain;
  }

  /// Recomputes succ_ and pred_ from group_of_.
  void rebuild_edges() {
    for (auto& s : succ_) s.clear();
    for (auto& p : pred_) p.clear();
    for (size_t i = 0; i < exprs_.size(); ++i)
      for (int c : consumers_[i]) {
        const int a = group_of_[i], b = group_of_[static_cast<size_t>(c)];
        if (a == b) continue;
        succ_[static_cast<size_t>(a)].insert(b);
        pred_[static_cast<size_t>(b)].insert(a);
      }
  }

  /// Makes pg and cg one group named by the smaller, accepted by o. Costs
  /// O(size of the smaller group + the edges of both), not O(fusion).
  void join(int pg, int cg, const Offer& o) {
    const int g = std::min(pg, cg), gone = std::max(pg, cg);
    std::vector<int> u;
    u.reserve(members_.at(pg).size() + members_.at(cg).size());
    std::merge(members_.at(pg).begin(), members_.at(pg).end(), members_.at(cg).begin(),
               members_.at(cg).end(), std::back_inserter(u));
    for (int i : members_.at(gone)) group_of_[static_cast<size_t>(i)] = g;
    members_.erase(gone);
    accepted_.erase(gone);
    members_[g] = std::move(u);
    accepted_[g] = o;
    // Edges: gone's become g's; the edge between the two disappears.
    auto& gs = succ_[static_cast<size_t>(g)];
    auto& gp = pred_[static_cast<size_t>(g)];
    for (int s : succ_[static_cast<size_t>(gone)]) {
      pred_[static_cast<size_t>(s)].erase(gone);
      pred_[static_cast<size_t>(s)].insert(g);
      gs.insert(s);
    }
    for (int p : pred_[static_cast<size_t>(gone)]) {
      succ_[static_cast<size_t>(p)].erase(gone);
      succ_[static_cast<size_t>(p)].insert(g);
      gp.insert(p);
    }
    succ_[static_cast<size_t>(gone)].clear();
    pred_[static_cast<size_t>(gone)].clear();
    gs.erase(g);
    gp.erase(g);
  }

  const ir::Fusion& f_;
  const ir::SizeBindings& sizes_;
  const std::vector<Scheduler>& schedulers_;
  std::vector<Offer>& log_;
  std::vector<const ir::Expr*> exprs_;  ///< live expressions, topological
  std::unordered_map<const ir::Expr*, int> index_;
  std::vector<std::vector<int>> producers_;  ///< per expression, operand order
  std::vector<std::set<int>> consumers_;     ///< per expression
  std::vector<int> group_of_;                ///< per expression
  std::map<int, std::vector<int>> members_;  ///< group -> sorted expression indices
  std::map<int, Offer> accepted_;            ///< group -> the offer that was accepted
  std::map<int, Offer> rejected_;            ///< group -> its refused Alone offer
  /// Per group (by name; empty for names no longer in use): the other groups
  /// it has an edge to and from, kept up to date by join().
  std::vector<std::set<int>> succ_, pred_;
};

}  // namespace

Segmentation segment(const ir::Fusion& f, const ir::SizeBindings& sizes,
                     const std::vector<Scheduler>& schedulers) {
  Segmentation s;
  s.fusion = &f;
  for (const Scheduler& sc : schedulers) s.schedulers.push_back(sc.name);
  // The offers extract from f over and over; f does not change meanwhile.
  const ir::FrozenGraph frozen(f);
  Grouping g(f, sizes, schedulers, s.log);
  if (g.size() == 0) return s;  // nothing to compute: outputs are inputs
  Offer whole = g.offer(Offer::Kind::Whole, {g.all_indices()});
  if (!whole.accepted_by.empty()) {
    g.accept_whole(whole);
  } else {
    g.merge_greedily();
    g.offer_the_rest();
    g.forward_broadcasts();
  }
  s.segments = g.segments();
  return s;
}

void require_complete(const Segmentation& s) {
  for (const SegmentedGroup& seg : s.segments) {
    if (!seg.scheduler.empty()) continue;
    std::string reasons;
    for (const Rejection& r : seg.rejections)
      reasons += (reasons.empty() ? "" : "; ") + r.scheduler + ": " + r.reason;
    user_error << "no scheduler accepts " << group_str(seg.exprs) << " of fusion '"
               << s.fusion->name()
               << "': " << (reasons.empty() ? "no schedulers to offer it to" : reasons);
  }
}

std::string print_segmentation(const Segmentation& s) {
  std::ostringstream os;
  std::string names;
  for (const std::string& n : s.schedulers) names += (names.empty() ? "" : ", ") + n;
  os << "Segmentation of " << s.fusion->name() << ": " << s.segments.size() << " segment"
     << (s.segments.size() == 1 ? "" : "s")
     << " (schedulers in priority order: " << (names.empty() ? "none" : names) << ")\n";
  auto tensors = [](const std::vector<const ir::TensorView*>& ts) {
    std::string r;
    for (const ir::TensorView* t : ts) r += (r.empty() ? "" : ", ") + t->describe();
    return r.empty() ? "(none)" : r;
  };
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const SegmentedGroup& seg = s.segments[i];
    os << "segment " << i << ": " << (seg.scheduler.empty() ? "(no scheduler)" : seg.scheduler)
       << " " << group_str(seg.exprs) << "\n";
    os << "  inputs: " << tensors(seg.fusion.original_inputs()) << "\n";
    os << "  outputs: " << tensors(seg.fusion.original_outputs()) << "\n";
  }
  os << "offers:\n";
  for (size_t i = 0; i < s.log.size(); ++i) {
    const Offer& o = s.log[i];
    os << "  " << i + 1 << ". ";
    switch (o.kind) {
      case Offer::Kind::Whole: {
        size_t n = o.groups.front().size();
        os << "whole fusion (" << n << " expression" << (n == 1 ? "" : "s") << ")";
        break;
      }
      case Offer::Kind::Merge:
        os << "merge " << group_str(o.groups[0]) << " into " << group_str(o.groups[1]);
        break;
      case Offer::Kind::Alone:
        os << group_str(o.groups[0]) << " alone";
        break;
      case Offer::Kind::Forward:
        os << "forward " << group_str(o.groups[0]) << " into " << group_str(o.groups[1]);
        break;
      case Offer::Kind::Remainder:
        os << group_str(o.groups[0]) << " after forwarding " << group_str(o.groups[1]);
        break;
      case Offer::Kind::Cycle:
        os << "merge " << group_str(o.groups[0]) << " into " << group_str(o.groups[1])
           << ": refused, it would close a cycle through " << group_str(o.through) << "\n";
        continue;
    }
    os << ": " << (o.accepted_by.empty() ? "rejected" : "accepted by " + o.accepted_by) << "\n";
    for (const Rejection& r : o.rejections) os << "    " << r.scheduler << ": " << r.reason << "\n";
  }
  return os.str();
}

}  // namespace schedlab::segment
