// A collective's predicted time: NCCL's ring algorithms (docs/multi-device.md,
// "The model").
#include "schedlab/model/collective.h"

#include <variant>

#include "schedlab/base/error.h"

namespace schedlab::model {

double collective_us(const DeviceModel& device, lower::CollectiveKind kind, int64_t bytes_per_rank,
                     int ranks) {
  internal_assert(ranks >= 1 && bytes_per_rank >= 0)
      << "collective_us: " << ranks << " ranks, " << bytes_per_rank << " bytes per rank";
  if (ranks <= 1 || kind == lower::CollectiveKind::Slice) return 0;
  const double d = ranks;
  const double lat = device.interconnect.latency_us;
  const double bytes_per_us = device.interconnect.bandwidth_gbs * 1e3;  // GB/s = 1e3 bytes/us
  const double s = double(bytes_per_rank);
  switch (kind) {
    case lower::CollectiveKind::Allreduce:
      return 2 * (d - 1) * (lat + s / d / bytes_per_us);
    case lower::CollectiveKind::ReduceScatter:
      return (d - 1) * (lat + s / d / bytes_per_us);
    case lower::CollectiveKind::Allgather:
      return (d - 1) * (lat + s / bytes_per_us);
    case lower::CollectiveKind::Slice:
      break;
  }
  return 0;
}

double collective_us(const DeviceModel& device, const lower::Communication& c, int ranks) {
  return collective_us(device, c.kind, c.bytes_per_rank, ranks);
}

double communication_us(const DeviceModel& device, const lower::ShardedPlan& plan) {
  const int ranks = static_cast<int>(plan.mesh.size());
  double us = 0;
  for (const lower::PlanStep& step : plan.steps)
    if (const auto* c = std::get_if<lower::Communication>(&step))
      us += collective_us(device, *c, ranks);
  return us;
}

}  // namespace schedlab::model
