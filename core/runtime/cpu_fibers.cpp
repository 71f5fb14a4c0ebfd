// CPU execution of a launch: worker threads take blocks; inside a block the
// CUDA threads run as a plain loop or, with barriers, as Boost.Context fibers.
//
// Barrier scheduling. The scheduler resumes every live fiber of the block in
// thread order; each runs until it reaches __syncthreads (AtBarrier) or
// returns (Done). After such a round every live fiber has arrived, so the
// barrier completes and the next round starts. A round that ends with some
// fibers at the barrier and some done is a deadlock on the GPU too (the
// waiting threads would never be released), and is reported, not hung on.
//
// Warp exchanges (__shfl*_sync, __syncwarp). A warp is 32 consecutive fibers.
// A lane arriving at an exchange deposits its value and the lane it reads in
// per-thread slots, and joins its warp's arrived set. The exchange's group is
// the closure of the masks of the arrived lanes, starting from the arriving
// lane's; when every lane of the group has arrived, the last one to arrive
// computes every group member's result (so a lane that hurries on to the next
// exchange and overwrites its slot cannot change a result not yet read),
// releases the others (AtShuffle -> Running, resumed later in the same or the
// next round) and goes on. A round that leaves no fiber running while some
// wait at an exchange is a deadlock: a lane of the group exited, waits at
// __syncthreads, or lies past the block's last thread.
//
// Grid barriers (sl_grid_sync, a kernel with KernelSource::grid_sync): one
// worker runs the whole grid, every block's threads as resident fibers (a
// BlockScheduler and a shared memory buffer per block); run_block returns when
// the block's live threads all wait at the grid barrier, and the grid
// scheduler (Worker::run_grid) resumes the blocks once all of them have come.
//
// Fibers are created once per launch and worker and reused for every block the
// worker runs: a fiber that finishes its thread parks until the next block.
// Exceptions never cross a fiber boundary: one thrown by the kernel is caught
// on the fiber, parked, and rethrown by the scheduler on the worker's stack.
#include "cpu_fibers.h"
#include "cpu_trace.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::runtime::cpu {

namespace {

namespace ctx = boost::context;

// Generated kernels keep little on the stack (a few register tiles); 64 KiB
// leaves room for that and for unwinding. Pooled stacks have no guard page.
constexpr size_t kFiberStackBytes = 64 * 1024;
// What a fiber's stack keeps besides the kernel's Local arrays (its frames,
// the runtime header's, unwinding): a kernel whose arrays fit beside it runs
// on the default stacks.
constexpr size_t kFiberFrameBytes = 32 * 1024;
// A traced kernel calls the observer from its fibers' stacks.
constexpr size_t kTracedFiberStackBytes = 512 * 1024;

CpuDim3 dim3_of(const std::array<int64_t, 3>& a) {
  return {static_cast<unsigned>(a[0]), static_cast<unsigned>(a[1]), static_cast<unsigned>(a[2])};
}

std::string str(const CpuDim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

enum class FiberState : uint8_t { Running, AtBarrier, AtShuffle, AtGridBarrier, Done };

// Where run_block left its block: finished, or every live thread waiting at a
// grid barrier (sl_grid_sync: the grid scheduler resumes it once every block
// of the grid is there).
enum class BlockStop : uint8_t { Done, AtGridBarrier };

constexpr unsigned kWarpSize = 32;

const char* warp_op_name(int op) {
  switch (static_cast<CpuWarpOp>(op)) {
    case CpuWarpOp::Idx:
      return "__shfl_sync";
    case CpuWarpOp::Xor:
      return "__shfl_xor_sync";
    case CpuWarpOp::Up:
      return "__shfl_up_sync";
    case CpuWarpOp::Down:
      return "__shfl_down_sync";
    case CpuWarpOp::SyncWarp:
      return "__syncwarp";
  }
  return "a warp shuffle";
}

// The lane whose value `lane` reads, as PTX shfl.sync defines it for the
// c operand CUDA's intrinsics pass; `lane` itself when the source is out of
// the segment. `width` is a power of two in [1, 32].
unsigned source_lane(CpuWarpOp op, unsigned lane, int arg, unsigned width) {
  const unsigned seg = kWarpSize - width;  // segmask: the segment's high lane bits
  const unsigned b = static_cast<unsigned>(arg) & 31u;
  const unsigned min_lane = lane & seg;
  const unsigned max_lane = min_lane | (31u & ~seg);
  switch (op) {
    case CpuWarpOp::Idx:
      return min_lane | (b & ~seg);
    case CpuWarpOp::Xor:
      return (lane ^ b) <= max_lane ? lane ^ b : lane;
    case CpuWarpOp::Up:
      return lane >= min_lane + b ? lane - b : lane;
    case CpuWarpOp::Down:
      return lane + b <= max_lane ? lane + b : lane;
    case CpuWarpOp::SyncWarp:
      return lane;
  }
  return lane;
}

// Completed synchronizations of every launch in this process (cpu_sync_counts),
// added once per block so that the counting costs nothing per barrier.
std::atomic<uint64_t> g_barriers{0}, g_thread_barriers{0}, g_exchanges{0}, g_thread_exchanges{0};

class BlockScheduler;
// The scheduler of the block this worker thread is running, for syncthreads().
thread_local BlockScheduler* tl_scheduler = nullptr;

// The threads of one block as fibers, on one worker thread, for one launch.
class BlockScheduler {
 public:
  BlockScheduler(const Entry& k, void** params, CpuThreadState* st, CpuDim3 block,
                 ctx::pooled_fixedsize_stack& stacks)
      : k_(k), params_(params), st_(st) {
    for (unsigned z = 0; z < block.z; ++z)
      for (unsigned y = 0; y < block.y; ++y)
        for (unsigned x = 0; x < block.x; ++x) idx_.push_back({x, y, z});
    const size_t n = idx_.size();
    state_.assign(n, FiberState::Done);
    warps_.assign((n + kWarpSize - 1) / kWarpSize, Warp{});
    lanes_.assign(n, Lane{});
    sinks_.resize(n);
    fibers_.reserve(n);
    for (size_t t = 0; t < n; ++t)
      fibers_.emplace_back(std::allocator_arg, stacks,
                           [this, t](ctx::fiber&& sink) { return body(t, std::move(sink)); });
    tl_scheduler = this;
  }

  ~BlockScheduler() {
    // Parked (or never started) fibers leave their loop and return normally.
    // Any other fiber, stopped at a barrier by an error, is unwound by ~fiber.
    quit_ = true;
    for (size_t t = 0; t < fibers_.size(); ++t)
      if (state_[t] == FiberState::Done) fibers_[t] = std::move(fibers_[t]).resume();
    fibers_.clear();
    tl_scheduler = nullptr;
  }

  BlockScheduler(const BlockScheduler&) = delete;
  BlockScheduler& operator=(const BlockScheduler&) = delete;

  // Runs the block until every thread has exited or, in a kernel with grid
  // barriers, waits at one; `resume`: past the grid barrier it waits at.
  BlockStop run_block(bool resume = false) {
    if (resume) {
      for (FiberState& s : state_)
        if (s == FiberState::AtGridBarrier) s = FiberState::Running;
    } else {
      std::fill(state_.begin(), state_.end(), FiberState::Running);
      std::fill(warps_.begin(), warps_.end(), Warp{});
    }
    tl_scheduler = this;
    const size_t n = fibers_.size();
    for (;;) {
      for (size_t t = 0; t < n; ++t) {
        if (state_[t] != FiberState::Running) continue;
        current_ = t;
        st_->thread_idx = idx_[t];
        fibers_[t] = std::move(fibers_[t]).resume();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      }
      size_t running = 0, waiting = 0, shuffling = 0, at_grid = 0;
      for (FiberState s : state_) {
        running += s == FiberState::Running;
        waiting += s == FiberState::AtBarrier;
        shuffling += s == FiberState::AtShuffle;
        at_grid += s == FiberState::AtGridBarrier;
      }
      if (running > 0) continue;  // released by an exchange completed late in the round
      if (shuffling > 0) {
        if (tl_trace == nullptr) warp_deadlock();
        release_partial_warps();
        continue;
      }
      if (waiting == 0 && at_grid == 0) {
        g_barriers.fetch_add(barriers_, std::memory_order_relaxed);
        g_thread_barriers.fetch_add(barriers_ * n, std::memory_order_relaxed);
        g_exchanges.fetch_add(exchanges_, std::memory_order_relaxed);
        g_thread_exchanges.fetch_add(thread_exchanges_, std::memory_order_relaxed);
        barriers_ = exchanges_ = thread_exchanges_ = 0;
        return BlockStop::Done;
      }
      if (waiting == 0) {
        // Every live thread waits at the grid barrier: the block's part of it
        // (its __syncthreads) completes here, the grid's in the grid scheduler.
        if (tl_trace != nullptr) {
          sites_.resize(n);
          for (size_t t = 0; t < n; ++t)
            sites_[t] = state_[t] == FiberState::AtGridBarrier ? tl_trace->announced(t)
                                                               : BarrierEvent::kExited;
          grid_site_ = *std::max_element(sites_.begin(), sites_.end());
          tl_trace->barrier(sites_);
        } else if (at_grid != n) {
          size_t exited = 0;
          while (state_[exited] != FiberState::Done) ++exited;
          user_error << "kernel deadlock: thread " << str(idx_[exited]) << " of block "
                     << str(st_->block_idx) << " exited while " << at_grid
                     << " threads wait at the grid barrier (sl_grid_sync; kernel " << k_.name
                     << ")";
        }
        ++barriers_;
        return BlockStop::AtGridBarrier;
      }
      if (tl_trace != nullptr) {
        // Traced: the observer judges divergence (different sites, or threads
        // that exited); the barrier then releases the threads that wait, as
        // a GPU since Volta does when some threads of the block have exited.
        sites_.resize(n);
        for (size_t t = 0; t < n; ++t)
          sites_[t] = state_[t] == FiberState::AtBarrier ? tl_trace->announced(t)
                                                         : BarrierEvent::kExited;
        tl_trace->barrier(sites_);
      } else if (waiting != n) {
        size_t other = 0;
        while (state_[other] == FiberState::AtBarrier) ++other;
        user_error << "kernel deadlock: thread " << str(idx_[other]) << " of block "
                   << str(st_->block_idx)
                   << (state_[other] == FiberState::AtGridBarrier ? " waits at the grid barrier"
                                                                  : " exited")
                   << " while " << waiting << " threads wait at __syncthreads (kernel "
                   << k_.name << ")";
      }
      for (FiberState& s : state_)
        if (s == FiberState::AtBarrier) s = FiberState::Running;
      ++barriers_;
    }
  }

  // Called on fiber `current_`: park it at the barrier, back to run_block.
  void arrive() {
    const size_t t = current_;
    state_[t] = FiberState::AtBarrier;
    sinks_[t] = std::move(sinks_[t]).resume();
  }

  // Traced: the grid barrier site the block waits at (after run_block
  // returned AtGridBarrier).
  int grid_site() const { return grid_site_; }

  // Called on fiber `current_`: park it at the grid barrier, back to run_block.
  void arrive_grid() {
    user_assert(k_.grid_sync) << "a kernel called sl_grid_sync but its KernelSource has "
                                 "grid_sync = false; the CPU backend runs its blocks one "
                                 "after another (kernel " << k_.name << ")";
    const size_t t = current_;
    state_[t] = FiberState::AtGridBarrier;
    sinks_[t] = std::move(sinks_[t]).resume();
  }

  // Called on fiber `current_`: a warp exchange (see the top of the file).
  uint64_t exchange(int op, unsigned mask, uint64_t value, int arg, int width) {
    user_assert(op >= 0 && op <= static_cast<int>(CpuWarpOp::SyncWarp))
        << "cpu backend: unknown warp operation " << op << " (kernel " << k_.name << ")";
    user_assert(width >= 1 && width <= 32 && std::has_single_bit(static_cast<unsigned>(width)))
        << warp_op_name(op) << ": width " << width << " is not a power of two in [1, 32] (kernel "
        << k_.name << ")";
    const size_t t = current_;
    const size_t w = t / kWarpSize;
    const unsigned lane = t % kWarpSize;
    Lane& me = lanes_[t];
    me.value = value;
    me.src = source_lane(static_cast<CpuWarpOp>(op), lane, arg, static_cast<unsigned>(width));
    me.mask = mask | (1u << lane);
    me.op = op;
    Warp& warp = warps_[w];
    warp.arrived |= 1u << lane;
    const uint32_t g = group(w, lane);
    if ((g & ~warp.arrived) == 0) {
      complete(w, g);
    } else {
      state_[t] = FiberState::AtShuffle;
      sinks_[t] = std::move(sinks_[t]).resume();
    }
    return me.result;
  }

 private:
  // A warp's exchange in progress: the lanes that have arrived and wait.
  struct Warp {
    uint32_t arrived = 0;
    uint64_t generation = 0;  // completed exchanges, for debugging
  };
  // A lane's deposit at its current exchange.
  struct Lane {
    uint64_t value = 0;   // what it offers
    uint64_t result = 0;  // what it reads, written when the exchange completes
    uint32_t mask = 0;    // its mask, its own bit included
    unsigned src = 0;     // the lane it reads
    int op = 0;           // CpuWarpOp, for diagnostics
  };

  // The lanes that must arrive with `lane` of warp `w`: the closure of the
  // masks of the arrived lanes, from lane's own.
  uint32_t group(size_t w, unsigned lane) const {
    const Warp& warp = warps_[w];
    uint32_t g = lanes_[w * kWarpSize + lane].mask;
    for (;;) {
      uint32_t next = g;
      for (uint32_t in = g & warp.arrived; in != 0; in &= in - 1)
        next |= lanes_[w * kWarpSize + std::countr_zero(in)].mask;
      if (next == g) return g;
      g = next;
    }
  }

  // Every lane of `g` has arrived: hand out the results and release them.
  void complete(size_t w, uint32_t g) {
    Warp& warp = warps_[w];
    for (uint32_t in = g; in != 0; in &= in - 1) {
      Lane& l = lanes_[w * kWarpSize + std::countr_zero(in)];
      // Reading a lane outside the exchange is undefined on the GPU; here
      // the caller gets its own value back.
      l.result = (g >> l.src) & 1u ? lanes_[w * kWarpSize + l.src].value : l.value;
    }
    for (uint32_t in = g; in != 0; in &= in - 1)
      state_[w * kWarpSize + std::countr_zero(in)] = FiberState::Running;
    warp.arrived &= ~g;
    ++warp.generation;
    ++exchanges_;
    thread_exchanges_ += static_cast<uint64_t>(std::popcount(g));
  }

  // Traced, no fiber runs and some wait at a warp exchange that cannot
  // complete (lanes of their group exited or wait at __syncthreads): the
  // observer gets a divergent warp, and the exchange completes with the lanes
  // that arrived (a lane outside it reads its own value), so the run goes on.
  void release_partial_warps() {
    for (size_t w = 0; w * kWarpSize < state_.size(); ++w) {
      Warp& warp = warps_[w];
      if (warp.arrived == 0) continue;
      std::vector<WarpDivergenceEvent::Lane> lanes;
      for (size_t t = w * kWarpSize; t < (w + 1) * kWarpSize; ++t)
        lanes.push_back({0, t >= state_.size()                     ? "no thread (past the block)"
                            : state_[t] == FiberState::Done        ? "exit"
                            : state_[t] == FiberState::AtBarrier   ? "__syncthreads"
                            : state_[t] == FiberState::AtShuffle   ? warp_op_name(lanes_[t].op)
                                                                   : "running"});
      tl_trace->warp_divergence(static_cast<int32_t>(w * kWarpSize), std::move(lanes));
      complete(w, warp.arrived);
    }
  }

  // No fiber runs and some wait at a warp exchange that cannot complete.
  void warp_deadlock() const {
    size_t t = 0;
    while (state_[t] != FiberState::AtShuffle) ++t;
    const size_t w = t / kWarpSize;
    const uint32_t g = group(w, t % kWarpSize);
    const uint32_t missing = g & ~warps_[w].arrived;
    const size_t m = w * kWarpSize + std::countr_zero(missing);
    const int waiting = std::popcount(g & warps_[w].arrived);
    std::ostringstream who;
    if (m >= state_.size())
      who << "lane " << m % kWarpSize << " of warp " << w << " of block " << str(st_->block_idx)
          << " is past the block's " << state_.size() << " threads";
    else if (state_[m] == FiberState::Done)
      who << "thread " << str(idx_[m]) << " of block " << str(st_->block_idx) << " exited";
    else
      who << "thread " << str(idx_[m]) << " of block " << str(st_->block_idx)
          << " waits at __syncthreads";
    user_error << "kernel deadlock: " << who.str() << " while " << waiting
               << " threads of its warp wait at " << warp_op_name(lanes_[t].op) << " (kernel "
               << k_.name << ")";
  }

  ctx::fiber body(size_t t, ctx::fiber&& sink) {
    sinks_[t] = std::move(sink);
    while (!quit_) {
      try {
        k_.entry(params_);
      } catch (const ctx::detail::forced_unwind&) {
        throw;  // ~fiber unwinding this stack: let Boost.Context finish it
      } catch (...) {
        error_ = std::current_exception();
      }
      state_[t] = FiberState::Done;
      sinks_[t] = std::move(sinks_[t]).resume();
    }
    return std::move(sinks_[t]);
  }

  const Entry& k_;
  void** params_;
  CpuThreadState* st_;
  std::vector<CpuDim3> idx_;        // threadIdx of each fiber, x fastest
  std::vector<FiberState> state_;   // per fiber
  std::vector<Warp> warps_;         // per warp of 32 fibers
  std::vector<Lane> lanes_;         // per fiber: its warp-exchange slot
  std::vector<ctx::fiber> fibers_;  // the suspended fibers, seen from the scheduler
  uint64_t barriers_ = 0, exchanges_ = 0, thread_exchanges_ = 0;  // this block's, so far
  std::vector<ctx::fiber> sinks_;   // the scheduler, seen from each fiber
  std::vector<int> sites_;          // traced: each fiber's barrier site, per barrier
  size_t current_ = 0;
  int grid_site_ = BarrierEvent::kNoSite;
  bool quit_ = false;
  std::exception_ptr error_;
};

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

// One launch, shared by the workers that run its blocks.
struct Launch {
  Launch(const Entry& k, const LaunchDims& dims, void** params)
      : k(&k),
        dims(&dims),
        params(params),
        num_blocks(dims.grid[0] * dims.grid[1] * dims.grid[2]) {}
  const Entry* k;
  const LaunchDims* dims;
  void** params;
  const TraceKernel* trace = nullptr;  ///< traced: run on one thread, events to observer
  AccessObserver* observer = nullptr;
  int64_t num_blocks;
  std::atomic<int64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
};

// A worker thread's resources, kept across launches.
class Worker {
 public:
  explicit Worker(size_t stack_bytes = kFiberStackBytes)
      : stacks_(stack_bytes), stack_bytes_(stack_bytes) {}
  void run(Launch& l) {
    // Outside the try: fibers stopped by an error are unwound after the error
    // is caught, never while it propagates.
    std::optional<BlockScheduler> fibers;
    try {
      const LaunchDims& d = *l.dims;
      CpuThreadState* st = l.k->thread_state();
      st->block_dim = dim3_of(d.block);
      st->grid_dim = dim3_of(d.grid);
      st->smem = d.shared_bytes > 0 ? shared_memory(d.shared_bytes) : nullptr;
      const int64_t gx = d.grid[0], gy = d.grid[1];
      std::optional<TraceContext> trace;
      if (l.trace) trace.emplace(*l.trace, *l.observer, st);
      struct Scope {  // tl_trace is set while this launch runs here, even on error
        explicit Scope(TraceContext* t) { tl_trace = t; }
        ~Scope() { tl_trace = nullptr; }
      } scope(trace ? &*trace : nullptr);
      if (l.k->grid_sync) {
        // Every block at once, on the worker that claims the grid.
        if (l.next_block.exchange(l.num_blocks) == 0) run_grid(l, st, trace ? &*trace : nullptr);
        return;
      }
      for (;;) {
        if (l.failed.load(std::memory_order_relaxed)) break;
        const int64_t b = l.next_block.fetch_add(1, std::memory_order_relaxed);
        if (b >= l.num_blocks) break;
        st->block_idx = {static_cast<unsigned>(b % gx), static_cast<unsigned>(b / gx % gy),
                         static_cast<unsigned>(b / (gx * gy))};
        // CUDA leaves shared memory undefined; zero makes CPU runs reproducible.
        if (d.shared_bytes > 0) std::memset(st->smem, 0, d.shared_bytes);
        if (trace) trace->begin_block(b);
        if (l.k->has_barrier) {
          // Made on the first block: a worker that gets none makes no fibers.
          if (!fibers) fibers.emplace(*l.k, l.params, st, st->block_dim, stacks_for(*l.k));
          fibers->run_block();
        } else {
          run_loop(*l.k, l.params, st);
        }
        if (trace) trace->end_block();
      }
    } catch (...) {
      std::lock_guard lock(l.error_mutex);
      if (!l.error) l.error = std::current_exception();
      l.failed = true;
    }
  }

 private:
  // A kernel with grid barriers: every block of the grid resident at once, as
  // fibers on this thread (the backend checked that the emulated device holds
  // them all). Each block runs until its threads exit or wait at the grid
  // barrier; once every block has come so far, the waiting ones go on, in
  // block order, up to the next barrier. Blocks that exited while others
  // wait are a deadlock on the GPU: an error, or in a traced run a finding
  // (the observer's on_grid_barrier), after which the waiting blocks go on.
  void run_grid(Launch& l, CpuThreadState* st, TraceContext* trace) {
    const LaunchDims& d = *l.dims;
    const int64_t n = l.num_blocks, gx = d.grid[0], gy = d.grid[1];
    enum class At : uint8_t { Start, GridBarrier, Done };
    std::vector<At> at(static_cast<size_t>(n), At::Start);
    std::vector<std::unique_ptr<BlockScheduler>> blocks(static_cast<size_t>(n));
    std::vector<std::unique_ptr<char, FreeDeleter>> smem(static_cast<size_t>(n));
    auto dim = [&](int64_t b) {
      return CpuDim3{static_cast<unsigned>(b % gx), static_cast<unsigned>(b / gx % gy),
                     static_cast<unsigned>(b / (gx * gy))};
    };
    for (;;) {
      for (int64_t b = 0; b < n; ++b) {
        const auto i = static_cast<size_t>(b);
        if (at[i] == At::Done) continue;
        st->block_idx = dim(b);
        const bool resume = at[i] == At::GridBarrier;
        if (!resume) {
          if (d.shared_bytes > 0) {
            smem[i].reset(static_cast<char*>(std::aligned_alloc(64, (d.shared_bytes + 63) / 64 * 64)));
            user_assert(smem[i] != nullptr) << "cpu backend: cannot allocate " << d.shared_bytes
                                            << " bytes of shared memory for block " << b;
            std::memset(smem[i].get(), 0, d.shared_bytes);
          }
          st->smem = smem[i].get();
          if (trace) trace->begin_block(b);
          blocks[i] = std::make_unique<BlockScheduler>(*l.k, l.params, st, st->block_dim,
                                                       stacks_for(*l.k));
        } else {
          st->smem = smem[i].get();
          if (trace) trace->resume_block(b);
        }
        if (blocks[i]->run_block(resume) == BlockStop::Done) {
          at[i] = At::Done;
          if (trace) trace->end_block();
          blocks[i].reset();
          smem[i].reset();
        } else {
          at[i] = At::GridBarrier;
          if (trace) trace->suspend_block();
        }
      }
      GridBarrierEvent e;
      for (int64_t b = 0; b < n; ++b) {
        if (at[static_cast<size_t>(b)] == At::GridBarrier && e.waiting++ == 0) {
          e.waiting_block = dim(b);
          e.site = blocks[static_cast<size_t>(b)]->grid_site();
        }
        if (at[static_cast<size_t>(b)] == At::Done && e.exited++ == 0) e.exited_block = dim(b);
      }
      if (e.waiting == 0) return;
      if (trace == nullptr) {
        user_assert(e.exited == 0)
            << "kernel deadlock: block " << str(e.exited_block) << " exited while " << e.waiting
            << " blocks (block " << str(e.waiting_block)
            << " the first) wait at the grid barrier (sl_grid_sync; kernel " << l.k->name << ")";
        continue;
      }
      trace->grid_barrier(e);
    }
  }

  static void run_loop(const Entry& k, void** params, CpuThreadState* st) {
    const CpuDim3 b = st->block_dim;
    for (unsigned z = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y)
        for (unsigned x = 0; x < b.x; ++x) {
          st->thread_idx = {x, y, z};
          k.entry(params);
        }
  }

  // This worker's block buffer, grown to the largest launch seen.
  char* shared_memory(size_t bytes) {
    if (bytes > smem_bytes_) {
      smem_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      smem_bytes_ = smem_ ? bytes : 0;
      user_assert(smem_ != nullptr)
          << "cpu backend: cannot allocate " << bytes << " bytes of shared memory per block";
    }
    return smem_.get();
  }

  // This worker's fiber stacks, grown (a new pool) when a kernel's Local
  // arrays and kFiberFrameBytes do not fit them: a kernel's arrays live in
  // its frame, on the fiber's stack (fuzz seed 52 case 131: eight 8 KiB
  // arrays overflowed the 64 KiB stacks, SIGSEGV). Kernels with small arrays
  // keep the pool they have. No fibers of an earlier launch are alive when
  // it is replaced.
  ctx::pooled_fixedsize_stack& stacks_for(const Entry& k) {
    const size_t need = k.local_bytes + kFiberFrameBytes;
    if (need > stack_bytes_) {
      stack_bytes_ = need;
      stacks_ = ctx::pooled_fixedsize_stack(need);
    }
    return stacks_;
  }

  ctx::pooled_fixedsize_stack stacks_;
  size_t stack_bytes_;
  std::unique_ptr<char, FreeDeleter> smem_;
  size_t smem_bytes_ = 0;
};

}  // namespace

void syncthreads() {
  BlockScheduler* s = tl_scheduler;
  // Thrown through the kernel's frames back to Worker::run; the unit is C++
  // compiled with unwind tables, so this is safe.
  if (s == nullptr)
    user_error << "a kernel called __syncthreads but its KernelSource has has_barrier = false; "
                  "the CPU backend runs such kernels without fibers";
  s->arrive();
}

void grid_sync(int site) {
  if (tl_trace != nullptr) tl_trace->announce_barrier(site);
  BlockScheduler* s = tl_scheduler;
  if (s == nullptr)
    user_error << "a kernel called sl_grid_sync but its KernelSource has has_barrier = false; "
                  "the CPU backend runs such kernels without fibers";
  s->arrive_grid();
}

unsigned long long warp_exchange(int op, unsigned mask, unsigned long long value, int arg,
                                 int width) {
  BlockScheduler* s = tl_scheduler;
  if (s == nullptr)
    user_error << "a kernel called " << warp_op_name(op)
               << " but its KernelSource has has_barrier = false; the CPU backend runs such "
                  "kernels without fibers";
  return s->exchange(op, mask, value, arg, width);
}

struct Executor::Impl {
  std::vector<Worker> workers;
  std::vector<std::thread> threads;
  std::mutex launch_mutex;  // one launch at a time
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  Launch* launch = nullptr;
  uint64_t generation = 0;
  size_t busy = 0;
  bool stop = false;

  void worker_main(size_t i) {
    uint64_t seen = 0;
    for (;;) {
      Launch* l;
      {
        std::unique_lock lock(m);
        work_cv.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
        l = launch;
      }
      workers[i].run(*l);
      std::lock_guard lock(m);
      if (--busy == 0) done_cv.notify_one();
    }
  }
};

Executor::Executor(unsigned workers) : impl_(std::make_unique<Impl>()) {
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  impl_->workers.resize(workers);
  for (size_t i = 0; i < workers; ++i)
    impl_->threads.emplace_back([this, i] { impl_->worker_main(i); });
}

Executor::~Executor() {
  {
    std::lock_guard lock(impl_->m);
    impl_->stop = true;
  }
  impl_->work_cv.notify_all();
  for (auto& t : impl_->threads) t.join();
}

void Executor::run(const Entry& k, const LaunchDims& dims, void** params) {
  std::lock_guard launch_lock(impl_->launch_mutex);
  Launch l(k, dims, params);
  {
    std::unique_lock lock(impl_->m);
    impl_->launch = &l;
    impl_->busy = impl_->workers.size();
    ++impl_->generation;
    impl_->work_cv.notify_all();
    impl_->done_cv.wait(lock, [&] { return impl_->busy == 0; });
    impl_->launch = nullptr;
  }
  if (l.error) std::rethrow_exception(l.error);
}

void Executor::run_traced(const Entry& k, const LaunchDims& dims, void** params,
                          const TraceKernel& trace, AccessObserver& observer) {
  // On the calling thread, block after block: the observer sees one ordered
  // stream of events and needs no lock.
  std::lock_guard launch_lock(impl_->launch_mutex);
  Launch l(k, dims, params);
  l.trace = &trace;
  l.observer = &observer;
  observer.on_launch_begin(trace);
  Worker worker(kTracedFiberStackBytes);
  worker.run(l);
  if (l.error) std::rethrow_exception(l.error);
  observer.on_launch_end();
}

}  // namespace schedlab::runtime::cpu

namespace schedlab::runtime {

CpuSyncCounts cpu_sync_counts() {
  return {cpu::g_barriers.load(), cpu::g_thread_barriers.load(), cpu::g_exchanges.load(),
          cpu::g_thread_exchanges.load()};
}

}  // namespace schedlab::runtime
