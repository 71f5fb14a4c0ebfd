// Pass helper: the warp's mma.sync of an MmaOp whose innermost loop axes are
// an instruction tile (sched::mma_tile): [lane 32 (TIDx), fragment 4, k 16].
// generate calls it in place of the fragment and k loops. Every fragment
// element is found through the ordinary index math, with the three tile
// loops' indices replaced by the lane's fragment coordinates of the PTX ISA
// (m16n8k16, .row.col): A element j of lane l is (row l/4 + 8 ((j/2)%2), k
// 2 (l%4) + j%2 + 8 (j/4)); B element j is (k 2 (l%4) + j%2 + 8 (j/2), col
// l/4); C element i is (row l/4 + 8 (i/2), col 2 (l%4) + i%2). An element
// past an operand's end is 0; one past the output's end is neither read nor
// written. So the operands may live in any memory, and M, N and K need not
// be multiples of the tile.
//
// ldmatrix: an operand in Shared memory whose layout makes every 8-element
// row of its fragment (A: m, k 8c..8c+7; B: n, k 8c..8c+7, or k, n 0..7) 16
// contiguous bytes starting at a multiple of 16 is read with ldmatrix (A
// .x4; B .x2, .trans when B's n is the contiguous axis). The layout is
// checked on the offsets themselves: every row's 8 offsets are evaluated
// (all sizes, loop and thread indices 0, then three pseudo-random
// assignments) and must be consecutive from a multiple of 8; else the
// operand keeps the element reads and the kernel IR says why. A tile that
// reaches past M, N or K (the tile's first and last element of the operand,
// the same for every lane of the warp) takes the element reads, which are 0
// past the end, so the ldmatrix never reads rows no copy wrote. That is
// what nvFuser's LoadStoreOpType::LdMatrix does with a register fragment
// tensor; here the fragment is no TensorView, so the tile does it itself,
// and lowering refuses an LdMatrix cache_after.
#pragma once

#include <map>

#include "indexing.h"
#include "schedlab/lower/kir.h"

namespace schedlab::lower {

/// The statement of the mma tile of `e` (e->out()->mma_k() is set), at the
/// loops that enclose its fragment loop (`index` gives their indices).
kir::StmtP mma_tile(const ir::MmaOp* e, const Indexer& ix,
                    const std::map<const ir::TensorView*, const kir::Buffer*>& buffers,
                    const LoopIndexFn& index);

/// Lowering rule 16 (docs/lowering-rules.md): the mma tile of t (t->mma_k()
/// set) is still [lane 32 bound to TIDx, fragment 4 serial, k 16] innermost,
/// t is a register accumulator, its operands are in Shared or Global memory
/// (the lanes read each other's elements) computed outside the tile, and
/// every TIDx axis of the kernel spans 32 (the lane is threadIdx.x).
void check_mma_tile(const ir::Fusion& f, const ir::TensorView* t);

/// Whether t is an operand of an mma tile: staged once per block for the
/// warps of every block along its Broadcast axes (indexing.cpp and
/// loop_tree.cpp let its block-bound Broadcast axes sit in the wider block
/// loops of the tile, at index 0).
bool is_mma_tile_operand(const ir::TensorView* t);

/// The Shared tensor an mma tile reads in place of its operand t, or
/// nullptr: t = broadcast(q) or set(q), both Shared and of one dtype, t read
/// by nothing but the tile and q computed in loops that all enclose t (the
/// staged operand of the matmul plugin: q is the cp.async stage, t its
/// broadcast to the tile's [M, N, K]). t holds exactly q's elements at the
/// tile's iteration, so the tile reads them from q (indexing q by t's
/// logical index, its Broadcast axes dropped) and lowering neither allocates
/// nor computes t: no Shared -> Shared copy, no buffer 8x (A) or 16x (B)
/// the tile that the output's loops would give t (docs/matmul.md).
const ir::TensorView* mma_operand_source(const ir::TensorView* t);

/// The last pass: each serial loop of constant extent whose body is one
/// MmaTile (or one folded already) is folded into it (kir::MmaTile::m_var,
/// n_var) when one operand's reads do not depend on the loop variable: an
/// m loop (B independent of it) or an n loop (A independent). The tile then
/// reads each A fragment once per m and each B fragment once per n into
/// registers, not once per mma.sync (nvFuser's warp tile: the operands of
/// warp_m / 16 x warp_n / 8 instructions from warp_m / 16 + warp_n / 8
/// ldmatrix). Each (m, n) accumulates its own C fragment, so the order of
/// the mma.sync does not change any result.
void hoist_mma_fragments(kir::Kernel& kernel);

/// Whether loop `key` is the fragment loop of an mma tile.
bool is_mma_fragment_loop(const LoopKey& key);

}  // namespace schedlab::lower
