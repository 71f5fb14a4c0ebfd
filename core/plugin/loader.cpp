// Loading one plugin (host.h's load_plugin, incomplete_elf): file checks,
// Boost.DLL, ABI negotiation and schema validation; a Python heuristic file
// through a copy of the built-in python.so (python_file.h). The calls into a loaded
// plugin are in host.cpp.
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
#include "library.h"
#include "python_file.h"
#include "schedlab/base/error.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"

namespace schedlab::plugin {

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

}  // namespace

std::shared_ptr<const Plugin> load_plugin(const std::string& file, const std::string& shadow_path) {
  std::shared_ptr<Plugin> p(new Plugin());
  p->path_ = file;
  p->loaded_path_ = file;
  user_assert(std::filesystem::is_regular_file(file))
      << "plugin file '" << file << "' does not exist or is not a regular file";
  // What is mapped: the file, its shadow copy, or for a Python heuristic this
  // load's own copy of python.so (python_file.h), bound to the file below.
  std::string mapped = file;
  std::optional<PythonLoad> python;
  if (is_python_file(file)) {
    python = prepare_python_load(file, shadow_path);
    p->path_ = python->display;
    p->loaded_path_ = python->snapshot;
    p->remove_loaded_ = !shadow_path.empty();
    mapped = python->host;
  } else if (!shadow_path.empty()) {
    // A private copy: the original can be rewritten while this one is
    // mapped, and a new path defeats dlopen's cache of already-open paths.
    std::error_code ec;
    std::filesystem::copy_file(file, shadow_path, std::filesystem::copy_options::overwrite_existing,
                               ec);
    user_assert(!ec) << "cannot copy plugin '" << file << "' to '" << shadow_path
                     << "': " << ec.message();
    p->loaded_path_ = mapped = shadow_path;
    p->remove_loaded_ = true;
  }
  const std::string& path = p->path_;  // what messages name: the user's file
  p->lib_ = std::make_unique<Plugin::Library>();
  if (python && python->host_is_temp) p->lib_->remove_after_unload = python->host;
  check_elf(mapped);

  try {
    // rtld_now: an unresolved symbol fails here, not in the middle of a call.
    p->lib_->lib.load(mapped, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    user_error << "cannot load plugin '" << path << "': " << e.what();
  }
  if (python) bind_python(p->lib_->lib, *python);
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
  // ABI 1.6; an older plugin wrote no priority (the field stayed zero).
  p->priority_ =
      SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v) >= 6 &&
              info.struct_size >= offsetof(SchedlabPluginInfo, priority) + sizeof info.priority
          ? info.priority
          : SCHEDLAB_PRIORITY_DEFAULT;
  user_assert(is_identifier(p->name_)) << "plugin '" << path << "' is named '" << p->name_
                                       << "'; a name must match [a-z_][a-z0-9_]*";
  p->schema_ = read_schema(info, "plugin '" + p->name_ + "' (" + path + ")");
  return p;
}

}  // namespace schedlab::plugin
