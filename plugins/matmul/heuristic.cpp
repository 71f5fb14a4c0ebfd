// matmul plugin: the heuristic (compute_params) and the checks of a
// configuration (config.h). The rules are documented at the top of
// matmul.cpp and in docs/matmul.md.
#include <algorithm>
#include <cstdint>
#include <string>

#include "config.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace matmul {
namespace {

using pa::ceil_div;
using pa::largest_pow2_at_most;
using pa::next_pow2;

/// Large output: this many 128 x 128 tiles per SM (at least) take big tiles.
constexpr int64_t kBigTileWaves = 1;
/// Split-K gives each split at least this many K elements.
constexpr int64_t kMinKPerSplit = 8;
/// At most this many threads split K in a block.
constexpr int64_t kMaxSplitK = 16;
/// A tile shrinks (to fill SMs) down to this many outputs.
constexpr int64_t kMinTileArea = 256;
/// A smaller thread tile gives a block at least this many threads.
constexpr int64_t kMinThreads = 64;
/// Largest gridDim.y and gridDim.z.
constexpr int64_t kMaxGridYZ = 65535;
/// Tensor cores, large outputs: the CTA tile edge, and the most stages.
constexpr int64_t kBigTile = 128;
constexpr int64_t kMaxStages = 8;

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

int64_t Config::shared_bytes(const Contraction& c) const {
  const int64_t bytes = pa::dtype_bytes(c.dtype);
  if (!mma()) return (tile_m + tile_n) * tile_k * split_k * bytes;
  // Unstaged: the MmaOp's operands, one K step of the CTA tile each, as
  // lowering allocates them: over the tile's loops after the K step, so each
  // holds its broadcast piece of the instruction tile too (A's n 8, B's m
  // 16). Staged: the tile reads the stages in place (lowering's
  // mma_operand_source), the operands have no buffer.
  const bool staged = async || stages > 1;
  int64_t elements = staged ? 0 : tile_m * kMmaK * kMmaN + tile_n * kMmaK * kMmaM;
  // The staged copies (async or stages > 1): per stage, each operand's tile
  // over all the block's threads, `width` elements per copy, the last round
  // of copies whole (stage_operand's layout).
  if (staged)
    for (const Operand* o : {&c.a, &c.b}) {
      const int64_t width = async ? copy_width(extent_of(c, o->inner)) : 1;
      const int64_t round = threads() * width;
      const int64_t tile = (o == &c.a ? tile_m : tile_n) * kMmaK;
      elements += stages * pa::ceil_div(tile, round) * round;
    }
  return elements * bytes;
}

uint64_t shared_limit(const pa::DeviceProperties& d) {
  return d.shared_bytes_per_block_optin > 0 ? d.shared_bytes_per_block_optin
                                            : d.shared_bytes_per_block;
}

int64_t copy_width(int64_t extent) {
  for (int64_t w : {8, 4, 2})
    if (extent % w == 0) return w;
  return 1;
}

int64_t extent_of(const Contraction& c, Role r) {
  return r == Role::M ? c.M : r == Role::N ? c.N : r == Role::K ? c.K : c.batch;
}

namespace {

/// The tensor-core choice for bf16/f16 operands: warp tiles of up to
/// 64 x 32 (4 x 4 instruction tiles) and up to 2 x 4 warps when the output
/// is large; smaller outputs shrink the warp count, then the warp tile,
/// until the tiles give every SM a block or reach one instruction tile.
Config heuristic_mma(const Contraction& c, const pa::DeviceProperties& d) {
  Config cfg;
  cfg.instruction = "mma";
  cfg.tile_k = kMmaK;
  const int64_t sms = std::max(1, d.sm_count);
  cfg.warp_m = std::clamp<int64_t>(next_pow2(c.M), kMmaM, 64);
  cfg.warp_n = std::clamp<int64_t>(next_pow2(c.N), kMmaN, 32);
  int64_t warps_m = largest_pow2_at_most(std::clamp<int64_t>(ceil_div(c.M, cfg.warp_m), 1, 2));
  int64_t warps_n = largest_pow2_at_most(std::clamp<int64_t>(ceil_div(c.N, cfg.warp_n), 1, 4));
  auto blocks = [&] {
    return ceil_div(c.M, warps_m * cfg.warp_m) * ceil_div(c.N, warps_n * cfg.warp_n) * c.batch;
  };
  while (blocks() < sms && (warps_m > 1 || warps_n > 1))
    (warps_n >= warps_m ? warps_n : warps_m) /= 2;
  while (blocks() < sms && (cfg.warp_m > kMmaM || cfg.warp_n > kMmaN)) {
    if (cfg.warp_m / kMmaM >= cfg.warp_n / kMmaN && cfg.warp_m > kMmaM)
      cfg.warp_m /= 2;
    else
      cfg.warp_n /= 2;
  }
  cfg.tile_m = warps_m * cfg.warp_m;
  cfg.tile_n = warps_n * cfg.warp_n;
  // Large outputs: 128 x 128 CTA tiles of 2 x 2 warps of 64 x 64 (32
  // mma.sync per warp and K step of 16 from 4 + 8 ldmatrix: docs/model.md
  // "What an mma.sync matmul needs to be tensor-bound"), the operands copied
  // by cp.async into Shared stages the mma tile reads in place, as many
  // stages as the K steps, kMaxStages and half the block's shared memory
  // allow (each stage's round trip overlaps the others': the chain).
  const bool large = ceil_div(c.M, kBigTile) * ceil_div(c.N, kBigTile) * c.batch >= sms;
  const bool copies16 = copy_width(extent_of(c, c.a.inner)) == 8 &&
                        copy_width(extent_of(c, c.b.inner)) == 8;
  const int64_t k_steps = ceil_div(c.K, kMmaK);
  if (large && copies16 && k_steps >= 2) {
    cfg.tile_m = cfg.tile_n = kBigTile;
    cfg.warp_m = cfg.warp_n = 64;
    cfg.async = true;
    Config one = cfg;
    one.stages = 1;
    const int64_t stage_bytes = one.shared_bytes(c);
    const int64_t budget = static_cast<int64_t>(shared_limit(d)) / 2;
    cfg.stages = std::max<int64_t>(
        1, std::min({kMaxStages, k_steps, budget > 0 ? budget / stage_bytes : kMaxStages}));
  }
  return cfg;
}

}  // namespace

Config heuristic(const Contraction& c, const pa::DeviceProperties& d) {
  const bool half = c.dtype == pa::DataType::BF16 || c.dtype == pa::DataType::F16;
  return heuristic_for(c, d, half ? "mma" : "fma");
}

Config heuristic_for(const Contraction& c, const pa::DeviceProperties& d,
                     const std::string& instruction) {
  if (instruction == "mma") return heuristic_mma(c, d);
  Config cfg;
  const int64_t sms = std::max(1, d.sm_count);
  const int64_t max_threads = pa::rules::max_threads_per_block(d);
  // Big tiles (128 x 128, 8 x 8 per thread) when they alone fill every SM.
  const int64_t big = ceil_div(c.M, 128) * ceil_div(c.N, 128) * c.batch;
  const bool large = big >= kBigTileWaves * sms;
  const int64_t tile = large ? 128 : 64, per_thread = large ? 8 : 4;
  // Each edge shrinks to the (power-of-two-rounded) extent: no idle rows.
  cfg.tile_m = std::min(tile, next_pow2(c.M));
  cfg.tile_n = std::min(tile, next_pow2(c.N));
  cfg.thread_m = std::min(per_thread, cfg.tile_m);
  cfg.thread_n = std::min(per_thread, cfg.tile_n);
  // Few blocks leave SMs idle: halve the larger tile edge while the tile
  // holds more than kMinTileArea outputs, then give the threads back (a
  // smaller thread tile) up to kMinThreads per block.
  auto blocks = [&] { return ceil_div(c.M, cfg.tile_m) * ceil_div(c.N, cfg.tile_n) * c.batch; };
  while (blocks() < sms && cfg.tile_m * cfg.tile_n > kMinTileArea) {
    (cfg.tile_m >= cfg.tile_n ? cfg.tile_m : cfg.tile_n) /= 2;
    cfg.thread_m = std::min(cfg.thread_m, cfg.tile_m);
    cfg.thread_n = std::min(cfg.thread_n, cfg.tile_n);
  }
  while (cfg.threads() < kMinThreads && (cfg.thread_m > 1 || cfg.thread_n > 1))
    (cfg.thread_m >= cfg.thread_n ? cfg.thread_m : cfg.thread_n) /= 2;
  // Split-K: still too few blocks; threads of a block share K instead.
  if (blocks() < sms && c.K >= 2 * kMinKPerSplit)
    cfg.split_k = std::max<int64_t>(
        1, largest_pow2_at_most(
               std::min({c.K / kMinKPerSplit, max_threads / cfg.threads(), kMaxSplitK})));
  cfg.tile_k = std::min<int64_t>(16, next_pow2(ceil_div(c.K, cfg.split_k)));
  return cfg;
}

namespace {

/// Why the tensor-core settings of `cfg` cannot be honoured for `c`, or "".
std::string unsupported_mma(const Config& cfg, const Contraction& c) {
  if (c.dtype != pa::DataType::BF16 && c.dtype != pa::DataType::F16)
    return "instruction=mma: mma.sync m16n8k16 multiplies bf16 or f16 operands, these are " +
           dtype_name(c.dtype) + "; instruction=fma schedules them on CUDA cores";
  if (cfg.split_k > 1)
    return "instruction=mma with split_k=" + str(cfg.split_k) +
           ": a split K would rfactor the MmaOp, which lowering does not tile; use split_k=1";
  if (cfg.tile_k != kMmaK)
    return "instruction=mma with tile_k=" + str(cfg.tile_k) +
           ": the K step of the shared tiles "
           "is one instruction's k (" +
           str(kMmaK) + "); use tile_k=" + str(kMmaK);
  if (cfg.warp_m % kMmaM != 0)
    return "warp_m=" + str(cfg.warp_m) + " is not a multiple of the instruction's m (" +
           str(kMmaM) + ")";
  if (cfg.warp_n % kMmaN != 0)
    return "warp_n=" + str(cfg.warp_n) + " is not a multiple of the instruction's n (" +
           str(kMmaN) + ")";
  if (cfg.tile_m % cfg.warp_m != 0)
    return "warp_m=" + str(cfg.warp_m) + " does not divide tile_m=" + str(cfg.tile_m);
  if (cfg.tile_n % cfg.warp_n != 0)
    return "warp_n=" + str(cfg.warp_n) + " does not divide tile_n=" + str(cfg.tile_n);
  if (cfg.stages > 1) {
    const int64_t k_tiles = ceil_div(c.K, kMmaK);
    if (k_tiles < cfg.stages)
      return "stages=" + str(cfg.stages) + " with K=" + str(c.K) + ": the K loop has " +
             str(k_tiles) + " step(s) of " + str(kMmaK) +
             ", fewer than the stages of its circular buffer (rule 15); use stages<=" +
             str(std::max<int64_t>(1, k_tiles)) + (k_tiles <= 1 ? " (1: none)" : "");
    if (cfg.stages > 2) {
      if (!cfg.async)
        return "stages=" + str(cfg.stages) +
               " with async=false: more than 2 stages need cp.async loads (a plain load "
               "completes before the next K step, rule 15); use async=true or stages=2";
      for (const Operand* o : {&c.a, &c.b})
        if (copy_width(extent_of(c, o->inner)) == 1)
          return "stages=" + str(cfg.stages) + ": operand " + pa::describe(o->input) +
                 " is contiguous along an odd extent (" + str(extent_of(c, o->inner)) +
                 "), so its tile is a plain load, not a cp.async (4, 8 or 16 bytes), and more "
                 "than 2 stages need cp.async loads (rule 15); use stages=2";
    }
  }
  return {};
}

}  // namespace

std::string unsupported(const Config& cfg, const Contraction& c, const pa::DeviceProperties& d) {
  if (cfg.instruction != "fma" && cfg.instruction != "mma")
    return "instruction=" + cfg.instruction + ": expected fma or mma";
  if (cfg.mma())
    if (std::string why = unsupported_mma(cfg, c); !why.empty()) return why;
  if (!cfg.mma() && cfg.stages > 1)
    return "stages=" + str(cfg.stages) +
           " with instruction=fma: circular buffering of the operand tiles is implemented on "
           "tensor cores only (instruction=mma)";
  if (cfg.grid_swizzle > 1)
    return "grid_swizzle=" + str(cfg.grid_swizzle) +
           ": a block order over M and N tiles merges them into one block axis, which the shared "
           "operand tiles (each over M or N only) cannot follow";
  if (cfg.epilogue != "registers")
    return "epilogue=" + cfg.epilogue + ": a shared-memory epilogue is not implemented yet";
  if (!cfg.mma() && cfg.tile_m % cfg.thread_m != 0)
    return "thread_m=" + str(cfg.thread_m) + " does not divide tile_m=" + str(cfg.tile_m);
  if (!cfg.mma() && cfg.tile_n % cfg.thread_n != 0)
    return "thread_n=" + str(cfg.thread_n) + " does not divide tile_n=" + str(cfg.tile_n);
  const int64_t max_threads = pa::rules::max_threads_per_block(d);
  if (cfg.threads() > max_threads)
    return (cfg.mma() ? "(tile_m / warp_m) * (tile_n / warp_n) * 32 = "
                      : "(tile_m / thread_m) * (tile_n / thread_n) * split_k = ") +
           str(cfg.threads()) + " threads, more than the device's " + str(max_threads) +
           " per block";
  if (shared_limit(d) > 0 && static_cast<uint64_t>(cfg.shared_bytes(c)) > shared_limit(d))
    return "the operand tiles take " + str(cfg.shared_bytes(c)) + " bytes of shared memory (" +
           (!cfg.mma() ? "(tile_m + tile_n) * tile_k * split_k elements"
            : cfg.async || cfg.stages > 1
                ? str(cfg.stages) +
                      " stage(s) of the operand copies, (tile_m + tile_n) * 16 elements each, "
                      "read in place by the mma tile"
                : std::string("the MmaOp's operands, (tile_m * 8 + tile_n * 16) * 16 elements")) +
           ", " + str(pa::dtype_bytes(c.dtype)) + " bytes each), more than the device's " +
           str(static_cast<int64_t>(shared_limit(d))) +
           " per block (dynamic shared memory with the opt-in the CUDA backend sets)";
  if (ceil_div(c.M, cfg.tile_m) > kMaxGridYZ)
    return "M=" + str(c.M) + " makes " + str(ceil_div(c.M, cfg.tile_m)) +
           " row tiles, more than the grid's y extent allows (" + str(kMaxGridYZ) + ")";
  if (c.batch > kMaxGridYZ)
    return "a batch of " + str(c.batch) + " is more than the grid's z extent allows (" +
           str(kMaxGridYZ) + ")";
  if (!cfg.mma() && cfg.async)
    return "async=true with instruction=fma: cp.async copies of 4 to 16 bytes need vectorized "
           "operand tiles, not there yet on CUDA cores (instruction=mma has them)";
  return {};
}

}  // namespace matmul
