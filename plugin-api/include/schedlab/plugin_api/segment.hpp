// schedlab/plugin_api/segment.hpp: Segment, the segment being scheduled:
// its tensors, sizes and device, and the primitives that relate several
// tensors (propagation, inlining, schedule scripts). Part of the C++ wrapper
// (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace schedlab::plugin_api {

/// The segment being scheduled: its tensors, sizes and target device, and
/// the primitives that relate several tensors.
class Segment {
 public:
  explicit Segment(SchedlabSegment* seg) : seg_(seg) {}
  SchedlabSegment* handle() const { return seg_; }

  std::string name() const;
  std::vector<TensorView> tensors() const { return set(SCHEDLAB_TENSORS_ALL); }
  std::vector<TensorView> inputs() const { return set(SCHEDLAB_TENSORS_INPUTS); }
  std::vector<TensorView> outputs() const { return set(SCHEDLAB_TENSORS_OUTPUTS); }
  /// The concrete value of a named size.
  int64_t size(const std::string& name) const;
  /// ABI 1.5: whether the segmenter makes this offer (a refusal then cuts
  /// the segment apart instead of failing it; SchedlabHostApi::
  /// offered_by_segmenter). False on an older host.
  bool offered_by_segmenter() const;
  DeviceProperties device() const;

  // ---- queries
  std::vector<TensorView> reduction_tvs() const;
  /// find_reference_for; a null TensorView when there is none.
  TensorView find_reference() const;
  std::vector<std::vector<TensorView>> group_inputs_outputs_by_inner_dim() const;
  bool is_dependency_of(const TensorView& v, const TensorView& of) const;
  std::vector<TensorView> vals_between(const std::vector<TensorView>& from,
                                       const std::vector<TensorView>& to) const;
  /// Experimental (outside the ABI promise): LoopMap between two loop axes.
  bool axes_mapped(const TensorView& a, int a_axis, const TensorView& b, int b_axis,
                   bool exact = false) const;

  // ---- propagation and inlining (empty `selected`: every tensor)
  void propagate_transformation(const TensorView& reference,
                                const std::vector<TensorView>& selected = {});
  /// ABI 1.10: each reshape's splits and merges replayed on the tensors it
  /// depends on (sched::propagate_reshape).
  void propagate_reshape();
  /// `transforms` nullopt: the host's default (Unroll, Unswitch).
  void parallelize_all_like(const TensorView& reference, int pos = -1,
                            const std::vector<TensorView>& selected = {},
                            const std::vector<ParallelType>& types = {},
                            const std::optional<std::vector<LoopTransform>>& transforms = {});
  void inline_selected_at(const std::vector<TensorView>& selected, const TensorView& reference,
                          int pos);
  void inline_most(const std::vector<TensorView>& selected = {});
  /// The host's debug print of the whole scheduled segment.
  std::string print() const;

  // ---- schedule scripts (ABI 1.1)
  /// Parses and applies the schedule script at `path` with {placeholder}
  /// values `args` ("k=v,k=v"). Returns the applied calls, one per line. A
  /// script error throws Error(SCHEDLAB_ERR_USER) with "file:line:col: ...".
  std::string apply_schedule_script(const std::string& path, const std::string& args = "");
  /// One name apply_schedule_script accepts in `args` for a script.
  struct Placeholder {
    std::string name;                      ///< as in {name} or params(name=...)
    std::optional<int64_t> default_value;  ///< from params(...), if declared there
  };
  /// Experimental (outside the ABI promise): the script's placeholders, in
  /// order of first appearance.
  std::vector<Placeholder> schedule_placeholders(const std::string& path) const;

 private:
  std::vector<TensorView> set(int32_t which) const;
  std::vector<TensorView> wrap(const std::vector<SchedlabTensor*>& ts) const;
  SchedlabSegment* seg_;
};

}  // namespace schedlab::plugin_api

#ifndef SCHEDLAB_PLUGIN_API_SEPARATE
#include "schedlab/plugin_api/segment_impl.hpp"
#else
// The vectors of API types a plugin passes and receives, instantiated once
// in plugin_api_impl (plugin-api/src/plugin_api.cpp): a quick plugin build
// (watch) does not compile them again.
extern template class std::vector<schedlab::plugin_api::ParallelType>;
extern template class std::vector<schedlab::plugin_api::LoopTransform>;
#endif
