// Minimising a failure by delta debugging (schedlab/fuzz/fuzz.h).
//
// ddmin (Zeller and Hildebrandt, "Simplifying and Isolating
// Failure-Inducing Input", 2002) over the units of one part at a time:
// the schedule's lines, the body's statements, the outputs, then each
// size toward 1, 2, 3. When statements go, the schedule's T<n> names of
// unnamed tensors are renumbered to follow their tensors.
// A candidate "still fails" when the oracle gives the
// same class and, for refused/unscheduled runs, the same stage (the word
// after "error: "), so that a plugin's schedule failing in lowering does
// not shrink into "no plugin accepts it". Candidates that are not valid
// fusions (no output left) are rejected without running them.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/ir.h"

namespace schedlab::fuzz {

std::vector<size_t> ddmin(size_t n, const std::function<bool(const std::vector<size_t>&)>& fails,
                          int budget, int* spent) {
  int calls = 0;
  auto test = [&](const std::vector<size_t>& kept) {
    ++calls;
    return fails(kept);
  };
  std::vector<size_t> cur(n);
  std::iota(cur.begin(), cur.end(), size_t{0});
  auto done = [&] {
    if (spent) *spent += calls;
    return cur;
  };
  if (n == 0) return done();
  if (test({})) {
    cur.clear();
    return done();
  }
  size_t parts = 2;
  while (cur.size() >= 2 && calls < budget) {
    const size_t len = cur.size();
    parts = std::min(parts, len);
    bool reduced = false;
    // Chunk i is [i*len/parts, (i+1)*len/parts).
    auto chunk = [&](size_t i, bool complement) {
      std::vector<size_t> r;
      const size_t lo = i * len / parts, hi = (i + 1) * len / parts;
      for (size_t k = 0; k < len; ++k)
        if ((k >= lo && k < hi) != complement) r.push_back(cur[k]);
      return r;
    };
    for (size_t i = 0; i < parts && !reduced && calls < budget; ++i) {
      std::vector<size_t> c = chunk(i, false);
      if (test(c)) {
        cur = std::move(c);
        parts = 2;
        reduced = true;
      }
    }
    for (size_t i = 0; i < parts && !reduced && parts > 2 && calls < budget; ++i) {
      std::vector<size_t> c = chunk(i, true);
      if (test(c)) {
        cur = std::move(c);
        parts = std::max<size_t>(parts - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (parts >= len) break;
    parts = std::min(parts * 2, len);
  }
  // One unit left: the empty set was tried first, so it is minimal.
  return done();
}

namespace {

/// The stage a refused/unscheduled run's diagnostic names after "error: "
/// (runner.cpp puts it there: "fuzz.sched:3:1: error: lower: ..."), else "".
std::string stage_of(const RunOutcome& o) {
  if (o.cls != RunClass::Refused && o.cls != RunClass::Unscheduled) return "";
  const size_t at = o.reason.find("error: ");
  if (at == std::string::npos) return "";
  const size_t start = at + 7;
  return o.reason.substr(start, o.reason.find(':', start) - start);
}

bool same_failure(const RunOutcome& a, const RunOutcome& b) {
  return a.cls == b.cls && stage_of(a) == stage_of(b);
}

/// f with only the statements in `kept` (indices into f.body), less every
/// statement that reads a dropped one, and less the outputs that are gone.
std::optional<GenFusion> keep_statements(const GenFusion& f, const std::vector<size_t>& kept) {
  GenFusion r = f;
  r.body.clear();
  std::set<std::string> gone;
  for (size_t i = 0; i < f.body.size(); ++i) {
    const GenStatement& s = f.body[i];
    const bool reads_gone = std::any_of(s.uses.begin(), s.uses.end(),
                                        [&](const std::string& u) { return gone.count(u) > 0; });
    if (!std::binary_search(kept.begin(), kept.end(), i) || reads_gone)
      gone.insert(s.name);
    else
      r.body.push_back(s);
  }
  r.outputs.clear();
  for (const std::string& o : f.outputs)
    if (!gone.count(o)) r.outputs.push_back(o);
  if (r.outputs.empty()) return std::nullopt;
  return r;
}

/// Where each unnamed tensor T<n> of f's parsed form comes from: the body
/// statement that made it (the first named tensor numbered above it: a
/// statement's tensors are numbered in a row, its result last and named) and
/// how far below that statement's result it is. Empty if f does not parse.
std::map<int, std::pair<std::string, int>> unnamed_origins(const GenFusion& f) {
  std::map<int, std::pair<std::string, int>> r;
  try {
    frontend::FusionDefinition def = frontend::parse_fusion_text(f.text(), "fuzz.yaml");
    std::map<int, std::string> named;
    for (const ir::TensorView* t : def.fusion->tensors())
      if (!t->user_name().empty()) named[t->number()] = t->user_name();
    for (const ir::TensorView* t : def.fusion->tensors()) {
      if (!t->user_name().empty()) continue;
      auto owner = named.upper_bound(t->number());
      if (owner != named.end()) r[t->number()] = {owner->second, owner->first - t->number()};
    }
  } catch (const UserError&) {
  }
  return r;
}

/// The numbers of f's named tensors, by name.
std::map<std::string, int> named_numbers(const GenFusion& f) {
  std::map<std::string, int> r;
  try {
    frontend::FusionDefinition def = frontend::parse_fusion_text(f.text(), "fuzz.yaml");
    for (const ir::TensorView* t : def.fusion->tensors())
      if (!t->user_name().empty()) r[t->user_name()] = t->number();
  } catch (const UserError&) {
  }
  return r;
}

/// `lines` written for `from`, with each T<n> that names an unnamed tensor
/// (a keepdim reduction, say) renumbered to the same tensor of `to`, so
/// that dropping a statement does not point the schedule at another tensor.
std::vector<std::string> renumber(const GenFusion& from, const GenFusion& to,
                                  const std::vector<std::string>& lines) {
  const auto origins = unnamed_origins(from);
  const auto numbers = named_numbers(to);
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string> r;
  for (const std::string& line : lines) {
    std::string out;
    for (size_t i = 0; i < line.size();) {
      size_t j = i + 1;
      while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
      const bool tn = line[i] == 'T' && j > i + 1 && (i == 0 || !ident(line[i - 1])) &&
                      (j == line.size() || !ident(line[j]));
      if (!tn) {
        out += line[i++];
        continue;
      }
      std::string token = line.substr(i, j - i);
      auto o = origins.find(std::stoi(token.substr(1)));
      if (o != origins.end()) {
        auto n = numbers.find(o->second.first);
        if (n != numbers.end()) token = "T" + std::to_string(n->second - o->second.second);
      }
      out += token;
      i = j;
    }
    r.push_back(out);
  }
  return r;
}

/// Drops inputs nothing reads (and that are no output).
GenFusion drop_unused_inputs(GenFusion f) {
  std::set<std::string> read(f.outputs.begin(), f.outputs.end());
  for (const GenStatement& s : f.body) read.insert(s.uses.begin(), s.uses.end());
  std::vector<GenInput> ins;
  for (const GenInput& in : f.inputs)
    if (read.count(in.name)) ins.push_back(in);
  if (!ins.empty()) f.inputs = std::move(ins);
  return f;
}

/// The shrinking loop of one failure; counts oracle calls against the budget.
class Minimiser {
 public:
  Minimiser(const Failure& f, const Oracle& oracle, int budget)
      : best_(f), oracle_(oracle), budget_(budget) {}

  Failure run() {
    // Dead code of the generator's own (never read) and unused inputs first.
    try_candidate(drop_unused_inputs(best_.fusion), best_.schedule);
    for (int round = 0; round < 4 && left() > 0; ++round) {
      const int before = calls_;
      const size_t size = weight();
      shrink_schedule();
      shrink_statements();
      shrink_outputs();
      try_candidate(drop_unused_inputs(best_.fusion), best_.schedule);
      shrink_sizes();
      if (weight() == size && calls_ > before) break;
    }
    return best_;
  }

 private:
  int left() const { return budget_ - calls_; }
  size_t weight() const {
    size_t w = best_.schedule.size() + best_.fusion.body.size() + best_.fusion.outputs.size() +
               best_.fusion.inputs.size();
    for (const auto& [k, v] : best_.fusion.sizes) w += static_cast<size_t>(v);
    return w;
  }

  /// Runs a candidate (once: outcomes are remembered by text); keeps it as
  /// the best when it fails the same way.
  bool try_candidate(const GenFusion& f, const std::vector<std::string>& schedule) {
    const std::string key = f.text() + "\n---\n" + GenSchedule{schedule, {}}.text();
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      if (left() <= 0) return false;
      ++calls_;
      it = memo_.emplace(key, oracle_(f, schedule)).first;
    }
    if (!same_failure(it->second, best_.outcome)) return false;
    best_.fusion = f;
    best_.schedule = schedule;
    best_.outcome = it->second;
    return true;
  }

  /// ddmin over n units of the current best, `make(kept)` building the
  /// candidate (nullopt: not a valid one). Leaves best_ at ddmin's answer.
  template <typename Make>
  void shrink(size_t n, Make make) {
    if (n == 0 || left() <= 0) return;
    const Failure start = best_;
    std::map<std::vector<size_t>, Failure> failing;
    std::vector<size_t> kept = ddmin(
        n,
        [&](const std::vector<size_t>& k) {
          best_ = start;  // every candidate is built from the start
          auto c = make(k);
          if (!c || !try_candidate(c->first, c->second)) return false;
          failing.emplace(k, best_);
          return true;
        },
        // Memo hits cost nothing, and try_candidate refuses new runs past the
        // budget, so ddmin itself needs no limit beyond its own O(n^2) tests.
        1 << 20);
    auto it = failing.find(kept);
    best_ = it == failing.end() ? start : it->second;
  }

  using Candidate = std::optional<std::pair<GenFusion, std::vector<std::string>>>;

  void shrink_schedule() {
    if (best_.path != Path::Schedule) return;
    const std::vector<std::string> lines = best_.schedule;
    shrink(lines.size(), [&](const std::vector<size_t>& kept) -> Candidate {
      std::vector<std::string> s;
      for (size_t i : kept) s.push_back(lines[i]);
      return std::pair{best_.fusion, s};
    });
  }

  void shrink_statements() {
    const GenFusion f = best_.fusion;
    shrink(f.body.size(), [&](const std::vector<size_t>& kept) -> Candidate {
      auto c = keep_statements(f, kept);
      if (!c) return std::nullopt;
      return std::pair{*c, renumber(f, *c, best_.schedule)};
    });
  }

  void shrink_outputs() {
    const GenFusion f = best_.fusion;
    shrink(f.outputs.size(), [&](const std::vector<size_t>& kept) -> Candidate {
      if (kept.empty()) return std::nullopt;
      GenFusion c = f;
      c.outputs.clear();
      for (size_t i : kept) c.outputs.push_back(f.outputs[i]);
      // Statements no output reads any more go too.
      std::set<std::string> live(c.outputs.begin(), c.outputs.end());
      for (auto it = c.body.rbegin(); it != c.body.rend(); ++it)
        if (live.count(it->name)) live.insert(it->uses.begin(), it->uses.end());
      if (best_.path == Path::Schedule) return std::pair{c, best_.schedule};
      std::vector<GenStatement> body;
      for (const GenStatement& s : c.body)
        if (live.count(s.name)) body.push_back(s);
      c.body = std::move(body);
      return std::pair{c, std::vector<std::string>{}};
    });
  }

  void shrink_sizes() {
    for (const auto& [name, value] : Failure(best_).fusion.sizes)
      for (int64_t v : {int64_t{1}, int64_t{2}, int64_t{3}}) {
        if (v >= value) break;
        GenFusion c = best_.fusion;
        c.sizes[name] = v;
        if (try_candidate(c, best_.schedule)) break;
      }
  }

  Failure best_;
  const Oracle& oracle_;
  int budget_;
  int calls_ = 0;
  std::map<std::string, RunOutcome> memo_;
};

}  // namespace

Failure minimise(const Failure& f, const Oracle& oracle, int budget) {
  return Minimiser(f, oracle, budget).run();
}

}  // namespace schedlab::fuzz
