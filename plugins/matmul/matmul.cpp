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
// output that does not depend on the sum, a result broadcast back, and a
// reshape (view) in the epilogue.
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
//   stages 1, async false, grid_swizzle 1, epilogue registers. Forced
//   async=true / stages > 1 are honoured on tensor cores (stage_operand:
//   cp.async copies of the inputs into Shared stages, circular-buffered over
//   the K loop, which then goes first) and refused on CUDA cores; stages are
//   refused beyond the K steps (rule 15) and above 2 without cp.async for
//   both operands. grid_swizzle > 1, epilogue=shared, instruction=mma on f32
//   operands, with split_k > 1 or a tile_k other than 16 are refused with
//   the reason (docs/matmul.md).
#include <algorithm>
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

/// The widths of the cp.async copies: per role (M, N, K), the copy width of
/// an operand contiguous along it (copy_width), 1 when none is.
struct Widths {
  int64_t m = 1, n = 1, k = 1;
  int64_t of(Role r) const { return r == Role::M ? m : r == Role::N ? n : r == Role::K ? k : 1; }
};

Widths copy_widths(const Contraction& c, const Config& cfg) {
  Widths w;
  if (!cfg.async) return w;
  for (const matmul::Operand* o : {&c.a, &c.b}) {
    const int64_t v = matmul::copy_width(matmul::extent_of(c, o->inner));
    (o->inner == Role::M ? w.m : o->inner == Role::N ? w.n : w.k) = v;
  }
  return w;
}

/// Splits axis `at` of `tv` into [outer, inner] with an inner extent of
/// `tile`, split first by the copy width `v` (then by tile / v, the two
/// inner pieces merged) so that the outer extent is the same expression in
/// the reference and in the caches (the loop map ties them by expression).
void split_tile(pa::TensorView& tv, int at, int64_t tile, int64_t v, bool merge_inner) {
  if (v <= 1) {
    tv.split(at, tile);
    return;
  }
  tv.split(at, v);
  tv.split(at, tile / v);
  if (merge_inner) tv.merge(at + 1);
}

/// The cp.async (or, at an odd contiguous extent, plain) copy of an input
/// operand global -> Shared, one K step of the CTA tile per stage: laid out
/// [Ko, B (BIDz), Mo (BIDy) | No (BIDx), rest, wm (TIDz), wn (TIDy), lane
/// (TIDx), vector], the vector (copy width) along the input's contiguous axis.
pa::TensorView stage_operand(const matmul::Operand& o, const Config& cfg, const Widths& w) {
  const int64_t v = w.of(o.inner);
  pa::TensorView input = o.input;
  pa::TensorView t = v > 1 ? input.cache_after(pa::LoadStoreOp::CpAsync, pa::CacheOp::Unspecified)
                           : input.cache_after();
  t.set_memory_type(pa::MemoryType::Shared);
  // 16-byte copies: the stage's 16-byte chunks XOR-swizzled over 128-byte
  // lines (ABI 1.10; lowering's flat swizzle, docs/lowering-rules.md), so
  // that the mma tile's ldmatrix rows (A's m rows, 32 bytes apart; B's k
  // rows, tile_n * 2 bytes apart) fall in distinct bank groups.
  if (v == 8 && cfg.async) t.swizzle(8, 16);
  // Roles per loop axis while splitting: outer (block / K loop), tile, vector.
  std::vector<std::string> roles;
  int nbatch = 0;
  for (Role r : o.axes) {
    const int at = static_cast<int>(roles.size());
    if (r == Role::Batch) {
      roles.push_back("B");
      ++nbatch;
      continue;
    }
    const char* name = r == Role::M ? "M" : r == Role::N ? "N" : "K";
    const int64_t tile = r == Role::M ? cfg.tile_m : r == Role::N ? cfg.tile_n : matmul::kMmaK;
    const int64_t rv = w.of(r);
    split_tile(t, at, tile, rv, false);
    roles.push_back(std::string(name) + "o");
    if (rv > 1) roles.push_back("q");
    roles.push_back(r == o.inner && rv > 1 ? "vec" : "q");
  }
  // The batch axes merged into one, as the reference's.
  for (int i = 1; i < nbatch; ++i) {
    const int b = static_cast<int>(std::find(roles.begin(), roles.end(), "B") - roles.begin());
    t.merge(b);
    roles.erase(roles.begin() + b + 1);
  }
  // Order [Ko, B, Mo|No, q..., vec]: reorder by a stable rank.
  auto rank = [](const std::string& r) {
    return r == "Ko" ? 0 : r == "B" ? 1 : (r == "Mo" || r == "No") ? 2 : r == "vec" ? 4 : 3;
  };
  std::vector<int> order(roles.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return rank(roles[static_cast<size_t>(x)]) < rank(roles[static_cast<size_t>(y)]);
  });
  std::vector<std::pair<int, int>> old2new;
  std::vector<std::string> sorted;
  for (size_t i = 0; i < order.size(); ++i) {
    old2new.push_back({order[i], static_cast<int>(i)});
    sorted.push_back(roles[static_cast<size_t>(order[i])]);
  }
  t.reorder(old2new);
  roles = sorted;
  int first = 0;
  while (first < static_cast<int>(roles.size()) && rank(roles[static_cast<size_t>(first)]) < 3)
    ++first;
  const bool vec = roles.back() == "vec";
  const int last = static_cast<int>(roles.size()) - (vec ? 1 : 0);  // one past the tile axes
  for (int i = first; i + 1 < last; ++i) t.merge(first);
  // [.., tile, vec?] -> [.., rest, wm, wn, lane, vec?]
  t.split(first, matmul::kWarpSize);
  int lane = first + 1;
  if (cfg.threads_n() > 1) {
    t.split(first, cfg.threads_n());
    ++lane;
  }
  if (cfg.threads_m() > 1) {
    t.split(first, cfg.threads_m());
    ++lane;
  }
  for (int i = 0; i < first; ++i) {
    const std::string& r = roles[static_cast<size_t>(i)];
    if (r == "B") t.parallelize(i, pa::ParallelType::BIDz);
    if (r == "Mo") t.parallelize(i, pa::ParallelType::BIDy);
    if (r == "No") t.parallelize(i, pa::ParallelType::BIDx);
  }
  int at = lane - 1;
  if (cfg.threads_n() > 1) t.parallelize(at--, pa::ParallelType::TIDy);
  if (cfg.threads_m() > 1) t.parallelize(at--, pa::ParallelType::TIDz);
  t.parallelize(lane, pa::ParallelType::TIDx);
  if (vec) t.parallelize(lane + 1, pa::LoopTransform::Vectorize);
  return t;
}

/// The tensor-core schedule (instruction=mma): the sum becomes an MmaOp
/// (fuse_mma), tiled as [B (BIDz), Mo (BIDy), No (BIDx), Ko, wm (TIDz),
/// wn (TIDy), mi, ni, lane (TIDx), frag, k16]: each of the wm x wn warps
/// computes warp_m / 16 x warp_n / 8 instruction tiles (mi, ni serial) per
/// K step of 16; the operands are staged in Shared at the K step. With
/// async or stages > 1 the inputs are copied into Shared stages first
/// (stage_operand) and the K loop goes first: [Ko, B, Mo, No, ...].
void schedule_mma(pa::Segment& seg, const Contraction& c, const Config& cfg) {
  // The MmaOp accumulates in registers (lowering: a Local accumulator); a
  // sum that is the segment's output (no epilogue: fuzz seed 11 case 170)
  // is computed into a Local cache_before, which the output copies.
  pa::TensorView ref = c.sum;
  if (ref.is_output()) ref = ref.cache_before();
  ref.fuse_mma();
  const bool staged = cfg.async || cfg.stages > 1;
  const Widths w = copy_widths(c, cfg);
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
  if (staged) {
    // K, M, N split as the staged copies split them (split_tile).
    const int k = l.at("K"), n = l.at("N"), m = l.at("M");
    split_tile(ref, k, matmul::kMmaK, w.k, true);
    split_tile(ref, n, cfg.tile_n, w.n, true);
    split_tile(ref, m, cfg.tile_m, w.m, true);
    std::vector<std::string> split_roles = {"Mo", "tm", "No", "tn", "Ko", "k16"};
    if (l.has("B")) split_roles.insert(split_roles.begin(), "B");
    l = pa::Loop(ref, split_roles, "matmul");
  } else {
    l.split("K", matmul::kMmaK, "Ko", "k16");
    l.split("N", cfg.tile_n, "No", "tn");
    l.split("M", cfg.tile_m, "Mo", "tm");
  }
  l.split("tn", cfg.warp_n, "wn", "wtn");
  l.split("wtn", matmul::kMmaN, "ni", "n8");
  l.split("tm", cfg.warp_m, "wm", "wtm");
  l.split("wtm", matmul::kMmaM, "mi", "m16");
  if (staged) l.move_to_end("Ko");
  for (const char* r : {"B", "Mo", "No", "Ko", "wm", "wn", "mi", "ni", "m16", "n8", "k16"})
    if (l.has(r) && !(staged && std::string(r) == "Ko")) l.move_to_end(r);
  const int k_step = (staged ? l.at("No") : l.at("Ko")) + 1;
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
  if (!staged) return;
  for (const matmul::Operand* o : {&c.a, &c.b}) {
    pa::TensorView copy = stage_operand(*o, cfg, w);
    copy.inline_at(1);  // at the K step, the outermost loop
    if (cfg.stages > 1) copy.circular_buffer(cfg.stages, cfg.stages - 1);
  }
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
                           "mma: Shared stages of the operand copies over the K loop (1: no "
                           "circular buffering)"),
        pa::Param::boolean("async", false, "mma: cp.async operand copies (not on CUDA cores)"),
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
    // The parameters here are the defaults (instruction=fma) with the user's
    // overrides; compute_params picks mma for bf16/f16, so async or stages
    // on bf16/f16 are checked against the tensor-core schedule. (An explicit
    // instruction=fma with them is refused by schedule().)
    const bool half = c.dtype == pa::DataType::BF16 || c.dtype == pa::DataType::F16;
    if (half && (forced.async || forced.stages > 1)) forced.instruction = "mma";
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
