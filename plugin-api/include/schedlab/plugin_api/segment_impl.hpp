// schedlab/plugin_api/segment_impl.hpp: the out-of-line members of
// segment.hpp. Included by it in a header-only build; compiled once into
// schedlab::plugin_api_impl (plugin-api/src/plugin_api.cpp) for plugins built
// with SCHEDLAB_PLUGIN_API_SEPARATE (registration.hpp says more).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/segment.hpp"

namespace schedlab::plugin_api {

SCHEDLAB_PLUGIN_API_INLINE std::string Segment::name() const {
  const char* n = nullptr;
  detail::call(&SchedlabHostApi::segment_name, "segment_name", seg_, &n);
  return n;
}

SCHEDLAB_PLUGIN_API_INLINE int64_t Segment::size(const std::string& name) const {
  int64_t v = 0;
  detail::call(&SchedlabHostApi::segment_size, "segment_size", seg_, name.c_str(), &v);
  return v;
}

SCHEDLAB_PLUGIN_API_INLINE bool Segment::offered_by_segmenter() const {
  if (detail::host_table().offered_by_segmenter == nullptr) return false;
  int32_t out = 0;
  detail::call(&SchedlabHostApi::offered_by_segmenter, "offered_by_segmenter", seg_, &out);
  return out != 0;
}

SCHEDLAB_PLUGIN_API_INLINE DeviceProperties Segment::device() const {
  SchedlabDeviceProperties p{};
  p.struct_size = sizeof p;
  detail::call(&SchedlabHostApi::device_properties, "device_properties", seg_, &p);
  DeviceProperties d;
  d.is_model = p.is_model != 0;
  d.name = p.name != nullptr ? p.name : "";
  d.arch = p.arch != nullptr ? p.arch : "";
  d.cc_major = p.cc_major;
  d.cc_minor = p.cc_minor;
  d.sm_count = p.sm_count;
  d.warp_size = p.warp_size;
  d.max_threads_per_block = p.max_threads_per_block;
  d.max_threads_per_sm = p.max_threads_per_sm;
  d.registers_per_block = p.registers_per_block;
  d.registers_per_sm = p.registers_per_sm;
  d.shared_bytes_per_block = p.shared_bytes_per_block;
  d.shared_bytes_per_block_optin = p.shared_bytes_per_block_optin;
  d.shared_bytes_per_sm = p.shared_bytes_per_sm;
  d.l2_bytes = p.l2_bytes;
  d.global_memory_bytes = p.global_memory_bytes;
  d.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s;
  return d;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> Segment::reduction_tvs() const {
  return wrap(detail::list(&SchedlabHostApi::get_reduction_tvs, "get_reduction_tvs", seg_));
}

SCHEDLAB_PLUGIN_API_INLINE TensorView Segment::find_reference() const {
  SchedlabTensor* t = nullptr;
  detail::call(&SchedlabHostApi::find_reference, "find_reference", seg_, &t);
  return TensorView(seg_, t);
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<std::vector<TensorView>>
Segment::group_inputs_outputs_by_inner_dim() const {
  auto fn = detail::entry(&SchedlabHostApi::group_inputs_outputs_by_inner_dim,
                          "group_inputs_outputs_by_inner_dim");
  int32_t n = 0;
  detail::check(fn(seg_, nullptr, nullptr, 0, &n));
  std::vector<SchedlabTensor*> items(static_cast<size_t>(n));
  std::vector<int32_t> groups(static_cast<size_t>(n));
  if (n > 0) detail::check(fn(seg_, items.data(), groups.data(), n, &n));
  std::vector<std::vector<TensorView>> r;
  for (int32_t k = 0; k < n; ++k) {
    size_t g = static_cast<size_t>(groups[static_cast<size_t>(k)]);
    if (r.size() <= g) r.resize(g + 1);
    r[g].emplace_back(seg_, items[static_cast<size_t>(k)]);
  }
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE bool Segment::is_dependency_of(const TensorView& v,
                                                          const TensorView& of) const {
  int32_t r = 0;
  detail::call(&SchedlabHostApi::is_dependency_of, "is_dependency_of", seg_, v.handle(),
               of.handle(), &r);
  return r != 0;
}

SCHEDLAB_PLUGIN_API_INLINE void Segment::inline_most(const std::vector<TensorView>& selected) {
  auto s = handles(selected);
  detail::call(&SchedlabHostApi::inline_most, "inline_most", seg_,
               static_cast<SchedlabTensor* const*>(s.data()), static_cast<int32_t>(s.size()));
}

SCHEDLAB_PLUGIN_API_INLINE std::string Segment::print() const {
  const char* text = nullptr;
  detail::call(&SchedlabHostApi::print_scheduled_fusion, "print_scheduled_fusion", seg_, &text);
  return text;
}

SCHEDLAB_PLUGIN_API_INLINE std::string Segment::apply_schedule_script(const std::string& path,
                                                                      const std::string& args) {
  const char* log = nullptr;
  detail::call(&SchedlabHostApi::apply_schedule_script, "apply_schedule_script", seg_, path.c_str(),
               args.c_str(), &log);
  return log != nullptr ? log : "";
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<Segment::Placeholder> Segment::schedule_placeholders(
    const std::string& path) const {
  const char* names = nullptr;
  detail::call(&SchedlabHostApi::_schedule_placeholders, "_schedule_placeholders", seg_,
               path.c_str(), &names);
  std::vector<Placeholder> r;
  std::string all = names != nullptr ? names : "";
  for (size_t at = 0; at < all.size();) {
    size_t comma = std::min(all.find(',', at), all.size());
    std::string item = all.substr(at, comma - at);
    size_t eq = item.find('=');
    Placeholder p;
    p.name = item.substr(0, eq);
    if (eq != std::string::npos) p.default_value = std::stoll(item.substr(eq + 1));
    r.push_back(std::move(p));
    at = comma + 1;
  }
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> Segment::set(int32_t which) const {
  return wrap(detail::list(&SchedlabHostApi::segment_tensors, "segment_tensors", seg_, which));
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> Segment::wrap(
    const std::vector<SchedlabTensor*>& ts) const {
  std::vector<TensorView> r;
  for (SchedlabTensor* t : ts) r.emplace_back(seg_, t);
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> Segment::vals_between(
    const std::vector<TensorView>& from, const std::vector<TensorView>& to) const {
  auto f = handles(from), t = handles(to);
  return wrap(
      detail::list(&SchedlabHostApi::vals_between, "vals_between", seg_,
                   static_cast<SchedlabTensor* const*>(f.data()), static_cast<int32_t>(f.size()),
                   static_cast<SchedlabTensor* const*>(t.data()), static_cast<int32_t>(t.size())));
}

SCHEDLAB_PLUGIN_API_INLINE bool Segment::axes_mapped(const TensorView& a, int a_axis,
                                                     const TensorView& b, int b_axis,
                                                     bool exact) const {
  int32_t r = 0;
  detail::call(&SchedlabHostApi::_axes_mapped, "_axes_mapped", seg_, a.handle(), a_axis, b.handle(),
               b_axis, static_cast<int32_t>(exact), &r);
  return r != 0;
}

SCHEDLAB_PLUGIN_API_INLINE void Segment::propagate_transformation(
    const TensorView& reference, const std::vector<TensorView>& selected) {
  auto s = handles(selected);
  detail::call(&SchedlabHostApi::propagate_transformation, "propagate_transformation", seg_,
               reference.handle(), static_cast<SchedlabTensor* const*>(s.data()),
               static_cast<int32_t>(s.size()));
}

SCHEDLAB_PLUGIN_API_INLINE void Segment::propagate_reshape() {
  detail::call(&SchedlabHostApi::propagate_reshape, "propagate_reshape", seg_);
}

SCHEDLAB_PLUGIN_API_INLINE void Segment::parallelize_all_like(
    const TensorView& reference, int pos, const std::vector<TensorView>& selected,
    const std::vector<ParallelType>& types,
    const std::optional<std::vector<LoopTransform>>& transforms) {
  auto s = handles(selected);
  std::vector<int32_t> ty, tr;
  for (ParallelType p : types) ty.push_back(static_cast<int32_t>(p));
  if (transforms)
    for (LoopTransform t : *transforms) tr.push_back(static_cast<int32_t>(t));
  // A non-null pointer tells an explicit (maybe empty) list from "default".
  static const int32_t kNone = 0;
  const int32_t* tr_ptr = transforms ? (tr.empty() ? &kNone : tr.data()) : nullptr;
  detail::call(&SchedlabHostApi::parallelize_all_like, "parallelize_all_like", seg_,
               reference.handle(), pos, static_cast<SchedlabTensor* const*>(s.data()),
               static_cast<int32_t>(s.size()), static_cast<const int32_t*>(ty.data()),
               static_cast<int32_t>(ty.size()), tr_ptr, static_cast<int32_t>(tr.size()));
}

SCHEDLAB_PLUGIN_API_INLINE void Segment::inline_selected_at(const std::vector<TensorView>& selected,
                                                            const TensorView& reference, int pos) {
  auto s = handles(selected);
  detail::call(&SchedlabHostApi::inline_selected_at, "inline_selected_at", seg_,
               static_cast<SchedlabTensor* const*>(s.data()), static_cast<int32_t>(s.size()),
               reference.handle(), pos);
}

}  // namespace schedlab::plugin_api
