// The table's CSV and JSON renderings: see schedlab/report/table.h.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "schedlab/report/table.h"

namespace schedlab::report {

using Json = nlohmann::ordered_json;

namespace {

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

std::string render_csv(const std::vector<Table>& tables) {
  std::string out =
      "sweep,device,backend,emulated,fusion,size,scheduler,baseline,points,ok_points,config,"
      "repetitions,median_us,q1_us,q3_us,iqr_us,min_us,max_us,gbps,percent_of_peak,speedup,"
      "p_value,significant,predicted_us,predicted_on,no_valid_point,verdict,time_ratio,ratio_lo,"
      "ratio_hi,cpu_verdict,mesh,comm_us\n";
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
        // The verdict as the console prints it, and the ratio it words (this
        // time / the baseline's: > 1 slower) with its interval.
        const std::optional<RatioEstimate>& e = c.estimate;
        f.insert(f.end(), {c.verdict, e ? fmt::format("{}", e->ratio) : "",
                           e ? fmt::format("{}", e->lo) : "", e ? fmt::format("{}", e->hi) : "",
                           c.measured_verdict});
        // A sweep over meshes (Record::mesh): the row's ranks and predicted communication.
        f.insert(f.end(), {row.mesh > 0 ? std::to_string(row.mesh) : "", opt_num(row.comm_us)});
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
          j["verdict"] = c.verdict;
          if (!c.measured_verdict.empty()) j["cpu_verdict"] = c.measured_verdict;
          j["time_ratio"] = c.estimate ? Json(c.estimate->ratio) : Json(nullptr);
          j["interval"] =
              c.estimate ? Json::array({c.estimate->lo, c.estimate->hi}) : Json(nullptr);
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
      Json r = {{"fusion", row.fusion}, {"size", row.size_label}, {"cells", cells}};
      if (row.mesh > 0) {
        r["mesh"] = row.mesh;
        r["comm_us"] = opt_json(row.comm_us);
      }
      rows.push_back(std::move(r));
    }
    Json s = {
        {"sweep", t.sweep},
        {"device",
         {{"name", t.device.name},
          {"backend", t.device.backend},
          {"fingerprint", t.device.fingerprint},
          {"emulated", t.device.emulated},
          {"peak_gbps", t.device.peak_gbps}}},
        {"timings", t.device.emulated ? kEmulationLabel : "GPU"},
        {"baseline", t.baseline},
        {"ranked_by", t.predicted_on.empty() ? "paired estimate" : "predicted " + t.predicted_on},
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
