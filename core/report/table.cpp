#include "schedlab/report/table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "schedlab/base/error.h"

namespace schedlab::report {

using Json = nlohmann::ordered_json;

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

/// What ranks a cell's records: the prediction when the table is ranked on
/// a device model, else the median.
double rank_key(const Record& r, bool predicted) {
  return predicted ? r.prediction->predicted_us : r.summary().median;
}

void fill_cell(TableCell& c, const std::vector<const Record*>& records, bool predicted) {
  c.points = records.size();
  std::vector<const Record*> failed;
  double best_key = 0;
  for (const Record* r : records) {
    if (r->status != Status::Ok) {
      failed.push_back(r);
      continue;
    }
    ++c.ok_points;
    double key = rank_key(*r, predicted);
    if (!c.best || key < best_key) {
      c.best = *r;
      c.stats = r->summary();
      best_key = key;
    }
  }
  if (!c.best && !records.empty()) c.why_none = why_none(failed);
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

std::string legend(const Table& t) {
  if (!t.predicted_on.empty())
    return fmt::format(
        "baseline: {}{}. ranked by the predicted time on the {} device model (a prediction "
        "of the performance model, docs/model.md); median = CPU emulation time in us; "
        "* = the prediction differs from the baseline's",
        t.baseline, t.baseline_defaulted ? " (the first scheduler; none was named)" : "",
        t.predicted_on);
  return fmt::format(
      "baseline: {}{}. median and spread (IQR, q3 - q1) of the repetitions in us; speedup over "
      "the baseline [95% interval]; * = differs: Wilcoxon signed-rank on the interleaved rounds "
      "(Mann-Whitney U when unpaired) p < {:g} and beyond {:g}%",
      t.baseline, t.baseline_defaulted ? " (the first scheduler; none was named)" : "", t.alpha,
      t.min_effect * 100);
}

/// "1.23x [1.18, 1.27]*", "1.00x" for the baseline, "same kernel as `b`".
std::string speedup_text(const Table& t, const TableCell& c) {
  if (!c.same_kernel_as.empty()) return fmt::format("same kernel as `{}`", c.same_kernel_as);
  if (!c.speedup) return "-";
  if (c.scheduler == t.baseline || !c.estimate)
    return fmt::format("{:.2f}x{}", *c.speedup, c.significant ? "*" : " ");
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]{}", *c.speedup, c.estimate->lo, c.estimate->hi,
                     c.significant ? "*" : " ");
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
                                     "IQR",    "GB/s", "% peak",    "speedup"};
    if (predicted) head.insert(head.begin() + 4, "predicted " + t.predicted_on);
    if (delta) head.push_back("change");
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
        first = false;
        if (c.best) {
          auto peak = c.best->fraction_of_peak();
          double gbps = c.best->gbps();
          const char* sc = !c.significant ? nullptr : *c.speedup > 1 ? kGreen : kRed;
          // A heuristic row that served a tuned configuration (`run --tuned`) says so.
          l.push_back({c.best->config_label() + (c.best->tuned.empty() ? "" : " (tuned)")});
          if (predicted) l.push_back({fmt_us(c.best->prediction->predicted_us)});
          l.push_back({fmt_us(c.stats->median)});
          l.push_back({fmt_us(c.stats->iqr())});
          l.push_back({gbps > 0 ? fmt::format("{:.1f}", gbps) : "-"});
          l.push_back({peak ? fmt::format("{:.1f}%", *peak * 100) : "-"});
          l.push_back({speedup_text(t, c), sc});
        } else {
          l.push_back({"no valid point", kYellow});
          for (int i = 0; i < (predicted ? 6 : 5); ++i) l.push_back({""});
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
        // Names and configs left, numbers right.
        bool left = i < 4 || (delta && i + 1 == lines[li].size());
        std::string padded =
            left ? fmt::format("{:<{}}", x.s, w[i]) : fmt::format("{:>{}}", x.s, w[i]);
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

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string opt_num(const std::optional<double>& v, const char* spec = "{}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "";
}

Json opt_json(const std::optional<double>& v) {
  return v ? Json(*v) : Json(nullptr);
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
      TableRow row{row_keys[ri].first, row_labels[ri], row_keys[ri].second, {}};
      for (size_t ci = 0; ci < t.schedulers.size(); ++ci) {
        TableCell c;
        c.scheduler = t.schedulers[ci];
        fill_cell(c, grid[{ri, ci}], predicted);
        row.cells.push_back(std::move(c));
      }
      const TableCell* base = t.cell(row, t.baseline);
      for (TableCell& c : row.cells) {
        if (!c.best || !base || !base->best) continue;
        const Record& b = *base->best;
        const Record& x = *c.best;
        // The baseline's own kernel: one measurement (and one prediction).
        if (c.scheduler != t.baseline && same_kernel(x, b)) {
          c.speedup = 1;
          c.same_kernel_as = t.baseline;
          continue;
        }
        if (predicted) {
          c.speedup = base->best->prediction->predicted_us / c.best->prediction->predicted_us;
          c.significant = c.scheduler != t.baseline && std::abs(*c.speedup - 1) > 1e-12;
          continue;
        }
        c.speedup = 1;
        if (c.scheduler == t.baseline) continue;
        c.estimate = paired(x, b) ? paired_ratio(b.times_us, x.times_us)
                                  : unpaired_ratio(b.times_us, x.times_us);
        c.speedup = c.estimate->ratio;
        c.p = c.estimate->p;
        c.significant = c.estimate->significant(o.alpha, t.min_effect);
      }
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
                         bool colour) {
  auto find_prev = [&](const Table& t, const TableRow& row,
                       const TableCell& c) -> const TableCell* {
    for (const Table& p : previous) {
      if (p.device.fingerprint != t.device.fingerprint) continue;
      for (const TableRow& pr : p.rows)
        if (pr.fusion == row.fusion && pr.size_key == row.size_key) return p.cell(pr, c.scheduler);
    }
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
    if (same_kernel(*c.best, *p->best))
      return {fmt::format("same kernel (was {})", fmt_us(p->stats->median))};
    // Two runs: unpaired samples.
    RatioEstimate e = unpaired_ratio(c.best->times_us, p->best->times_us);
    double change = e.ratio - 1;
    bool sig = e.significant(t.alpha, t.min_effect);
    std::string s = fmt::format("{:+.1f}% [{:+.1f}, {:+.1f}]{} (was {})", change * 100,
                                (e.lo - 1) * 100, (e.hi - 1) * 100, sig ? "*" : " ",
                                fmt_us(p->stats->median));
    if (p->best->config_label() != c.best->config_label()) s += ", was " + p->best->config_label();
    return {s, !sig ? nullptr : change < 0 ? kGreen : kRed};
  };
  return render_text_tables(current, colour, delta);
}

std::string render_csv(const std::vector<Table>& tables) {
  std::string out =
      "sweep,device,backend,emulated,fusion,size,scheduler,baseline,points,ok_points,config,"
      "repetitions,median_us,q1_us,q3_us,iqr_us,min_us,max_us,gbps,percent_of_peak,speedup,"
      "p_value,significant,predicted_us,predicted_on,no_valid_point\n";
  for (const Table& t : tables)
    for (const TableRow& row : t.rows)
      for (const TableCell& c : row.cells) {
        if (c.points == 0) continue;
        std::vector<std::string> f = {t.sweep,
                                      t.device.name,
                                      t.device.backend,
                                      t.device.emulated ? "true" : "false",
                                      row.fusion,
                                      row.size_label,
                                      c.scheduler,
                                      c.scheduler == t.baseline ? "true" : "false",
                                      std::to_string(c.points),
                                      std::to_string(c.ok_points)};
        if (c.best) {
          const Summary& s = *c.stats;
          auto peak = c.best->fraction_of_peak();
          double gbps = c.best->gbps();
          for (const std::string& x : std::vector<std::string>{
                   c.best->config_label(), std::to_string(s.n), fmt::format("{}", s.median),
                   fmt::format("{}", s.q1), fmt::format("{}", s.q3), fmt::format("{}", s.iqr()),
                   fmt::format("{}", s.min), fmt::format("{}", s.max),
                   gbps > 0 ? fmt::format("{}", gbps) : "",
                   peak ? fmt::format("{}", *peak * 100) : "", opt_num(c.speedup), opt_num(c.p),
                   c.p ? (c.significant ? "true" : "false") : "", ""})
            f.push_back(x);
        } else {
          f.insert(f.end(), 13, "");
          f.push_back(c.why_none);
        }
        // The prediction's columns come before the last one (no_valid_point).
        const bool has_prediction = c.best && c.best->prediction;
        f.insert(f.end() - 1,
                 {has_prediction ? fmt::format("{}", c.best->prediction->predicted_us) : "",
                  has_prediction ? c.best->prediction->device : ""});
        std::string line;
        for (const std::string& x : f) line += (line.empty() ? "" : ",") + csv_field(x);
        out += line + "\n";
      }
  return out;
}

std::string render_json(const std::vector<Table>& tables) {
  Json sections = Json::array();
  for (const Table& t : tables) {
    Json rows = Json::array();
    for (const TableRow& row : t.rows) {
      Json cells = Json::array();
      for (const TableCell& c : row.cells) {
        if (c.points == 0) continue;
        Json j = {{"scheduler", c.scheduler}, {"points", c.points}, {"ok_points", c.ok_points}};
        if (c.best) {
          const Summary& s = *c.stats;
          double gbps = c.best->gbps();
          j["config"] = Json::object();
          for (const auto& [k, v] : c.best->config) j["config"][k] = v;
          j["config_label"] = c.best->config_label();
          if (!c.best->tuned.empty()) j["tuned"] = c.best->tuned;
          j["times_us"] = c.best->times_us;
          j["median_us"] = s.median;
          j["q1_us"] = s.q1;
          j["q3_us"] = s.q3;
          j["iqr_us"] = s.iqr();
          j["min_us"] = s.min;
          j["max_us"] = s.max;
          j["gbps"] = gbps > 0 ? Json(gbps) : Json(nullptr);
          j["fraction_of_peak"] = opt_json(c.best->fraction_of_peak());
          j["speedup"] = opt_json(c.speedup);
          j["p_value"] = opt_json(c.p);
          j["interval"] = c.estimate ? Json::array({c.estimate->lo, c.estimate->hi}) : Json(nullptr);
          j["paired"] = c.estimate ? Json(c.estimate->paired) : Json(nullptr);
          j["significant"] = c.significant;
          j["same_kernel_as"] = c.same_kernel_as;
          j["key"] = c.best->key;
          if (c.best->prediction) {
            j["predicted_us"] = c.best->prediction->predicted_us;
            j["predicted_on"] = c.best->prediction->device;
            j["limiter"] = c.best->prediction->limiter;
          }
        } else {
          j["no_valid_point"] = c.why_none;
        }
        cells.push_back(j);
      }
      rows.push_back({{"fusion", row.fusion}, {"size", row.size_label}, {"cells", cells}});
    }
    Json s = {{"sweep", t.sweep},
              {"device",
               {{"name", t.device.name},
                {"backend", t.device.backend},
                {"fingerprint", t.device.fingerprint},
                {"emulated", t.device.emulated},
                {"peak_gbps", t.device.peak_gbps}}},
              {"timings", t.device.emulated ? kEmulationLabel : "GPU"},
              {"baseline", t.baseline},
              {"ranked_by", t.predicted_on.empty() ? "median" : "predicted " + t.predicted_on},
              {"alpha", t.alpha},
              {"min_effect", t.min_effect},
              {"spread", "iqr"},
              {"schedulers", t.schedulers},
              {"rows", rows}};
    sections.push_back(s);
  }
  Json j = {{"schema", "schedlab.table.v1"}, {"sections", sections}};
  return j.dump(2) + "\n";
}

}  // namespace schedlab::report
