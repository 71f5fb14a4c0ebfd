// schedlab/ref: host tensors, the values the reference evaluator and the
// backends exchange (see evaluator.h for the module's rules).
#pragma once

#include <cstdint>
#include <vector>

#include "schedlab/ir/fusion.h"

namespace schedlab::ref {

/// A dense, row-major tensor of concrete values. Values are doubles whatever
/// the dtype; the dtype says what a kernel would store.
struct HostTensor {
  ir::DataType dtype = ir::DataType::F64;  ///< the storage type it stands for
  std::vector<int64_t> shape;              ///< concrete extents, outermost first
  std::vector<double> data;                ///< numel() values, row-major
  /// Per element, how far a correct kernel's value may lie from `data` (the
  /// reference's forward error bound, evaluator.h); empty: exact (inputs).
  std::vector<double> error{};

  int64_t numel() const;
  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;
};

/// Part `part` of `parts` equal contiguous chunks of `t` along data axis
/// `axis` (rank `part`'s piece of an axis sharded over `parts` ranks); the
/// error bound is sliced too when `t` has one. internal error when the axis
/// is out of range or its extent is not a multiple of `parts` (the
/// communication plan checks divisibility as a user error first).
HostTensor slice_axis(const HostTensor& t, int axis, int part, int parts);

/// The pieces joined along data axis `axis`, in order (the inverse of
/// slice_axis over every part). The pieces agree on dtype, rank and every
/// other extent (internal error otherwise, naming the piece). The result has
/// an error bound when some piece has one; a piece without counts as exact.
HostTensor concat_axis(const std::vector<HostTensor>& pieces, int axis);

/// The concrete shape of t under `sizes` (non-reduction logical axes).
/// user_error if a size symbol is unbound.
std::vector<int64_t> concrete_shape(const ir::TensorView* t, const ir::SizeBindings& sizes);

/// concrete_shape, for a tensor about to be allocated on the host with
/// `bytes_per_element`: a user error naming the tensor, its element count and
/// the bytes when that exceeds this machine's physical memory (instead of
/// std::bad_alloc, or the OOM killer).
std::vector<int64_t> allocatable_shape(const ir::TensorView* t, const ir::SizeBindings& sizes,
                                       int bytes_per_element);

}  // namespace schedlab::ref
