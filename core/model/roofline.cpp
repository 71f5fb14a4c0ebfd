// The roofline prediction (terms in roofline.h, derivation in docs/model.md).
#include "schedlab/model/roofline.h"

#include <algorithm>
#include <cmath>

namespace schedlab::model {

Prediction predict(const DeviceModel& d, const Occupancy& o, const Work& w) {
  Prediction p;
  if (o.blocks_per_sm == 0 || o.grid_blocks == 0) {
    p.limiter = "launch";
    return p;
  }
  const double sms = d.sm_count;
  const double blocks = double(o.grid_blocks);
  const double clock_hz = d.sm_clock_mhz * 1e6;
  // The busiest SM runs ceil(G/S) blocks, i.e. this share of all the work.
  const double busiest_share = std::ceil(blocks / sms) / blocks;
  p.tail = blocks >= sms ? busiest_share * sms : 1.0;

  p.dram_s = w.dram_bytes / (d.copy_bandwidth_gbs * 1e9) * p.tail;
  p.smem_s = w.smem_wavefronts * busiest_share / clock_hz;
  p.issue_s = w.warp_instructions * busiest_share / (d.warp_schedulers_per_sm * clock_hz);
  const double resident_threads =
      std::min(blocks, sms * o.blocks_per_sm) * double(o.threads_per_block);
  const double in_flight = resident_threads * kLoadsInFlightPerThread * w.bytes_per_access;
  p.latency_s = w.dram_bytes / (in_flight / kDramLatencySeconds);

  struct Term {
    double seconds;
    const char* name;
  };
  const bool conflicts = w.smem_wavefronts > w.smem_ideal_wavefronts;
  const Term terms[] = {{p.dram_s, "dram"},
                        {p.smem_s, conflicts ? "bank conflicts" : "shared memory"},
                        {p.issue_s, "issue"},
                        {p.latency_s, "latency"}};
  const Term* top =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const Term& a, const Term& b) { return a.seconds < b.seconds; });
  p.predicted_s = top->seconds;
  p.limiter = top->name;
  if (p.predicted_s > 0)
    p.bandwidth_fraction = w.ideal_bytes / p.predicted_s / (d.dram_bandwidth_gbs * 1e9);
  return p;
}

}  // namespace schedlab::model
