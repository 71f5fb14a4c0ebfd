// Plugins known by their description: the host's side of a plugin whose
// code runs only in isolated workers (schedlab/plugin/host.h,
// described_plugin and load_plugin_isolated).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>

#include "schedlab/base/error.h"
#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin/host.h"

namespace schedlab::plugin {
namespace {

using Json = nlohmann::json;

Json param_json(const ParamDesc& p) {
  return {{"name", p.name},
          {"kind", static_cast<int>(p.kind)},
          {"doc", p.doc},
          {"int_default", p.int_default},
          {"int_min", p.int_min},
          {"int_max", p.int_max},
          {"float_default", p.float_default},
          {"float_min", p.float_min},
          {"float_max", p.float_max},
          {"choices", p.choices},
          {"string_default", p.string_default}};
}

ParamDesc param_from(const Json& j) {
  ParamDesc p;
  p.name = j.at("name").get<std::string>();
  const int kind = j.at("kind").get<int>();
  user_assert(kind >= 0 && kind <= static_cast<int>(ParamKind::String))
      << "parameter '" << p.name << "': unknown kind " << kind;
  p.kind = static_cast<ParamKind>(kind);
  p.doc = j.at("doc").get<std::string>();
  p.int_default = j.at("int_default").get<int64_t>();
  p.int_min = j.at("int_min").get<int64_t>();
  p.int_max = j.at("int_max").get<int64_t>();
  p.float_default = j.at("float_default").get<double>();
  p.float_min = j.at("float_min").get<double>();
  p.float_max = j.at("float_max").get<double>();
  p.choices = j.at("choices").get<std::vector<std::string>>();
  p.string_default = j.at("string_default").get<std::string>();
  return p;
}

}  // namespace

std::string to_json(const PluginDescription& d) {
  Json schema = Json::array();
  for (const ParamDesc& p : d.schema) schema.push_back(param_json(p));
  return Json{{"name", d.name},
              {"version", d.version},
              {"description", d.description},
              {"abi_version", d.abi_version},
              {"priority", d.priority},
              {"path", d.path},
              {"loaded_path", d.loaded_path},
              {"schema", std::move(schema)}}
      .dump();
}

PluginDescription description_from_json(std::string_view json, const std::string& what) {
  PluginDescription d;
  try {
    const Json j = Json::parse(json);
    d.name = j.at("name").get<std::string>();
    d.version = j.at("version").get<std::string>();
    d.description = j.at("description").get<std::string>();
    d.abi_version = j.at("abi_version").get<uint32_t>();
    d.priority = j.at("priority").get<int32_t>();
    d.path = j.at("path").get<std::string>();
    d.loaded_path = j.at("loaded_path").get<std::string>();
    for (const Json& p : j.at("schema")) d.schema.push_back(param_from(p));
  } catch (const Json::exception& e) {
    user_error << what << ": malformed plugin description: " << e.what();
  }
  return d;
}

PluginDescription Plugin::info() const {
  return {name_, version_, description_, abi_version_, priority_, path_, loaded_path_, schema_};
}

std::shared_ptr<const Plugin> described_plugin(const PluginDescription& d, bool owns_loaded) {
  std::shared_ptr<Plugin> p(new Plugin());
  p->name_ = d.name;
  p->version_ = d.version;
  p->description_ = d.description;
  p->abi_version_ = d.abi_version;
  p->priority_ = d.priority;
  p->path_ = d.path;
  p->loaded_path_ = d.loaded_path;
  p->remove_loaded_ = owns_loaded;
  p->schema_ = d.schema;
  return p;
}

std::shared_ptr<const Plugin> load_plugin_isolated(const std::string& path,
                                                   const std::string& shadow_path,
                                                   std::chrono::milliseconds timeout) {
  user_assert(std::filesystem::is_regular_file(path))
      << "plugin file '" << path << "' does not exist or is not a regular file";
  isolate::Options io;
  io.timeout = timeout;
  const isolate::Outcome o = isolate::run_isolated(
      [&] {
        // Kept mapped and never destroyed: the child ends with _exit, and the
        // shadow copy it made is the host's from now on.
        auto* kept = new std::shared_ptr<const Plugin>(load_plugin(path, shadow_path));
        return to_json((*kept)->info());
      },
      io);
  if (!o.ok()) {
    // The shadow copy is ours to remove, whatever the child got to.
    std::error_code ec;
    if (!shadow_path.empty()) std::filesystem::remove(shadow_path, ec);
    using Kind = LoadFault::Kind;
    using Status = isolate::Outcome::Status;
    if (o.error == isolate::Outcome::Error::User)  // the loader's own diagnostic, unchanged
      throw LoadFault(Kind::Failed, o.message, o.loc);
    isolate::rethrow_error(o);  // an internal error stays ours
    const std::string what = isolate::describe(o);
    throw LoadFault(o.status == Status::Timeout ? Kind::Timeout : Kind::Crashed,
                    "plugin '" + path + "' " + what +
                        " while loading (its entry point or schema) in an isolated worker" +
                        isolate::report(o).substr(what.size()));
  }
  return described_plugin(description_from_json(o.payload, "plugin '" + path + "'"),
                          !shadow_path.empty());
}

}  // namespace schedlab::plugin
