// Reading result files for `compare`: see schedlab/report/compare.h.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/report/compare.h"
#include "schedlab/report/record.h"
#include "schedlab/report/verdict.h"

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
}

/// Google Benchmark's JSON (`--benchmark_format=json` / `--benchmark_out`).
ResultFile read_google_benchmark(const std::string& path, const Json& doc) {
  const SourceLoc where{path};
  ResultFile f{path, "google-benchmark", {}, {}, false};
  if (doc.contains("context") && doc["context"].is_object() && doc["context"].contains("host_name"))
    f.devices.push_back(doc["context"]["host_name"].get<std::string>());
  const Json& list = doc["benchmarks"];
  if (!list.is_array()) user_error_at(where) << "'benchmarks' must be an array";
  std::map<std::string, size_t> index;
  std::map<std::string, double> median_aggregate;
  auto entry_for = [&](const std::string& name) -> BenchmarkSamples& {
    auto [it, fresh] = index.emplace(name, f.benchmarks.size());
    if (fresh) {
      // schedlab's own names are fusion/size/scheduler/config.
      std::vector<std::string> parts;
      for (size_t at = 0, slash; at <= name.size(); at = slash + 1) {
        slash = std::min(name.find('/', at), name.size());
        parts.push_back(name.substr(at, slash - at));
      }
      f.benchmarks.push_back(
          {name, {}, {}, parts.size() >= 4 ? parts[2] : "", "", "", {}, "", "", ""});
    }
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
    f.emulated |= b.value("label", std::string()).find("cpu-emulation") != std::string::npos;
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

/// "fusion/sizes/scheduler", with the sizes as `sizes` lists them.
std::string scheduler_name(const Record& r, const std::string& sizes) {
  return fmt::format("{}/{}/{}", r.fusion, sizes, r.scheduler);
}

/// A sweep's JSONL: one benchmark per record (the last record of a point
/// wins: a rerun), then the heuristic-level and best-config views. Names
/// list sizes as the records do; matching uses them by name (`match`), so
/// that files from before declaration-order sizes pair with newer ones.
ResultFile read_sweep_jsonl(const std::string& path, Metric metric) {
  ResultFile f{path, "schedlab-jsonl", {}, {}, false};
  std::vector<Record> records;
  std::map<std::string, size_t> index;
  auto match_name = [](const Record& r) {
    return scheduler_name(r, r.size_key()) + "/" + r.config_label();
  };
  std::vector<std::string> device_types;
  for (Record& r : read_records(path).records) {
    std::string dev = r.device.name + (r.device.emulated ? " (CPU emulation)" : "");
    if (std::find(device_types.begin(), device_types.end(), dev) == device_types.end())
      device_types.push_back(dev);
    auto [it, fresh] = index.emplace(match_name(r), records.size());
    if (fresh)
      records.push_back(std::move(r));
    else
      records[it->second] = std::move(r);
  }
  // Points match by (fusion, sizes, scheduler, config) alone, so a file
  // with several device types (a merged campaign: docs/cluster.md) would
  // pair one type's record with another's.
  if (device_types.size() > 1)
    user_error_at(SourceLoc{path})
        << "compare: the file holds records of " << device_types.size() << " device types ("
        << fmt::format("{}", fmt::join(device_types, ", "))
        << "); expected one: compare one device type at a time (merge "
           "each type's parts into a file of its own)";
  // Points per (fusion, size, scheduler): one means a heuristic's choice.
  std::map<std::string, std::vector<const Record*>> by_scheduler;
  std::vector<std::string> order;
  for (const Record& r : records) {
    std::string key = scheduler_name(r, r.size_key());
    auto& v = by_scheduler[key];
    if (v.empty()) order.push_back(key);
    v.push_back(&r);
    std::string dev = r.device.name + (r.device.emulated ? " (CPU emulation)" : "");
    if (std::find(f.devices.begin(), f.devices.end(), dev) == f.devices.end())
      f.devices.push_back(dev);
    f.emulated |= r.device.emulated;
  }
  // `suffix` of "fusion/sizes/scheduler": "/config", "/best" or "".
  auto entry = [metric](const Record& r, const std::string& suffix) {
    BenchmarkSamples s{scheduler_name(r, r.size_label()) + suffix,
                       r.times_us,
                       {},
                       r.scheduler,
                       r.config_label(),
                       r.kernel_hash.empty() ? "" : r.kernel_hash + "|" + r.launch,
                       r.min_effect,
                       "",
                       scheduler_name(r, r.size_key()) + suffix,
                       r.group};
    if (r.status != Status::Ok) {
      s.failure = std::string(status_name(r.status)) + (r.error.empty() ? "" : ": " + r.error);
    } else if (metric == Metric::Predicted && r.prediction) {
      s.times_us = {r.prediction->predicted_us};
    } else if (metric == Metric::Predicted) {
      s.times_us.clear();
      s.failure = "no prediction (the sweep ran without a device model)";
    }
    if (s.min_effect == std::nullopt) s.min_effect = default_min_effect(r.device);
    return s;
  };
  for (const std::string& key : order) {
    const std::vector<const Record*>& rs = by_scheduler[key];
    if (rs.size() == 1) {
      f.benchmarks.push_back(entry(*rs.front(), ""));
      f.benchmarks.back().role = "heuristic";
      continue;
    }
    // The best as the table chooses it (verdict.h): by the paired estimate
    // against the lowest median; by the prediction when comparing those.
    std::vector<const Record*> ok;
    for (const Record* r : rs) {
      f.benchmarks.push_back(entry(*r, "/" + r->config_label()));
      if (r->status == Status::Ok && !r->times_us.empty() &&
          (metric == Metric::Time || r->prediction))
        ok.push_back(r);
    }
    const Record* best = nullptr;
    if (metric == Metric::Time) {
      best = best_by_ratio(ok, nullptr);
    } else {
      for (const Record* r : ok)
        if (!best || r->prediction->predicted_us < best->prediction->predicted_us) best = r;
    }
    if (best) {
      f.benchmarks.push_back(entry(*best, "/best"));
      f.benchmarks.back().role = "best";
    }
  }
  return f;
}

}  // namespace

std::string record_benchmark_name(const Record& r) {
  return scheduler_name(r, r.size_label()) + "/" + r.config_label();
}

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
}

}  // namespace schedlab::report
