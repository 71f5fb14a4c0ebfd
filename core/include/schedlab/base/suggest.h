// schedlab/base: "did you mean" hints, shared by every reader of user input
// (fusion text, schedule scripts, YAML files, CLI names).
#pragma once

#include <string>
#include <vector>

namespace schedlab {

/// The closest candidate to `name` by edit distance, or "" if none is close:
/// for "did you mean" hints.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace schedlab
