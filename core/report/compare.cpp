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

namespace schedlab::report {

using Json = nlohmann::ordered_json;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read results file '" << path << "'";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Microseconds per `unit` of Google Benchmark's time_unit.
double us_per(const std::string& unit, const std::string& path, const std::string& bench) {
  if (unit == "ns") return 1e-3;
  if (unit == "us") return 1;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  user_error_at(SourceLoc{path}) << "benchmark '" << bench << "': unknown time_unit '" << unit
                                 << "'; expected ns, us, ms or s";
  return 0;
}

/// Google Benchmark's JSON (`--benchmark_format=json` / `--benchmark_out`).
ResultFile read_google_benchmark(const std::string& path, const Json& doc) {
  const SourceLoc where{path};
  ResultFile f{path, "google-benchmark", {}, {}};
  if (doc.contains("context") && doc["context"].is_object() && doc["context"].contains("host_name"))
    f.devices.push_back(doc["context"]["host_name"].get<std::string>());
  const Json& list = doc["benchmarks"];
  if (!list.is_array()) user_error_at(where) << "'benchmarks' must be an array";
  std::map<std::string, size_t> index;
  std::map<std::string, double> median_aggregate;
  auto entry_for = [&](const std::string& name) -> BenchmarkSamples& {
    auto [it, fresh] = index.emplace(name, f.benchmarks.size());
    if (fresh) f.benchmarks.push_back({name, {}, {}});
    return f.benchmarks[it->second];
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& b = list[i];
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string())
      user_error_at(where) << "benchmark " << i + 1 << " has no name";
    const std::string name = b["name"];
    // run_name groups a benchmark's repetitions and aggregates; old versions lack it.
    const std::string key = b.value("run_name", name);
    const std::string run_type = b.value("run_type", "iteration");
    BenchmarkSamples& s = entry_for(key);
    if (b.value("error_occurred", false)) {
      s.failure = "error: " + b.value("error_message", std::string("(no message)"));
      continue;
    }
    if (!b.contains("real_time") || !b["real_time"].is_number())
      user_error_at(where) << "benchmark '" << name << "' has no numeric real_time";
    double t = b["real_time"].get<double>() * us_per(b.value("time_unit", "ns"), path, name);
    if (run_type == "iteration")
      s.times_us.push_back(t);
    else if (run_type == "aggregate" && b.value("aggregate_name", "") == "median")
      median_aggregate[key] = t;
  }
  // --benchmark_report_aggregates_only: the median is all there is.
  for (BenchmarkSamples& s : f.benchmarks) {
    auto m = median_aggregate.find(s.name);
    if (s.times_us.empty() && s.failure.empty() && m != median_aggregate.end())
      s.times_us.push_back(m->second);
    if (s.times_us.empty() && s.failure.empty()) s.failure = "no repetitions and no median";
  }
  return f;
}

/// A sweep's JSONL: each record is one benchmark.
ResultFile read_sweep_jsonl(const std::string& path, Metric metric) {
  ResultFile f{path, "schedlab-jsonl", {}, {}};
  std::map<std::string, size_t> index;
  for (const Record& r : read_records(path).records) {
    std::string name =
        fmt::format("{}/{}/{}/{}", r.fusion, r.size_label(), r.scheduler, r.config_label());
    BenchmarkSamples s{name, r.times_us, {}};
    if (r.status != Status::Ok)
      s.failure = std::string(status_name(r.status)) + (r.error.empty() ? "" : ": " + r.error);
    else if (metric == Metric::Predicted && r.prediction)
      s.times_us = {r.prediction->predicted_us};
    else if (metric == Metric::Predicted)
      s = {name, {}, "no prediction (the sweep ran without a device model)"};
    auto [it, fresh] = index.emplace(name, f.benchmarks.size());
    if (fresh)
      f.benchmarks.push_back(std::move(s));
    else
      f.benchmarks[it->second] = std::move(s);  // a rerun of the same point
    std::string dev = r.device.name + (r.device.emulated ? " (CPU emulation)" : "");
    if (std::find(f.devices.begin(), f.devices.end(), dev) == f.devices.end())
      f.devices.push_back(dev);
  }
  return f;
}

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

std::string format_change(const BenchmarkChange& c) {
  return c.base && c.next ? fmt::format("{:+.1f}%", c.change * 100) : "-";
}

std::string format_p(const BenchmarkChange& c) {
  return c.p ? fmt::format("{:.3g}", *c.p) : "-";
}

std::string header_line(const CompareReport& r) {
  if (r.options.deterministic)
    return fmt::format("threshold {:g}%, predicted times (deterministic: no test)",
                       r.options.threshold * 100);
  return fmt::format("threshold {:g}%, Mann-Whitney U p < {:g}", r.options.threshold * 100,
                     r.options.alpha);
}

Json summary_json(const std::optional<Summary>& s) {
  if (!s) return nullptr;
  return {{"n", s->n},      {"median_us", s->median}, {"q1_us", s->q1},
          {"q3_us", s->q3}, {"min_us", s->min},       {"max_us", s->max}};
}

}  // namespace

ResultFile load_result_file(const std::string& path) {
  return load_result_file(path, Metric::Time);
}

ResultFile load_result_file(const std::string& path, Metric metric) {
  const std::string text = read_text(path);
  const SourceLoc where{path};
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    user_error_at(where) << "empty results file; expected Google Benchmark JSON or schedlab "
                            "sweep JSONL";
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // A lone "{" on the first line is pretty-printed JSON, which is what
    // Google Benchmark writes; JSONL puts a whole record on each line.
    size_t eol = text.find('\n', first);
    std::string first_line = text.substr(first, eol == std::string::npos ? eol : eol - first);
    while (!first_line.empty() && std::isspace(static_cast<unsigned char>(first_line.back())))
      first_line.pop_back();
    if (first_line == "{") user_error_at(where) << "invalid JSON: " << e.what();
    return read_sweep_jsonl(path, metric);
  }
  if (doc.is_object() && doc.contains("benchmarks")) {
    user_assert(metric == Metric::Time)
        << path << ": --metric predicted needs sweep JSONL files (records carry the "
        << "prediction); this is Google Benchmark JSON";
    return read_google_benchmark(path, doc);
  }
  if (doc.is_object() && doc.contains("schema"))
    return read_sweep_jsonl(path, metric);  // one record
  user_error_at(where) << "neither Google Benchmark JSON (an object with a 'benchmarks' array) "
                          "nor schedlab sweep JSONL (one record per line)";
  return {};
}

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
  return {};
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

CompareReport compare(const ResultFile& base, const ResultFile& next, const CompareOptions& o) {
  CompareReport r{base.path, next.path, o, {}, {}};
  if (!base.devices.empty() && !next.devices.empty() && base.devices != next.devices)
    r.notes.push_back(fmt::format("the files come from different machines: base {}, new {}",
                                  fmt::format("{}", fmt::join(base.devices, ", ")),
                                  fmt::format("{}", fmt::join(next.devices, ", "))));
  std::map<std::string, const BenchmarkSamples*> in_next, in_base;
  for (const BenchmarkSamples& s : next.benchmarks) in_next[s.name] = &s;
  for (const BenchmarkSamples& s : base.benchmarks) in_base[s.name] = &s;
  for (const BenchmarkSamples& b : base.benchmarks) {
    BenchmarkChange c;
    c.name = b.name;
    auto it = in_next.find(b.name);
    if (it == in_next.end()) {
      c.verdict = Verdict::OnlyInBase;
      r.changes.push_back(std::move(c));
      continue;
    }
    const BenchmarkSamples& n = *it->second;
    if (!b.times_us.empty()) c.base = summarize(b.times_us);
    if (!n.times_us.empty()) c.next = summarize(n.times_us);
    if (c.base && c.next) {
      c.change = c.base->median > 0 ? (c.next->median - c.base->median) / c.base->median : 0;
      if (!o.deterministic) c.p = mann_whitney_u(b.times_us, n.times_us).p;
      bool significant = o.deterministic || *c.p < o.alpha;
      // A change equal to the threshold is not beyond it, including after the
      // rounding of unit conversion (100 ns -> 0.1 us): hence the 1e-9 slack.
      bool beyond = std::abs(c.change) > o.threshold * (1 + 1e-9);
      c.verdict = !(significant && beyond) ? Verdict::Unchanged
                  : c.change > 0           ? Verdict::Regression
                                           : Verdict::Improvement;
      if (!o.deterministic && (b.times_us.size() < 2 || n.times_us.size() < 2))
        c.note = "one sample: run with --benchmark_repetitions for a test";
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
    if (!in_base.count(n.name)) {
      BenchmarkChange c;
      c.name = n.name;
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
  out += fmt::format("{:<{}}  {:>12}  {:>12}  {:>8}  {:>8}  {}\n", "benchmark", w, "base median",
                     "new median", "change", "p", "verdict");
  for (const BenchmarkChange& c : r.changes) {
    out += fmt::format("{:<{}}  {:>12}  {:>12}  {:>8}  {:>8}  {}", c.name, w,
                       c.base ? format_time(c.base->median) : "-",
                       c.next ? format_time(c.next->median) : "-", format_change(c), format_p(c),
                       verdict_name(c.verdict));
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
    return fmt::format("| `{}` | {} | {} | {} | {} | {}{} |\n", name,
                       c.base ? format_time(c.base->median) : "-",
                       c.next ? format_time(c.next->median) : "-", format_change(c), format_p(c),
                       verdict, c.note.empty() ? "" : " (" + c.note + ")");
  };
  const std::string head =
      "| benchmark | base median | new median | change | p | verdict |\n"
      "|---|---:|---:|---:|---:|---|\n";
  std::string out = "### schedlab compare\n\n";
  out += fmt::format("{}{}{}\n\n", r.has_regression() ? "**" : "", r.summary(),
                     r.has_regression() ? "**" : "");
  out += fmt::format("`{}` → `{}` ({})\n\n", r.base_path, r.new_path, header_line(r));
  for (const std::string& n : r.notes) out += "> " + n + "\n\n";
  std::string changed, untouched;
  for (const BenchmarkChange& c : r.changes)
    (c.verdict == Verdict::Unchanged ? untouched : changed) += row(c);
  if (!changed.empty()) out += head + changed + "\n";
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
  j["threshold"] = r.options.threshold;
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
                    {"change", c.base && c.next ? Json(c.change) : Json(nullptr)},
                    {"p", c.p ? Json(*c.p) : Json(nullptr)},
                    {"note", c.note}});
  }
  j["benchmarks"] = list;
  return j.dump(2) + "\n";
}

}  // namespace schedlab::report
