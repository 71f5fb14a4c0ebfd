#include "schedlab/runtime/work_estimate.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/lower/size_variable.h"
#include "schedlab/runtime/executor.h"

namespace schedlab::runtime {

namespace {

using Values = kir::ExprMap<kir::ExprP>;

/// Barrier arrivals of one sl_block_reduce: up to three __syncthreads and
/// two rounds of five warp shuffles (each a warp barrier on the CPU).
constexpr double kBlockReduceBarriers = 13;

/// Statement instances per thread: each statement counts the product of the
/// enclosing loops' trip counts.
class Walker : public kir::IRVisitor {
 public:
  explicit Walker(const Values& values) : values_(values) {}
  std::map<const kir::Buffer*, double> work;
  double barriers = 0;
  double mma_tiles = 0;

 protected:
  using kir::IRVisitor::visit;
  void visit(const kir::For& s) override {
    const double outer = times_;
    times_ *= trip(s.extent);
    include(s.body);
    times_ = outer;
  }
  void visit(const kir::If& s) override {  // predicates ignored: an upper bound
    include(s.then_body);
    include(s.else_body);
  }
  void visit(const kir::Sync&) override { barriers += times_; }
  void visit(const kir::Store& s) override { work[s.buffer] += times_; }
  void visit(const kir::GridReduce& s) override { work[s.buffer] += times_; }
  void visit(const kir::MmaTile& s) override {
    // A warp tile (kir::MmaTile::m_var/n_var) is m_trips x n_trips of them.
    const double n = times_ * static_cast<double>(s.m_trips * s.n_trips);
    mma_tiles += n;
    work[s.acc] += n * kMmaTileStatements;
  }
  void visit(const kir::BlockReduce& s) override {
    work[s.buffer] += times_;
    barriers += times_ * kBlockReduceBarriers;
  }

 private:
  double trip(const kir::ExprP& extent) const {
    const kir::ExprP e = kir::substitute(extent, values_);
    const auto* n = e->as<kir::IntImm>();
    return n ? static_cast<double>(std::max<int64_t>(n->value, 0)) : 1.0;
  }

  const Values& values_;
  double times_ = 1.0;
};

std::string scientific(double v) { return fmt::format("{:.3g}", v); }

}  // namespace

double EmulatedWork::per_thread() const {
  double n = barriers_per_thread * kBarrierCost;
  for (const BufferWork& b : buffers) n += b.per_thread;
  return n;
}

EmulatedWork emulated_work(const kir::Kernel& k, const LaunchDims& dims,
                           const std::vector<TensorArg>& args) {
  Values values = launch_bindings(dims);
  for (size_t i = 0; i < k.params.size() && i < args.size(); ++i)
    for (size_t d = 0; d < args[i].sizes.size() && d < size_t(k.params[i].buffer->rank); ++d)
      values[kir::Expr::tensor_size(k.params[i].buffer, static_cast<int>(d))] =
          kir::Expr::integer(args[i].sizes[d]);
  // A size assumed a multiple of d is read as its quotient (size_variable.h).
  for (const auto& [name, d] : k.divisible) {
    const auto& [buffer, axis] = k.size_sources.at(name);
    for (size_t i = 0; i < k.params.size() && i < args.size(); ++i)
      if (k.params[i].buffer == buffer && static_cast<size_t>(axis) < args[i].sizes.size())
        values[lower::size_variable(k, name)] =
            kir::Expr::integer(args[i].sizes[static_cast<size_t>(axis)] / d);
  }
  Walker w(values);
  if (k.body) w.include(*k.body);
  EmulatedWork out;
  for (const auto& [b, n] : w.work) out.buffers.push_back({b, n});
  std::stable_sort(out.buffers.begin(), out.buffers.end(),
                   [](const BufferWork& a, const BufferWork& b) { return a.per_thread > b.per_thread; });
  out.barriers_per_thread = w.barriers;
  out.mma_tiles_per_thread = w.mma_tiles;
  out.threads = static_cast<double>(dims.block[0] * dims.block[1] * dims.block[2]);
  out.blocks = static_cast<double>(dims.grid[0] * dims.grid[1] * dims.grid[2]);
  return out;
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
  const EmulatedWork work = emulated_work(k, dims, args);
  const double total = work.total();
  if (total <= limit) return;
  // What does the most: a buffer's statements, or the barriers (weighted).
  const double barrier_work = work.barriers_per_thread * kBarrierCost;
  std::string top, advice;
  if (!work.buffers.empty() && work.buffers.front().per_thread >= barrier_work) {
    const kir::Buffer* b = work.buffers.front().buffer;
    const std::string name = b->tv ? b->tv->describe() : b->name;
    top = fmt::format("{} alone takes {}", name, scientific(work.buffers.front().per_thread));
    advice = "bind " + name + "'s loops to threads and blocks, e.g. parallelize_all_like, or inline it";
  } else {
    top = fmt::format("its {} barriers (__syncthreads, {} statements each) alone take {}",
                      scientific(work.barriers_per_thread), kBarrierCost, scientific(barrier_work));
    advice = "bind the loops around the Shared tensors' barriers to threads and blocks, or keep "
             "those tensors Local";
  }
  user_error << "launch: the " << (traced ? "traced (sanitized) " : "")
             << "CPU emulation would execute about " << scientific(total)
             << " statement instances (" << scientific(work.per_thread()) << " per thread x "
             << static_cast<int64_t>(work.threads) << " threads x "
             << static_cast<int64_t>(work.blocks) << " blocks), more than its limit of "
             << scientific(limit)
             << (traced ? " (the plain limit over the tracing slowdown)" : "") << "; " << top
             << " per thread; expected each thread to compute its own part (" << advice
             << "), smaller sizes, or SCHEDLAB_CPU_MAX_WORK=0 to emulate anyway";
}

}  // namespace schedlab::runtime
