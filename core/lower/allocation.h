// Pass: buffers. Fusion inputs, outputs and Global intermediates become
// kernel parameters (the host allocates workspaces); Local tensors get a
// register array and Shared ones a slice of dynamic shared memory, each sized
// by the loops it is not shared across (Indexer::allocation_axes).
//
// Needs: a lowerable fusion. Guarantees: every tensor the kernel touches has
// exactly one Buffer; parameters come first, in the order inputs, outputs,
// workspaces; named sizes are read from the first input that has them.
#pragma once

#include <map>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Fills kernel.buffers, params, size_sources and shared_bytes; returns the
/// buffer of each tensor.
std::map<const ir::TensorView*, const kir::Buffer*> allocate_buffers(const ir::Fusion& f,
                                                                     kir::Kernel& kernel);

}  // namespace schedlab::lower
