// schedlab/plugin_api/tensor_impl.hpp: the out-of-line members of
// tensor.hpp. Included by it in a header-only build; compiled once into
// schedlab::plugin_api_impl (plugin-api/src/plugin_api.cpp) for plugins built
// with SCHEDLAB_PLUGIN_API_SEPARATE (registration.hpp says more).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace schedlab::plugin_api {

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> TensorView::producers() const {
  return wrap(detail::list(&SchedlabHostApi::tensor_producers, "tensor_producers", seg_, t_));
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> TensorView::consumers() const {
  return wrap(detail::list(&SchedlabHostApi::tensor_consumers, "tensor_consumers", seg_, t_));
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<Operand> TensorView::operands() const {
  std::vector<Operand> r;
  if (detail::host_table().tensor_operand == nullptr) {
    for (const TensorView& p : producers()) {
      Operand o;
      o.tensor = p;
      o.text = p.str();
      o.dtype = p.dtype();
      r.push_back(std::move(o));
    }
    return r;
  }
  SchedlabDefinition d{};
  d.struct_size = sizeof d;
  detail::call(&SchedlabHostApi::tensor_definition, "tensor_definition", seg_, t_, &d);
  for (int32_t i = 0; i < d.noperands; ++i) {
    SchedlabOperand c{};
    c.struct_size = sizeof c;
    detail::call(&SchedlabHostApi::tensor_operand, "tensor_operand", seg_, t_, i, &c);
    Operand o;
    o.kind = static_cast<Operand::Kind>(c.kind);
    o.tensor = TensorView(seg_, c.tensor);
    o.value = c.value;
    o.text = c.text != nullptr ? c.text : "";
    o.dtype = static_cast<DataType>(c.dtype);
    r.push_back(std::move(o));
  }
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE Definition TensorView::definition() const {
  Definition r;
  if (detail::host_table().tensor_definition == nullptr) {
    r.op_kind = op_kind();
    return r;
  }
  SchedlabDefinition d{};
  d.struct_size = sizeof d;
  detail::call(&SchedlabHostApi::tensor_definition, "tensor_definition", seg_, t_, &d);
  r.op_kind = static_cast<OpKind>(d.op_kind);
  r.load_store_op = static_cast<LoadStoreOp>(d.load_store_op);
  r.cache_op = static_cast<CacheOp>(d.cache_op);
  if (d.axes != nullptr) r.axes.assign(d.axes, d.axes + d.naxes);
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<int> TensorView::permutation() const {
  Definition d = definition();
  return d.op_kind == OpKind::Permute ? d.axes : std::vector<int>{};
}

SCHEDLAB_PLUGIN_API_INLINE int TensorView::max_inline_position() const {
  int32_t pos = 0;
  detail::call(&SchedlabHostApi::max_inline_position, "max_inline_position", seg_, t_, &pos);
  return pos;
}

SCHEDLAB_PLUGIN_API_INLINE std::string TensorView::print() const {
  const char* text = nullptr;
  detail::call(&SchedlabHostApi::print_tensor, "print_tensor", seg_, t_, &text);
  return text;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::split(int axis, int64_t factor,
                                                         bool inner_split) {
  detail::call(&SchedlabHostApi::split, "split", seg_, t_, axis, factor,
               static_cast<int32_t>(inner_split));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::merge(int axis_o, int axis_i) {
  detail::call(&SchedlabHostApi::merge, "merge", seg_, t_, axis_o, axis_i);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::reorder(
    const std::vector<std::pair<int, int>>& old2new) {
  std::vector<int32_t> from, to;
  for (const auto& [o, n] : old2new) {
    from.push_back(o);
    to.push_back(n);
  }
  detail::call(&SchedlabHostApi::reorder, "reorder", seg_, t_, from.data(), to.data(),
               static_cast<int32_t>(from.size()));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::parallelize(int axis, ParallelType p) {
  detail::call(&SchedlabHostApi::parallelize, "parallelize", seg_, t_, axis,
               static_cast<int32_t>(p));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::parallelize(int axis, LoopTransform t) {
  detail::call(&SchedlabHostApi::set_loop_transform, "set_loop_transform", seg_, t_, axis,
               static_cast<int32_t>(t));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::set_memory_type(MemoryType m) {
  detail::call(&SchedlabHostApi::set_memory_type, "set_memory_type", seg_, t_,
               static_cast<int32_t>(m));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::pad_shared(int64_t elements) {
  detail::call(&SchedlabHostApi::pad_shared, "pad_shared", seg_, t_, elements);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::swizzle(int64_t width) {
  detail::call(&SchedlabHostApi::swizzle, "swizzle", seg_, t_, width);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::swizzle(int64_t width, int64_t bytes) {
  detail::call(&SchedlabHostApi::swizzle_bytes, "swizzle_bytes", seg_, t_, width, bytes);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::circular_buffer(int64_t stages,
                                                                int64_t prefetch) {
  detail::call(&SchedlabHostApi::circular_buffer, "circular_buffer", seg_, t_, stages, prefetch);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::grid_persistent() {
  detail::call(&SchedlabHostApi::grid_persistent, "grid_persistent", seg_, t_);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::fuse_mma() {
  detail::call(&SchedlabHostApi::fuse_mma, "fuse_mma", seg_, t_);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::mma_tile() {
  detail::call(&SchedlabHostApi::mma_tile, "mma_tile", seg_, t_);
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView TensorView::cache_after(CacheOp op) {
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::cache_after, "cache_after", seg_, t_, static_cast<int32_t>(op),
               &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE TensorView TensorView::cache_after(LoadStoreOp path, CacheOp op) {
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::_cache_after_op, "_cache_after_op", seg_, t_,
               static_cast<int32_t>(path), static_cast<int32_t>(op), &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE TensorView TensorView::cache_before() {
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::cache_before, "cache_before", seg_, t_, &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE TensorView TensorView::cache_fork() {
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::cache_fork, "cache_fork", seg_, t_, &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE TensorView TensorView::rfactor(const std::vector<int>& axes) {
  std::vector<int32_t> a(axes.begin(), axes.end());
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::rfactor, "rfactor", seg_, t_, a.data(),
               static_cast<int32_t>(a.size()), &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE TensorView& TensorView::inline_at(int pos, bool best_effort) {
  detail::call(&SchedlabHostApi::inline_at, "inline_at", seg_, t_, pos,
               static_cast<int32_t>(best_effort));
  return *this;
}

SCHEDLAB_PLUGIN_API_INLINE SchedlabTensorInfo TensorView::info() const {
  SchedlabTensorInfo i{};
  i.struct_size = sizeof i;
  detail::call(&SchedlabHostApi::tensor_info, "tensor_info", seg_, t_, &i);
  if (i.name == nullptr) i.name = "";
  if (i.op_name == nullptr) i.op_name = "";
  return i;
}

SCHEDLAB_PLUGIN_API_INLINE AxisInfo TensorView::axis_in(int32_t domain, int i) const {
  SchedlabAxisInfo a{};
  a.struct_size = sizeof a;
  detail::call(&SchedlabHostApi::tensor_axis, "tensor_axis", seg_, t_, domain, i, &a);
  AxisInfo r;
  r.id = a.id;
  r.iter_type = static_cast<IterType>(a.iter_type);
  r.parallel_type = static_cast<ParallelType>(a.parallel_type);
  r.loop_transform = static_cast<LoopTransform>(a.loop_transform);
  r.extent = a.extent;
  r.extent_expr = a.extent_expr != nullptr ? a.extent_expr : "";
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<AxisInfo> TensorView::domain(int32_t which, int n) const {
  std::vector<AxisInfo> r;
  for (int i = 0; i < n; ++i) r.push_back(axis_in(which, i));
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<TensorView> TensorView::wrap(
    const std::vector<SchedlabTensor*>& ts) const {
  std::vector<TensorView> r;
  for (SchedlabTensor* t : ts) r.emplace_back(seg_, t);
  return r;
}

SCHEDLAB_PLUGIN_API_INLINE TensorView
TensorView::recompute(const std::vector<TensorView>& consumers) {
  std::vector<SchedlabTensor*> hs = handles(consumers);
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::recompute, "recompute", seg_, t_, hs.data(),
               static_cast<int32_t>(hs.size()), &out);
  return TensorView(seg_, out);
}

SCHEDLAB_PLUGIN_API_INLINE std::vector<SchedlabTensor*> handles(
    const std::vector<TensorView>& tvs) {
  std::vector<SchedlabTensor*> r;
  for (const TensorView& tv : tvs) r.push_back(tv.handle());
  return r;
}

}  // namespace schedlab::plugin_api
