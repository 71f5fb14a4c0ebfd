// schedlab/plugin/host.h's Plugin: its parameters (defaults, --set
// settings, formatting, schema checks) and the calls into it, with every
// failure made a schedlab error; the model device. Loading is in loader.cpp,
// descriptions (isolation) in described.cpp, the C table in host_api.cpp.
#include "schedlab/plugin/host.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "host_api.h"
#include "library.h"
#include "python_file.h"
#include "schedlab/base/error.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin.h"

namespace schedlab::plugin {

runtime::DeviceProperties model_device() { return model::model_device_properties(); }

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Int:
      return "int";
    case ParamKind::Float:
      return "float";
    case ParamKind::Bool:
      return "bool";
    case ParamKind::Choice:
      return "choice";
    case ParamKind::String:
      return "string";
  }
  return "?";
}

std::string_view status_name(int32_t status) {
  switch (status) {
    case SCHEDLAB_OK:
      return "SCHEDLAB_OK";
    case SCHEDLAB_ERR_USER:
      return "SCHEDLAB_ERR_USER";
    case SCHEDLAB_ERR_INTERNAL:
      return "SCHEDLAB_ERR_INTERNAL";
    case SCHEDLAB_ERR_INVALID_ARGUMENT:
      return "SCHEDLAB_ERR_INVALID_ARGUMENT";
    case SCHEDLAB_ERR_PLUGIN:
      return "SCHEDLAB_ERR_PLUGIN";
    case SCHEDLAB_ERR_VERSION:
      return "SCHEDLAB_ERR_VERSION";
    case SCHEDLAB_ERR_UNSUPPORTED:
      return "SCHEDLAB_ERR_UNSUPPORTED";
    default:
      return "an unknown status";
  }
}

namespace {

std::string number_str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// Host values in the C layout, with the host's struct_size as stride.
struct CParams {
  std::vector<SchedlabParamValue> values;
  SchedlabParamSet set{};
  explicit CParams(const ParamValues& v) {
    for (const ParamValue& p : v) {
      SchedlabParamValue c{};
      c.struct_size = sizeof c;
      c.kind = static_cast<int32_t>(p.kind);
      c.int_value = p.i;
      c.float_value = p.f;
      c.string_value = p.s.c_str();  // lives in the caller's ParamValues
      values.push_back(c);
    }
    set.struct_size = sizeof set;
    set.count = static_cast<uint32_t>(values.size());
    set.values = values.empty() ? nullptr : values.data();
    set.tuned = nullptr;
    set.tuned_source = "";
  }
  // `set` points into `values`: not copyable or movable.
  CParams(const CParams&) = delete;
  CParams& operator=(const CParams&) = delete;
};

}  // namespace

Plugin::Plugin() = default;

Plugin::~Plugin() {
  lib_.reset();  // dlclose first: the mapping goes before its file
  if (remove_loaded_) {
    std::error_code ec;
    std::filesystem::remove(loaded_path_, ec);
    if (is_python_file(loaded_path_)) remove_python_snapshot_files(loaded_path_);
  }
}

const Plugin::Library& Plugin::code(const char* call) const {
  internal_assert(lib_ != nullptr) << "plugin '" << name_ << "' " << call
                                   << ": the plugin is loaded in an isolated worker, and its code "
                                      "never runs in this process";
  return *lib_;
}

std::string Plugin::abi_str() const {
  return version_str(abi_version_);
}

// ---- parameters

std::string ParamDesc::domain_str() const {
  switch (kind) {
    case ParamKind::Int:
      return "int in [" + std::to_string(int_min) + ", " + std::to_string(int_max) + "]";
    case ParamKind::Float:
      return "float in [" + number_str(float_min) + ", " + number_str(float_max) + "]";
    case ParamKind::Bool:
      return "bool";
    case ParamKind::Choice: {
      std::string s = "one of {";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      return s + "}";
    }
    case ParamKind::String:
      return "string";
  }
  return "?";
}

ParamValues Plugin::defaults() const {
  ParamValues r;
  for (const ParamDesc& d : schema_)
    r.push_back({d.kind, d.int_default, d.float_default, d.string_default});
  return r;
}

std::string Plugin::format_value(size_t index, const ParamValue& v) const {
  const ParamDesc& d = schema_.at(index);
  switch (d.kind) {
    case ParamKind::Int:
      return std::to_string(v.i);
    case ParamKind::Float:
      return number_str(v.f);
    case ParamKind::Bool:
      return v.i ? "true" : "false";
    case ParamKind::Choice:
      return v.i >= 0 && v.i < static_cast<int64_t>(d.choices.size())
                 ? d.choices[static_cast<size_t>(v.i)]
                 : "?";
    case ParamKind::String: {
      std::string q = "\"";
      for (char c : v.s) q += c == '"' || c == '\\' ? std::string{'\\', c} : std::string{c};
      return q + "\"";
    }
  }
  return "?";
}

std::string Plugin::format(const ParamValues& values) const {
  std::string s;
  for (size_t i = 0; i < schema_.size() && i < values.size(); ++i)
    s += (i ? ", " : "") + schema_[i].name + "=" + format_value(i, values[i]);
  return s;
}

ParamValues Plugin::with_settings(ParamValues base,
                                  const std::vector<std::string>& settings) const {
  std::set<std::string> given;
  for (const std::string& kv : settings) {
    size_t eq = kv.find('=');
    user_assert(eq != std::string::npos && eq > 0)
        << "--set: expected KEY=VALUE, found '" << kv << "'";
    std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
    auto it = std::find_if(schema_.begin(), schema_.end(),
                           [&](const ParamDesc& d) { return d.name == key; });
    if (it == schema_.end()) {
      std::string names;
      for (const ParamDesc& d : schema_) names += (names.empty() ? "" : ", ") + d.name;
      user_error << "--set: plugin '" << name_ << "' has no parameter '" << key
                 << "' (its parameters: " << (names.empty() ? "none" : names) << ")";
    }
    user_assert(given.insert(key).second) << "--set: " << key << " is given twice";
    const ParamDesc& d = *it;
    ParamValue& v = base[static_cast<size_t>(it - schema_.begin())];
    std::string bad = "--set " + kv + ": expected " + d.domain_str() + ", found '" + text + "'";
    switch (d.kind) {
      case ParamKind::Int: {
        size_t used = 0;
        long long x = 0;
        try {
          x = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        user_assert(used == text.size() && used > 0 && x >= d.int_min && x <= d.int_max) << bad;
        v.i = x;
        break;
      }
      case ParamKind::Float: {
        size_t used = 0;
        double x = 0;
        try {
          x = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        user_assert(used == text.size() && used > 0 && x >= d.float_min && x <= d.float_max) << bad;
        v.f = x;
        break;
      }
      case ParamKind::Bool:
        user_assert(text == "true" || text == "false" || text == "1" || text == "0") << bad;
        v.i = text == "true" || text == "1";
        break;
      case ParamKind::Choice: {
        auto c = std::find(d.choices.begin(), d.choices.end(), text);
        user_assert(c != d.choices.end()) << bad;
        v.i = c - d.choices.begin();
        break;
      }
      case ParamKind::String:  // everything after the first '=', as given
        v.s = text;
        break;
    }
  }
  return base;
}

void Plugin::check_values(const ParamValues& values, const char* what, bool from_plugin) const {
  user_assert(values.size() == schema_.size())
      << "plugin '" << name_ << "' " << what << ": expected " << schema_.size()
      << " parameter values, got " << values.size();
  for (size_t i = 0; i < values.size(); ++i) {
    const ParamDesc& d = schema_[i];
    const ParamValue& v = values[i];
    bool ok = v.kind == d.kind;
    switch (d.kind) {
      case ParamKind::Int:
        ok = ok && v.i >= d.int_min && v.i <= d.int_max;
        break;
      case ParamKind::Float:
        ok = ok && v.f >= d.float_min && v.f <= d.float_max;
        break;
      case ParamKind::Bool:
        ok = ok && (v.i == 0 || v.i == 1);
        break;
      case ParamKind::Choice:
        ok = ok && v.i >= 0 && v.i < static_cast<int64_t>(d.choices.size());
        break;
      case ParamKind::String:
        break;
    }
    if (ok) continue;
    std::string m = "plugin '" + name_ + "' " + what + ": parameter '" + d.name +
                    "' = " + (d.kind == ParamKind::Float ? number_str(v.f) : std::to_string(v.i)) +
                    " is not " + (v.kind == d.kind ? "" : "of its kind, ") + d.domain_str();
    if (from_plugin) throw PluginFault(m + " (the plugin wrote a value outside its own schema)");
    user_error << m;
  }
}

// ---- calls

void Plugin::fail(const char* what, int32_t status) const {
  if (!known_status(status))
    throw PluginFault("plugin '" + name_ + "' " + what + " returned " + std::to_string(status) +
                      ", which is not a SCHEDLAB_* status (the plugin's failure, not the "
                      "schedule's)");
  const char* last = guarded(name_, "last_error", [&] { return lib_->info.last_error(); });
  std::string message = last != nullptr ? last : "(no message)";
  // A primitive's user error comes back unchanged; schedlab's own bug stays
  // one. Every other status is the plugin's own failure.
  if (status == SCHEDLAB_ERR_USER) throw UserError({}, message);
  if (status == SCHEDLAB_ERR_INTERNAL) throw InternalError(message);
  throw PluginFault("plugin '" + name_ + "' " + what + " failed with " +
                    std::string(status_name(status)) + " (" + std::to_string(status) +
                    "): " + message);
}

Verdict Plugin::can_schedule(HostSegment& seg, const ParamValues& params) const {
  check_values(params, "can_schedule");
  CParams c(params);
  SchedlabSegment ctx;
  ctx.segment = &seg;
  CallScope scope(name_, "can_schedule");
  int32_t accepted = 0;
  char reason[1024] = {0};
  int32_t status = guarded(name_, "can_schedule", [&] {
    return code("can_schedule").info.can_schedule(&ctx, &c.set, &accepted, reason, sizeof reason);
  });
  if (status != SCHEDLAB_OK) fail("can_schedule", status);
  if (accepted != 0 && accepted != 1)
    throw PluginFault("plugin '" + name_ + "' can_schedule set *accepted to " +
                      std::to_string(accepted) + "; expected 0 or 1");
  reason[sizeof reason - 1] = '\0';
  return {accepted != 0, accepted != 0 ? "" : reason};
}

ParamValues Plugin::compute_params(HostSegment& seg) const {
  ParamValues values = defaults();
  CParams c(values);
  // ABI 1.4: the tuned configuration on offer, in the same layout.
  std::optional<CParams> tuned;
  if (seg.tuned != nullptr) {
    check_values(seg.tuned->values, "tuned configuration");
    tuned.emplace(seg.tuned->values);
    c.set.tuned = tuned->values.empty() ? nullptr : tuned->values.data();
    c.set.tuned_source = seg.tuned->source.c_str();
  }
  SchedlabSegment ctx;
  ctx.segment = &seg;
  CallScope scope(name_, "compute_params");
  int32_t status = guarded(name_, "compute_params", [&] {
    return code("compute_params").info.compute_params(&ctx, &c.set);
  });
  if (status != SCHEDLAB_OK) fail("compute_params", status);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i].kind = static_cast<ParamKind>(
        std::clamp<int32_t>(c.values[i].kind, SCHEDLAB_PARAM_INT, SCHEDLAB_PARAM_STRING));
    values[i].i = c.values[i].int_value;
    values[i].f = c.values[i].float_value;
    // Copied now: the plugin's string is only promised until its next call.
    if (values[i].kind == ParamKind::String) {
      // It may still point at values[i].s itself (left as the default).
      std::string copy = c.values[i].string_value != nullptr ? c.values[i].string_value : "";
      values[i].s = std::move(copy);
    }
  }
  check_values(values, "compute_params", /*from_plugin=*/true);
  return values;
}

void Plugin::schedule(HostSegment& seg, const ParamValues& params) const {
  user_assert(seg.fusion != nullptr) << "plugin '" << name_ << "' schedule: no fusion to schedule";
  check_values(params, "schedule");
  CParams c(params);
  SchedlabSegment ctx;
  ctx.segment = &seg;
  CallScope scope(name_, "schedule");
  int32_t status =
      guarded(name_, "schedule", [&] { return code("schedule").info.schedule(&ctx, &c.set); });
  if (status != SCHEDLAB_OK) fail("schedule", status);
}

}  // namespace schedlab::plugin
