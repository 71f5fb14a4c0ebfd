#include "schedlab/report/record.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace schedlab::report {

using Json = nlohmann::ordered_json;

namespace {

constexpr std::array<std::string_view, 9> kStatusNames = {
    "ok",      "rejected", "schedule_error", "compile_error", "wrong_result",
    "crashed", "timeout",  "racy",           "plugin_error"};

/// Reads `key` of `j` as T; a missing key or a wrong type is a user error at
/// `where` naming the key.
/// `parent` names the enclosing object ("device") in the message.
template <typename T>
T field(const Json& j, const char* key, const SourceLoc& where, const char* parent = nullptr) {
  std::string name = parent ? std::string(parent) + "." + key : std::string(key);
  if (!j.is_object())
    user_error_at(where) << "record field '" << (parent ? parent : "?") << "' must be an object";
  auto it = j.find(key);
  if (it == j.end()) user_error_at(where) << "record has no '" << name << "'";
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    user_error_at(where) << "record field '" << name << "' has the wrong type: " << it->dump();
  }
  return T{};
}

/// `key` of `j` as a (possibly null) double.
std::optional<double> optional_number(const Json& j, const char* key, const SourceLoc& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number())
    user_error_at(where) << "record field '" << key << "' must be a number or null, found "
                         << it->dump();
  return it->get<double>();
}

std::string join_pairs(const auto& pairs) {
  std::string s;
  for (const auto& [k, v] : pairs) s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
  return s;
}

/// Number-or-null for the derived figures.
Json number_or_null(std::optional<double> v) {
  return v ? Json(*v) : Json(nullptr);
}

/// A configuration object ({"block": "128"}) in file order; `what` names
/// the field in errors.
ConfigList config_of(const Json& j, const SourceLoc& where, const char* what) {
  if (!j.is_object()) user_error_at(where) << "record field '" << what << "' must be an object";
  ConfigList r;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string())
      user_error_at(where) << what << " value " << k << " must be a string, found " << v.dump();
    r.emplace_back(k, v.get<std::string>());
  }
  return r;
}

}  // namespace

std::string_view status_name(Status s) {
  return kStatusNames[static_cast<size_t>(s)];
}

std::optional<Status> parse_status(std::string_view name) {
  for (size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == name) return static_cast<Status>(i);
  return std::nullopt;
}

std::string Record::size_label() const {
  return join_pairs(sizes);
}

std::string Record::size_key() const {
  SizeList by_name = sizes;
  std::sort(by_name.begin(), by_name.end());
  return join_pairs(by_name) + (mesh > 0 ? ",mesh=" + std::to_string(mesh) : "");
}

SizeList Record::key_sizes() const {
  SizeList s = sizes;
  if (mesh > 0) s.emplace_back("mesh", mesh);
  return s;
}

std::string Record::config_label() const {
  return config.empty() ? std::string("(defaults)") : join_pairs(config);
}

Summary Record::summary() const {
  internal_assert(!times_us.empty())
      << "record " << fusion << " " << size_label() << " " << scheduler << " has no times";
  return summarize(times_us);
}

double Record::gbps() const {
  if (times_us.empty() || bytes_moved <= 0) return 0;
  double median = summary().median;
  return median > 0 ? static_cast<double>(bytes_moved) / (median * 1e-6) / 1e9 : 0;
}

std::optional<double> Record::fraction_of_peak() const {
  double g = gbps();
  if (device.emulated || device.peak_gbps <= 0 || g <= 0) return std::nullopt;
  return g / device.peak_gbps;
}

bool same_kernel(const Record& a, const Record& b) {
  return !a.kernel_hash.empty() && a.kernel_hash == b.kernel_hash &&
         (a.launch.empty() || b.launch.empty() || a.launch == b.launch);
}

bool paired(const Record& a, const Record& b) {
  return !a.group.empty() && a.group == b.group && a.times_us.size() == b.times_us.size() &&
         !a.times_us.empty();
}

double default_min_effect(const Device& d) {
  return d.emulated || d.backend == "cpu" ? 0.10 : 0.02;
}

double min_effect_of(const Record& r) {
  return r.min_effect.value_or(default_min_effect(r.device));
}

std::string to_json(const Record& r) {
  Json j;
  j["schema"] = kRecordSchema;
  j["sweep"] = r.sweep;
  j["fusion"] = r.fusion;
  Json sizes = Json::object();
  for (const auto& [k, v] : r.sizes) sizes[k] = v;
  j["sizes"] = sizes;
  j["size_label"] = r.size_label();
  j["scheduler"] = r.scheduler;
  j["plugin"] = {{"name", r.plugin}, {"version", r.plugin_version}, {"hash", r.plugin_hash}};
  Json config = Json::object();
  for (const auto& [k, v] : r.config) config[k] = v;
  j["config"] = config;
  j["config_hash"] = r.config_hash;
  j["kernel_hash"] = r.kernel_hash;
  j["device"] = {{"name", r.device.name},
                 {"backend", r.device.backend},
                 {"fingerprint", r.device.fingerprint},
                 {"emulated", r.device.emulated},
                 {"peak_gbps", r.device.peak_gbps}};
  j["status"] = status_name(r.status);
  j["error"] = r.error;
  j["times_us"] = r.times_us;
  // Derived, for other tools; readers recompute them from times_us.
  std::optional<Summary> s;
  if (!r.times_us.empty()) s = r.summary();
  j["median_us"] = number_or_null(s ? std::optional(s->median) : std::nullopt);
  j["q1_us"] = number_or_null(s ? std::optional(s->q1) : std::nullopt);
  j["q3_us"] = number_or_null(s ? std::optional(s->q3) : std::nullopt);
  j["iqr_us"] = number_or_null(s ? std::optional(s->iqr()) : std::nullopt);
  j["min_us"] = number_or_null(s ? std::optional(s->min) : std::nullopt);
  j["max_us"] = number_or_null(s ? std::optional(s->max) : std::nullopt);
  j["bytes_moved"] = r.bytes_moved;
  j["gbps"] = number_or_null(s && r.bytes_moved > 0 ? std::optional(r.gbps()) : std::nullopt);
  j["fraction_of_peak"] = number_or_null(r.fraction_of_peak());
  j["max_abs_error"] = number_or_null(r.max_abs_error);
  if (r.tolerance.mode == Tolerance::Mode::ErrorBound)
    j["tolerance"] = {
        {"mode", "error_bound"}, {"factor", r.tolerance.factor}, {"floor", r.tolerance.floor}};
  else
    j["tolerance"] = {{"mode", "user"}, {"rtol", r.tolerance.rtol}, {"atol", r.tolerance.atol}};
  if (r.prediction) {
    const Prediction& p = *r.prediction;
    j["prediction"] = {{"device", p.device},
                       {"predicted_us", p.predicted_us},
                       {"limiter", p.limiter},
                       {"bandwidth_fraction", p.bandwidth_fraction},
                       {"flops", p.flops},
                       {"tensor_us", p.tensor_us},
                       {"compute_fraction", p.compute_fraction},
                       {"profile", p.profile.empty() ? Json() : Json::parse(p.profile)}};
  }
  j["key"] = r.key;
  j["timestamp"] = r.timestamp;
  j["baseline"] = r.baseline;
  j["min_effect"] = number_or_null(r.min_effect);
  j["measurement"] = {{"group", r.group},
                      {"seed", r.seed},
                      {"launch", r.launch},
                      {"same_kernel_as", r.same_kernel_as},
                      {"reused", r.reused}};
  j["sweep_hash"] = r.sweep_hash;
  j["host"] = r.host;
  // A point in flight to or from an isolated worker has its own choice but
  // no search yet (the host names it when it writes the record).
  if (!r.strategy.empty() || !r.own_choice.empty()) {
    j["search"] = {{"strategy", r.strategy},
                   {"objective", r.objective},
                   {"evaluation", r.evaluation}};
    if (!r.own_choice.empty()) {
      Json own = Json::object();
      for (const auto& [k, v] : r.own_choice) own[k] = v;
      j["search"]["own_choice"] = own;
    }
  }
  if (!r.tuned.empty()) j["tuned"] = r.tuned;
  if (r.mesh > 0) j["mesh"] = r.mesh;
  if (r.comm_us) j["comm_us"] = *r.comm_us;
  if (r.comm_measured_us) j["comm_measured_us"] = *r.comm_measured_us;
  return j.dump();
}

Record record_from_json(std::string_view line, const SourceLoc& where) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error& e) {
    user_error_at(where) << "invalid JSON: " << e.what();
  }
  if (!j.is_object()) user_error_at(where) << "expected a JSON object, found " << j.type_name();
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || *schema != kRecordSchema)
    user_error_at(where) << "expected a record with \"schema\": \"" << kRecordSchema << "\", found "
                         << (schema == j.end() ? "no schema" : schema->dump());
  Record r;
  r.sweep = field<std::string>(j, "sweep", where);
  r.fusion = field<std::string>(j, "fusion", where);
  Json sizes = field<Json>(j, "sizes", where);
  if (!sizes.is_object()) user_error_at(where) << "record field 'sizes' must be an object";
  for (const auto& [k, v] : sizes.items()) {
    if (!v.is_number_integer())
      user_error_at(where) << "size " << k << " must be an integer, found " << v.dump();
    r.sizes.emplace_back(k, v.get<int64_t>());
  }
  r.scheduler = field<std::string>(j, "scheduler", where);
  Json plugin = field<Json>(j, "plugin", where);
  r.plugin = field<std::string>(plugin, "name", where, "plugin");
  r.plugin_version = field<std::string>(plugin, "version", where, "plugin");
  r.plugin_hash = field<std::string>(plugin, "hash", where, "plugin");
  r.config = config_of(field<Json>(j, "config", where), where, "config");
  r.config_hash = field<std::string>(j, "config_hash", where);
  r.kernel_hash = field<std::string>(j, "kernel_hash", where);
  Json dev = field<Json>(j, "device", where);
  r.device.name = field<std::string>(dev, "name", where, "device");
  r.device.backend = field<std::string>(dev, "backend", where, "device");
  if (r.device.backend != "cpu" && r.device.backend != "cuda")
    user_error_at(where) << "device.backend must be \"cpu\" or \"cuda\", found \""
                         << r.device.backend << "\"";
  r.device.fingerprint = field<std::string>(dev, "fingerprint", where, "device");
  r.device.emulated = field<bool>(dev, "emulated", where, "device");
  r.device.peak_gbps = field<double>(dev, "peak_gbps", where, "device");
  std::string status = field<std::string>(j, "status", where);
  std::optional<Status> st = parse_status(status);
  if (!st)
    user_error_at(where) << "unknown status '" << status
                         << "'; expected ok, rejected, schedule_error, compile_error, "
                            "wrong_result, crashed, timeout, racy or plugin_error";
  r.status = *st;
  r.error = field<std::string>(j, "error", where);
  r.times_us = field<std::vector<double>>(j, "times_us", where);
  if (r.status == Status::Ok && r.times_us.empty())
    user_error_at(where) << "record with status ok has no times_us";
  for (double t : r.times_us)
    if (!(t >= 0)) user_error_at(where) << "times_us must be non-negative, found " << t;
  r.bytes_moved = field<int64_t>(j, "bytes_moved", where);
  r.max_abs_error = optional_number(j, "max_abs_error", where);
  Json tol = field<Json>(j, "tolerance", where);
  const std::string mode =
      tol.contains("mode") ? field<std::string>(tol, "mode", where, "tolerance") : "user";
  if (mode == "error_bound") {
    r.tolerance.mode = Tolerance::Mode::ErrorBound;
    r.tolerance.factor = field<double>(tol, "factor", where, "tolerance");
    r.tolerance.floor = field<double>(tol, "floor", where, "tolerance");
  } else if (mode == "user") {
    r.tolerance.mode = Tolerance::Mode::User;
    r.tolerance.rtol = field<double>(tol, "rtol", where, "tolerance");
    r.tolerance.atol = field<double>(tol, "atol", where, "tolerance");
  } else {
    user_error_at(where) << "tolerance mode: expected error_bound or user, found '" << mode << "'";
  }
  if (auto it = j.find("prediction"); it != j.end() && !it->is_null()) {
    Prediction p;
    p.device = field<std::string>(*it, "device", where, "prediction");
    p.predicted_us = field<double>(*it, "predicted_us", where, "prediction");
    p.limiter = field<std::string>(*it, "limiter", where, "prediction");
    p.bandwidth_fraction = field<double>(*it, "bandwidth_fraction", where, "prediction");
    // Absent from records written before the compute terms (issue 36).
    for (auto [key, value] : {std::pair{"flops", &p.flops}, std::pair{"tensor_us", &p.tensor_us},
                              std::pair{"compute_fraction", &p.compute_fraction}})
      if (it->contains(key)) *value = field<double>(*it, key, where, "prediction");
    if (auto prof = it->find("profile"); prof != it->end() && !prof->is_null())
      p.profile = prof->dump();
    r.prediction = std::move(p);
  }
  r.key = field<std::string>(j, "key", where);
  r.timestamp = field<std::string>(j, "timestamp", where);
  // Optional: files from before these fields read as the defaults.
  if (j.contains("baseline")) r.baseline = field<std::string>(j, "baseline", where);
  r.min_effect = optional_number(j, "min_effect", where);
  if (j.contains("measurement")) {
    Json m = field<Json>(j, "measurement", where);
    r.group = field<std::string>(m, "group", where, "measurement");
    r.seed = field<uint64_t>(m, "seed", where, "measurement");
    r.launch = field<std::string>(m, "launch", where, "measurement");
    r.same_kernel_as = field<std::string>(m, "same_kernel_as", where, "measurement");
    r.reused = field<bool>(m, "reused", where, "measurement");
  }
  if (j.contains("sweep_hash")) r.sweep_hash = field<std::string>(j, "sweep_hash", where);
  if (j.contains("host")) r.host = field<std::string>(j, "host", where);
  if (j.contains("search")) {
    Json m = field<Json>(j, "search", where);
    r.strategy = field<std::string>(m, "strategy", where, "search");
    r.objective = field<std::string>(m, "objective", where, "search");
    r.evaluation = field<int64_t>(m, "evaluation", where, "search");
    if (m.contains("own_choice")) r.own_choice = config_of(m["own_choice"], where, "search.own_choice");
  }
  if (j.contains("tuned")) r.tuned = field<std::string>(j, "tuned", where);
  if (j.contains("mesh")) {
    r.mesh = field<int>(j, "mesh", where);
    if (r.mesh < 1) user_error_at(where) << "\"mesh\": expected a positive integer, found " << r.mesh;
  }
  r.comm_us = optional_number(j, "comm_us", where);
  r.comm_measured_us = optional_number(j, "comm_measured_us", where);
  return r;
}

RecordFile read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read results file '" << path << "'";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  RecordFile file;
  size_t start = 0;
  for (int line_no = 1; start < text.size(); ++line_no) {
    size_t nl = text.find('\n', start);
    bool complete = nl != std::string::npos;
    std::string_view line(text.data() + start, (complete ? nl : text.size()) - start);
    size_t next = complete ? nl + 1 : text.size();
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      SourceLoc where{path, line_no, 0};
      try {
        file.records.push_back(record_from_json(line, where));
        file.lines.push_back(line_no);
      } catch (const UserError& e) {
        if (complete) {
          // Never fatal and never deleted: the line stays where it is (a
          // rerun without --resume keeps the whole file as .prev).
          file.skipped.push_back({line_no, e.message()});
          fmt::print(stderr,
                     "warning: {}:{}: skipped a line that is not a record ({}); it stays in the "
                     "file\n",
                     path, line_no, e.message());
        } else {
          file.truncated_tail_bytes = line.size();  // killed mid-write: the point reruns
        }
      }
    }
    start = next;
  }
  return file;
}

void append_record(const std::string& path, const Record& r) {
  std::string line = to_json(r) + "\n";
  std::FILE* f = std::fopen(path.c_str(), "ab");
  user_assert(f != nullptr) << "cannot open results file '" << path
                            << "' for appending: " << std::strerror(errno);
  errno = 0;
  size_t written = std::fwrite(line.data(), 1, line.size(), f);
  bool ok = std::fflush(f) == 0 && written == line.size();
  int err = errno;
  ok &= std::fclose(f) == 0;
  if (err == 0) err = errno;
  // The reason matters: a full disk (ENOSPC) is not a permission problem.
  user_assert(ok) << "cannot write to results file '" << path << "': "
                  << (err != 0 ? std::strerror(err) : "short write");
}

size_t drop_truncated_tail(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return 0;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty() || text.back() == '\n') return 0;
  size_t nl = text.rfind('\n');
  size_t keep = nl == std::string::npos ? 0 : nl + 1;
  std::filesystem::resize_file(path, keep, ec);
  user_assert(!ec) << "cannot truncate results file '" << path << "': " << ec.message();
  return text.size() - keep;
}

std::string hash_hex(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string config_hash(const ConfigList& config) {
  std::string s;
  for (const auto& [k, v] : config) s += k + "=" + v + "\n";
  return hash_hex(s);
}

std::string record_key(std::string_view plugin_hash, std::string_view config_hash,
                       std::string_view fusion, const SizeList& sizes,
                       std::string_view device_fingerprint) {
  // A unit separator between fields: no field can run into the next.
  std::string s = fmt::format("{}\x1f{}\x1f{}\x1f", plugin_hash, config_hash, fusion);
  // By name: records list sizes in declaration order since issue 17, and
  // the keys of files written before (sorted by name) must stay the same.
  SizeList by_name = sizes;
  std::sort(by_name.begin(), by_name.end());
  for (const auto& [k, v] : by_name) s += fmt::format("{}={},", k, v);
  s += fmt::format("\x1f{}", device_fingerprint);
  return hash_hex(s);
}

std::string now_timestamp() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace schedlab::report
