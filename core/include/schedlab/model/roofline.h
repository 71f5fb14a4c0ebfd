// schedlab/model: the roofline prediction of one kernel's time (docs/model.md
// derives each term and says where its constants come from).
//
// Owns: predict(), the largest of four times, each for the busiest SM:
//   dram:     DRAM bytes / copy bandwidth, stretched by the tail (an SM with
//             ceil(G/S) of the G blocks where the average one has G/S);
//   shared:   wavefronts on the busiest SM / (1 wavefront per clock);
//   issue:    warp instructions on the busiest SM / (schedulers per clock);
//   latency:  DRAM bytes / (bytes in flight / DRAM latency), Little's law
//             with kLoadsInFlightPerThread accesses of the kernel's average
//             size from every resident thread: the occupancy term (few
//             resident warps cannot cover the latency).
// May depend on: model/device.h, model/occupancy.h.
// Invariants: deterministic (no measurement enters it), so two runs predict
// the same, bit for bit. The constants below are assumptions to calibrate
// against measurements (scripts/gpu-check), not published figures.
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
/// DRAM load latency under load, in seconds (pointer-chasing microbenchmarks
/// of A100/H100 report 400-600 ns; docs/model.md).
inline constexpr double kDramLatencySeconds = 500e-9;

/// What the kernel does, over the whole grid.
struct Work {
  double dram_bytes = 0;             ///< DRAM reads + writes
  double smem_wavefronts = 0;        ///< shared-memory wavefronts
  double smem_ideal_wavefronts = 0;  ///< the same without bank conflicts
  double warp_instructions = 0;      ///< dynamic instructions of all warps
  double bytes_per_access = 4;       ///< average bytes of one thread's global access
  double ideal_bytes = 0;            ///< each input read once, each output written once
};

/// The four times and the verdict.
struct Prediction {
  double dram_s = 0;
  double smem_s = 0;
  double issue_s = 0;
  double latency_s = 0;
  double tail = 1;         ///< ceil(G/S) * S / G for G >= S blocks; 1 otherwise
  double predicted_s = 0;  ///< the largest term
  /// "dram", "shared memory", "bank conflicts" (shared memory with
  /// conflicts), "issue", "latency", or "launch" when the kernel cannot run.
  std::string limiter;
  /// ideal_bytes / predicted_s / peak DRAM bandwidth.
  double bandwidth_fraction = 0;
};

Prediction predict(const DeviceModel& device, const Occupancy& occupancy, const Work& work);

}  // namespace schedlab::model
