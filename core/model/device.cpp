// Device model files: configs/devices/<name>.yaml, one flat mapping of
// published figures, every key required.
#include "schedlab/model/device.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <set>
#include <type_traits>
#include <variant>

#include "../base/yaml_reader.h"
#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"

namespace schedlab::model {
namespace {

namespace fs = std::filesystem;
using schedlab::kind_name;

/// A numeric key and the field it fills: integers of either width or a real.
using Field = std::variant<int DeviceModel::*, int64_t DeviceModel::*, double DeviceModel::*>;
struct NumericKey {
  const char* key;
  Field field;
};

// The file's keys in the order the shipped files list them.
const std::vector<NumericKey>& numeric_keys() {
  static const std::vector<NumericKey> keys = {
      {"sm_count", &DeviceModel::sm_count},
      {"sm_clock_mhz", &DeviceModel::sm_clock_mhz},
      {"dram_bandwidth_gbs", &DeviceModel::dram_bandwidth_gbs},
      {"copy_bandwidth_gbs", &DeviceModel::copy_bandwidth_gbs},
      {"l2_bytes", &DeviceModel::l2_bytes},
      {"shared_bytes_per_sm", &DeviceModel::shared_bytes_per_sm},
      {"shared_bytes_per_block", &DeviceModel::shared_bytes_per_block},
      {"shared_reserved_per_block", &DeviceModel::shared_reserved_per_block},
      {"shared_alloc_granularity", &DeviceModel::shared_alloc_granularity},
      {"shared_banks", &DeviceModel::shared_banks},
      {"registers_per_sm", &DeviceModel::registers_per_sm},
      {"registers_per_block", &DeviceModel::registers_per_block},
      {"registers_per_thread", &DeviceModel::registers_per_thread},
      {"register_alloc_granularity", &DeviceModel::register_alloc_granularity},
      {"max_threads_per_block", &DeviceModel::max_threads_per_block},
      {"max_threads_per_sm", &DeviceModel::max_threads_per_sm},
      {"max_warps_per_sm", &DeviceModel::max_warps_per_sm},
      {"max_blocks_per_sm", &DeviceModel::max_blocks_per_sm},
      {"warp_schedulers_per_sm", &DeviceModel::warp_schedulers_per_sm},
      {"issue_efficiency", &DeviceModel::issue_efficiency},
      {"launch_overhead_us", &DeviceModel::launch_overhead_us},
      {"dram_latency_ns", &DeviceModel::dram_latency_ns},
      {"barrier_ns", &DeviceModel::barrier_ns},
      {"shuffle_ns", &DeviceModel::shuffle_ns},
      {"grid_sync_ns", &DeviceModel::grid_sync_ns},
      {"tensor_tflops", &DeviceModel::tensor_tflops},
      {"mma_sync_tflops", &DeviceModel::mma_sync_tflops},
      {"fp32_tflops", &DeviceModel::fp32_tflops},
      {"memory_bytes", &DeviceModel::memory_bytes},
  };
  return keys;
}

std::vector<std::string> all_keys() {
  std::vector<std::string> keys = {"name", "description", "arch"};
  for (const NumericKey& k : numeric_keys()) keys.emplace_back(k.key);
  keys.emplace_back("interconnect");
  return keys;
}

/// Keys a device file may leave out (their defaults in DeviceModel's docs).
std::vector<std::string> optional_keys() {
  return {"grid_barrier_us"};
}

class Loader {
 public:
  Loader(std::string text, const std::string& path) : r_(std::move(text), path) {}

  DeviceModel run() {
    const std::vector<std::string> keys = all_keys();
    std::vector<std::string> allowed = keys;
    for (const std::string& k : optional_keys()) allowed.push_back(k);
    const YAML::Node root =
        r_.root_mapping("a device model (a mapping of name, arch, sm_count, ...)", allowed, keys,
                        "the device model")
            .map;

    DeviceModel d;
    d.path = r_.path();
    d.name = text_of(root["name"], "name");
    std::string stem = fs::path(r_.path()).stem().string();
    if (d.name != stem)
      user_error_at(r_.loc(root["name"]))
          << "name: expected '" << stem << "' (the file's name), found '" << d.name << "'";
    d.description = text_of(root["description"], "description");
    d.arch = text_of(root["arch"], "arch");
    static const std::regex kArch("sm_[0-9]{2,3}");
    if (!std::regex_match(d.arch, kArch))
      user_error_at(r_.loc(root["arch"]))
          << "arch: expected sm_XX (e.g. sm_90), found '" << d.arch << "'";
    for (const NumericKey& k : numeric_keys()) {
      const YAML::Node n = root[k.key];
      std::visit([&](auto member) { d.*member = number_of<decltype(d.*member)>(n, k.key); },
                 k.field);
    }
    d.grid_barrier_us = root["grid_barrier_us"]
                            ? number_of<double>(root["grid_barrier_us"], "grid_barrier_us")
                            : kDefaultGridBarrierUs;
    d.interconnect = interconnect_of(root["interconnect"]);
    check_limits(root, d);
    return d;
  }

 private:
  std::string text_of(const YAML::Node& n, const char* key) const {
    if (!n.IsScalar() || n.Scalar().empty())
      user_error_at(r_.loc(n)) << key << ": expected text, found " << kind_name(n);
    return n.Scalar();
  }

  /// A positive number of type T (int, int64_t or double; integers exact).
  template <typename T>
  std::remove_cvref_t<T> number_of(const YAML::Node& n, const char* key) const {
    using V = std::remove_cvref_t<T>;
    if constexpr (std::is_floating_point_v<V>) {
      std::optional<double> v;
      if (n.IsScalar()) v = as_double(n.Scalar());
      if (!v || !std::isfinite(*v) || *v <= 0)
        user_error_at(r_.loc(n)) << key << ": expected a positive number, found " << kind_name(n);
      return *v;
    } else {
      std::optional<int64_t> v;
      if (n.IsScalar()) v = as_int(n.Scalar());
      if (!v || *v <= 0 || *v > std::numeric_limits<V>::max())
        user_error_at(r_.loc(n)) << key << ": expected a positive integer, found " << kind_name(n);
      return static_cast<V>(*v);
    }
  }

  /// `interconnect: {link: TEXT, bandwidth_gbs: N, latency_us: N}`.
  Interconnect interconnect_of(const YAML::Node& n) const {
    if (!n.IsMap() || n.size() == 0)
      user_error_at(r_.loc(n)) << "interconnect: expected a mapping of link, bandwidth_gbs and "
                                  "latency_us, found "
                               << kind_name(n);
    const std::vector<std::string> keys = {"link", "bandwidth_gbs", "latency_us"};
    r_.check_keys(n, keys, "interconnect");
    for (const std::string& k : keys)
      if (!n[k]) user_error_at(r_.loc(n)) << "interconnect: missing required key '" << k << "'";
    Interconnect ic;
    ic.link = text_of(n["link"], "interconnect.link");
    ic.bandwidth_gbs = number_of<double>(n["bandwidth_gbs"], "interconnect.bandwidth_gbs");
    ic.latency_us = number_of<double>(n["latency_us"], "interconnect.latency_us");
    return ic;
  }

  /// Limits that contradict each other would make occupancy meaningless.
  void check_limits(const YAML::Node& root, const DeviceModel& d) const {
    auto require = [&](bool ok, const char* key, const std::string& expected, int64_t found) {
      if (!ok)
        user_error_at(r_.loc(root[key])) << key << ": expected " << expected << ", found " << found;
    };
    require(d.shared_bytes_per_block + d.shared_reserved_per_block <= d.shared_bytes_per_sm,
            "shared_bytes_per_block",
            "at most shared_bytes_per_sm - shared_reserved_per_block = " +
                std::to_string(d.shared_bytes_per_sm - d.shared_reserved_per_block),
            d.shared_bytes_per_block);
    require(d.registers_per_block <= d.registers_per_sm, "registers_per_block",
            "at most registers_per_sm = " + std::to_string(d.registers_per_sm),
            d.registers_per_block);
    require(d.max_threads_per_sm == 32 * d.max_warps_per_sm, "max_threads_per_sm",
            "32 * max_warps_per_sm = " + std::to_string(32 * d.max_warps_per_sm),
            d.max_threads_per_sm);
    require(d.max_threads_per_block <= d.max_threads_per_sm, "max_threads_per_block",
            "at most max_threads_per_sm = " + std::to_string(d.max_threads_per_sm),
            d.max_threads_per_block);
    if (d.mma_sync_tflops > d.tensor_tflops)
      user_error_at(r_.loc(root["mma_sync_tflops"]))
          << "mma_sync_tflops: expected at most tensor_tflops = " << d.tensor_tflops << ", found "
          << d.mma_sync_tflops;
    if (d.copy_bandwidth_gbs > d.dram_bandwidth_gbs)
      user_error_at(r_.loc(root["copy_bandwidth_gbs"]))
          << "copy_bandwidth_gbs: expected at most dram_bandwidth_gbs = " << d.dram_bandwidth_gbs
          << ", found " << d.copy_bandwidth_gbs;
  }

  YamlReader r_;
};

}  // namespace

int DeviceModel::cc_major() const {
  // "sm_90" -> 9, "sm_100" -> 10: every digit but the last.
  std::string digits = arch.substr(3);
  return std::stoi(digits.substr(0, digits.size() - 1));
}

runtime::DeviceProperties device_properties(const DeviceModel& d) {
  runtime::DeviceProperties p;
  p.name = d.description + " (model)";
  p.arch = d.arch;
  p.is_model = true;
  p.cc_major = d.cc_major();
  p.cc_minor = std::stoi(d.arch.substr(d.arch.size() - 1));
  p.sm_count = d.sm_count;
  p.warp_size = 32;
  p.max_threads_per_block = d.max_threads_per_block;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.registers_per_block = d.registers_per_block;
  p.registers_per_sm = d.registers_per_sm;
  p.shared_bytes_per_block = 48 * 1024;  // without opt-in, on every architecture since 7.0
  p.shared_bytes_per_block_optin = size_t(d.shared_bytes_per_block);
  p.shared_bytes_per_sm = size_t(d.shared_bytes_per_sm);
  p.l2_bytes = size_t(d.l2_bytes);
  p.global_memory_bytes = size_t(d.memory_bytes);
  p.peak_bandwidth_bytes_per_s = d.dram_bandwidth_gbs * 1e9;
  return p;
}

const runtime::DeviceProperties& model_device_properties() {
  static const runtime::DeviceProperties p = [] {
    runtime::DeviceProperties r =
        device_properties(load_device(kHeuristicDevice, {base::config_dir() + "/devices"}));
    r.name = "schedlab-model-" + std::string(r.arch).erase(2, 1);  // "sm_90" -> "sm90"
    return r;
  }();
  return p;
}

DeviceModel load_device_file(const std::string& path) {
  std::ifstream in(path);
  user_assert(bool(in)) << "cannot read device model '" << path << "'";
  std::string text(std::istreambuf_iterator<char>(in), {});
  return Loader(std::move(text), path).run();
}

std::vector<std::string> device_names(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".yaml") names.insert(e.path().stem().string());
  }
  return {names.begin(), names.end()};
}

DeviceModel load_device(const std::string& name_or_path, const std::vector<std::string>& dirs) {
  if (name_or_path.ends_with(".yaml") || name_or_path.find('/') != std::string::npos)
    return load_device_file(name_or_path);
  for (const std::string& dir : dirs) {
    fs::path p = fs::path(dir) / (name_or_path + ".yaml");
    if (fs::exists(p)) return load_device_file(p.string());
  }
  std::vector<std::string> names = device_names(dirs);
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string hint = closest_name(name_or_path, names);
  throw UserError({}, "--device: no device model named '" + name_or_path + "'; expected one of " +
                          (list.empty() ? "(none found)" : list) +
                          (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
}

}  // namespace schedlab::model
