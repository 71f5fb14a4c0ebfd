// Pass: buffers. Fusion inputs, outputs and Global intermediates become
// kernel parameters (the host allocates workspaces); Local tensors get a
// register array and Shared ones a slice of dynamic shared memory, each sized
// by the loops it is not shared across (Indexer::allocation_axes). A Shared
// buffer over a symbolic extent is sized at launch: place_dynamic_shared puts
// it after the block-reduction workspace, whose size generate decides.
//
// Needs: a lowerable fusion. Guarantees: every tensor the kernel touches has
// exactly one Buffer; parameters come first, in the order inputs, outputs,
// workspaces; named sizes are read from the first input that has them.
#pragma once

#include <map>
#include <string>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Whether t's buffer is in Global memory: fusion inputs and outputs, Global
/// intermediates, and Local tensors whose buffer would span a symbolic extent
/// (a workspace: registers need constant sizes).
bool stored_in_global(const ir::TensorView* t);

/// Fills kernel.buffers, params, size_sources and shared_bytes; returns the
/// buffer of each tensor.
std::map<const ir::TensorView*, const kir::Buffer*> allocate_buffers(const ir::Fusion& f,
                                                                     kir::Kernel& kernel);

/// After generate (which sizes the block-reduction workspace): gives each
/// Shared buffer over symbolic extents its offset (size symbols read through
/// size_reads, e.g. K -> T0.size[1]) and fills kernel.dynamic_shared and
/// kernel.launch_shared_bytes, the one formula for kernel and launch.
void place_dynamic_shared(kir::Kernel& kernel, const std::map<std::string, kir::ExprP>& size_reads);

}  // namespace schedlab::lower
