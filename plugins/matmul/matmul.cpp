// matmul: the built-in matmul scheduler plugin (issue 36), after nvFuser's
// matmul scheduler (csrc/scheduler/matmul_heuristic.h's MatmulParams), on
// CUDA cores for now. Written only against the plugin API.
//
// What it schedules (contraction.h): a segment whose one reduction is a sum
// over one axis K of a product a * b, each operand a broadcast (and maybe a
// cast) of a bf16, f16 or f32 segment input (the matmul and linear
// composites, batched or not), with any pointwise epilogue (linear's bias, a
// GELU, the cast back). It refuses, with the reason: no or several
// reductions, a reduction that is not a sum or sums no product, a product by
// a constant, operands computed by other ops, f64 or integer operands, mixed
// dtypes, several reduced axes, a K along which an operand is broadcast, not
// exactly one M and one N axis, an operand or the product read elsewhere, an
// output that does not depend on the sum, and a result broadcast back.
// Priority 50: offered before normalization and reduction, which would take
// a contraction as a plain reduction.
//
// The tensor-core schedule (instruction=mma; schedule_mma): the sum becomes
// an MmaOp (host entry fuse_mma, ABI 1.9), reordered to [batch, M, N, K],
// split into [B (BIDz), Mo (BIDy), No (BIDx), Ko, wm (TIDz), wn (TIDy), mi,
// ni, m16, n8, k16] (M by tile_m, warp_m, 16; N by tile_n, warp_n, 8; K by
// 16) and the instruction tile made one warp's mma.sync (mma_tile: [lane
// (TIDx), frag, k16]). Each of the (tile_m / warp_m) x (tile_n / warp_n)
// warps accumulates warp_m / 16 x warp_n / 8 instruction tiles in registers
// (mi, ni serial inside the K loop). The MmaOp's operands are Shared (an
// input operand through a Shared cache_after copy), inlined at the K loop,
// so each K step stages the CTA tile's operands; the epilogue is inlined
// into the output tile, each lane storing its own fragment. M, N and K need
// not be multiples: the tile reads zeros past an operand's end.
//
// The CUDA-core schedule (on the sum, the reference; propagated to every tensor):
//   tiles    the sum [batch..., M, N, K] (reordered) becomes
//            [Ko, B (BIDz), Mo (BIDy), No (BIDx), ks (TIDz), ty (TIDy),
//             tx (TIDx), thm, thn, tk]: M split by tile_m then by thread_m
//            (ty = tile_m / thread_m threads), N likewise (tx), K by
//            split_k (outer, ks) and then by tile_k (Ko steps of tk). Each
//            thread accumulates thread_m x thread_n outputs in registers.
//   K loop   Ko is the outermost loop: the shared tiles of both operands are
//            inlined at it (position 1). An operand tile cannot be inlined
//            past a block axis of the other operand's tile (A's has no N, B's
//            no M: lowering maps inlined loops by position), so the K loop
//            goes first; bindings, not loop order, say which block and thread
//            computes what.
//   operands each input is read through a Shared cache_after copy holding one
//            K step of its tile (tile_m x tile_k x split_k for A, tile_k x
//            tile_n x split_k for B), so each element of A and B is read from
//            global memory once per CTA tile. The copy's loops after the K
//            loop are re-laid out: the tile axes merged (the input's
//            contiguous axis innermost) and split over all the block's
//            threads (TIDz, TIDy, TIDx), so the whole block loads the tile.
//   split-K  with split_k > 1 the serial K loops (Ko, tk) are factored into a
//            per-thread partial (rfactor); the ks threads then combine the
//            partials with a block reduction over TIDz. A grid split-K
//            (nvFuser's) needs a grid reduction into a value the kernel
//            reads (the epilogue), which lowering does not combine.
//   epilogue inlined into the output tile (registers): each thread casts and
//            stores its own thread_m x thread_n outputs.
//
// The heuristic (compute_params, heuristic.cpp), from M, N, K, the batch,
// the dtype and the device (the model device on the CPU backend):
//   mma      bf16/f16 operands: warp tiles next_pow2 of M and N clamped to
//            [16, 64] x [8, 32], 2 x 4 warps at most (no more than the
//            output needs); while the tiles give fewer blocks than SMs the
//            warp count halves, then the warp tile, down to one instruction
//            tile. tile_k 16, split_k 1.
//   fma      f32 operands (below):
//   tiles    128 x 128 with 8 x 8 outputs per thread (256 threads) when
//            128 x 128 tiles alone give every SM a block; else 64 x 64 with
//            4 x 4 (256 threads). Each edge shrinks to next_pow2(M) / (N).
//   shrink   while the tiles give fewer blocks than SMs, the larger edge of
//            the tile is halved, down to 256 outputs per tile; then the
//            thread tile is halved (its larger edge) until a block has 64
//            threads or the thread tile is 1 x 1.
//   split_k  when the tiles still give fewer blocks than SMs and K >= 16:
//            the largest power of two <= min(K / 8, threads left in the
//            block, 16).
//   tile_k   min(16, next_pow2(ceil(K / split_k))).
//   stages 1, async false, grid_swizzle 1, epilogue registers: the only
//   values honoured today; the others are refused with the reason
//   (docs/matmul.md), as are instruction=mma on f32 operands, with split_k
//   > 1 or a tile_k other than 16.
#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "contraction.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/loop.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
using matmul::Config;
using matmul::Contraction;
using matmul::Role;

namespace {

void user_fail(const std::string& message) {
  throw pa::Error(SCHEDLAB_ERR_USER, "matmul: " + message);
}

Config config_of(const pa::Params& p) {
  Config c;
  c.tile_m = p.integer("tile_m");
  c.tile_n = p.integer("tile_n");
  c.tile_k = p.integer("tile_k");
  c.thread_m = p.integer("thread_m");
  c.thread_n = p.integer("thread_n");
  c.warp_m = p.integer("warp_m");
  c.warp_n = p.integer("warp_n");
  c.split_k = p.integer("split_k");
  c.stages = p.integer("stages");
  c.async = p.boolean("async");
  c.grid_swizzle = p.integer("grid_swizzle");
  c.epilogue = p.choice("epilogue");
  c.instruction = p.choice("instruction");
  return c;
}

/// The reference's loop roles, outermost first, after the tiling.
const std::vector<std::string>& reference_order() {
  static const std::vector<std::string> order = {"Ko", "B",  "Mo",  "No",  "ks",
                                                 "ty", "tx", "thm", "thn", "tk"};
  return order;
}

/// The sum's loop as [batch..., M, N, K] (the batch axes merged into one,
/// named B), the names the two schedules split.
pa::Loop canonical_loop(const Contraction& c, pa::TensorView ref) {
  std::vector<std::pair<int, int>> order;
  int next = 0, m = -1, n = -1, k = -1, nbatch = 0;
  for (int i = 0; i < static_cast<int>(c.roles.size()); ++i) {
    switch (c.roles[static_cast<size_t>(i)]) {
      case Role::Batch:
        order.push_back({i, next++});
        ++nbatch;
        break;
      case Role::M:
        m = i;
        break;
      case Role::N:
        n = i;
        break;
      case Role::K:
        k = i;
        break;
    }
  }
  order.push_back({m, next++});
  order.push_back({n, next++});
  order.push_back({k, next++});
  ref.reorder(order);
  for (int i = 1; i < nbatch; ++i) ref.merge(0);
  std::vector<std::string> roles = {"M", "N", "K"};
  if (nbatch > 0) roles.insert(roles.begin(), "B");
  return pa::Loop(ref, roles, "matmul");
}

/// The roles of the sum's loop after tiling, and the tiling itself.
std::vector<std::string> tile_reference(const Contraction& c, const Config& cfg) {
  pa::TensorView ref = c.sum;
  // [batch..., M, N, K], the batch axes merged into one.
  pa::Loop l = canonical_loop(c, ref);
  if (cfg.split_k > 1) l.split("K", cfg.split_k, "ks", "K", /*inner_split=*/false);
  l.split("K", cfg.tile_k, "Ko", "tk");
  l.split("N", cfg.tile_n, "No", "tn");
  l.split("tn", cfg.thread_n, "tx", "thn");
  l.split("M", cfg.tile_m, "Mo", "tm");
  l.split("tm", cfg.thread_m, "ty", "thm");
  std::vector<std::string> final;
  for (const std::string& r : reference_order())
    if (l.has(r)) {
      l.move_to_end(r);
      final.push_back(r);
    }
  l.bind("B", pa::ParallelType::BIDz);
  l.bind("Mo", pa::ParallelType::BIDy);
  l.bind("No", pa::ParallelType::BIDx);
  l.bind("ks", pa::ParallelType::TIDz);
  l.bind("ty", pa::ParallelType::TIDy);
  l.bind("tx", pa::ParallelType::TIDx);
  l.bind("thm", pa::LoopTransform::Unroll);
  l.bind("thn", pa::LoopTransform::Unroll);
  return final;
}

/// The roles a cache of `op` has: the reference's, less the other operand's.
std::vector<std::string> cache_roles(const std::vector<std::string>& ref, bool is_a) {
  std::vector<std::string> out;
  for (const std::string& r : ref) {
    const bool m_side = r == "Mo" || r == "ty" || r == "thm";
    const bool n_side = r == "No" || r == "tx" || r == "thn";
    if ((is_a && n_side) || (!is_a && m_side)) continue;
    out.push_back(r);
  }
  return out;
}

/// The shared tile `cache` (inlined after Ko) loaded by the whole block:
/// its tile axes merged, the input's contiguous one innermost, and split
/// over TIDz, TIDy, TIDx.
void lay_out_tile(pa::TensorView cache, std::vector<std::string> roles, Role inner,
                  const Config& cfg) {
  if (cache.nloop() != static_cast<int>(roles.size()))
    throw pa::Error(SCHEDLAB_ERR_PLUGIN,
                    "matmul: " + cache.str() + " has " + std::to_string(cache.nloop()) +
                        " loop axes, expected " + std::to_string(roles.size()));
  std::vector<pa::AxisInfo> loop = cache.loop();
  for (int i = 0; i < cache.nloop(); ++i) {
    const pa::ParallelType p = loop[static_cast<size_t>(i)].parallel_type;
    if (p == pa::ParallelType::TIDx || p == pa::ParallelType::TIDy || p == pa::ParallelType::TIDz)
      cache.parallelize(i, pa::ParallelType::Serial);
    cache.parallelize(i, pa::LoopTransform::Serial);
  }
  pa::Loop l(cache, roles, "matmul");
  // K contiguous: [.., ks, ty|tx, thm|thn, tk]; else tk before the M/N axes.
  if (inner != Role::K) l.move_before("tk", l.has("ty") ? "ty" : "tx");
  int first_tile = 0;
  for (const std::string& r : roles)
    if (r == "Ko" || r == "B" || r == "Mo" || r == "No") ++first_tile;
  while (cache.nloop() > first_tile + 1) cache.merge(first_tile);
  cache.split(first_tile, cfg.threads_n());
  cache.split(first_tile, cfg.threads_m());
  cache.parallelize(first_tile + 1, pa::ParallelType::TIDy);
  cache.parallelize(first_tile + 2, pa::ParallelType::TIDx);
  if (cfg.split_k > 1) {
    cache.split(first_tile, cfg.split_k);
    cache.parallelize(first_tile + 1, pa::ParallelType::TIDz);
  }
}

/// rfactor of the sum over its serial reduction axes (Ko, tk) when split-K
/// binds ks: a per-thread partial, then a block reduction over TIDz.
void factor_split_k(const pa::TensorView& sum) {
  std::vector<int> serial;
  std::vector<pa::AxisInfo> loop = sum.loop();
  for (int i = 0; i < static_cast<int>(loop.size()); ++i)
    if (loop[static_cast<size_t>(i)].is_reduction() &&
        loop[static_cast<size_t>(i)].parallel_type == pa::ParallelType::Serial)
      serial.push_back(i);
  pa::TensorView(sum).rfactor(serial);
}

/// The tensor-core schedule (instruction=mma): the sum becomes an MmaOp
/// (fuse_mma), tiled as [B (BIDz), Mo (BIDy), No (BIDx), Ko, wm (TIDz),
/// wn (TIDy), mi, ni, lane (TIDx), frag, k16]: each of the wm x wn warps
/// computes warp_m / 16 x warp_n / 8 instruction tiles (mi, ni serial) per
/// K step of 16; the operands are staged in Shared at the K step.
void schedule_mma(pa::Segment& seg, const Contraction& c, const Config& cfg) {
  pa::TensorView ref = c.sum;
  ref.fuse_mma();
  // The operands of the MmaOp in Shared memory, one K step of the CTA tile
  // each, computed at the K loop (outside the tile: rule 16); an input
  // operand (linear's weight) is read through a Shared copy.
  std::vector<pa::TensorView> tiles;
  for (const pa::Operand& o : ref.operands()) {
    if (!o.is_tensor()) continue;
    pa::TensorView t = o.tensor;
    if (t.is_input()) t = t.cache_after();
    t.set_memory_type(pa::MemoryType::Shared);
    tiles.push_back(t);
  }
  pa::Loop l = canonical_loop(c, ref);
  l.split("K", matmul::kMmaK, "Ko", "k16");
  l.split("N", cfg.tile_n, "No", "tn");
  l.split("tn", cfg.warp_n, "wn", "wtn");
  l.split("wtn", matmul::kMmaN, "ni", "n8");
  l.split("M", cfg.tile_m, "Mo", "tm");
  l.split("tm", cfg.warp_m, "wm", "wtm");
  l.split("wtm", matmul::kMmaM, "mi", "m16");
  for (const char* r : {"B", "Mo", "No", "Ko", "wm", "wn", "mi", "ni", "m16", "n8", "k16"})
    if (l.has(r)) l.move_to_end(r);
  const int k_step = l.at("Ko") + 1;
  l.bind("B", pa::ParallelType::BIDz);
  l.bind("Mo", pa::ParallelType::BIDy);
  l.bind("No", pa::ParallelType::BIDx);
  l.bind("wm", pa::ParallelType::TIDz);
  l.bind("wn", pa::ParallelType::TIDy);
  ref.mma_tile();  // [.., m16, n8, k16] -> [.., lane (TIDx), frag, k16]
  seg.propagate_transformation(ref);
  seg.parallelize_all_like(ref);
  seg.inline_most();
  for (pa::TensorView& t : tiles) t.inline_at(k_step);
}

}  // namespace

class Matmul : public pa::Plugin {
 public:
  std::string name() const override { return "matmul"; }
  /// Before normalization (40) and reduction (30): a contraction is a matmul
  /// before it is a reduction.
  int priority() const override { return 50; }
  std::string version() const override { return "0.1"; }
  std::string description() const override {
    return "matmul and linear (+ pointwise epilogue) on tensor cores (mma.sync, bf16/f16: warp "
           "tiles on TIDz/TIDy) or CUDA cores (thread tiles, split-K in the block): CTA tiles "
           "over BIDy/BIDx, shared operand tiles per K step";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::integer("tile_m", 64, 1, 256, "CTA tile: output rows per block (BIDy)"),
        pa::Param::integer("tile_n", 64, 1, 256, "CTA tile: output columns per block (BIDx)"),
        pa::Param::integer("tile_k", 16, 1, 256, "K elements per step of the shared tiles"),
        pa::Param::integer("thread_m", 4, 1, 16,
                           "thread tile: output rows per thread (TIDy = tile_m / thread_m)"),
        pa::Param::integer("thread_n", 4, 1, 16,
                           "thread tile: output columns per thread (TIDx = tile_n / thread_n)"),
        pa::Param::integer("warp_m", 16, 16, 128,
                           "warp tile (mma): output rows per warp, a multiple of 16 "
                           "(TIDz = tile_m / warp_m warps)"),
        pa::Param::integer("warp_n", 8, 8, 128,
                           "warp tile (mma): output columns per warp, a multiple of 8 "
                           "(TIDy = tile_n / warp_n warps)"),
        pa::Param::integer("split_k", 1, 1, 64,
                           "threads of a block (TIDz) that split K and combine their partial sums"),
        pa::Param::integer("stages", 1, 1, 8,
                           "shared tiles in flight (1: no circular buffering; >1 needs ABI 1.8)"),
        pa::Param::boolean("async", false, "cp.async operand loads (not yet on CUDA cores)"),
        pa::Param::integer("grid_swizzle", 1, 1, 64,
                           "M tiles per group of blocks (Triton's GROUP_SIZE_M; 1: none, the only "
                           "value honoured yet)"),
        pa::Param::choice("epilogue", {"registers", "shared"}, "registers",
                          "where the output tile is written from (shared: not yet)"),
        pa::Param::choice("instruction", {"fma", "mma"}, "fma",
                          "fma: CUDA cores; mma: tensor cores (mma.sync m16n8k16, bf16/f16)"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params& p) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    Contraction c = matmul::analyze(seg);
    if (!c.reject.empty()) return pa::Verdict::no(c.reject);
    // Settings the plugin cannot honour yet are refused whatever the sizes;
    // the sizes themselves are checked against the heuristic's choice.
    Config forced = config_of(p);
    Config mine = matmul::heuristic_for(c, seg.device(), forced.instruction);
    mine.stages = forced.stages;
    mine.async = forced.async;
    mine.grid_swizzle = forced.grid_swizzle;
    mine.epilogue = forced.epilogue;
    mine.instruction = forced.instruction;
    if (std::string why = matmul::unsupported(mine, c, seg.device()); !why.empty())
      return pa::Verdict::no(why);
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment& seg, pa::Params& p) override {
    if (p.use_tuned()) return;
    Contraction c = matmul::analyze(seg);
    if (!c.reject.empty()) user_fail(c.reject);
    Config cfg = matmul::heuristic(c, seg.device());
    p.set_integer("tile_m", cfg.tile_m);
    p.set_integer("tile_n", cfg.tile_n);
    p.set_integer("tile_k", cfg.tile_k);
    p.set_integer("thread_m", cfg.thread_m);
    p.set_integer("thread_n", cfg.thread_n);
    p.set_integer("warp_m", cfg.warp_m);
    p.set_integer("warp_n", cfg.warp_n);
    p.set_integer("split_k", cfg.split_k);
    p.set_integer("stages", cfg.stages);
    p.set_boolean("async", cfg.async);
    p.set_integer("grid_swizzle", cfg.grid_swizzle);
    p.set_choice("epilogue", cfg.epilogue);
    p.set_choice("instruction", cfg.instruction);
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    Contraction c = matmul::analyze(seg);
    if (!c.reject.empty()) user_fail(c.reject);
    const Config cfg = config_of(p);
    if (std::string why = matmul::unsupported(cfg, c, seg.device()); !why.empty()) user_fail(why);
    if (cfg.mma()) {
      schedule_mma(seg, c, cfg);
      return;
    }
    pa::TensorView a_tile = c.a.input.cache_after();
    pa::TensorView b_tile = c.b.input.cache_after();
    a_tile.set_memory_type(pa::MemoryType::Shared);
    b_tile.set_memory_type(pa::MemoryType::Shared);

    const std::vector<std::string> roles = tile_reference(c, cfg);
    seg.propagate_transformation(c.sum);
    seg.parallelize_all_like(c.sum);
    if (cfg.split_k > 1) factor_split_k(c.sum);
    seg.inline_most();
    a_tile.inline_at(1);
    b_tile.inline_at(1);
    lay_out_tile(a_tile, cache_roles(roles, true), c.a.inner, cfg);
    lay_out_tile(b_tile, cache_roles(roles, false), c.b.inner, cfg);
  }
};

SCHEDLAB_PLUGIN(Matmul)
