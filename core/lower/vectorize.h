// Pass helper: vectorization. A tensor whose innermost loop axis is
// Vectorize (width w) is copied with one w-wide load and store per thread.
//
// Needs: a lowerable fusion. Guarantees, or a user_error naming the tensor:
//  * the tensor is defined by a set (LoadStoreOp: a cache), so the access is a
//    plain copy;
//  * its vectorized axis is the inner part of a split by w of its innermost
//    logical axis (possibly after merges whose innermost input is that axis),
//    so w consecutive elements are adjacent in a row-major layout;
//  * a Local/Shared operand keeps those w elements adjacent: its innermost
//    loop axis is exactly mapped to the vectorized one, with extent w;
//  * a padded Shared buffer (pad_shared) on either side keeps every vector
//    aligned: its padding is a multiple of w;
//  * neither side is a swizzled Shared buffer (sched::swizzle), whose XOR
//    would scatter the vector's elements.
// What depends on sizes (innermost extent divisible by w, innermost stride 1,
// other strides multiples of w, aligned pointers) is recorded per Global
// parameter and checked at launch (runtime::launch).
#pragma once

#include <map>

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Vectorized tensors and their widths; fills kernel.vector_accesses for the
/// launch-time checks.
std::map<const ir::TensorView*, int64_t> plan_vectorization(
    const ir::Fusion& f, const std::map<const ir::TensorView*, const kir::Buffer*>& buffers,
    kir::Kernel& kernel);

}  // namespace schedlab::lower
