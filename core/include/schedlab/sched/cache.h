// Memory primitives: cache_after, cache_before, cache_fork, recompute,
// set_memory_type, and the Shared layouts pad_shared and swizzle.
//
// Each cache inserts one copy (a LoadStoreOp) and rewires the def/use graph
// around it; the cache it returns is named after tv ("x" -> "x_cache") when tv
// has a name. Fusion inputs and outputs stay in Global memory throughout.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Inserts c = LoadStoreOp(op, tv, cache_op) and makes every existing use of
/// tv read c instead. Returns c (Local memory, tv's dtype, fresh unscheduled
/// copies of tv's non-reduction logical axes). tv must have uses and not be
/// inlined.
ir::TensorView* cache_after(ir::TensorView* tv, ir::LoadStoreOpType op = ir::LoadStoreOpType::Set,
                            ir::CacheOp cache_op = ir::CacheOp::Unspecified);
/// Moves tv's definition onto a new tensor c and makes tv = set(c). Returns c,
/// which keeps tv's logical domain (reduction axes included) and is Local; tv
/// gets fresh non-reduction axes and keeps its memory type. tv must be
/// computed (not a fusion input), not yet transformed, bound or inlined, and
/// none of its producers may be inlined.
ir::TensorView* cache_before(ir::TensorView* tv);
/// For a fusion output tv that other expressions also read: adds c = set(tv),
/// makes c the fusion output in tv's place (Global) and tv a Local
/// intermediate. Returns c. tv must not be inlined.
ir::TensorView* cache_fork(ir::TensorView* tv);
/// nvFuser's recomputeTv: adds c, computed by a copy of tv's definition (the
/// same operation on the same operands), and makes `consumers` read c instead
/// of tv (empty: every expression that reads tv). Returns c (Local, fresh
/// unscheduled copies of tv's logical axes, named "<tv>_recompute"). What a
/// multi-pass kernel recomputes from its inputs need not be kept between
/// passes. tv must be computed by an expression that is not a reduction, not
/// yet transformed, bound or inlined, nor any of its producers; each
/// consumer must read tv.
ir::TensorView* recompute(ir::TensorView* tv, const std::vector<ir::TensorView*>& consumers);
/// Sets where tv lives. Fusion inputs and outputs must stay Global; a padded
/// or swizzled Shared tensor (pad_shared, swizzle) stays Shared until its
/// padding is set to 0 or its swizzle to 1.
void set_memory_type(ir::TensorView* tv, ir::MemoryType m);
/// The most padding pad_shared accepts. One bank word (1 to 4 elements) is
/// what a conflict-free tile needs; 32 elements of 4 bytes or more already
/// shift a row by a whole cycle of the 32 banks, so a larger pad reaches no
/// bank layout a smaller one does not and only wastes shared memory.
constexpr int64_t kMaxSharedPad = 32;
/// Pads each row of tv's Shared buffer by `elements`: the pitch of its
/// innermost allocation axis (Indexer::allocation_axes) becomes that axis's
/// extent plus `elements`, so that a tile read along its other axis spreads
/// over the banks (nvFuser's and CUTLASS's padded shared tiles). tv must
/// already be Shared: the check is at the call, and set_memory_type refuses
/// to move a padded tensor out of Shared, so lowering never meets a padded
/// Local or Global tensor. 0 <= elements <= kMaxSharedPad; 0 removes it.
/// A swizzled tensor cannot be padded too (one layout at a time).
void pad_shared(ir::TensorView* tv, int64_t elements);
/// The widest swizzle: 32 units of one bank word already cover the 32 banks,
/// so a wider XOR reaches no bank a narrower one does not.
constexpr int64_t kMaxSwizzleWidth = 32;
/// The elements of one swizzle unit of a `dtype` buffer: one 4-byte bank word
/// (or, with bytes = 16, one 16-byte chunk: 8 f16/bf16)
/// (2 f16/bf16, 4 bytes), or one element of 4 bytes or more.
int64_t swizzle_unit(ir::DataType dtype, int64_t bytes = 4);
/// XOR-swizzles the rows of tv's Shared buffer (nvFuser's
/// swizzle(Swizzle2DType::XOR), CUTLASS's Swizzle): the buffer is row-major
/// over its allocation axes, a row being the innermost one (E elements, as
/// for pad_shared) and r the row's number; element c of row r is stored at
///   r * E + ((c / u) ^ (r % width)) * u + c % u,   u = swizzle_unit(dtype),
/// a permutation of each row by whole bank words. A tile read along its other
/// axis (one row per thread, the same column) then meets `width` different
/// bank words, without the memory padding costs. tv must already be Shared
/// (checked here, and set_memory_type keeps it Shared) and not padded; width
/// is a power of two in [1, kMaxSwizzleWidth], 1 removing it. Lowering checks
/// the rest, with the buffer known: E a constant multiple of width * u (so the
/// XOR stays within the row), at least two allocation axes, and no vectorized
/// copy into or out of the buffer (its vector axis is the row itself, which
/// the XOR would split).
///
/// bytes = 16 XORs whole 16-byte chunks instead of bank words (nvFuser's
/// ldmatrix swizzle, CUTLASS's Swizzle<3, 3, 3> for 128-byte rows of
/// halves): chunk c of row r goes to c ^ (r % width), so the 8 rows one
/// ldmatrix matrix reads (16 bytes each, the same chunk of 8 consecutive
/// rows) meet 8 different chunks, each 16-byte row staying whole and
/// aligned; width is then a power of two in [1, 8] (8 chunks of a 128-byte
/// row cover the 32 banks). bytes is 4 or 16.
void swizzle(ir::TensorView* tv, int64_t width, int64_t bytes = 4);

}  // namespace schedlab::sched
