// A plugin's parameters in Python (docs/python.md, "Plugins"):
// schedlab.schedule.HeuristicParams, what schedule.compute_heuristics and
// schedule.schedule return, as nvFuser's HeuristicParams objects are: the
// values editable as attributes (params.vector = "1") or items
// (params["vector"]), with the plugin they belong to and the inputs they
// were computed for, so that schedule.schedule(fd, plugin, params) needs
// nothing else.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace schedlab::python {

struct HeuristicParams {
  std::string plugin;       ///< the plugin's name
  pybind11::dict values;    ///< {name: value}, in the plugin's schema order
  pybind11::object inputs;  ///< the inputs they were computed for
};

/// The parameters a call was given for `plugin`: None (nullopt), a dict, or
/// a HeuristicParams of that plugin (what compute_heuristics returned, maybe
/// edited). Anything else, or another plugin's HeuristicParams, raises
/// schedlab.Error naming `call`, what was expected and what was found.
std::optional<pybind11::dict> params_values(const pybind11::object& given,
                                            const std::string& plugin, const char* call);

/// Binds schedlab.schedule.HeuristicParams in `schedule`.
void bind_heuristic_params(pybind11::module_& schedule);

}  // namespace schedlab::python
