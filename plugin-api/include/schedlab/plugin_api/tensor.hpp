// schedlab/plugin_api/tensor.hpp: AxisInfo and TensorView, a tensor of the
// segment being scheduled with its queries and one-tensor primitives (loop
// transforms, memory, inlining). Part of the C++ wrapper
// (schedlab/plugin.hpp includes every part).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

/// One axis of a tensor, as the host describes it.
struct AxisInfo {
  int id = 0;                                            ///< fusion-unique IterDomain number
  IterType iter_type = IterType::Iteration;              ///< iteration, reduction or broadcast
  ParallelType parallel_type = ParallelType::Serial;     ///< hardware binding
  LoopTransform loop_transform = LoopTransform::Serial;  ///< how the loop is emitted
  int64_t extent = -1;                                   ///< at the segment's sizes; -1 unknown
  std::string extent_expr;                               ///< symbolic: "ceilDiv(N, 128)"
  bool is_reduction() const { return iter_type == IterType::Reduction; }
  bool is_broadcast() const { return iter_type == IterType::Broadcast; }
};

struct Operand;

/// ABI 1.7: what a tensor's definition carries besides its operands.
struct Definition {
  OpKind op_kind = OpKind::None;                 ///< None for an input
  LoadStoreOp load_store_op = LoadStoreOp::Set;  ///< LoadStore's data path
  CacheOp cache_op = CacheOp::Unspecified;       ///< LoadStore's cache policy
  /// Permute: output axis k reads input axis axes[k]; Broadcast: 1 where
  /// output axis k is new, else 0; otherwise empty.
  std::vector<int> axes;
};

/// A tensor of the segment being scheduled. Transforms return *this so that
/// calls chain; primitives that create a tensor return it.
class TensorView {
 public:
  TensorView() = default;
  TensorView(SchedlabSegment* seg, SchedlabTensor* t) : seg_(seg), t_(t) {}
  SchedlabTensor* handle() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }
  bool operator==(const TensorView& o) const { return t_ == o.t_; }
  bool operator!=(const TensorView& o) const { return t_ != o.t_; }

  // ---- queries
  int number() const { return info().number; }
  /// "T3", as the host prints it.
  std::string str() const { return "T" + std::to_string(number()); }
  /// The user's name ("x"), or "".
  std::string name() const { return info().name; }
  DataType dtype() const { return static_cast<DataType>(info().dtype); }
  OpKind op_kind() const { return static_cast<OpKind>(info().op_kind); }
  std::string op_name() const { return info().op_name; }
  MemoryType memory_type() const { return static_cast<MemoryType>(info().memory_type); }
  bool is_input() const { return info().is_input != 0; }
  bool is_output() const { return info().is_output != 0; }
  bool has_reduction() const { return info().has_reduction != 0; }
  int nlogical() const { return info().nlogical; }
  int nloop() const { return info().nloop; }
  int compute_at_pos() const { return info().compute_at_pos; }
  /// Loop axis i (negative counts from the end).
  AxisInfo axis(int i) const { return axis_in(SCHEDLAB_DOMAIN_LOOP, i); }
  AxisInfo logical_axis(int i) const { return axis_in(SCHEDLAB_DOMAIN_LOGICAL, i); }
  std::vector<AxisInfo> loop() const { return domain(SCHEDLAB_DOMAIN_LOOP, nloop()); }
  std::vector<AxisInfo> logical() const { return domain(SCHEDLAB_DOMAIN_LOGICAL, nlogical()); }
  std::vector<TensorView> producers() const;
  std::vector<TensorView> consumers() const;
  /// ABI 1.7: the operands of this tensor's definition in order, repeats and
  /// scalars kept (x * x: x twice; x * 0.5: x and 0.5); none for an input.
  /// On an older host: producers() as tensor operands (distinct, no scalar).
  std::vector<Operand> operands() const;
  /// ABI 1.7: see Definition. On an older host: op_kind only.
  Definition definition() const;
  /// A Permute's order (definition().axes); empty for any other tensor and
  /// on an older host.
  std::vector<int> permutation() const;
  int max_inline_position() const;
  /// The host's debug print of this tensor (domains, transforms, memory).
  std::string print() const;

  // ---- loop transforms
  TensorView& split(int axis, int64_t factor, bool inner_split = true);
  TensorView& merge(int axis_o, int axis_i);
  TensorView& merge(int axis_o) { return merge(axis_o, axis_o + 1); }
  /// Each (old, new) pair moves loop axis old to position new.
  TensorView& reorder(const std::vector<std::pair<int, int>>& old2new);
  TensorView& parallelize(int axis, ParallelType p);
  TensorView& parallelize(int axis, LoopTransform t);

  // ---- memory
  TensorView& set_memory_type(MemoryType m);
  /// ABI 1.2: pads each row of this Shared tensor's buffer by `elements`
  /// (0 to SCHEDLAB_MAX_SHARED_PAD): the innermost allocation axis's pitch
  /// becomes extent + elements. Call after set_memory_type(Shared).
  TensorView& pad_shared(int64_t elements);
  /// ABI 1.3: XOR-swizzles the rows of this Shared tensor's buffer, `width`
  /// a power of two from 1 (none) to SCHEDLAB_MAX_SWIZZLE_WIDTH (see
  /// SchedlabHostApi::swizzle). Call after set_memory_type(Shared).
  TensorView& swizzle(int64_t width);
  /// ABI 1.10: the same XOR in units of `bytes`: 4 (bank words, as above) or
  /// 16 (whole 16-byte chunks, width 1 to 8: an ldmatrix row stays whole, so
  /// an mma tile keeps its ldmatrix reads; SchedlabHostApi::swizzle_bytes).
  TensorView& swizzle(int64_t width, int64_t bytes);
  /// ABI 1.10: this reduction's grid reduction (over BIDx/BIDy) is read in
  /// the same kernel, through a grid-wide barrier (sched::grid_persistent).
  TensorView& grid_persistent();
  /// ABI 1.8: this cache holds `stages` tiles of its loop, each loaded
  /// `prefetch` iterations ahead (see SchedlabHostApi::circular_buffer).
  TensorView& circular_buffer(int64_t stages, int64_t prefetch);
  /// ABI 1.9: this sum of a product of two bf16/f16 (or f32) tensors becomes
  /// one MmaOp (sched::fuse_mma; op_kind() Mma afterwards).
  TensorView& fuse_mma();
  /// ABI 1.9: this MmaOp output's innermost [m 16, n 8, k 16] become one
  /// warp's mma.sync m16n8k16: [lane 32 (TIDx), fragment 4, k 16] (sched::mma_tile).
  TensorView& mma_tile();
  TensorView cache_after(CacheOp op = CacheOp::Unspecified);
  /// Experimental (outside the ABI promise): a cache copy through another data path.
  TensorView cache_after(LoadStoreOp path, CacheOp op);
  TensorView cache_before();
  TensorView cache_fork();
  /// ABI 1.5, nvFuser's recomputeTv: a copy of this tensor's definition that
  /// `consumers` read instead (none: every reader); see SchedlabHostApi::recompute.
  TensorView recompute(const std::vector<TensorView>& consumers = {});
  /// The new producer that reduces over `axes` first.
  TensorView rfactor(const std::vector<int>& axes);

  // ---- inlining
  TensorView& inline_at(int pos, bool best_effort = false);

 private:
  SchedlabTensorInfo info() const;
  AxisInfo axis_in(int32_t domain, int i) const;
  std::vector<AxisInfo> domain(int32_t which, int n) const;
  std::vector<TensorView> wrap(const std::vector<SchedlabTensor*>& ts) const;

  SchedlabSegment* seg_ = nullptr;
  SchedlabTensor* t_ = nullptr;
};

/// ABI 1.7: one operand of a tensor's definition.
struct Operand {
  enum class Kind : int32_t {
    Tensor = SCHEDLAB_OPERAND_TENSOR,
    Constant = SCHEDLAB_OPERAND_CONSTANT,  ///< x * 0.5
    Size = SCHEDLAB_OPERAND_SIZE,          ///< a named size ("K"), known at launch
  };
  Kind kind = Kind::Tensor;
  TensorView tensor;  ///< Tensor: the operand
  double value = 0;   ///< Constant; Size at the segment's sizes (NaN if unknown)
  std::string text;   ///< as the fusion prints it: "T2", "0.5", "K"
  DataType dtype = DataType::F32;
  bool is_tensor() const { return kind == Kind::Tensor; }
};

/// The C handles of `tvs`, in order.
std::vector<SchedlabTensor*> handles(const std::vector<TensorView>& tvs);

}  // namespace schedlab::plugin_api

#ifndef SCHEDLAB_PLUGIN_API_SEPARATE
#include "schedlab/plugin_api/tensor_impl.hpp"
#else
// The vectors of API types a plugin passes and receives, instantiated once
// in plugin_api_impl (plugin-api/src/plugin_api.cpp): a quick plugin build
// (watch) does not compile them again.
extern template class std::vector<schedlab::plugin_api::TensorView>;
#endif
