// schedlab/model: the prediction of one kernel's time (docs/model.md derives
// each term and says where its constants come from).
//
// Owns: predict(), a floor plus the largest of seven times:
//   predicted = launch + chain + max(dram, shared, issue, latency, sync,
//                                    tensor, fp32)
// where, for the busiest SM,
//   dram:     DRAM bytes / copy bandwidth, stretched by the tail (an SM with
//             ceil(G/S) of the G blocks where the average one has G/S);
//   shared:   wavefronts on the busiest SM / (1 wavefront per clock);
//   issue:    warp instructions on the busiest SM / (schedulers per clock *
//             issue_efficiency);
//   latency:  DRAM bytes / (bytes in flight / DRAM latency), Little's law
//             with kLoadsInFlightPerThread accesses of the kernel's average
//             size from every resident thread: the occupancy term;
//   sync:     (rounds - 1) * chain: the busiest SM runs its blocks in rounds
//             of the resident ones, and no round is shorter than one block's
//             chain (the first round's is the floor's);
//   tensor:   its mma.sync FLOPs (4096 per m16n8k16) / its share of the
//             device's mma_sync_tflops (1 / sm_count of it);
//   fp32:     its CUDA-core FP lanes * 2 / its share of fp32_tflops (an add
//             takes an FMA's lane: the peak counts 2 FLOPs per lane);
// and the floor: the launch overhead, and `chain`, one block's dependent
// latencies that no other work overlaps at the start and the end of a
// kernel: a DRAM round trip for each barrier interval in which it loads from
// global memory, its barriers, the levels of its reduction trees, and its
// grid reductions' fence, semaphore and partials.
// May depend on: model/device.h, model/occupancy.h.
// Invariants: deterministic (no measurement enters it), so two runs predict
// the same, bit for bit. Every term is >= 0, so no kernel that runs is
// predicted under empty_kernel_s(device). The time is linear in the device's
// assumed constants once the largest term is known (Terms): what `schedlab
// calibrate` fits (model/calibrate.h).
#pragma once

#include <cstdint>
#include <string>

#include "schedlab/model/device.h"
#include "schedlab/model/occupancy.h"

namespace schedlab::model {

/// Independent global accesses each resident thread is assumed to keep in
/// flight (of the kernel's average access size: 16 bytes for scalar f32,
/// 64 for 16-byte vectors).
inline constexpr double kLoadsInFlightPerThread = 4;

/// What the kernel does, over the whole grid, and one block's dependent chain.
struct Work {
  double dram_bytes = 0;             ///< DRAM reads + writes
  double smem_wavefronts = 0;        ///< shared-memory wavefronts
  double smem_ideal_wavefronts = 0;  ///< the same without bank conflicts
  double warp_instructions = 0;      ///< dynamic instructions of all warps
  double bytes_per_access = 4;       ///< average bytes of one thread's global access
  double ideal_bytes = 0;            ///< each input read once, each output written once
  /// Dependent DRAM round trips of one block: the barrier intervals in which
  /// it loads from global memory (a load after a barrier waits for it).
  double read_phases = 1;
  double barriers = 0;         ///< __syncthreads one block passes (block reductions' included)
  double shuffle_levels = 0;   ///< dependent shuffle levels of one thread's block reductions
  double grid_reductions = 0;  ///< grid reductions on one thread's path
  double grid_barriers = 0;    ///< grid-wide barriers on one thread's path (grid persistence)
  /// Every floating-point operation of the grid: CUDA-core ones (2 per
  /// FMA lane, 1 per other lane) and the tensor cores' (4096 per m16n8k16).
  double flops = 0;
  /// CUDA-core floating-point lanes of the grid (an FMA, an add, a packed
  /// f16x2 counts 2): the fp32 term's work.
  double fp_lane_ops = 0;
  /// Warp-wide mma.sync.aligned.m16n8k16 instructions of the grid (another
  /// shape in units of its 4096 FLOPs): the tensor term's work.
  double mma_instructions = 0;
};

/// FLOPs of one mma.sync.aligned.m16n8k16: 16 x 8 x 16 multiply-adds.
inline constexpr double kMmaFlops = 2.0 * 16 * 8 * 16;

/// The work as the time model consumes it: each figure multiplies one
/// device constant (or its inverse), so the time is linear in them once the
/// largest term is chosen. Stored in the profile's JSON ("terms").
struct Terms {
  double tail = 1;             ///< ceil(G/S) * S / G for G >= S blocks; 1 otherwise
  double dram_bytes_tail = 0;  ///< DRAM bytes * tail; / copy bandwidth
  double smem_cycles = 0;      ///< wavefronts on the busiest SM; / clock
  double issue_cycles = 0;     ///< its warp instructions / schedulers; / (clock * efficiency)
  double latency_ratio = 0;    ///< DRAM bytes / bytes in flight; * DRAM latency
  double rounds = 1;           ///< rounds of resident blocks on the busiest SM
  double read_phases = 0;      ///< of one block; * DRAM latency
  double barriers = 0;         ///< of one block; * barrier_ns
  double shuffle_levels = 0;   ///< of one thread; * shuffle_ns
  double grid_reductions = 0;  ///< of one thread; * grid_sync_ns
  double grid_barriers = 0;    ///< of one thread; * grid_barrier_us
  bool conflicts = false;      ///< shared wavefronts exceed the conflict-free ones
  /// mma FLOPs of the busiest SM * sm_count (the device's rate with every SM
  /// as busy); / (mma_sync_tflops * 1e12).
  double tensor_flops = 0;
  /// FP lanes * 2 of the busiest SM * sm_count; / (fp32_tflops * 1e12).
  double fp32_flops = 0;
  double flops = 0;  ///< of the whole grid (Work::flops), for compute_fraction
};

/// The times and the verdict.
struct Prediction {
  double dram_s = 0;
  double smem_s = 0;
  double issue_s = 0;
  double latency_s = 0;
  double sync_s = 0;       ///< (rounds - 1) * chain_s
  double tensor_s = 0;     ///< mma.sync FLOPs at the device's mma.sync rate
  double fp32_s = 0;       ///< CUDA-core FP lanes at the device's FP32 rate
  double launch_s = 0;     ///< the device's launch overhead
  double chain_s = 0;      ///< one block's dependent latencies
  double tail = 1;         ///< ceil(G/S) * S / G for G >= S blocks; 1 otherwise
  double predicted_s = 0;  ///< launch_s + chain_s + the largest term
  /// The largest term: "dram", "shared memory", "bank conflicts" (shared
  /// memory with conflicts), "issue", "latency", "sync", "tensor", "fp32";
  /// "floor" when launch_s + chain_s exceed it; "launch" when the kernel
  /// cannot run.
  std::string limiter;
  /// ideal_bytes / predicted_s / peak DRAM bandwidth.
  double bandwidth_fraction = 0;
  /// flops / predicted_s / the relevant peak: mma_sync_tflops for a kernel
  /// with mma.sync, fp32_tflops otherwise.
  double compute_fraction = 0;
};

/// An empty kernel's time on `device`: its launch overhead. Every kernel
/// that runs is predicted at least this (and a DRAM latency more when it
/// reads memory).
double empty_kernel_s(const DeviceModel& device);

/// The work in the time model's terms for this occupancy (empty Terms with
/// rounds 0 when the kernel cannot run).
Terms model_terms(const DeviceModel& device, const Occupancy& occupancy, const Work& work);

/// The time of `terms` under `device`'s constants (the formula above).
/// `ideal_bytes` for bandwidth_fraction.
Prediction predict_terms(const DeviceModel& device, const Terms& terms, double ideal_bytes);

/// model_terms then predict_terms; limiter "launch" and 0 s when the
/// kernel cannot run.
Prediction predict(const DeviceModel& device, const Occupancy& occupancy, const Work& work);

}  // namespace schedlab::model
