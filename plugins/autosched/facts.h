// autosched/facts.h: what the autoscheduler's rules match on. The facts are
// read once from the unscheduled segment, before any rule rewrites it, so
// that matching is deterministic and independent of the order the rules run
// in. Written only against the plugin API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace autosched {

namespace pa = schedlab::plugin_api;

/// The shape of the whole segment, which decides the loop structure of the
/// reference (the first rule, ChooseReference, sets it).
enum class Pattern {
  Pointwise,       ///< no reduction, one layout: [I] flattened
  InnerReduction,  ///< [I, R] with R innermost (contiguous)
  OuterReduction,  ///< [I, R] with I innermost
  Normalization,   ///< inner reduction whose results are broadcast back over R
  Transpose,       ///< no reduction, inputs and outputs in two layouts
};
const char* pattern_name(Pattern p);

/// The facts about one segment (see the top).
struct Facts {
  std::string reject;  ///< non-empty: no rule set schedules this segment, and why
  Pattern pattern = Pattern::Pointwise;
  pa::TensorView ref;                    ///< the reference: a reduction, else the largest output
  std::vector<int> iter_axes, red_axes;  ///< logical axes of ref (broadcast axes in neither)
  int64_t I = 1, R = 1;                  ///< iterated and reduced extents
  int64_t inner_extent = 1;              ///< the innermost logical axis of ref
  bool read_in_kernel = false;           ///< a reduction result is read inside the segment
  /// Inputs and outputs whose innermost axis is the reference's and that
  /// have its full rank: accessible with vectors.
  std::vector<pa::TensorView> vector_inputs, vector_outputs;
  int64_t widest = 1;  ///< bytes of the widest of those (1 without any)
  /// Normalization: tensors read before a reduction and again after it.
  std::vector<pa::TensorView> persistent;
  /// Normalization: rank-1 inputs along the row (layernorm's weight and
  /// bias), read with the row's vectors through caches of their own.
  std::vector<pa::TensorView> row_operands;
  /// Transpose: the reference's own innermost axis, the reference axis the
  /// other layout's innermost maps to, and the tensors in that layout.
  int inner1 = -1, inner2 = -1;
  std::vector<pa::TensorView> t_inputs, t_outputs;
  int64_t outer = 1;  ///< Transpose: the product of the axes other than inner1, inner2
};

/// Reads the facts of the unscheduled segment `seg`.
Facts read_facts(pa::Segment& seg);

}  // namespace autosched
