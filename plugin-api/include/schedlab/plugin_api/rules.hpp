// schedlab/plugin_api/rules.hpp: the rules the built-in heuristics share,
// each in one place: the device limits a schedule must respect, the vector
// width rule, and the constants of the choices several heuristics make the
// same way (autosched makes the choices of the other built-ins, so it reads
// them here too). A third-party plugin may use them or make its own. Part of
// the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstdint>

#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"

namespace schedlab::plugin_api::rules {

// ---- device limits (CUDA's, on every architecture schedlab targets)

/// The widest single access, in bytes (LDG.128 / STG.128).
constexpr int64_t kMaxVectorBytes = 16;
/// The most elements one vector access moves: 16 bytes of f16 (a bool
/// tensor stops there too); the widest the built-in schemas offer.
constexpr int64_t kMaxVectorElements = 8;
/// CUDA's limit on gridDim.y (and z).
constexpr int64_t kMaxGridY = 65535;
/// The hardware limit of registers per thread.
constexpr int64_t kMaxRegistersPerThread = 255;
/// Threads per warp, where a rule needs it fixed (a row spanning a warp).
constexpr int64_t kWarp = 32;

/// The device's block size limit (1024 when it reports none).
inline int64_t max_threads_per_block(const DeviceProperties& d) {
  return d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
}
/// Registers each of `threads` threads of one block may use.
inline int64_t registers_per_thread(const DeviceProperties& d, int64_t threads) {
  return std::min(kMaxRegistersPerThread,
                  static_cast<int64_t>(d.registers_per_block) / std::max<int64_t>(threads, 1));
}
/// Shared memory one block may use: the opt-in limit when the device has one.
inline int64_t shared_bytes_limit(const DeviceProperties& d) {
  return static_cast<int64_t>(d.shared_bytes_per_block_optin > 0 ? d.shared_bytes_per_block_optin
                                                                 : d.shared_bytes_per_block);
}

// ---- vector widths

/// The widest vector, in elements, for tensors whose widest element has
/// `widest_bytes` bytes: a power of two, at most kMaxVectorElements elements
/// and kMaxVectorBytes bytes.
inline int64_t widest_vector(int64_t widest_bytes) {
  return std::min(kMaxVectorElements, largest_pow2_at_most(kMaxVectorBytes / widest_bytes));
}
/// `vector` halved until it divides `extent` (1 at worst).
inline int64_t dividing_vector(int64_t vector, int64_t extent) {
  while (vector > 1 && extent % vector != 0) vector /= 2;
  return vector;
}

// ---- choices several heuristics make the same way

/// Threads per block a heuristic aims at (nvFuser's default block size).
constexpr int64_t kTargetThreads = 128;
/// The most unrolling a heuristic chooses for a pointwise kernel (the
/// schemas allow more).
constexpr int64_t kMaxUnroll = 4;
/// Work each thread should have per block before threads are added.
constexpr int64_t kMinVectorsPerThread = 4;
/// Largest block over the reduced axis of an inner reduction.
constexpr int64_t kMaxReduceThreads = 512;
/// Threads per row a persistent normalization prefers not to exceed.
constexpr int64_t kMaxRowThreads = 512;
/// Largest persist (vectors of a row each thread keeps) a heuristic tries,
/// and a persistent schedule allows (persist is an unrolled loop there).
constexpr int64_t kMaxPersist = 64;
/// Registers per thread the rest of a persistent kernel needs (indices,
/// statistics, addresses), besides the persistent buffers.
constexpr int64_t kRegisterOverhead = 32;
/// Shared memory per thread the block reductions take (placed after the
/// Shared buffers: one element of the widest reduction type, f64 at most).
constexpr int64_t kReduceWorkspaceBytes = 8;

}  // namespace schedlab::plugin_api::rules
