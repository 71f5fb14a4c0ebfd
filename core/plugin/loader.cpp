// Loading one plugin: file checks, Boost.DLL, ABI negotiation, schema
// validation; and the calls into it, with every failure made a schedlab error.
#include <elf.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "host_api.h"
#include "schedlab/base/error.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"

namespace schedlab::plugin {

runtime::DeviceProperties model_device() {
  runtime::DeviceProperties d;
  d.name = "schedlab-model-sm90";
  d.arch = "sm_90";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.registers_per_block = 65536;
  d.registers_per_sm = 65536;
  d.shared_bytes_per_block = 48 * 1024;
  d.shared_bytes_per_block_optin = 227 * 1024;
  d.shared_bytes_per_sm = 228 * 1024;
  d.l2_bytes = 50ull * 1024 * 1024;
  d.global_memory_bytes = 80ull * 1024 * 1024 * 1024;
  d.memory_clock_khz = 2619000;
  d.memory_bus_bits = 5120;
  d.peak_bandwidth_bytes_per_s = 3.35e12;
  return d;
}

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

std::string version_str(uint32_t v) {
  return std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v)) + "." +
         std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v));
}

std::string number_str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

// A file still being written (an empty file just truncated, a header without
// its tables, intact program headers over segments past the end) is one
// condition with one message; the watcher waits on it, and load_plugin
// refuses it before dlopen would map segments past the end and fault later.
std::string incomplete_elf(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return "";
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  auto got = static_cast<size_t>(in.gcount());
  if (got < sizeof eh) {
    // Incomplete when what is there begins an ELF header (nothing, or the
    // start of the magic); anything else is not an ELF image at all.
    if (std::memcmp(eh.e_ident, ELFMAG, std::min<size_t>(got, SELFMAG)) != 0) return "";
    return std::to_string(size) + " bytes, shorter than the " + std::to_string(sizeof eh) +
           "-byte ELF header";
  }
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return "";
  auto past = [&](uint64_t end, const char* what) -> std::string {
    if (end <= size) return "";
    return std::string("its ") + what + " ends at byte " + std::to_string(end) +
           " but the file has " + std::to_string(size) + " bytes";
  };
  if (std::string why =
          past(eh.e_phoff + uint64_t{eh.e_phnum} * eh.e_phentsize, "program header table");
      !why.empty())
    return why;
  if (std::string why =
          past(eh.e_shoff + uint64_t{eh.e_shnum} * eh.e_shentsize, "section header table");
      !why.empty())
    return why;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + uint64_t(i) * eh.e_phentsize));
    in.read(reinterpret_cast<char*>(&ph), sizeof ph);
    if (!in.good()) return "its program header " + std::to_string(i) + " cannot be read";
    if (ph.p_type == PT_LOAD)
      if (std::string why = past(ph.p_offset + ph.p_filesz, "loadable segment"); !why.empty())
        return why;
  }
  return "";
}

namespace {

/// A plugin file must be a complete 64-bit ELF shared object before dlopen
/// sees it.
void check_elf(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  user_assert(!ec) << "cannot read plugin file '" << path << "': " << ec.message();
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot open plugin file '" << path << "': " << std::strerror(errno);
  std::string why = incomplete_elf(path);
  user_assert(why.empty()) << "plugin file '" << path << "' is incomplete: " << why
                           << "; is it still being written?";
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  user_assert(in.gcount() == sizeof eh && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0)
      << "plugin file '" << path << "' is not an ELF shared object (" << size
      << " bytes); is it still being written?";
  user_assert(eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_DYN)
      << "plugin file '" << path << "' is not a 64-bit ELF shared object";
}

bool is_identifier(const std::string& s) {
  static const std::regex re("[a-z_][a-z0-9_]*");
  return std::regex_match(s, re);
}

/// Copies the plugin's descriptor array (stride params[0].struct_size) and
/// checks it: names, kinds (those of the plugin's ABI minor), defaults within
/// range, choices.
std::vector<ParamDesc> read_schema(const SchedlabPluginInfo& info, const std::string& where) {
  std::vector<ParamDesc> r;
  if (info.param_count == 0) return r;
  user_assert(info.params != nullptr)
      << where << ": declares " << info.param_count << " parameters but its params table is null";
  size_t stride = info.params[0].struct_size;
  user_assert(stride >= offsetof(SchedlabParamDesc, int_default))
      << where << ": parameter descriptor struct_size " << stride << " is too small";
  std::set<std::string> seen;
  for (uint32_t i = 0; i < info.param_count; ++i) {
    SchedlabParamDesc d{};
    std::memcpy(&d, reinterpret_cast<const char*>(info.params) + i * stride,
                std::min(stride, sizeof d));
    ParamDesc p;
    user_assert(d.name != nullptr) << where << ": parameter " << i << " has no name";
    p.name = d.name;
    std::string at = where + ": parameter '" + p.name + "'";
    user_assert(is_identifier(p.name)) << at << ": a name must match [a-z_][a-z0-9_]*";
    user_assert(seen.insert(p.name).second) << at << " is declared twice";
    // A kind newer than the plugin's ABI is a value it cannot have meant.
    const int32_t last_kind = SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(info.abi_version) >= 1
                                  ? SCHEDLAB_PARAM_STRING
                                  : SCHEDLAB_PARAM_CHOICE;
    user_assert(d.kind >= SCHEDLAB_PARAM_INT && d.kind <= last_kind)
        << at << ": unknown kind " << d.kind
        << (d.kind == SCHEDLAB_PARAM_STRING
                ? " (SCHEDLAB_PARAM_STRING is ABI 1.1; the plugin reports ABI " +
                      version_str(info.abi_version) + ")"
                : std::string());
    p.kind = static_cast<ParamKind>(d.kind);
    p.doc = d.doc != nullptr ? d.doc : "";
    p.int_default = d.int_default;
    switch (p.kind) {
      case ParamKind::Int:
        p.int_min = d.int_min;
        p.int_max = d.int_max;
        user_assert(p.int_min <= p.int_max)
            << at << ": range [" << p.int_min << ", " << p.int_max << "] is empty";
        user_assert(p.int_default >= p.int_min && p.int_default <= p.int_max)
            << at << ": default " << p.int_default << " is outside [" << p.int_min << ", "
            << p.int_max << "]";
        break;
      case ParamKind::Float:
        p.float_default = d.float_default;
        p.float_min = d.float_min;
        p.float_max = d.float_max;
        user_assert(std::isfinite(p.float_min) && std::isfinite(p.float_max) &&
                    p.float_min <= p.float_max)
            << at << ": range [" << p.float_min << ", " << p.float_max
            << "] is not a finite interval";
        user_assert(p.float_default >= p.float_min && p.float_default <= p.float_max)
            << at << ": default " << p.float_default << " is outside [" << p.float_min << ", "
            << p.float_max << "]";
        break;
      case ParamKind::Bool:
        p.int_max = 1;
        user_assert(p.int_default == 0 || p.int_default == 1)
            << at << ": a bool default must be 0 or 1, got " << p.int_default;
        break;
      case ParamKind::Choice: {
        user_assert(d.choice_count > 0 && d.choices != nullptr) << at << ": a choice needs choices";
        std::set<std::string> names;
        for (uint32_t c = 0; c < d.choice_count; ++c) {
          user_assert(d.choices[c] != nullptr) << at << ": choice " << c << " is null";
          user_assert(names.insert(d.choices[c]).second)
              << at << ": choice '" << d.choices[c] << "' is listed twice";
          p.choices.emplace_back(d.choices[c]);
        }
        user_assert(p.int_default >= 0 && p.int_default < static_cast<int64_t>(p.choices.size()))
            << at << ": default index " << p.int_default << " is not one of its "
            << p.choices.size() << " choices";
        break;
      }
      case ParamKind::String:
        user_assert(d.string_default != nullptr)
            << at << ": a string needs a string_default (\"\" for none)";
        p.string_default = d.string_default;
        p.int_default = 0;
        break;
    }
    r.push_back(std::move(p));
  }
  return r;
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

/// One call into the plugin. An exception that crosses the C ABI (a plugin
/// that fills SchedlabPluginInfo itself and lets one escape; SCHEDLAB_PLUGIN
/// turns them into statuses) is the plugin's fault: a PluginFault naming the
/// call and the exception, never std::terminate or "a bug in schedlab".
/// Host errors never arrive here: host_api.cpp turns them into statuses.
template <typename Call>
auto guarded(const std::string& plugin, const char* what, Call&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    throw PluginFault("plugin '" + plugin + "' " + what +
                      " let a C++ exception escape through the C ABI (" + e.what() +
                      "); expected a status (SCHEDLAB_PLUGIN converts exceptions)");
  } catch (...) {
    throw PluginFault("plugin '" + plugin + "' " + what +
                      " let a C++ exception of a non-standard type escape through the C ABI; "
                      "expected a status (SCHEDLAB_PLUGIN converts exceptions)");
  }
}

/// Whether `status` is one plugin.h defines.
bool known_status(int32_t status) {
  return status <= SCHEDLAB_OK && status >= SCHEDLAB_ERR_UNSUPPORTED;
}

}  // namespace

/// The mapping and the plugin's function table. The library is unloaded
/// when this is destroyed, so nothing may call through `info` after that.
struct Plugin::Library {
  boost::dll::shared_library lib;
  SchedlabPluginInfo info{};
};

Plugin::Plugin() = default;

Plugin::~Plugin() {
  lib_.reset();  // dlclose first: the mapping goes before its file
  if (remove_loaded_) {
    std::error_code ec;
    std::filesystem::remove(loaded_path_, ec);
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

std::shared_ptr<const Plugin> load_plugin(const std::string& path, const std::string& shadow_path) {
  std::shared_ptr<Plugin> p(new Plugin());
  p->path_ = path;
  p->loaded_path_ = path;
  user_assert(std::filesystem::is_regular_file(path))
      << "plugin file '" << path << "' does not exist or is not a regular file";
  if (!shadow_path.empty()) {
    // A private copy: the original can be rewritten while this one is
    // mapped, and a new path defeats dlopen's cache of already-open paths.
    std::error_code ec;
    std::filesystem::copy_file(path, shadow_path, std::filesystem::copy_options::overwrite_existing,
                               ec);
    user_assert(!ec) << "cannot copy plugin '" << path << "' to '" << shadow_path
                     << "': " << ec.message();
    p->loaded_path_ = shadow_path;
    p->remove_loaded_ = true;
  }
  check_elf(p->loaded_path_);

  p->lib_ = std::make_unique<Plugin::Library>();
  try {
    // rtld_now: an unresolved symbol fails here, not in the middle of a call.
    p->lib_->lib.load(p->loaded_path_,
                      boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    user_error << "cannot load plugin '" << path << "': " << e.what();
  }
  user_assert(p->lib_->lib.has(SCHEDLAB_PLUGIN_ENTRY_NAME))
      << "plugin '" << path << "' has no entry point '" << SCHEDLAB_PLUGIN_ENTRY_NAME
      << "' (define it with SCHEDLAB_PLUGIN(Class) and build with schedlab_add_plugin)";
  auto entry = p->lib_->lib.get<int32_t(const SchedlabHostApi*, SchedlabPluginInfo*)>(
      SCHEDLAB_PLUGIN_ENTRY_NAME);

  SchedlabPluginInfo& info = p->lib_->info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  int32_t status;
  {
    CallScope scope(path, SCHEDLAB_PLUGIN_ENTRY_NAME);
    status = guarded(path, SCHEDLAB_PLUGIN_ENTRY_NAME, [&] { return entry(host_api(), &info); });
  }
  // Negotiate before anything else: a plugin of another version may not
  // even lay the rest of the struct out as we do.
  uint32_t host_v = SCHEDLAB_PLUGIN_ABI_VERSION, v = info.abi_version;
  user_assert(v != 0) << "plugin '" << path
                      << "' did not report the plugin ABI it was built against"
                      << " (entry returned " << status << ")";
  user_assert(SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v) == SCHEDLAB_PLUGIN_ABI_MAJOR)
      << "plugin '" << path << "' was built against plugin ABI " << version_str(v)
      << ", but this host speaks ABI " << version_str(host_v)
      << ": a different major version never loads; rebuild the plugin against this host's plugin.h";
  user_assert(SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v) <= SCHEDLAB_PLUGIN_ABI_MINOR)
      << "plugin '" << path << "' was built against plugin ABI " << version_str(v)
      << ", newer than this host's ABI " << version_str(host_v)
      << ": upgrade schedlab or rebuild the plugin against this host's plugin.h";
  if (!known_status(status))
    throw PluginFault("plugin '" + path + "': entry point returned " + std::to_string(status) +
                      ", which is not a SCHEDLAB_* status (a broken plugin)");
  if (status != SCHEDLAB_OK) {
    std::string why = info.last_error != nullptr ? info.last_error() : "(no message)";
    user_error << "plugin '" << path << "': entry point failed with " << status_name(status) << " ("
               << status << "): " << why;
  }
  // Fields past what the plugin wrote stay zero (it may be older than us).
  user_assert(info.struct_size <= sizeof info &&
              info.struct_size >= offsetof(SchedlabPluginInfo, schedule) + sizeof info.schedule)
      << "plugin '" << path << "' wrote an info struct of " << info.struct_size << " bytes; ABI "
      << version_str(v) << " needs "
      << offsetof(SchedlabPluginInfo, schedule) + sizeof info.schedule;
  auto need = [&](bool ok, const char* field) {
    user_assert(ok) << "plugin '" << path << "' leaves '" << field << "' null in its info";
  };
  need(info.name != nullptr, "name");
  need(info.version != nullptr, "version");
  need(info.description != nullptr, "description");
  need(info.last_error != nullptr, "last_error");
  need(info.can_schedule != nullptr, "can_schedule");
  need(info.compute_params != nullptr, "compute_params");
  need(info.schedule != nullptr, "schedule");
  p->name_ = info.name;
  p->version_ = info.version;
  p->description_ = info.description;
  p->abi_version_ = v;
  user_assert(is_identifier(p->name_)) << "plugin '" << path << "' is named '" << p->name_
                                       << "'; a name must match [a-z_][a-z0-9_]*";
  p->schema_ = read_schema(info, "plugin '" + p->name_ + "' (" + path + ")");
  return p;
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

Verdict Plugin::can_schedule(Segment& seg, const ParamValues& params) const {
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

ParamValues Plugin::compute_params(Segment& seg) const {
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

void Plugin::schedule(Segment& seg, const ParamValues& params) const {
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
