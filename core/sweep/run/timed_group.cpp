// Validated points timed together: see schedlab/sweep/run/timed_group.h.
#include "schedlab/sweep/run/timed_group.h"

#include <fmt/core.h>

#include <map>
#include <utility>

namespace schedlab::sweep {

BoundKernel::BoundKernel(runtime::Backend& backend, const SegmentKernel& kernel,
                         const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes)
    : backend_(backend),
      compiled_(kernel.compiled.get()),
      args_(std::make_unique<runtime::BoundArgs>(backend, kernel.prepared, inputs, sizes)) {}

std::string BoundKernel::launch() const {
  const runtime::LaunchDims& d = args_->dims();
  return fmt::format("grid={}x{}x{} block={}x{}x{} smem={}", d.grid[0], d.grid[1], d.grid[2],
                     d.block[0], d.block[1], d.block[2], d.shared_bytes);
}

TimedKernel BoundKernel::timed() const {
  runtime::Backend* be = &backend_;
  runtime::CompiledKernel* compiled = compiled_;
  const runtime::BoundArgs* args = args_.get();
  return {[=](int n) { be->time(*compiled, args->dims(), args->args(), n, 0); },
          [=] { return be->time(*compiled, args->dims(), args->args(), 0, 1).seconds.at(0); }};
}

void time_group(const std::vector<GroupMember>& members, size_t repetitions, int64_t warmup,
                double min_time, uint64_t seed, uint64_t group, const std::string& group_name) {
  std::vector<size_t> timed;                        // the member each timed kernel stands for
  std::vector<std::unique_ptr<BoundKernel>> bound;  // by timed index
  std::map<std::pair<std::string, std::string>, size_t> first;  // (kernel, launch) -> timed index
  std::vector<size_t> timed_of(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    report::Record& r = *members[k].rec;
    std::unique_ptr<BoundKernel> b = members[k].bind();
    r.launch = b->launch();
    auto [it, fresh] = first.emplace(std::pair(r.kernel_hash, r.launch), timed.size());
    timed_of[k] = it->second;
    if (fresh) {
      timed.push_back(k);
      bound.push_back(std::move(b));
    }
  }
  std::vector<TimedKernel> kernels;
  for (const std::unique_ptr<BoundKernel>& b : bound) kernels.push_back(b->timed());
  const std::vector<std::vector<double>> times =
      time_kernels(kernels, repetitions, warmup, min_time, seed, group);
  for (size_t k = 0; k < members.size(); ++k) {
    report::Record& r = *members[k].rec;
    const size_t t = timed_of[k];
    r.times_us.clear();
    for (double sec : times[t]) r.times_us.push_back(sec * 1e6);
    r.group = group_name;
    r.seed = seed;
    if (timed[t] != k) r.same_kernel_as = benchmark_name(*members[timed[t]].rec);
  }
}

}  // namespace schedlab::sweep
