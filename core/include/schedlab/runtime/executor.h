// Running a scheduled fusion: lower for the sizes at hand, generate the
// source, compile on a backend, launch on host-provided inputs, read back.
#pragma once

#include <string>
#include <vector>

#include "schedlab/lower/kir.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime {

/// A lowered kernel and its source.
struct PreparedKernel {
  kir::Kernel kernel;
  KernelSource source;
};

/// Lowers and prints f. The index type is int32 when every tensor of the
/// fusion has fewer than 2^31 elements under `sizes`, int64 otherwise.
PreparedKernel prepare(const ir::Fusion& f, const ir::SizeBindings& sizes);
/// Grid and block from the extents of the bound loops (the largest per
/// parallel type), and the dynamic shared memory (the Shared buffers, then
/// the block-reduction workspace, sized by the block).
LaunchDims launch_dims(const kir::Kernel& k, const ir::SizeBindings& sizes);
/// The sizes a parameter is allocated with at this launch: the tensor's shape,
/// or for a grid reduction's workspace (kir::Param::Source::GridWorkspace) one
/// extent, its element count times (for the partials) the grid's blocks along
/// the reduced blockIdx dimensions. Its dtype is the parameter buffer's.
std::vector<int64_t> param_shape(const kir::Param& p, const LaunchDims& dims,
                                 const ir::SizeBindings& sizes);
/// Runs a compiled kernel on host inputs (one per fusion input, values held
/// in double and converted to each dtype) and returns the fusion outputs.
/// Workspaces are allocated and zeroed per launch.
std::vector<ref::HostTensor> execute(Backend& backend, CompiledKernel& compiled,
                                     const PreparedKernel& prepared,
                                     const std::vector<ref::HostTensor>& inputs,
                                     const ir::SizeBindings& sizes);

/// The launch-time half of vectorization (lower/vectorize.h): innermost
/// stride 1, innermost extent and other strides multiples of the width, and
/// aligned pointers, for every vector-accessed parameter. user_error otherwise.
void check_vector_accesses(const kir::Kernel& k, const std::vector<TensorArg>& args);

/// Encodes `v` (already representable) in dtype t's storage; decodes back.
void encode(double v, ir::DataType t, void* dst);
double decode(const void* src, ir::DataType t);

}  // namespace schedlab::runtime
