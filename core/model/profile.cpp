// The profile of one kernel: resources, occupancy, traced traffic (sampled),
// instructions and the roofline; and its JSON and text forms.
#include "schedlab/model/profile.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <nlohmann/json.hpp>

#include "schedlab/base/error.h"
#include "schedlab/model/reduction_depth.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/work_estimate.h"

namespace schedlab::model {
namespace {

using Json = nlohmann::ordered_json;

Json terms_object(const Terms& t) {
  Json j = {{"tail", t.tail},
            {"dram_bytes_tail", t.dram_bytes_tail},
            {"smem_cycles", t.smem_cycles},
            {"issue_cycles", t.issue_cycles},
            {"latency_ratio", t.latency_ratio},
            {"rounds", t.rounds},
            {"read_phases", t.read_phases},
            {"barriers", t.barriers},
            {"shuffle_levels", t.shuffle_levels},
            {"grid_reductions", t.grid_reductions},
            {"conflicts", t.conflicts},
            {"tensor_flops", t.tensor_flops},
            {"fp32_flops", t.fp32_flops},
            {"flops", t.flops}};
  // Only a grid-persistent kernel's: records of other kernels keep their bytes.
  if (t.grid_barriers > 0) j["grid_barriers"] = t.grid_barriers;
  return j;
}

/// Runs the traced kernel over `dims` (possibly a sample of the grid).
TrafficCounts trace_traffic(runtime::Backend& cpu, const runtime::PreparedKernel& prepared,
                            const ir::Fusion& fusion, const ir::SizeBindings& sizes,
                            const DeviceModel& device, const runtime::LaunchDims& dims,
                            uint64_t seed, const std::string& name) {
  auto compiled = cpu.compile(runtime::traced_source(prepared));
  // Sized for the whole grid, launched (and held to the traced work budget)
  // for the sampled blocks only.
  runtime::BoundArgs bound(cpu, prepared, ref::make_inputs(fusion, sizes, seed), sizes, dims);
  const runtime::TraceKernel trace = runtime::trace_kernel(prepared, bound, sizes, name);
  TrafficObserver observer(device.l2_bytes, device.shared_banks);
  bound.launch_traced(*compiled, trace, observer);
  return observer.counts();
}

}  // namespace

int64_t sample_blocks_within(int64_t max_blocks, const runtime::EmulatedWork& work,
                             double traced_limit) {
  if (max_blocks <= 0 || traced_limit <= 0) return max_blocks;
  const double per_block = std::max(work.per_thread() * work.threads, 1.0);
  const double fit = std::floor(traced_limit / per_block);
  return fit >= double(max_blocks) ? max_blocks : std::max<int64_t>(1, int64_t(fit));
}

runtime::LaunchDims sampled_dims(const runtime::LaunchDims& dims, int64_t max_blocks) {
  const auto& g = dims.grid;
  if (max_blocks <= 0 || g[0] * g[1] * g[2] <= max_blocks) return dims;
  runtime::LaunchDims s = dims;
  if (g[0] >= max_blocks) {
    s.grid = {max_blocks, 1, 1};
  } else if (g[0] * g[1] >= max_blocks) {
    s.grid = {g[0], max_blocks / g[0], 1};
  } else {
    s.grid = {g[0], g[1], max_blocks / (g[0] * g[1])};
  }
  return s;
}

KernelProfile profile_kernel(runtime::Backend& cpu, const runtime::PreparedKernel& prepared,
                             const ir::Fusion& fusion, const ir::SizeBindings& sizes,
                             int64_t ideal_bytes, const DeviceModel& device,
                             const ProfileOptions& options, const std::string& name) {
  KernelProfile p;
  p.name = name;
  p.device = device.name;
  p.ideal_bytes = ideal_bytes;
  // The resources (an NVRTC compile, unless cached) while the traced run
  // counts the traffic: neither needs the other.
  std::future<KernelResources> resources = std::async(std::launch::async, [&] {
    return kernel_resources(prepared.source, device.arch, options.cache_dir);
  });
  p.dims = runtime::launch_dims(prepared.kernel, sizes);
  const runtime::EmulatedWork work = runtime::emulated_work(
      prepared.kernel, p.dims, runtime::param_shapes(prepared.kernel, p.dims, sizes));
  const runtime::LaunchDims sample = sampled_dims(
      p.dims, sample_blocks_within(options.max_blocks, work, cpu.max_emulated_work(/*traced=*/true)));
  p.traffic = trace_traffic(cpu, prepared, fusion, sizes, device, sample, options.seed, name);
  p.resources = resources.get();
  p.occupancy = occupancy(device, p.resources.registers, p.resources.static_shared_bytes, p.dims);
  p.sampled_blocks = p.traffic.blocks;
  internal_assert(p.sampled_blocks > 0) << "profile of '" << name << "': no block was traced";
  p.scale = double(p.occupancy.grid_blocks) / double(p.sampled_blocks);
  p.requested_bytes = double(p.traffic.requested_bytes()) * p.scale;
  p.sector_bytes = double(p.traffic.sector_bytes()) * p.scale;
  p.dram_bytes = p.traffic.scaled_dram_bytes(p.scale);
  p.smem_wavefronts = double(p.traffic.smem_wavefronts()) * p.scale;
  p.bank_conflict_ways = p.traffic.bank_conflict_ways();

  const PtxCounts& ptx = p.resources.ptx;
  const double accesses_per_thread =
      p.traffic.threads > 0 ? double(p.traffic.thread_accesses) / double(p.traffic.threads) : 0;
  // Every static instruction at least once (straight-line code, the block
  // reduction, whose shared accesses the trace does not see); loops as often
  // as their memory accesses repeat.
  p.instructions_per_thread =
      ptx.memory_instructions > 0
          ? std::max(1.0, accesses_per_thread / double(ptx.memory_instructions)) *
                double(ptx.instructions)
          : double(ptx.instructions);
  p.warp_instructions = p.instructions_per_thread * double(p.occupancy.warps_per_block) *
                        double(p.occupancy.grid_blocks);
  // The arithmetic repeats as the instructions do (the header's estimate).
  const double repeats =
      ptx.instructions > 0 ? p.instructions_per_thread / double(ptx.instructions) : 0;
  const double threads = double(p.occupancy.threads_per_block) * double(p.occupancy.grid_blocks);
  const double warps = double(p.occupancy.warps_per_block) * double(p.occupancy.grid_blocks);
  p.fp_lane_ops = double(ptx.fp_arithmetic_ops) * repeats * threads;
  // mma.sync: exact, from the kernel IR (every kir::MmaTile a warp executes,
  // edge tiles whole, as the hardware runs them), not the PTX estimate.
  p.mma_instructions = work.mma_tiles_per_thread * warps;
  p.flops = double(ptx.flops) * repeats * threads + p.mma_instructions * kMmaFlops;

  Work w;
  w.dram_bytes = p.dram_bytes;
  w.smem_wavefronts = p.smem_wavefronts;
  w.smem_ideal_wavefronts = double(p.traffic.smem_ideal_wavefronts()) * p.scale;
  w.warp_instructions = p.warp_instructions;
  w.ideal_bytes = double(ideal_bytes);
  w.flops = p.flops;
  w.fp_lane_ops = p.fp_lane_ops;
  w.mma_instructions = p.mma_instructions;
  int64_t global_accesses = 0;
  for (const GlobalTraffic& g : p.traffic.global) global_accesses += g.thread_accesses;
  if (global_accesses > 0)
    w.bytes_per_access = double(p.traffic.requested_bytes()) / double(global_accesses);
  // The floor's chain: the slowest traced block's barriers and dependent
  // loads, the IR's reduction trees.
  const ReductionDepth depth = reduction_depth(prepared.kernel, p.dims);
  w.read_phases = double(p.traffic.block_read_phases);
  w.barriers = double(p.traffic.block_barriers);
  w.shuffle_levels = depth.shuffle_levels;
  w.grid_reductions = depth.grid_reductions;
  w.grid_barriers = depth.grid_barriers;
  p.terms = model_terms(device, p.occupancy, w);
  p.prediction = predict_terms(device, p.terms, w.ideal_bytes);
  return p;
}

std::string profiles_json(const std::vector<KernelProfile>& profiles, int indent) {
  Json all = Json::array();
  for (const KernelProfile& p : profiles) {
    const KernelResources& r = p.resources;
    Json tensors = Json::array();
    for (const GlobalTraffic& g : p.traffic.global)
      tensors.push_back({{"tensor", g.tensor},
                         {"requested_bytes", double(g.requested_bytes) * p.scale},
                         {"sector_bytes", double(g.sector_bytes) * p.scale},
                         {"coalescing", g.efficiency()}});
    Json sites = Json::array();
    for (const SharedSiteTraffic& s : p.traffic.shared)
      sites.push_back({{"line", s.line},
                       {"tensor", s.tensor},
                       {"access", s.is_write ? "write" : "read"},
                       {"wavefronts_per_request",
                        s.requests > 0 ? double(s.wavefronts) / double(s.requests) : 0.0},
                       {"bank_conflict_ways", s.conflict_ways()}});
    all.push_back({
        {"kernel", p.name},
        {"device", p.device},
        {"arch", r.arch},
        {"grid", p.dims.grid},
        {"block", p.dims.block},
        {"registers", r.registers},
        {"spill_bytes", r.spill_store_bytes + r.spill_load_bytes},
        {"stack_bytes", r.stack_bytes},
        {"shared_bytes", r.static_shared_bytes + int64_t(p.dims.shared_bytes)},
        {"blocks_per_sm", p.occupancy.blocks_per_sm},
        {"warps_per_sm", p.occupancy.warps_per_sm},
        {"occupancy", p.occupancy.occupancy},
        {"occupancy_limit", occupancy_limit_name(p.occupancy.limit)},
        {"waves", p.occupancy.waves},
        {"sampled_blocks", p.sampled_blocks},
        {"grid_blocks", p.occupancy.grid_blocks},
        {"requested_bytes", p.requested_bytes},
        {"sector_bytes", p.sector_bytes},
        {"dram_bytes", p.dram_bytes},
        {"ideal_bytes", p.ideal_bytes},
        {"smem_wavefronts", p.smem_wavefronts},
        {"bank_conflict_ways", p.bank_conflict_ways},
        {"instructions", p.instructions_per_thread},
        {"ptx_instructions", r.ptx.instructions},
        {"flops", p.flops},
        {"mma_instructions", p.mma_instructions},
        {"predicted_us", p.prediction.predicted_s * 1e6},
        {"dram_us", p.prediction.dram_s * 1e6},
        {"smem_us", p.prediction.smem_s * 1e6},
        {"issue_us", p.prediction.issue_s * 1e6},
        {"latency_us", p.prediction.latency_s * 1e6},
        {"sync_us", p.prediction.sync_s * 1e6},
        {"tensor_us", p.prediction.tensor_s * 1e6},
        {"fp32_us", p.prediction.fp32_s * 1e6},
        {"launch_us", p.prediction.launch_s * 1e6},
        {"chain_us", p.prediction.chain_s * 1e6},
        {"tail", p.prediction.tail},
        {"bandwidth_fraction", p.prediction.bandwidth_fraction},
        {"compute_fraction", p.prediction.compute_fraction},
        {"limiter", p.prediction.limiter},
        {"tensors", tensors},
        {"shared_sites", sites},
        {"terms", terms_object(p.terms)},
    });
  }
  return all.dump(indent);
}

std::string terms_json(const Terms& terms) {
  return terms_object(terms).dump();
}

report::Prediction record_prediction(const KernelProfile& p) {
  return {p.device,
          p.prediction.predicted_s * 1e6,
          p.prediction.limiter,
          p.prediction.bandwidth_fraction,
          profiles_json({p}, -1),
          p.flops,
          p.prediction.tensor_s * 1e6,
          p.prediction.compute_fraction};
}

std::string format_profiles(const std::vector<KernelProfile>& profiles) {
  std::string out;
  for (const KernelProfile& p : profiles) {
    const KernelResources& r = p.resources;
    const Occupancy& o = p.occupancy;
    out += fmt::format("// profile of {} on {} ({}), a prediction from the model (docs/model.md)\n",
                       p.name, p.device, r.arch);
    out +=
        fmt::format("  launch        grid ({}, {}, {}), block ({}, {}, {}), {} B dynamic shared\n",
                    p.dims.grid[0], p.dims.grid[1], p.dims.grid[2], p.dims.block[0],
                    p.dims.block[1], p.dims.block[2], p.dims.shared_bytes);
    out += fmt::format(
        "  resources     {} registers, {} B stack, {} B spill stores, {} B spill loads, {} B "
        "static shared\n",
        r.registers, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes, r.static_shared_bytes);
    out += fmt::format(
        "  occupancy     {} blocks/SM, {} warps/SM ({:.0f} %, limited by {}), {:.2f} "
        "waves{}\n",
        o.blocks_per_sm, o.warps_per_sm, 100 * o.occupancy, occupancy_limit_name(o.limit), o.waves,
        o.why_not.empty() ? "" : "; cannot launch: " + o.why_not);
    out += fmt::format("  traced        {} of {} blocks{}\n", p.sampled_blocks, o.grid_blocks,
                       p.scale > 1 ? fmt::format(" (counts scaled by {:.4g})", p.scale) : "");
    double eff = p.sector_bytes > 0 ? p.requested_bytes / p.sector_bytes : 1.0;
    out += fmt::format(
        "  global        {:.0f} B requested, {:.0f} B in sectors ({:.0f} % "
        "coalesced), {:.0f} B DRAM, {} B ideal\n",
        p.requested_bytes, p.sector_bytes, 100 * eff, p.dram_bytes, p.ideal_bytes);
    for (const GlobalTraffic& g : p.traffic.global)
      if (g.requests > 0)
        out +=
            fmt::format("    {:<28} {:>5.1f} % coalesced ({:.2f} sectors per request)\n", g.tensor,
                        100 * g.efficiency(), double(g.sector_bytes) / 32.0 / double(g.requests));
    if (!p.traffic.shared.empty()) {
      out +=
          fmt::format("  shared        {:.0f} wavefronts, worst site {:.1f}-way bank conflicts\n",
                      p.smem_wavefronts, p.bank_conflict_ways);
      for (const SharedSiteTraffic& s : p.traffic.shared)
        out += fmt::format("    line {:<5} {:<5} {:<22} {:.2f} wavefronts/request, {:.1f}-way\n",
                           s.line, s.is_write ? "write" : "read", s.tensor,
                           s.requests > 0 ? double(s.wavefronts) / double(s.requests) : 0.0,
                           s.conflict_ways());
    }
    out += fmt::format("  instructions  {:.1f} per thread (PTX, {} static)\n",
                       p.instructions_per_thread, r.ptx.instructions);
    out += fmt::format(
        "  compute       {:.4g} FLOPs ({:.4g} CUDA-core FP lanes, {:.4g} mma.sync m16n8k16); "
        "tensor {:.2f} us, fp32 {:.2f} us; {:.0f} % of peak {}\n",
        p.flops, p.fp_lane_ops, p.mma_instructions, p.prediction.tensor_s * 1e6,
        p.prediction.fp32_s * 1e6, 100 * p.prediction.compute_fraction,
        p.mma_instructions > 0 ? "mma.sync" : "FP32");
    const Prediction& pr = p.prediction;
    const Terms& t = p.terms;
    out += fmt::format(
        "  floor         {:.2f} us: launch {:.2f} + chain {:.2f} ({:g} dependent loads, {:g} "
        "barriers, {:g} shuffle levels, {:g} grid reductions{})\n",
        (pr.launch_s + pr.chain_s) * 1e6, pr.launch_s * 1e6, pr.chain_s * 1e6, t.read_phases,
        t.barriers, t.shuffle_levels, t.grid_reductions,
        t.grid_barriers > 0 ? fmt::format(", {:g} grid barriers", t.grid_barriers) : "");
    out += fmt::format(
        "  predicted     {:.2f} us, limited by {} (floor {:.2f} + the largest of dram {:.2f}, "
        "shared {:.2f}, issue {:.2f}, latency {:.2f}, sync {:.2f}, tensor {:.2f}, fp32 {:.2f} us; "
        "tail x{:.2f}); {:.0f} % of peak bandwidth\n",
        pr.predicted_s * 1e6, pr.limiter, (pr.launch_s + pr.chain_s) * 1e6, pr.dram_s * 1e6,
        pr.smem_s * 1e6, pr.issue_s * 1e6, pr.latency_s * 1e6, pr.sync_s * 1e6, pr.tensor_s * 1e6,
        pr.fp32_s * 1e6, pr.tail, 100 * pr.bandwidth_fraction);
  }
  return out;
}

}  // namespace schedlab::model
