#include "schedlab/report/table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "schedlab/base/error.h"
#include "schedlab/report/verdict.h"

namespace schedlab::report {

namespace {

template <typename T>
size_t index_of(std::vector<T>& v, const T& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) return static_cast<size_t>(it - v.begin());
  v.push_back(x);
  return v.size() - 1;
}

/// Why a scheduler has no ok point here, from its failed records.
std::string why_none(const std::vector<const Record*>& failed) {
  std::map<Status, std::vector<const Record*>> by_status;
  for (const Record* r : failed) by_status[r->status].push_back(r);
  std::string out;
  for (const auto& [status, rs] : by_status) {
    out += out.empty() ? "" : "; ";
    out += std::string(status_name(status));
    if (rs.size() > 1) out += fmt::format(" in {} configs", rs.size());
    if (!rs.front()->error.empty()) out += ": " + rs.front()->error;
  }
  return out;
}

/// Fills `c` from its scheduler's records here; the best is chosen against
/// `ref`, the baseline's best (null for the baseline itself): by the
/// measured estimate (verdict.h best_by_ratio), or in a predicted table by
/// the lowest prediction with ties broken the same way.
void fill_cell(TableCell& c, const std::vector<const Record*>& records, bool predicted,
               const Record* ref) {
  c.points = records.size();
  std::vector<const Record*> failed, ok;
  for (const Record* r : records) {
    if (r->status != Status::Ok || r->times_us.empty()) {
      if (r->status != Status::Ok) failed.push_back(r);
      continue;
    }
    ++c.ok_points;
    ok.push_back(r);
  }
  if (predicted && !ok.empty()) {
    double lowest = ok.front()->prediction->predicted_us;
    for (const Record* r : ok) lowest = std::min(lowest, r->prediction->predicted_us);
    std::erase_if(
        ok, [&](const Record* r) { return r->prediction->predicted_us > lowest * (1 + 1e-12); });
  }
  if (const Record* best = best_by_ratio(ok, ref)) {
    c.best = *best;
    c.stats = best->summary();
  } else if (!records.empty()) {
    c.why_none = why_none(failed);
  }
}

/// The verdict of `c` against the baseline's best `b` (verdict.h).
void judge_cell(TableCell& c, const Table& t, const Record& b, bool predicted) {
  const Record& x = *c.best;
  c.speedup = 1;
  if (c.scheduler == t.baseline) {
    c.verdict = "baseline";
    return;
  }
  // The baseline's own kernel: one measurement (and one prediction).
  if (same_kernel(x, b)) {
    c.same_kernel_as = t.baseline;
    c.verdict = fmt::format("same kernel as `{}`", t.baseline);
    return;
  }
  c.estimate = time_ratio(x, b);
  c.p = c.estimate->p;
  c.significant = c.estimate->significant(t.alpha, t.min_effect);
  if (!predicted) {
    c.speedup = 1 / c.estimate->ratio;
    c.verdict = verdict_text(*c.estimate, c.significant);
    return;
  }
  const double r = x.prediction->predicted_us / b.prediction->predicted_us;
  c.speedup = 1 / r;
  c.verdict = predicted_verdict_text(r);
  c.measured_verdict = verdict_text(*c.estimate, c.significant);
}

// ---- console ------------------------------------------------------------------

const char* kRed = "\x1b[31m";
const char* kGreen = "\x1b[32m";
const char* kYellow = "\x1b[33m";
const char* kBold = "\x1b[1m";
const char* kReset = "\x1b[0m";

std::string paint(const std::string& s, const char* code, bool colour) {
  return colour && !s.empty() ? code + s + kReset : s;
}

std::string section_title(const Table& t) {
  std::string s = fmt::format("{} on {} ({})", t.sweep, t.device.name, t.device.backend);
  if (t.device.emulated) s += fmt::format(" — {}", kEmulationLabel);
  return s;
}

/// What the columns mean, one line each: the same words as docs/reports.md
/// and README.md (whose example tests/report/readme_table.py keeps in step).
std::string legend(const Table& t) {
  std::string s = fmt::format("baseline: {}{}\n", t.baseline,
                              t.baseline_defaulted ? " (the first scheduler; none was named)" : "");
  // `whose`: "this" or "the CPU emulation's".
  auto ratio = [&](const char* whose) {
    return fmt::format(
        "{} time over the baseline's, from the per-round ratios of the interleaved rounds "
        "(two-sample when not timed together), [95% interval]; * = Wilcoxon signed-rank "
        "(Mann-Whitney U when unpaired) p < {:g} and beyond {:g}%",
        whose, t.alpha, t.min_effect * 100);
  };
  if (!t.predicted_on.empty())
    return s + fmt::format(
                   "best config: the lowest predicted time on the {} device model "
                   "(docs/model.md); median, IQR: CPU emulation time in us\n"
                   "vs baseline: predicted time over the baseline's (deterministic; \"tie\" when "
                   "equal)\n"
                   "CPU vs baseline: {}",
                   t.predicted_on, ratio("the CPU emulation's"));
  return s +
         "best config: the configuration the vs-baseline estimate puts fastest; median, "
         "IQR (q3 - q1) of the repetitions in us\n"
         "vs baseline: " +
         ratio("this");
}

/// The colour of a verdict: green faster, red slower, when it counts.
const char* verdict_colour(double ratio, bool counts) {
  if (!counts) return nullptr;
  Direction d = direction_of(ratio);
  return d == Direction::Slower ? kRed : d == Direction::Faster ? kGreen : nullptr;
}

std::string fmt_us(double us) {
  return fmt::format("{:.2f}", us);
}

/// A text cell and the colour it is shown in.
struct Text {
  std::string s;
  const char* colour = nullptr;
};

/// The delta note for one cell against its previous version, if any.
using DeltaFn = std::function<Text(const Table&, const TableRow&, const TableCell&)>;

std::string render_text_tables(const std::vector<Table>& tables, bool colour,
                               const DeltaFn& delta) {
  std::string out;
  for (const Table& t : tables) {
    if (!out.empty()) out += "\n";
    out += paint(section_title(t), kBold, colour) + "\n" + legend(t) + "\n";
    std::vector<std::vector<Text>> lines;
    const bool predicted = !t.predicted_on.empty();
    std::vector<std::string> head = {"fusion", "size", "scheduler", "best config", "median",
                                     "IQR",    "GB/s", "% peak",    "vs baseline"};
    if (predicted) head.insert(head.begin() + 4, "predicted " + t.predicted_on);
    if (predicted) head.push_back("CPU vs baseline");
    if (delta) head.push_back("change");
    // A sweep over meshes: the ranks and the predicted communication after the size.
    const bool meshes =
        std::any_of(t.rows.begin(), t.rows.end(), [](const TableRow& r) { return r.mesh > 0; });
    if (meshes) head.insert(head.begin() + 2, {"mesh", "comm us"});
    const size_t names = meshes ? 6 : 4;  // fusion, size, [mesh, comm,] scheduler, config
    // Names, configs and verdicts left, numbers right.
    std::vector<bool> left(head.size(), false);
    for (size_t i = 0; i < head.size(); ++i)
      left[i] = (i < names && !(meshes && (i == 2 || i == 3))) || head[i].ends_with("baseline") ||
                head[i] == "change";
    std::vector<Text> h;
    for (auto& s : head) h.push_back({s});
    lines.push_back(h);
    std::vector<std::string> notes;  // full-width lines after some rows
    std::vector<size_t> note_after;
    for (const TableRow& row : t.rows) {
      bool first = true;
      for (const TableCell& c : row.cells) {
        if (c.points == 0) continue;
        std::vector<Text> l = {
            {first ? row.fusion : ""}, {first ? row.size_label : ""}, {c.scheduler}};
        if (meshes)
          l.insert(l.begin() + 2, {{first && row.mesh > 0 ? std::to_string(row.mesh) : ""},
                                   {first && row.comm_us ? fmt_us(*row.comm_us)
                                    : first              ? "-"
                                                         : ""}});
        first = false;
        if (c.best) {
          auto peak = c.best->fraction_of_peak();
          double gbps = c.best->gbps();
          // A heuristic row that served a tuned configuration (`run --tuned`) says so.
          l.push_back({c.best->config_label() + (c.best->tuned.empty() ? "" : " (tuned)")});
          if (predicted) l.push_back({fmt_us(c.best->prediction->predicted_us)});
          l.push_back({fmt_us(c.stats->median)});
          l.push_back({fmt_us(c.stats->iqr())});
          l.push_back({gbps > 0 ? fmt::format("{:.1f}", gbps) : "-"});
          l.push_back({peak ? fmt::format("{:.1f}%", *peak * 100) : "-"});
          const double r = 1 / c.speedup.value_or(1);
          l.push_back(
              {c.verdict.empty() ? "-" : c.verdict, verdict_colour(r, predicted || c.significant)});
          if (predicted)
            l.push_back({c.measured_verdict,
                         c.estimate ? verdict_colour(c.estimate->ratio, c.significant) : nullptr});
        } else {
          l.push_back({"no valid point", kYellow});
          for (int i = 0; i < (predicted ? 7 : 5); ++i) l.push_back({""});
          notes.push_back(fmt::format("    {}: {}", c.scheduler, c.why_none));
          note_after.push_back(lines.size());
        }
        if (delta) l.push_back(delta(t, row, c));
        lines.push_back(l);
      }
    }
    std::vector<size_t> w(head.size(), 0);
    for (const auto& l : lines)
      for (size_t i = 0; i < l.size(); ++i) w[i] = std::max(w[i], l[i].s.size());
    size_t next_note = 0;
    for (size_t li = 0; li < lines.size(); ++li) {
      std::string s;
      for (size_t i = 0; i < lines[li].size(); ++i) {
        const Text& x = lines[li][i];
        std::string padded =
            left[i] ? fmt::format("{:<{}}", x.s, w[i]) : fmt::format("{:>{}}", x.s, w[i]);
        s += (i ? "  " : "") + (x.colour ? paint(padded, x.colour, colour) : padded);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out += s + "\n";
      for (; next_note < notes.size() && note_after[next_note] == li; ++next_note)
        out += paint(notes[next_note], kYellow, colour) + "\n";
    }
  }
  return out;
}

}  // namespace

const TableCell* Table::cell(const TableRow& row, const std::string& scheduler) const {
  for (const TableCell& c : row.cells)
    if (c.scheduler == scheduler) return &c;
  return nullptr;
}

std::vector<Table> build_tables(const std::vector<Record>& records, const TableOptions& o) {
  std::vector<std::string> fingerprints;
  std::vector<std::vector<const Record*>> by_device;
  for (const Record& r : records) {
    size_t i = index_of(fingerprints, r.device.fingerprint);
    if (i == by_device.size()) by_device.emplace_back();
    by_device[i].push_back(&r);
  }
  if (!o.baseline.empty()) {
    std::vector<std::string> names;
    for (const Record& r : records) index_of(names, r.scheduler);
    user_assert(std::find(names.begin(), names.end(), o.baseline) != names.end())
        << "baseline scheduler '" << o.baseline << "' has no records; the schedulers are "
        << fmt::format("{}", fmt::join(names, ", "));
  }
  std::vector<Table> tables;
  for (const auto& recs : by_device) {
    Table t;
    t.device = recs.front()->device;
    t.alpha = o.alpha;
    std::vector<std::string> sweeps;
    // Rows are (fusion, size_key), labelled as their first record lists the sizes.
    std::vector<std::pair<std::string, std::string>> row_keys;
    std::vector<std::string> row_labels;
    // [row][scheduler] -> records
    std::map<std::pair<size_t, size_t>, std::vector<const Record*>> grid;
    for (const Record* r : recs) {
      index_of(sweeps, r->sweep);
      size_t row = index_of(row_keys, std::pair(r->fusion, r->size_key()));
      if (row == row_labels.size()) row_labels.push_back(r->size_label());
      size_t col = index_of(t.schedulers, r->scheduler);
      grid[{row, col}].push_back(r);
    }
    t.sweep = fmt::format("{}", fmt::join(sweeps, ", "));
    // The sweep's baseline, as its records carry it, when none is asked for.
    std::string recorded;
    for (const Record* r : recs)
      if (recorded.empty() && !r->baseline.empty() &&
          std::find(t.schedulers.begin(), t.schedulers.end(), r->baseline) != t.schedulers.end())
        recorded = r->baseline;
    t.baseline = !o.baseline.empty() ? o.baseline
                 : !recorded.empty() ? recorded
                                     : t.schedulers.front();
    t.baseline_defaulted = o.baseline.empty() && recorded.empty();
    t.min_effect = o.min_effect.value_or(min_effect_of(*recs.front()));
    // Emulated timings say nothing about GPU speed: rank on the device model
    // when every ok record was predicted on the same one.
    if (t.device.emulated) {
      std::vector<std::string> models;
      bool all = true;
      for (const Record* r : recs)
        if (r->status == Status::Ok) {
          all = all && r->prediction.has_value();
          if (r->prediction) index_of(models, r->prediction->device);
        }
      if (all && models.size() == 1) t.predicted_on = models.front();
    }
    const bool predicted = !t.predicted_on.empty();
    for (size_t ri = 0; ri < row_keys.size(); ++ri) {
      TableRow row{row_keys[ri].first, row_labels[ri], row_keys[ri].second, {}, 0, std::nullopt};
      for (size_t ci = 0; ci < t.schedulers.size(); ++ci)
        for (const Record* r : grid[{ri, ci}]) {
          row.mesh = std::max(row.mesh, r->mesh);
          if (!row.comm_us) row.comm_us = r->comm_us;
        }
      for (size_t ci = 0; ci < t.schedulers.size(); ++ci) {
        TableCell c;
        c.scheduler = t.schedulers[ci];
        row.cells.push_back(std::move(c));
      }
      // The baseline first: every other best is chosen against its best.
      const size_t bi = static_cast<size_t>(
          std::find(t.schedulers.begin(), t.schedulers.end(), t.baseline) - t.schedulers.begin());
      const Record* ref = nullptr;
      if (bi < t.schedulers.size()) {
        fill_cell(row.cells[bi], grid[{ri, bi}], predicted, nullptr);
        if (row.cells[bi].best) ref = &*row.cells[bi].best;
      }
      for (size_t ci = 0; ci < t.schedulers.size(); ++ci)
        if (ci != bi) fill_cell(row.cells[ci], grid[{ri, ci}], predicted, ref);
      for (TableCell& c : row.cells)
        if (c.best && ref) judge_cell(c, t, *ref, predicted);
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

bool colour_enabled(int fd) {
  const char* no_colour = std::getenv("NO_COLOR");
  return isatty(fd) != 0 && (no_colour == nullptr || *no_colour == '\0');
}

std::string render_console(const std::vector<Table>& tables, bool colour) {
  return render_text_tables(tables, colour, nullptr);
}

std::string render_delta(const std::vector<Table>& previous, const std::vector<Table>& current,
                         bool colour, const std::vector<AbVerdict>& ab) {
  auto find_prev = [&](const Table& t, const TableRow& row,
                       const TableCell& c) -> const TableCell* {
    for (const Table& p : previous) {
      if (p.device.fingerprint != t.device.fingerprint) continue;
      for (const TableRow& pr : p.rows)
        if (pr.fusion == row.fusion && pr.size_key == row.size_key) return p.cell(pr, c.scheduler);
    }
    return nullptr;
  };
  auto find_ab = [&](const TableRow& row, const TableCell& c) -> const AbVerdict* {
    for (const AbVerdict& v : ab)
      if (v.fusion == row.fusion && v.size_key == row.size_key && v.scheduler == c.scheduler)
        return &v;
    return nullptr;
  };
  DeltaFn delta = [&](const Table& t, const TableRow& row, const TableCell& c) -> Text {
    const TableCell* p = find_prev(t, row, c);
    if (!p || p->points == 0) return {"new"};
    if (!c.best && !p->best) return {"still failing"};
    if (!c.best) return {"now failing", kRed};
    if (!p->best) return {"now valid", kGreen};
    // Not re-run (watch keeps the records of the plugins that did not
    // change): the same measurement, nothing to compare.
    if (c.best->key == p->best->key && c.best->times_us == p->best->times_us) return {"="};
    const std::string was_config =
        p->best->config_label() != c.best->config_label() ? ", was " + p->best->config_label() : "";
    // The old build timed in the same rounds (an A/B rerun): its paired
    // verdict, the very text of the A/B line.
    if (const AbVerdict* v = find_ab(row, c); v && (v->ratio || v->same_kernel)) {
      if (v->same_kernel) return {"same kernel as old build" + was_config};
      return {verdict_text(*v->ratio, v->significant) + " vs old build" + was_config,
              verdict_colour(v->ratio->ratio, v->significant)};
    }
    if (same_kernel(*c.best, *p->best))
      return {fmt::format("same kernel (was {})", fmt_us(p->stats->median))};
    // Two runs: the two-sample estimate against the previous best.
    RatioEstimate e = unpaired_ratio(c.best->times_us, p->best->times_us);
    bool sig = e.significant(t.alpha, t.min_effect);
    return {fmt::format("{} vs last run (was {}{})", verdict_text(e, sig), fmt_us(p->stats->median),
                        was_config),
            verdict_colour(e.ratio, sig)};
  };
  return render_text_tables(current, colour, delta);
}

}  // namespace schedlab::report
