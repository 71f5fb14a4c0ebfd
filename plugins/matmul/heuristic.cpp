// matmul plugin: the heuristic (compute_params) and the checks of a
// configuration (config.h). The rules are documented at the top of
// matmul.cpp and in docs/matmul.md.
#include <algorithm>
#include <cstdint>
#include <string>

#include "config.h"
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

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

int64_t Config::shared_bytes(const Contraction& c) const {
  return (tile_m + tile_n) * tile_k * split_k * pa::dtype_bytes(c.dtype);
}

Config heuristic(const Contraction& c, const pa::DeviceProperties& d) {
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

std::string unsupported(const Config& cfg, const Contraction& c, const pa::DeviceProperties& d) {
  if (cfg.instruction != "fma")
    return "instruction=" + cfg.instruction +
           ": tensor cores need the MmaOp lowering to mma.sync (LoopTransform::Mma), not there "
           "yet; instruction=fma schedules on CUDA cores";
  if (cfg.stages > 1)
    return "stages=" + str(cfg.stages) +
           ": circular buffering needs circular_buffer in the plugin ABI (1.8), not there yet";
  if (cfg.grid_swizzle > 1)
    return "grid_swizzle=" + str(cfg.grid_swizzle) +
           ": a block order over M and N tiles merges them into one block axis, which the shared "
           "operand tiles (each over M or N only) cannot follow";
  if (cfg.epilogue != "registers")
    return "epilogue=" + cfg.epilogue + ": a shared-memory epilogue is not implemented yet";
  if (cfg.tile_m % cfg.thread_m != 0)
    return "thread_m=" + str(cfg.thread_m) + " does not divide tile_m=" + str(cfg.tile_m);
  if (cfg.tile_n % cfg.thread_n != 0)
    return "thread_n=" + str(cfg.thread_n) + " does not divide tile_n=" + str(cfg.tile_n);
  const int64_t max_threads = pa::rules::max_threads_per_block(d);
  if (cfg.threads() > max_threads)
    return "(tile_m / thread_m) * (tile_n / thread_n) * split_k = " + str(cfg.threads()) +
           " threads, more than the device's " + str(max_threads) + " per block";
  if (d.shared_bytes_per_block > 0 &&
      static_cast<uint64_t>(cfg.shared_bytes(c)) > d.shared_bytes_per_block)
    return "the operand tiles take " + str(cfg.shared_bytes(c)) +
           " bytes of shared memory ((tile_m + tile_n) * tile_k * split_k * " +
           str(pa::dtype_bytes(c.dtype)) + "), more than the device's " +
           str(static_cast<int64_t>(d.shared_bytes_per_block)) + " per block";
  if (ceil_div(c.M, cfg.tile_m) > kMaxGridYZ)
    return "M=" + str(c.M) + " makes " + str(ceil_div(c.M, cfg.tile_m)) +
           " row tiles, more than the grid's y extent allows (" + str(kMaxGridYZ) + ")";
  if (c.batch > kMaxGridYZ)
    return "a batch of " + str(c.batch) + " is more than the grid's z extent allows (" + str(kMaxGridYZ) + ")";
  if (cfg.async)
    return "async=true: cp.async copies of 4 to 16 bytes need vectorized operand tiles, not "
           "there yet on CUDA cores";
  return {};
}

}  // namespace matmul
