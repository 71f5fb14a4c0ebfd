// Pass: cp.async. A cache defined by LoadStoreOpType::CpAsync (cache_after)
// copies Global memory into a Shared buffer with PTX cp.async
// (core/codegen/mma.cuh's sl_cp_async): each copy of its nest becomes an
// asynchronous Store of 4, 8 or 16 bytes (the element size times the
// vectorized width), its edge predicate a zero fill (src_bytes 0) from a
// source index clamped to 0, so that an element past a tile edge is written
// as 0 and nothing out of bounds is read. insert_barriers then closes the
// copies into a group and waits for them before the barrier that precedes
// their first read (lower/barriers.cpp); circular buffering waits for fewer
// (lower/circular_buffer.cpp).
//
// Needs: generated statements (a copy is a Store, alone or as the only
// statement of an If on its predicate). Guarantees: every Store into a
// CpAsync cache is async, with the Load's cache policy resolved to .ca
// (AllLevels) or .cg (Global).
#pragma once

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// Lowering's rules for a CpAsync cache t (docs/lowering-rules.md, rule 12):
/// a user error naming t unless it copies a Global tensor into a Shared one
/// in 4, 8 or 16 bytes with a cache policy cp.async has.
void check_async_copy(const ir::TensorView* t, const ir::LoadStoreOp* ls);

/// The bytes of one copy of the CpAsync cache t: its element size times the
/// extent of its innermost loop axis when that is vectorized, else 1.
int64_t async_copy_bytes(const ir::TensorView* t);

void lower_async_copies(kir::Kernel& kernel);

}  // namespace schedlab::lower
