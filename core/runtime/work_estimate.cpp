#include "schedlab/runtime/work_estimate.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "schedlab/base/error.h"

namespace schedlab::runtime {

namespace {

using Values = std::map<std::string, kir::ExprP>;

struct Walker {
  const Values& values;
  std::map<const kir::Buffer*, double> work;

  double trip(const kir::ExprP& extent) const {
    kir::ExprP e = kir::substitute(extent, values);
    return e->kind == kir::Expr::Kind::Int ? static_cast<double>(std::max<int64_t>(e->i, 0)) : 1.0;
  }

  void walk(const std::vector<kir::StmtP>& body, double times) {
    for (const kir::StmtP& s : body) walk(*s, times);
  }

  void walk(const kir::Stmt& s, double times) {
    using K = kir::Stmt::Kind;
    switch (s.kind) {
      case K::For: walk(s.body, times * trip(s.extent)); break;
      case K::Block: walk(s.body, times); break;
      case K::If:
        walk(s.body, times);
        walk(s.else_body, times);
        break;
      case K::Store:
      case K::BlockReduce:
      case K::GridReduce: work[s.buffer] += times; break;
      default: break;
    }
  }
};

std::string scientific(double v) { return fmt::format("{:.3g}", v); }

}  // namespace

std::vector<BufferWork> emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                                      const std::vector<TensorArg>& args) {
  Values values{{"blockDim.x", kir::Expr::integer(dims.block[0])},
                {"blockDim.y", kir::Expr::integer(dims.block[1])},
                {"blockDim.z", kir::Expr::integer(dims.block[2])},
                {"gridDim.x", kir::Expr::integer(dims.grid[0])},
                {"gridDim.y", kir::Expr::integer(dims.grid[1])},
                {"gridDim.z", kir::Expr::integer(dims.grid[2])}};
  for (size_t i = 0; i < k.params.size() && i < args.size(); ++i)
    for (size_t d = 0; d < args[i].sizes.size(); ++d)
      values[fmt::format("{}.size[{}]", k.params[i].buffer->name, d)] =
          kir::Expr::integer(args[i].sizes[d]);
  Walker w{values, {}};
  if (k.body) w.walk(*k.body, 1.0);
  std::vector<BufferWork> out;
  for (const auto& [b, n] : w.work) out.push_back({b, n});
  std::stable_sort(out.begin(), out.end(),
                   [](const BufferWork& a, const BufferWork& b) { return a.per_thread > b.per_thread; });
  return out;
}

double total_emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                           const std::vector<TensorArg>& args) {
  double per_thread = 0;
  for (const BufferWork& b : emulated_work(k, dims, args)) per_thread += b.per_thread;
  return per_thread * static_cast<double>(dims.block[0] * dims.block[1] * dims.block[2]) *
         static_cast<double>(dims.grid[0] * dims.grid[1] * dims.grid[2]);
}

double cpu_work_limit(bool traced) {
  const char* env = std::getenv("SCHEDLAB_CPU_MAX_WORK");
  double v = 2e10;
  if (env && *env) {
    char* end = nullptr;
    v = std::strtod(env, &end);
    user_assert(end && *end == '\0' && v >= 0)
        << "SCHEDLAB_CPU_MAX_WORK: expected a number of statement instances (0: unlimited), "
           "found '"
        << env << "'";
  }
  return traced ? v / kTraceSlowdown : v;
}

void check_emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                         const std::vector<TensorArg>& args, double limit, bool traced) {
  if (limit <= 0) return;
  const double total = total_emulated_work(k, dims, args);
  if (total <= limit) return;
  const auto work = emulated_work(k, dims, args);
  double per_thread = 0;
  for (const BufferWork& b : work) per_thread += b.per_thread;
  const double threads = static_cast<double>(dims.block[0] * dims.block[1] * dims.block[2]);
  const double blocks = static_cast<double>(dims.grid[0] * dims.grid[1] * dims.grid[2]);
  const kir::Buffer* top = work.front().buffer;
  const std::string name = top->tv ? top->tv->describe() : top->name;
  user_error << "launch: the " << (traced ? "traced (sanitized) " : "")
             << "CPU emulation would execute about " << scientific(total)
             << " statement instances (" << scientific(per_thread) << " per thread x "
             << static_cast<int64_t>(threads) << " threads x " << static_cast<int64_t>(blocks)
             << " blocks), more than its limit of " << scientific(limit)
             << (traced ? " (the plain limit over the tracing slowdown)" : "") << "; " << name
             << " alone takes " << scientific(work.front().per_thread)
             << " per thread; expected each thread to compute its own part (bind " << name
             << "'s loops to threads and blocks, e.g. parallelize_all_like, or inline it), "
                "smaller sizes, or SCHEDLAB_CPU_MAX_WORK=0 to emulate anyway";
}

}  // namespace schedlab::runtime
