// schedlab/plugin: the host side of the plugin ABI (docs/plugins.md).
//
// Owns: loading one plugin library (Boost.DLL), ABI negotiation, schema
// validation, the C API table handed to plugins (core/plugin/host_api.cpp),
// and calls into a plugin with every failure turned back into a schedlab
// error. The registry, search path and hot reload are in registry.h.
// May depend on: schedlab/base, ir, sched, frontend (schedule scripts, for
// the apply_schedule_script entry), runtime (DeviceProperties) and the C ABI
// in plugin-api/include/schedlab/plugin.h.
// Invariants: no exception crosses into a plugin and none comes out of one;
// a plugin's failure surfaces here as a UserError (or InternalError when
// schedlab itself failed); a plugin that breaks the ABI (an exception through
// it, a status that is no SCHEDLAB_* code, a value outside its own schema) as
// a PluginFault, the UserError that blames the plugin rather than the
// schedule. A user error raised by a primitive the plugin called comes back
// with its message unchanged. A loaded Plugin keeps its library mapped until
// the last shared_ptr to it is released, so a caller mid-call is never pulled
// from under by a reload.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/ir/fusion.h"
#include "schedlab/plugin/transform_log.h"
#include "schedlab/runtime/device.h"

struct SchedlabPluginInfo;

namespace schedlab::plugin {

/// A plugin broke the ABI contract: it let a C++ exception escape through the
/// C ABI, returned a status that is no SCHEDLAB_* code or one that only the
/// plugin can have caused (SCHEDLAB_ERR_PLUGIN, _INVALID_ARGUMENT, _VERSION,
/// _UNSUPPORTED), or wrote an out-param outside the contract (compute_params
/// values outside its schema, *accepted other than 0 or 1). A sweep records
/// it as `plugin_error`, the CLI exits 1: the plugin failed, not the user's
/// request (schedule_error, exit 2) and not schedlab (exit 3).
///
/// It derives from UserError on purpose. The exit codes (bench/command.h) put
/// plugin misuse in the user channel, and every handler written before this class
/// (loading a directory, reload, the segmenter asking can_schedule, the
/// isolated child's error frame, the fuzzer) must keep treating it as "not a
/// bug in schedlab". A separate root class would fall through any handler not
/// updated for it into the internal-error path, the very misblame this type
/// exists to prevent; the few places that classify catch it first.
class PluginFault : public UserError {
 public:
  explicit PluginFault(const std::string& message) : UserError({}, message) {}
};

/// The device heuristics see on the CPU backend: "schedlab-model-sm90", an
/// H100 SXM's figures (the table is in plugin.h, SchedlabDeviceProperties).
runtime::DeviceProperties model_device();

struct TunedOffer;

/// What a plugin schedules, as the host holds it: a fusion (the whole one, or
/// a segment the segmenter cut out: segment::SegmentedGroup), the concrete
/// sizes it runs at, and the device. The plugin sees it through the opaque
/// SchedlabSegment handle (core/plugin/host_api.h), as plugin_api::Segment.
struct HostSegment {
  ir::Fusion* fusion = nullptr;                       ///< scheduled in place
  ir::SizeBindings sizes;                             ///< every named size, bound
  runtime::DeviceProperties device = model_device();  ///< the target (is_model: a device model's)
  /// When set, every scheduling primitive the plugin applies is appended
  /// (transform_log.h): the schedule as data, for the host to replay.
  TransformLog* log = nullptr;
  /// The tuned configuration offered to compute_params (ABI 1.4,
  /// SchedlabParamSet.tuned), checked against the plugin's schema; null: none.
  const TunedOffer* tuned = nullptr;
  /// The segmenter makes this offer (ABI 1.5, offered_by_segmenter): a
  /// refusal cuts the segment apart instead of failing it.
  bool from_segmenter = false;
};

/// Kinds of plugin parameter (SchedlabParamKind). String: ABI 1.1 and later.
enum class ParamKind { Int, Float, Bool, Choice, String };
std::string_view param_kind_name(ParamKind k);

/// One entry of a plugin's parameter schema, copied out of the plugin.
struct ParamDesc {
  std::string name;                  ///< identifier, unique in the schema
  ParamKind kind = ParamKind::Int;   ///< what values look like
  std::string doc;                   ///< one line
  int64_t int_default = 0;           ///< Int, Bool (0/1), Choice (an index)
  int64_t int_min = 0;               ///< Int: smallest value
  int64_t int_max = 0;               ///< Int: largest value
  double float_default = 0;          ///< Float
  double float_min = 0;              ///< Float: smallest value
  double float_max = 0;              ///< Float: largest value
  std::vector<std::string> choices;  ///< Choice: the names
  std::string string_default;        ///< String
  /// "int in [32, 1024]", "bool", "one of {inner, outer}", "string".
  std::string domain_str() const;
};

/// One parameter value; which field counts depends on the kind.
struct ParamValue {
  ParamKind kind = ParamKind::Int;
  int64_t i = 0;  ///< Int, Bool (0/1), Choice (an index)
  double f = 0;   ///< Float
  std::string s;  ///< String
};
/// One value per schema entry, in schema order.
using ParamValues = std::vector<ParamValue>;

/// A tuned configuration the host offers a plugin's compute_params (ABI
/// 1.4): one value per schema entry, and where it comes from.
struct TunedOffer {
  std::vector<ParamValue> values;
  std::string source;  ///< "tuned.yaml:12: softmax N=any K=[4096, 8191]"
};

/// can_schedule's answer.
struct Verdict {
  bool accepted = false;
  std::string reason;  ///< the plugin's reason when !accepted
};

/// Where plugin log lines go (stderr by default). The sink may be called
/// from any thread that runs a plugin.
using LogSink =
    std::function<void(int level, const std::string& plugin, const std::string& message)>;
void set_log_sink(LogSink sink);

/// What the host knows of a plugin without running its code: what loading
/// read from it, and where it was mapped. Under isolation (`--isolate`) a
/// worker process loads the plugin and the host keeps only this.
struct PluginDescription {
  std::string name, version, description;
  uint32_t abi_version = 0;
  int32_t priority = 0;     ///< Plugin::priority()
  std::string path;         ///< the file it was loaded from
  std::string loaded_path;  ///< the file mapped (a shadow copy, or path)
  std::vector<ParamDesc> schema;
};
/// A JSON object, and back (user error naming `what` on anything malformed).
std::string to_json(const PluginDescription& d);
PluginDescription description_from_json(std::string_view json, const std::string& what);

/// One loaded plugin library. Immutable once loaded; shared between callers.
class Plugin {
 public:
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  /// The ABI the plugin was built against (SCHEDLAB_PLUGIN_ABI_VERSION_OF).
  uint32_t abi_version() const { return abi_version_; }
  /// "1.0".
  std::string abi_str() const;
  /// The order in which the segmenter offers it segments (ABI 1.6,
  /// SchedlabPluginInfo.priority): higher first, equal priorities by name;
  /// SCHEDLAB_PRIORITY_DEFAULT (0) for a plugin of an older ABI.
  int32_t priority() const { return priority_; }
  /// Whether the segmenter may offer it a segment (priority() >= 0): false
  /// for a plugin that cannot volunteer (`script` needs a schedule text).
  bool volunteers() const { return priority_ >= 0; }
  /// Whether a sweep's `auto` scheduler offers it a whole fusion
  /// (priority() > 0): a heuristic for one kind of fusion, tried in priority
  /// order as nvFuser's segmenter tries its schedulers. A general one left at
  /// the default, 0 (autosched, or any plugin of an ABI before 1.6), is
  /// offered only the segmenter's pieces.
  bool offered_by_auto() const { return priority_ > 0; }
  /// The file it was loaded from (not the shadow copy).
  const std::string& path() const { return path_; }
  /// The file actually mapped: the shadow copy, or path() when loaded in place.
  const std::string& loaded_path() const { return loaded_path_; }
  const std::vector<ParamDesc>& schema() const { return schema_; }
  /// False for a plugin known by its description only (described_plugin):
  /// its code runs elsewhere, and can_schedule, compute_params and schedule
  /// are internal errors here.
  bool loaded() const { return lib_ != nullptr; }
  PluginDescription info() const;

  ParamValues defaults() const;
  /// Applies "key=value" settings (--set) on top of `base`. user_error for an
  /// unknown key (listing the schema), a malformed value or one out of range.
  ParamValues with_settings(ParamValues base, const std::vector<std::string>& settings) const;
  /// `block=128, vectorize=true, order=inner, script="a.sched"`.
  std::string format(const ParamValues& values) const;
  /// One value of schema entry `index`: `128`, `true`, `inner`; a String in
  /// double quotes with `"` and `\` escaped (`"a.sched"`, `""`), so that one
  /// holding ", " or "=" reads unambiguously in format()'s list.
  std::string format_value(size_t index, const ParamValue& value) const;

  Verdict can_schedule(HostSegment& seg, const ParamValues& params) const;
  /// The heuristic's choice for seg, checked against the schema.
  ParamValues compute_params(HostSegment& seg) const;
  /// Schedules seg.fusion in place.
  void schedule(HostSegment& seg, const ParamValues& params) const;

 private:
  friend std::shared_ptr<const Plugin> load_plugin(const std::string&, const std::string&);
  friend std::shared_ptr<const Plugin> described_plugin(const PluginDescription&, bool);
  struct Library;
  Plugin();
  /// The mapping, for a call into the plugin; internal error when not loaded().
  const Library& code(const char* call) const;
  /// Throws the schedlab error for a failed plugin call.
  [[noreturn]] void fail(const char* what, int32_t status) const;
  /// user_error for values out of the schema; a PluginFault when `from_plugin`
  /// (the plugin itself wrote them: compute_params).
  void check_values(const ParamValues& v, const char* what, bool from_plugin = false) const;

  std::unique_ptr<Library> lib_;  ///< the mapping and the plugin's function table
  std::string name_, version_, description_;
  uint32_t abi_version_ = 0;
  int32_t priority_ = 0;
  std::string path_, loaded_path_;
  bool remove_loaded_ = false;  ///< loaded_path_ is a shadow copy to delete on unload
  std::vector<ParamDesc> schema_;
};

/// Loads the plugin at `path`: checks the file is a complete ELF image, maps
/// it (a copy in shadow_path when that is non-empty, so the original can be
/// rewritten freely), calls its entry point, negotiates the ABI and validates
/// the schema. user_error naming the file and the reason otherwise.
std::shared_ptr<const Plugin> load_plugin(const std::string& path,
                                          const std::string& shadow_path = "");

/// Whether `path` names a Python heuristic file (it ends in ".py"), which
/// load_plugin serves through a copy of the built-in python.so: the one place
/// that says so, for the loader, the registry, the sweep spec and watch.
bool is_python_file(const std::string& path);

/// Why the file at `path` is not yet a complete ELF image (an empty file, the
/// start of a header, tables or loadable segments past its end), or "" when
/// it is complete, is missing, or is no ELF image at all (load_plugin names
/// those). A file in this state is still being written, or its writer
/// stopped; load_plugin refuses it ("is incomplete: ...") and the Watcher
/// waits for it.
std::string incomplete_elf(const std::string& path);

/// load_plugin_isolated's error when the plugin failed in its worker: it
/// crashed, hung or exited while loading, or the loader rejected what it
/// did. The plugin's own fault, which a sweep records for its scheduler
/// (crashed, timeout, plugin_error) instead of stopping.
class LoadFault : public UserError {
 public:
  enum class Kind { Crashed, Timeout, Failed };
  LoadFault(Kind kind, const std::string& message, SourceLoc loc = {})
      : UserError(std::move(loc), message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// A plugin known by its description only (Plugin::loaded() is false).
/// `owns_loaded`: d.loaded_path is a shadow copy to delete when the last
/// reference goes, as a loaded plugin's is.
std::shared_ptr<const Plugin> described_plugin(const PluginDescription& d, bool owns_loaded);
/// load_plugin in a forked child (isolate.h), which keeps the shadow copy it
/// made: none of the plugin's code runs in this process. A missing file is
/// the loader's user error; anything that goes wrong in the child (a crash,
/// a hang past `timeout`, an exit, a loader error) is a LoadFault naming the
/// file and what happened.
std::shared_ptr<const Plugin> load_plugin_isolated(const std::string& path,
                                                   const std::string& shadow_path,
                                                   std::chrono::milliseconds timeout);

/// The plugin call the calling thread is inside: the plugin's name and the
/// call (SCHEDLAB_PLUGIN_ENTRY_NAME, "can_schedule", "compute_params",
/// "schedule"); both null outside any call, and in a child forked since.
/// Reads thread-local state only, so an exit hook may use it.
struct PluginCall {
  const char* plugin = nullptr;
  const char* call = nullptr;
};
PluginCall current_plugin_call() noexcept;

/// Name of a status ("SCHEDLAB_ERR_USER"), for messages.
std::string_view status_name(int32_t status);

}  // namespace schedlab::plugin
