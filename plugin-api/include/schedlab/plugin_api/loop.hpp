// schedlab/plugin_api/loop.hpp: Loop, a tensor's loop axes by role while a
// heuristic transforms it, so that splits and bindings name what an axis is
// for ("rows", "vector") rather than where it is. Part of the C++ wrapper
// (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

/// The loop axes of one tensor by role. Every transform goes through it, so
/// the roles follow the axes; `owner` ("reduction") prefixes its errors.
class Loop {
 public:
  Loop() = default;
  Loop(TensorView tv, std::vector<std::string> roles, std::string owner = "loop")
      : tv_(tv), roles_(std::move(roles)), owner_(std::move(owner)) {}
  bool has(const std::string& role) const {
    return std::find(roles_.begin(), roles_.end(), role) != roles_.end();
  }
  /// The position of `role`; Error(SCHEDLAB_ERR_PLUGIN) when there is none.
  int at(const std::string& role) const {
    auto it = std::find(roles_.begin(), roles_.end(), role);
    if (it == roles_.end()) throw Error(SCHEDLAB_ERR_PLUGIN, owner_ + ": no loop axis " + role);
    return static_cast<int>(it - roles_.begin());
  }
  /// Splits `role` into [outer, inner]; `factor` is the inner extent, or the
  /// outer one when !inner_split.
  void split(const std::string& role, int64_t factor, const std::string& outer,
             const std::string& inner, bool inner_split = true) {
    const int i = at(role);
    tv_.split(i, factor, inner_split);
    roles_[static_cast<size_t>(i)] = outer;
    roles_.insert(roles_.begin() + i + 1, inner);
  }
  /// Moves `role` to just before `before` (which must come after it).
  void move_before(const std::string& role, const std::string& before) {
    const int i = at(role), j = at(before);
    if (i <= j) return;
    tv_.reorder({{i, j}});
    roles_.erase(roles_.begin() + i);
    roles_.insert(roles_.begin() + j, role);
  }
  void move_to_end(const std::string& role) {
    const int i = at(role), last = static_cast<int>(roles_.size()) - 1;
    if (i == last) return;
    tv_.reorder({{i, last}});
    roles_.erase(roles_.begin() + i);
    roles_.push_back(role);
  }
  /// Binds `role` when the loop has it.
  void bind(const std::string& role, ParallelType p) {
    if (has(role)) tv_.parallelize(at(role), p);
  }
  void bind(const std::string& role, LoopTransform t) {
    if (has(role)) tv_.parallelize(at(role), t);
  }

 private:
  TensorView tv_;
  std::vector<std::string> roles_;
  std::string owner_ = "loop";
};

}  // namespace schedlab::plugin_api
