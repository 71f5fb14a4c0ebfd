// matmul plugin: the resolved configuration of one schedule (the plugin's
// parameters), the heuristic that chooses it, and the checks of a forced one.
#pragma once

#include <cstdint>
#include <string>

#include "contraction.h"
#include "schedlab/plugin_api/device.hpp"

namespace matmul {

/// Lanes of a warp: the TIDx extent of a tensor-core schedule (rule 16).
constexpr int64_t kWarpSize = 32;
/// mma.sync m16n8k16: the instruction tile.
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

/// One schedule's settings; see the parameter schema in matmul.cpp.
struct Config {
  int64_t tile_m = 64, tile_n = 64, tile_k = 16;  ///< CTA tile of the output, K step
  int64_t thread_m = 4, thread_n = 4;             ///< outputs per thread (registers), fma
  int64_t warp_m = 16, warp_n = 8;                ///< outputs per warp (registers), mma
  int64_t split_k = 1;                            ///< threads (TIDz) splitting K in a block
  int64_t stages = 1;                             ///< shared tiles in flight (1: none)
  bool async = false;                             ///< cp.async operand loads
  int64_t grid_swizzle = 1;                       ///< M tiles per block group (1: none)
  std::string epilogue = "registers";             ///< where the output tile is written from
  std::string instruction = "fma";                ///< fma (CUDA cores) or mma (tensor cores)

  bool mma() const { return instruction == "mma"; }
  /// fma: TIDy threads; mma: TIDz warps.
  int64_t threads_m() const { return tile_m / (mma() ? warp_m : thread_m); }
  /// fma: TIDx threads; mma: TIDy warps.
  int64_t threads_n() const { return tile_n / (mma() ? warp_n : thread_n); }
  int64_t threads() const { return threads_m() * threads_n() * split_k * (mma() ? kWarpSize : 1); }
  /// Bytes of shared memory of the schedule: fma, the operand tiles of one
  /// K step; mma, the MmaOp's operands as lowered plus the staged copies.
  int64_t shared_bytes(const Contraction& c) const;
};

/// The widest cp.async copy along a contiguous axis of `extent` elements
/// (2-byte bf16/f16): 8 (16 bytes), 4, 2, or 1 when the extent is odd (a
/// 2-byte copy is no cp.async: a plain load).
int64_t copy_width(int64_t extent);
/// The extent of role `r` (M, N or K) in `c`.
int64_t extent_of(const Contraction& c, Role r);

/// The most dynamic shared memory a block may use on `d`: the opt-in
/// limit (the CUDA backend sets MAX_DYNAMIC_SHARED_SIZE_BYTES past 48 KiB).
uint64_t shared_limit(const pa::DeviceProperties& d);

/// The heuristic (see the top of matmul.cpp) for the contraction's sizes,
/// dtype and the device.
Config heuristic(const Contraction& c, const pa::DeviceProperties& d);
/// The heuristic's choice for the given instruction ("fma" or "mma").
Config heuristic_for(const Contraction& c, const pa::DeviceProperties& d,
                     const std::string& instruction);

/// Why `cfg` cannot be honoured for `c` on `d` (the refusal text), or "".
/// Settings the plugin does not implement yet are refused here too.
std::string unsupported(const Config& cfg, const Contraction& c, const pa::DeviceProperties& d);

}  // namespace matmul
