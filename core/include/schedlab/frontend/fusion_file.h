// schedlab/frontend: fusion definitions written as YAML (configs/fusions).
//
// Owns: the YAML schema of a fusion definition, the expression language of
// its body, and the mapping of every diagnostic to file:line:col.
// May depend on: schedlab/base, schedlab/ir, yaml-cpp.
// Invariant: every error in user text is a UserError whose SourceLoc points
// at the offending token, and whose message says what was expected and what
// was found. Nothing that parses returns a half-built fusion.
//
// Format:
//   fusion: softmax                 # name (defaults to the file stem)
//   description: row-wise softmax   # optional
//   inputs:                         # ordered map: name -> spec
//     x: {dtype: f32, shape: [N, K], range: [-4, 4]}   # range is optional
//   sizes: {N: 4, K: 8}             # optional default binding of named sizes
//   mesh: [0, 1]                    # optional device mesh (docs/multi-device.md)
//   shard: {x: K}                   # optional, needs mesh: tensor -> axis index
//                                   # (of its shape), size name or `replicated`
//   body: |                         # one `name = expr` per line, '#' comments
//     m = max(x, axis=1, keepdim=true)
//     y = exp(x - m) / sum(exp(x - m), axis=1, keepdim=true)
//   outputs: [y]
// A shape entry is a named size (an identifier), a positive integer, or 1
// (a Broadcast axis). The body language is documented in docs/fusion-text.md.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/ir/fusion.h"
#include "schedlab/ref/evaluator.h"

namespace schedlab::frontend {

/// A parsed fusion definition.
struct FusionDefinition {
  std::unique_ptr<ir::Fusion> fusion;  ///< the math; inputs and outputs in file order
  std::string path;                    ///< the file it came from, as given
  std::string description;             ///< free text, may be empty
  std::vector<ref::ValueRange> input_ranges;  ///< one per fusion input
  ir::SizeBindings default_sizes;      ///< the `sizes:` map, may be empty
};

/// Parses YAML text; `path` is used in diagnostics only.
FusionDefinition parse_fusion_text(const std::string& text, const std::string& path);
/// Reads and parses a file. user_error if it cannot be read.
FusionDefinition load_fusion_file(const std::string& path);

/// Finds a fusion by name (`softmax` -> <dir>/softmax.yaml for each dir in
/// order) or, if it names an existing file or contains '/' or ends in .yaml,
/// by path. user_error listing the directories searched if nothing matches.
std::string resolve_fusion(const std::string& name_or_path, const std::vector<std::string>& dirs);

/// Parses "N=4,K=8". `what` names the source in diagnostics ("--size").
ir::SizeBindings parse_size_list(const std::string& text, const std::string& what);
/// Checks `sizes` against the fusion: every named size bound, positive, and
/// no unknown names. Returns defaults overlaid by `sizes`.
ir::SizeBindings bind_sizes(const FusionDefinition& def, const ir::SizeBindings& sizes);

}  // namespace schedlab::frontend
