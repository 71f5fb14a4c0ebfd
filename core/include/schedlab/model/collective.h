// schedlab/model: a collective's predicted time (docs/multi-device.md, "The
// model"): NCCL's ring algorithms over a device model's interconnect.
//
// Owns: collective_us, the cost of one communication of a sharded plan
// (lower::Communication) on D ranks of one device model.
// May depend on: base, lower (CollectiveKind, Communication), model/device.
// Invariants: one rank, or a Slice, costs 0; otherwise every ring step pays
// the interconnect's latency plus its chunk over the per-direction bandwidth.
#pragma once

#include <cstdint>

#include "schedlab/lower/communication.h"
#include "schedlab/model/device.h"

namespace schedlab::model {

/// The time in microseconds of one collective over `ranks` devices of
/// `device`, each rank sending `bytes_per_rank` (lower::Communication's):
///   allreduce       2 (D-1) (latency + S / D / bw)   (reduce-scatter, then allgather)
///   reduce-scatter    (D-1) (latency + S / D / bw)   (S: the whole local partial)
///   allgather         (D-1) (latency + S / bw)       (S: the local chunk)
///   slice           0                                (local, nothing moves)
/// with bw the interconnect's per-direction bandwidth; 0 when ranks <= 1.
double collective_us(const DeviceModel& device, lower::CollectiveKind kind, int64_t bytes_per_rank,
                     int ranks);

/// collective_us of a plan's communication on a mesh of `ranks` devices.
double collective_us(const DeviceModel& device, const lower::Communication& c, int ranks);

/// The plan's communications, one after another (every rank runs the steps
/// in order): collective_us of each Communication step on the plan's mesh,
/// summed. 0 on one device. What records and `show --stage profile --mesh N`
/// call comm_us.
double communication_us(const DeviceModel& device, const lower::ShardedPlan& plan);

}  // namespace schedlab::model
