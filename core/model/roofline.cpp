// The time model (terms in roofline.h, derivation in docs/model.md).
#include "schedlab/model/roofline.h"

#include <algorithm>
#include <cmath>

namespace schedlab::model {

double empty_kernel_s(const DeviceModel& d) {
  return d.launch_overhead_us * 1e-6;
}

Terms model_terms(const DeviceModel& d, const Occupancy& o, const Work& w) {
  Terms t;
  if (o.blocks_per_sm == 0 || o.grid_blocks == 0) {
    t.rounds = 0;
    return t;
  }
  const double sms = d.sm_count;
  const double blocks = double(o.grid_blocks);
  // The busiest SM runs ceil(G/S) blocks, i.e. this share of all the work.
  const double busiest_blocks = std::ceil(blocks / sms);
  const double busiest_share = busiest_blocks / blocks;
  t.tail = blocks >= sms ? busiest_share * sms : 1.0;
  t.dram_bytes_tail = w.dram_bytes * t.tail;
  t.smem_cycles = w.smem_wavefronts * busiest_share;
  t.issue_cycles = w.warp_instructions * busiest_share / d.warp_schedulers_per_sm;
  const double resident_threads =
      std::min(blocks, sms * o.blocks_per_sm) * double(o.threads_per_block);
  const double in_flight = resident_threads * kLoadsInFlightPerThread * w.bytes_per_access;
  t.latency_ratio = w.dram_bytes / in_flight;
  t.rounds = std::ceil(busiest_blocks / o.blocks_per_sm);
  t.read_phases = w.dram_bytes > 0 ? std::max(1.0, w.read_phases) : 0.0;
  t.barriers = w.barriers;
  t.shuffle_levels = w.shuffle_levels;
  t.grid_reductions = w.grid_reductions;
  t.grid_barriers = w.grid_barriers;
  t.conflicts = w.smem_wavefronts > w.smem_ideal_wavefronts;
  // Compute on the busiest SM, at sm_count times its rate: the fraction of
  // SMs with work (blocks < SMs) or the tail stretches it as for shared memory.
  const double busiest_at_device_rate = busiest_share * sms;
  t.tensor_flops = w.mma_instructions * kMmaFlops * busiest_at_device_rate;
  t.fp32_flops = 2 * w.fp_lane_ops * busiest_at_device_rate;
  t.flops = w.flops;
  return t;
}

Prediction predict_terms(const DeviceModel& d, const Terms& t, double ideal_bytes) {
  Prediction p;
  if (t.rounds <= 0) {
    p.limiter = "launch";
    return p;
  }
  const double clock_hz = d.sm_clock_mhz * 1e6;
  const double latency_s = d.dram_latency_ns * 1e-9;
  p.tail = t.tail;
  p.dram_s = t.dram_bytes_tail / (d.copy_bandwidth_gbs * 1e9);
  p.smem_s = t.smem_cycles / clock_hz;
  p.issue_s = t.issue_cycles / (clock_hz * d.issue_efficiency);
  p.latency_s = t.latency_ratio * latency_s;
  p.launch_s = empty_kernel_s(d);
  p.chain_s = t.read_phases * latency_s + t.barriers * d.barrier_ns * 1e-9 +
              t.shuffle_levels * d.shuffle_ns * 1e-9 + t.grid_reductions * d.grid_sync_ns * 1e-9 +
              t.grid_barriers * d.grid_barrier_us * 1e-6;
  p.sync_s = (t.rounds - 1) * p.chain_s;
  p.tensor_s = t.tensor_flops / (d.mma_sync_tflops * 1e12);
  p.fp32_s = t.fp32_flops / (d.fp32_tflops * 1e12);

  struct Term {
    double seconds;
    const char* name;
  };
  const Term terms[] = {
      {p.dram_s, "dram"},   {p.smem_s, t.conflicts ? "bank conflicts" : "shared memory"},
      {p.issue_s, "issue"}, {p.latency_s, "latency"},
      {p.sync_s, "sync"},   {p.tensor_s, "tensor"},
      {p.fp32_s, "fp32"}};
  const Term* top =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const Term& a, const Term& b) { return a.seconds < b.seconds; });
  const double fixed = p.launch_s + p.chain_s;
  p.predicted_s = fixed + top->seconds;
  p.limiter = fixed > top->seconds ? "floor" : top->name;
  if (p.predicted_s > 0)
    p.bandwidth_fraction = ideal_bytes / p.predicted_s / (d.dram_bandwidth_gbs * 1e9);
  const double peak_tflops = t.tensor_flops > 0 ? d.mma_sync_tflops : d.fp32_tflops;
  if (p.predicted_s > 0) p.compute_fraction = t.flops / p.predicted_s / (peak_tflops * 1e12);
  return p;
}

Prediction predict(const DeviceModel& d, const Occupancy& o, const Work& w) {
  return predict_terms(d, model_terms(d, o, w), w.ideal_bytes);
}

}  // namespace schedlab::model
