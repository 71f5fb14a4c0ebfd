// The process's plugins, and the plugin queries of `schedlab.schedule`
// (nvFuser's schedule.can_schedule and find_compatible_schedulers, with a
// plugin name for a SchedulerType): each asks the plugin's can_schedule
// through the C ABI on an unscheduled copy of the fusion bound to the
// inputs' sizes (sweep::first_accepting, the question `plugin: auto` asks).
#include <pybind11/stl.h>

#include "bindings.h"
#include "data_dirs.h"
#include "errors.h"
#include "execute.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::python {

namespace {

/// The registry of the plugin search path (data_dirs.h), made once. Never
/// destroyed, as the backends (execute.cpp): a plugin's library must not
/// be unloaded during interpreter exit.
plugin::Registry& registry() {
  static auto* r = new plugin::Registry(plugin_dirs());
  return *r;
}

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

}  // namespace

const std::vector<std::shared_ptr<const plugin::Plugin>>& segmenter_plugins() {
  static auto* plugins = [] {
    std::vector<std::string> errors;
    auto* p = new std::vector<std::shared_ptr<const plugin::Plugin>>(
        sweep::segmenter_plugins(registry(), {}, &errors));
    for (const std::string& e : errors) PyErr_WarnEx(PyExc_RuntimeWarning, e.c_str(), 1);
    return p;
  }();
  return *plugins;
}

void bind_plugins(py::module_& schedule) {
  schedule.def(
      "can_schedule",
      [](const DefinitionPtr& fd, const std::string& plugin, const py::sequence& inputs) {
        auto p = guarded(ErrorKind::Error, {"can_schedule"}, [&] { return registry().get(plugin); });
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
}

}  // namespace schedlab::python
