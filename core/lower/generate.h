// Pass: statements. Walks the loop tree and emits a for loop per serial loop
// (a bound loop emits no loop: its index is threadIdx/blockIdx), and for each
// expression one predicated store of its value; a reduction gets an
// initialising store (under loops over its non-reduction axes after the
// first reduction axis) and an accumulating store. A block reduction (a
// reduction axis bound to TIDx/y/z) accumulates each thread's partial, in
// the tensor's registers or, for a tensor in Global or Shared memory, in a
// register accumulator "<T>_acc" (added to kernel.buffers); right after its
// reduction loops a BlockReduce combines the partials of each row in every
// thread, and a non-register tensor is then stored by all threads of the row.
//
// Needs: the loop tree and the buffers. Guarantees: a store is guarded by the
// predicate of the element it writes, so out-of-range points of uneven
// splits and of launch extents larger than a loop are never written; a
// BlockReduce is never under an If (only loops, whose trip counts are the
// same for every thread of a block, enclose it), and kernel.reduce_workspace_*
// describe its shared workspace; the kernel records the extent of every bound
// loop for the launch.
#pragma once

#include <map>

#include "indexing.h"
#include "loop_tree.h"
#include "schedlab/lower/kir.h"

namespace schedlab::lower {

std::unique_ptr<kir::Block> generate(const LoopNode& root, const Indexer& indexer,
                    const std::map<const ir::TensorView*, const kir::Buffer*>& buffers,
                    kir::Kernel& kernel);

}  // namespace schedlab::lower
