// Circular buffering (nvFuser's TensorView::circularBuffer(stages, prefetch)):
// a cache whose buffer holds `stages` tiles of its circular-buffer loop (the
// loop at its inline position), each loaded `prefetch` iterations ahead of
// its use, so that the loads of later iterations overlap this one's compute.
// lower/circular_buffer.h says how it lowers.
#pragma once

#include <cstdint>
#include <string_view>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// The most stages circular_buffer accepts (nvFuser's Ampere matmuls use 2
/// to 5; each stage is a whole tile of shared memory or registers).
inline constexpr int64_t kMaxCircularStages = 8;

/// Circular-buffers tv with `stages` tiles, loaded `prefetch` iterations
/// ahead (nvFuser's prefetch distance; stages - 1 fills every stage). User
/// errors naming tv: stages in [2, kMaxCircularStages], prefetch in [1,
/// stages), tv a cache (defined by a LoadStoreOp: cache_after) in Shared or
/// Local memory, and more than 2 stages only for a cp.async cache
/// (LoadStoreOpType::CpAsync: a plain load finishes before the next
/// iteration, so a third stage could not be in flight). Where the loop is, and
/// whether it is serial, is known once tv is inlined: lowering checks that.
void circular_buffer(ir::TensorView* tv, int64_t stages, int64_t prefetch);
inline void circular_buffer(ir::TensorView* tv, int64_t stages) {
  circular_buffer(tv, stages, stages - 1);
}

/// The rules above for tv's current stages and prefetch (lowering asks them
/// again: set_memory_type may come after the call); `who` begins each message.
void check_circular_buffer_args(const ir::TensorView* tv, int64_t stages, int64_t prefetch,
                                std::string_view who);

}  // namespace schedlab::sched
