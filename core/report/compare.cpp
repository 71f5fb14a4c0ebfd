#include "schedlab/report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/report/record.h"
#include "schedlab/report/verdict.h"

namespace schedlab::report {

using Json = nlohmann::ordered_json;

namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// A time in the unit that keeps it between 1 and 1000.
std::string format_time(double us) {
  if (us < 1) return fmt::format("{:.4g} ns", us * 1e3);
  if (us < 1e3) return fmt::format("{:.4g} us", us);
  if (us < 1e6) return fmt::format("{:.4g} ms", us / 1e3);
  return fmt::format("{:.4g} s", us / 1e6);
}

/// The new/base column: the verdict's words, or "-".
std::string format_change(const BenchmarkChange& c) {
  return c.text.empty() ? "-" : c.text;
}

std::string format_p(const BenchmarkChange& c) {
  return c.p ? fmt::format("{:.3g}", *c.p) : "-";
}

std::string header_line(const CompareReport& r) {
  if (r.options.deterministic)
    return fmt::format("threshold {:g}%, predicted times (deterministic: no test)",
                       r.options.threshold.value_or(0) * 100);
  return fmt::format(
      "threshold {}, new/base from the per-round ratios when timed together, else two-sample "
      "(Mann-Whitney U), p < {:g}{}",
      r.options.threshold ? fmt::format("{:g}%", *r.options.threshold * 100)
                          : std::string("the sweep's minimum effect"),
      r.options.alpha, r.options.include_unchanged_kernels ? ", unchanged kernels included" : "");
}

Json summary_json(const std::optional<Summary>& s) {
  if (!s) return nullptr;
  return {{"n", s->n},      {"median_us", s->median}, {"q1_us", s->q1},
          {"q3_us", s->q3}, {"min_us", s->min},       {"max_us", s->max}};
}

}  // namespace

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Regression:
      return "regression";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::Unchanged:
      return "unchanged";
    case Verdict::Broken:
      return "broken";
    case Verdict::Fixed:
      return "fixed";
    case Verdict::OnlyInBase:
      return "only in base";
    case Verdict::OnlyInNew:
      return "only in new";
  }
  internal_error << "unknown verdict " << static_cast<int>(v);
}

size_t CompareReport::count(Verdict v) const {
  return static_cast<size_t>(std::count_if(
      changes.begin(), changes.end(), [&](const BenchmarkChange& c) { return c.verdict == v; }));
}

std::string CompareReport::summary() const {
  std::string s = plural(count(Verdict::Regression), "regression", "regressions") + ", " +
                  plural(count(Verdict::Improvement), "improvement", "improvements") + ", " +
                  fmt::format("{} untouched", count(Verdict::Unchanged));
  for (Verdict v : {Verdict::Broken, Verdict::Fixed, Verdict::OnlyInBase, Verdict::OnlyInNew})
    if (size_t n = count(v)) s += fmt::format(", {} {}", n, verdict_name(v));
  return s;
}

bool CompareReport::has_regression() const {
  return count(Verdict::Regression) + count(Verdict::Broken) > 0;
}

std::optional<double> CompareReport::geomean_ratio() const {
  double log_sum = 0;
  size_t n = 0;
  for (const BenchmarkChange& c : changes) {
    if (!c.base || !c.next || c.name.ends_with("/best")) continue;
    log_sum += c.same_kernel || !c.ratio ? 0 : std::log(c.ratio->ratio);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / static_cast<double>(n));
}

namespace {

/// Both have times: the test, the interval and the verdict.
void judge(BenchmarkChange& c, const BenchmarkSamples& b, const BenchmarkSamples& n,
           const CompareOptions& o, bool google_benchmark) {
  // Timed in the same interleaved rounds (one sweep run, e.g. the two
  // halves of an A/B run): the paired estimate, as the table's.
  const bool together =
      !b.group.empty() && b.group == n.group && b.times_us.size() == n.times_us.size();
  c.ratio =
      together ? paired_ratio(n.times_us, b.times_us) : unpaired_ratio(n.times_us, b.times_us);
  if (!o.deterministic) c.p = c.ratio->p;
  c.same_kernel = !b.kernel.empty() && b.kernel == n.kernel;
  const double threshold =
      o.threshold.value_or(google_benchmark ? 0.05 : b.min_effect.value_or(0.05));
  // Predictions carry no noise: beyond the threshold is enough. A ratio
  // equal to the threshold is not beyond it (RatioEstimate::significant's
  // slack covers the rounding of unit conversion, 100 ns -> 0.1 us).
  RatioEstimate r = *c.ratio;
  if (o.deterministic) r.p = 0;
  const bool counts = r.significant(o.alpha, threshold);
  c.verdict = !counts       ? Verdict::Unchanged
              : r.ratio > 1 ? Verdict::Regression
                            : Verdict::Improvement;
  c.text =
      o.deterministic ? predicted_verdict_text(c.ratio->ratio) : verdict_text(*c.ratio, counts);
  std::vector<std::string> notes;
  if (b.config != n.config && !b.role.empty())
    notes.push_back(fmt::format("{} now picks {} instead of {}: {}",
                                b.role == "best" ? "best config" : c.scheduler, n.config, b.config,
                                c.text));
  // Predictions are deterministic: the same kernel predicted differently is
  // a changed model, reported as such.
  if (c.same_kernel && !o.include_unchanged_kernels && !o.deterministic) {
    c.verdict = Verdict::Unchanged;
    if (!c.text.empty() && c.text.back() == '*') c.text.pop_back();
    notes.push_back("same kernel");
  }
  if (!o.deterministic && (b.times_us.size() < 2 || n.times_us.size() < 2))
    notes.push_back("one sample: run with --benchmark_repetitions for a test");
  for (const std::string& x : notes) c.note += (c.note.empty() ? "" : "; ") + x;
}

}  // namespace

CompareReport compare(const ResultFile& base, const ResultFile& next, const CompareOptions& o) {
  CompareReport r{base.path, next.path, o, {}, {}, base.emulated || next.emulated};
  if (!base.devices.empty() && !next.devices.empty() && base.devices != next.devices)
    r.notes.push_back(fmt::format("the files come from different machines: base {}, new {}",
                                  fmt::format("{}", fmt::join(base.devices, ", ")),
                                  fmt::format("{}", fmt::join(next.devices, ", "))));
  const bool google_benchmark = base.kind == "google-benchmark" || next.kind == "google-benchmark";
  auto key = [](const BenchmarkSamples& s) { return s.match.empty() ? s.name : s.match; };
  std::map<std::string, const BenchmarkSamples*> in_next, in_base;
  for (const BenchmarkSamples& s : next.benchmarks) in_next[key(s)] = &s;
  for (const BenchmarkSamples& s : base.benchmarks) in_base[key(s)] = &s;
  for (const BenchmarkSamples& b : base.benchmarks) {
    BenchmarkChange c;
    c.name = b.name;
    c.scheduler = b.scheduler;
    auto it = in_next.find(key(b));
    if (it == in_next.end()) {
      c.verdict = Verdict::OnlyInBase;
      r.changes.push_back(std::move(c));
      continue;
    }
    const BenchmarkSamples& n = *it->second;
    c.name = n.name;  // the newer file's names list sizes in declaration order
    if (!b.times_us.empty()) c.base = summarize(b.times_us);
    if (!n.times_us.empty()) c.next = summarize(n.times_us);
    if (c.base && c.next) {
      judge(c, b, n, o, google_benchmark);
    } else if (c.base) {
      c.verdict = Verdict::Broken;
      c.note = n.failure;
    } else if (c.next) {
      c.verdict = Verdict::Fixed;
      c.note = b.failure;
    } else {
      c.verdict = Verdict::Unchanged;
      c.note = "fails in both: " + n.failure;
    }
    r.changes.push_back(std::move(c));
  }
  for (const BenchmarkSamples& n : next.benchmarks)
    if (!in_base.count(key(n))) {
      BenchmarkChange c;
      c.name = n.name;
      c.scheduler = n.scheduler;
      c.verdict = Verdict::OnlyInNew;
      r.changes.push_back(std::move(c));
    }
  return r;
}

double parse_threshold(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  user_assert(used == t.size() && used > 0 && v >= 0 && std::isfinite(v))
      << "--threshold: expected a non-negative percentage such as 5%, found '" << text << "'";
  return v / 100;
}

std::string render_compare_text(const CompareReport& r) {
  std::string out = fmt::format("compare {} -> {} ({})\n", r.base_path, r.new_path, header_line(r));
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  size_t w = 9;
  for (const BenchmarkChange& c : r.changes) w = std::max(w, c.name.size());
  size_t wt = 7;
  for (const BenchmarkChange& c : r.changes) wt = std::max(wt, format_change(c).size());
  out += fmt::format("{:<{}}  {:>12}  {:>12}  {:<{}}  {:>8}  {}\n", "benchmark", w, "base median",
                     "new median", "new/base", wt, "p", "verdict");
  for (const BenchmarkChange& c : r.changes) {
    out += fmt::format("{:<{}}  {:>12}  {:>12}  {:<{}}  {:>8}  {}", c.name, w,
                       c.base ? format_time(c.base->median) : "-",
                       c.next ? format_time(c.next->median) : "-", format_change(c), wt,
                       format_p(c), verdict_name(c.verdict));
    out += c.note.empty() ? "\n" : " (" + c.note + ")\n";
  }
  return out + r.summary() + "\n";
}

std::string render_compare_markdown(const CompareReport& r) {
  auto row = [](const BenchmarkChange& c) {
    std::string name = c.name;
    for (size_t i = name.find('|'); i != std::string::npos; i = name.find('|', i + 2))
      name.replace(i, 1, "\\|");
    std::string verdict = verdict_name(c.verdict);
    if (c.verdict == Verdict::Regression || c.verdict == Verdict::Broken)
      verdict = "**" + verdict + "**";
    return fmt::format("| `{}` | {} | {} | {} | {}{} |\n", name,
                       c.base ? format_time(c.base->median) : "-",
                       c.next ? format_time(c.next->median) : "-", format_change(c), verdict,
                       c.note.empty() ? "" : " (" + c.note + ")");
  };
  const std::string head =
      "| benchmark | base median | new median | new/base [95% interval] | verdict |\n"
      "|---|---:|---:|---|---|\n";
  std::string out = "### schedlab compare\n\n";
  // The headline, CodSpeed-style: the direction and size of the geometric
  // mean change, then the counts.
  const std::optional<double> g = r.geomean_ratio();
  const size_t worse = r.count(Verdict::Regression) + r.count(Verdict::Broken);
  const size_t better = r.count(Verdict::Improvement) + r.count(Verdict::Fixed);
  std::string headline;
  if (worse > 0)
    headline = "Merging will degrade performance";
  else if (better > 0)
    headline = "Merging will improve performance";
  else
    headline = "Merging will not alter performance";
  // The geometric mean in the verdict's words, without an interval.
  RatioEstimate gm;
  if (g) gm.ratio = gm.lo = gm.hi = *g;
  out += fmt::format("{}**{}**: {}{}\n\n", worse ? "⚠️ " : "", headline, r.summary(),
                     g ? " (geometric mean of new/base: " + verdict_text(gm, false) + ")" : "");
  out += fmt::format("`{}` → `{}` ({})\n\n", r.base_path, r.new_path, header_line(r));
  if (r.emulated)
    out +=
        "> **Note:** these timings are CPU emulation (the CPU backend runs the CUDA source "
        "on the host), not GPU timings: they rank schedules, they do not predict GPU time.\n\n";
  for (const std::string& n : r.notes) out += "> " + n + "\n\n";
  // Changed benchmarks, grouped by scheduler in order of first appearance.
  std::vector<std::string> schedulers;
  std::map<std::string, std::string> changed;
  std::string untouched;
  for (const BenchmarkChange& c : r.changes) {
    if (c.verdict == Verdict::Unchanged) {
      untouched += row(c);
      continue;
    }
    if (!changed.count(c.scheduler)) schedulers.push_back(c.scheduler);
    changed[c.scheduler] += row(c);
  }
  for (const std::string& sc : schedulers)
    out += fmt::format("#### {}\n\n{}{}\n", sc.empty() ? "benchmarks" : "`" + sc + "`", head,
                       changed[sc]);
  if (!untouched.empty())
    out += fmt::format("<details><summary>{} untouched</summary>\n\n{}{}\n</details>\n",
                       r.count(Verdict::Unchanged), head, untouched);
  return out;
}

std::string render_compare_json(const CompareReport& r) {
  Json j;
  j["schema"] = "schedlab.compare.v1";
  j["base"] = r.base_path;
  j["new"] = r.new_path;
  j["threshold"] = r.options.threshold ? Json(*r.options.threshold) : Json(nullptr);
  j["deterministic"] = r.options.deterministic;
  j["include_unchanged_kernels"] = r.options.include_unchanged_kernels;
  j["geomean_ratio"] = r.geomean_ratio() ? Json(*r.geomean_ratio()) : Json(nullptr);
  j["emulated"] = r.emulated;
  j["alpha"] = r.options.alpha;
  j["regression"] = r.has_regression();
  Json counts = Json::object();
  for (Verdict v : {Verdict::Regression, Verdict::Improvement, Verdict::Unchanged, Verdict::Broken,
                    Verdict::Fixed, Verdict::OnlyInBase, Verdict::OnlyInNew})
    counts[verdict_name(v)] = r.count(v);
  j["counts"] = counts;
  j["summary"] = r.summary();
  j["notes"] = r.notes;
  Json list = Json::array();
  for (const BenchmarkChange& c : r.changes) {
    list.push_back({{"name", c.name},
                    {"verdict", verdict_name(c.verdict)},
                    {"base", summary_json(c.base)},
                    {"new", summary_json(c.next)},
                    {"p", c.p ? Json(*c.p) : Json(nullptr)},
                    {"ratio", c.ratio ? Json(c.ratio->ratio) : Json(nullptr)},
                    {"interval", c.ratio ? Json::array({c.ratio->lo, c.ratio->hi}) : Json(nullptr)},
                    {"paired", c.ratio ? Json(c.ratio->paired) : Json(nullptr)},
                    {"text", c.text},
                    {"scheduler", c.scheduler},
                    {"same_kernel", c.same_kernel},
                    {"note", c.note}});
  }
  j["benchmarks"] = list;
  return j.dump(2) + "\n";
}

}  // namespace schedlab::report
