// The process's plugins, and the plugin queries of `schedlab.schedule`
// (nvFuser's schedule.can_schedule, find_compatible_schedulers,
// compute_heuristics and schedule, with a plugin name for a SchedulerType
// and a HeuristicParams for its parameters): each asks the plugin's can_schedule
// through the C ABI on an unscheduled copy of the fusion bound to the
// inputs' sizes (sweep::first_accepting, the question `plugin: auto` asks).
#include <pybind11/stl.h>

#include <fmt/core.h>

#include "bindings.h"
#include "data_dirs.h"
#include "errors.h"
#include "execute.h"
#include "heuristic_params.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::python {

namespace {

/// fd's math, unscheduled, bound to the sizes of `inputs`.
sweep::BoundFusion bound_copy(Definition& d, const py::sequence& inputs, const char* what) {
  return guarded(ErrorKind::Error, {what}, [&] {
    d.freeze();
    HostInputs in = host_inputs(*d.plain, inputs, what);
    frontend::FusionDefinition copy;
    copy.fusion = d.unscheduled_copy();
    return sweep::BoundFusion{d.def.path, std::move(copy), std::move(in.sizes)};
  });
}

/// Whether `p` takes the whole of `bf` at its default parameters, and why not.
std::pair<bool, std::string> accepts(const std::shared_ptr<const plugin::Plugin>& p,
                                     sweep::BoundFusion& bf, const char* what) {
  std::vector<std::string> reasons;
  auto taker = guarded(ErrorKind::Error, {what},
                       [&] { return sweep::first_accepting({p}, bf, std::nullopt, &reasons); });
  if (taker) return {true, ""};
  const std::string prefix = p->name() + ": ";
  std::string why = reasons.empty() ? "" : reasons.front();
  if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
  return {false, why};
}

/// `values` as a dict {name: value}: ints and floats as numbers, bools as
/// bools, choices and strings as str (format_value's text, unquoted).
py::dict params_dict(const plugin::Plugin& p, const plugin::ParamValues& values) {
  py::dict out;
  for (size_t i = 0; i < values.size() && i < p.schema().size(); ++i) {
    const std::string text = p.format_value(i, values[i]);
    py::object v;
    switch (p.schema()[i].kind) {
      case plugin::ParamKind::Int: v = py::int_(std::stoll(text)); break;
      case plugin::ParamKind::Float: v = py::float_(std::stod(text)); break;
      case plugin::ParamKind::Bool: v = py::bool_(text == "true"); break;
      default:
        v = py::str(text.size() >= 2 && text.front() == '"' ? text.substr(1, text.size() - 2) : text);
    }
    out[py::str(p.schema()[i].name)] = v;
  }
  return out;
}

/// What schedule.schedule applies: the inputs and the settings of its
/// arguments (see its docstring).
struct Applied {
  py::sequence inputs;
  std::vector<std::string> settings;
};

Applied applied(const std::string& plugin, const py::object& inputs_or_params,
                const py::object& params) {
  const bool first_params = py::isinstance<HeuristicParams>(inputs_or_params);
  if (first_params && !params.is_none())
    raise(ErrorKind::Error,
          "schedule: expected schedule(fd, plugin, params) or schedule(fd, plugin, inputs, "
          "params), found parameters in both places",
          {"schedule"});
  const py::object& given = first_params ? inputs_or_params : params;
  Applied a;
  if (std::optional<py::dict> values = params_values(given, plugin, "schedule"))
    a.settings = settings_of(*values);
  a.inputs = first_params ? py::sequence(inputs_or_params.cast<const HeuristicParams&>().inputs)
                          : py::sequence(inputs_or_params);
  return a;
}

}  // namespace

/// The registry of the plugin search path (data_dirs.h), made once. Never
/// destroyed, as the backends (execute.cpp): a plugin's library must not
/// be unloaded during interpreter exit.
plugin::Registry& process_registry() {
  static auto* r = new plugin::Registry(plugin_dirs());
  return *r;
}

/// A dict of parameters as --set's "key=value" settings.
std::vector<std::string> settings_of(const py::dict& params) {
  std::vector<std::string> settings;
  for (const auto& [k, v] : params) {
    std::string value = py::isinstance<py::bool_>(v) ? (v.cast<bool>() ? "true" : "false")
                                                      : py::str(v).cast<std::string>();
    settings.push_back(py::str(k).cast<std::string>() + "=" + value);
  }
  return settings;
}

const std::vector<std::shared_ptr<const plugin::Plugin>>& segmenter_plugins() {
  static auto* plugins = [] {
    std::vector<std::string> errors;
    auto* p = new std::vector<std::shared_ptr<const plugin::Plugin>>(
        sweep::segmenter_plugins(process_registry(), {}, &errors));
    for (const std::string& e : errors) PyErr_WarnEx(PyExc_RuntimeWarning, e.c_str(), 1);
    return p;
  }();
  return *plugins;
}

void bind_plugins(py::module_& schedule) {
  bind_heuristic_params(schedule);
  schedule.def(
      "can_schedule",
      [](const DefinitionPtr& fd, const std::string& plugin, const py::sequence& inputs) {
        auto p = guarded(ErrorKind::Error, {"can_schedule"}, [&] { return process_registry().get(plugin); });
        sweep::BoundFusion bf = bound_copy(*fd, inputs, "can_schedule");
        return accepts(p, bf, "can_schedule");
      },
      py::arg("fusion"), py::arg("plugin"), py::arg("inputs"),
      "(accepted, reason): whether the plugin (a name: `schedlab plugins` lists them) takes "
      "the whole fusion at the inputs' sizes, with its default parameters");
  schedule.def(
      "find_compatible_schedulers",
      [](const DefinitionPtr& fd, const py::sequence& inputs) {
        sweep::BoundFusion bf = bound_copy(*fd, inputs, "find_compatible_schedulers");
        std::vector<std::string> names;
        for (const auto& p : segmenter_plugins())
          if (accepts(p, bf, "find_compatible_schedulers").first) names.push_back(p->name());
        return names;
      },
      py::arg("fusion"), py::arg("inputs"),
      "The names of the segmenter's plugins that take the whole fusion, in priority order");
  schedule.def(
      "compute_heuristics",
      [](const DefinitionPtr& fd, const std::string& plugin, const py::sequence& inputs) {
        auto p = guarded(ErrorKind::Error, {"compute_heuristics"},
                         [&] { return process_registry().get(plugin); });
        // The plugin's compute_params, as schedule_with_plugin asks it, on a
        // throwaway copy (it schedules that copy too).
        sweep::BoundFusion bf = bound_copy(*fd, inputs, "compute_heuristics");
        sweep::PluginRun run = guarded(ErrorKind::Schedule, {"compute_heuristics"}, [&] {
          return sweep::schedule_with_plugin(*p, bf, std::nullopt, {});
        });
        if (!run.accepted)
          raise(ErrorKind::Schedule, plugin + " cannot schedule the fusion: " + run.reason,
                {"compute_heuristics"});
        return HeuristicParams{plugin, params_dict(*p, run.own), inputs};
      },
      py::arg("fusion"), py::arg("plugin"), py::arg("inputs"),
      "The plugin's own parameters for the fusion at the inputs' sizes, as an editable "
      "HeuristicParams (params.vector = '1', params['persist'] = 2); "
      "schedule.schedule(fd, plugin, params) applies them");
  schedule.def(
      "schedule",
      [](const DefinitionPtr& fd, const std::string& plugin, const py::object& inputs_or_params,
         const py::object& params) {
        const Applied a = applied(plugin, inputs_or_params, params);
        auto p = guarded(ErrorKind::Error, {"schedule"}, [&] { return process_registry().get(plugin); });
        fd->freeze();
        HostInputs in = host_inputs(*fd->plain, a.inputs, "schedule");
        // The definition's own fusion, scheduled in place (then manual_execute
        // runs it), lent to the bound fusion for the call.
        sweep::BoundFusion bf{fd->def.path, std::move(fd->def), std::move(in.sizes)};
        sweep::PluginRun run;
        try {
          run = sweep::schedule_with_plugin(*p, bf, std::nullopt, a.settings);
        } catch (const UserError& e) {
          fd->def = std::move(bf.def);
          raise(ErrorKind::Schedule, e, {"schedule"});
        }
        fd->def = std::move(bf.def);
        if (!run.accepted)
          raise(ErrorKind::Schedule, plugin + " cannot schedule the fusion: " + run.reason,
                {"schedule"});
        return HeuristicParams{plugin, params_dict(*p, run.params), a.inputs};
      },
      py::arg("fusion"), py::arg("plugin"), py::arg("inputs_or_params"),
      py::arg("params") = py::none(),
      "Schedules the fusion in place with the plugin: schedule(fd, plugin, params) with a "
      "HeuristicParams from compute_heuristics (edited), or schedule(fd, plugin, inputs, "
      "params=None) with params a HeuristicParams or a dict overriding the plugin's choice; "
      "returns the parameters applied (a HeuristicParams)");
}

}  // namespace schedlab::python
