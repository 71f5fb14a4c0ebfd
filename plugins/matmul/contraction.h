// matmul plugin: what it learns about a segment before scheduling it (the
// contraction: its sum, product, operands and the role of each axis), and
// why it refuses one. Written only against the plugin API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace matmul {

namespace pa = schedlab::plugin_api;

/// The role of one logical axis of the sum.
enum class Role { Batch, M, N, K };

/// One operand of the product: the fusion input it reads (through
/// broadcasts and casts) and where its own axes land in the sum.
struct Operand {
  pa::TensorView input;  ///< the segment input (bf16, f16 or f32)
  /// Role of the input's innermost logical axis (its contiguous one): K, or
  /// M / N. Decides the thread layout of its shared-memory tile.
  Role inner = Role::K;
  /// Role of each of the input's logical axes, in order (its cp.async cache's layout).
  std::vector<Role> axes;
};

/// A segment the plugin can schedule: one sum over one axis K of a product
/// a * b, each operand a broadcast (and maybe a cast) of a segment input, an
/// M axis where only a iterates, an N axis where only b does, batch axes
/// where both do; any pointwise epilogue after the sum.
struct Contraction {
  std::string reject;       ///< non-empty: why the plugin cannot schedule the segment
  pa::TensorView sum;       ///< the reduction (the reference of the schedule)
  pa::TensorView product;   ///< the multiply the sum reduces
  Operand a, b;             ///< a has the M axis, b the N axis
  std::vector<Role> roles;  ///< of the sum's logical axes, in order
  int64_t M = 1, N = 1, K = 1, batch = 1;  ///< extents at the segment's sizes
  pa::DataType dtype = pa::DataType::F32;  ///< the operands' (one dtype)
};

/// Finds the contraction of `seg`, or says why there is none (`reject`).
Contraction analyze(pa::Segment& seg);

/// "bf16", "f64", ... for messages.
std::string dtype_name(pa::DataType t);

}  // namespace matmul
