// Emulated memory traffic with known answers: small CUDA kernels written
// against the runtime header's access macros, compiled traced on the CPU
// backend and run through the TrafficObserver.
//   * a coalesced f32 copy: sector bytes = requested bytes (100 %), DRAM =
//     one read and one write of each byte;
//   * a read with a stride of 32 elements: 8x the sectors on the reads;
//   * a transpose through an unpadded 32x32 shared tile: 32-way conflicts on
//     the column reads; with the 32x33 padding: none.
#include "schedlab/model/traffic.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "schedlab/codegen/runtime_header.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/cpu_backend.h"

namespace {

using schedlab::model::L2Model;
using schedlab::model::TrafficCounts;
using schedlab::model::TrafficObserver;
using schedlab::runtime::LaunchDims;
using schedlab::runtime::MemorySpace;
using schedlab::runtime::TensorArg;
using schedlab::runtime::TraceBuffer;
using schedlab::runtime::TraceKernel;
using schedlab::runtime::TraceSite;

std::string cache_dir() {
  return SCHEDLAB_BINARY_DIR "/tests/model/kernel-cache";
}

schedlab::runtime::Backend& cpu() {
  static std::unique_ptr<schedlab::runtime::Backend> b =
      schedlab::runtime::make_cpu_backend(schedlab::model::model_device_properties(), cache_dir());
  return *b;
}

/// A one-dimensional f32 tensor argument over `data`.
TensorArg arg(std::vector<float>& data) {
  return {data.data(), schedlab::ir::DataType::F32, {int64_t(data.size())}, {1}};
}

struct Kernel {
  std::string body;  ///< after the runtime header
  std::vector<TraceSite> sites;
  std::vector<TraceBuffer> buffers;
  bool barrier = false;
};

/// Compiles `k` traced, launches it over `dims` and returns the counts.
TrafficCounts run(const Kernel& k, const LaunchDims& dims, std::vector<TensorArg> args,
                  int64_t l2_bytes = 50 << 20) {
  schedlab::runtime::KernelSource src;
  src.source = std::string(schedlab::codegen::runtime_header()) + k.body;
  src.has_barrier = k.barrier;
  src.trace = true;
  auto compiled = cpu().compile(src);
  TraceKernel t;
  t.name = "test";
  t.source = src.source;
  t.sites = k.sites;
  t.buffers = k.buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    t.buffers[i].base = args[i].data;
    t.buffers[i].elements = args[i].sizes[0];
  }
  t.dims = dims;
  TrafficObserver obs(l2_bytes, 32);
  cpu().launch_traced(*compiled, dims, args, t, obs);
  return obs.counts();
}

TraceSite site(TraceSite::Kind kind, int buffer) {
  TraceSite s;
  s.kind = kind;
  s.buffer = buffer;
  return s;
}

TraceBuffer global(const char* name) {
  TraceBuffer b;
  b.name = b.label = name;
  b.space = MemorySpace::Global;
  b.elem_bytes = 4;
  return b;
}

const char* kCopy = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> in, Tensor<float, 1, int> out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  SL_ST(1, out.data, i, SL_LD(0, in.data, i * STRIDE));
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*static_cast<Tensor<float, 1, int>*>(p[0]),
                  *static_cast<Tensor<float, 1, int>*>(p[1]));
}
#endif
)";

Kernel copy_kernel(int stride) {
  Kernel k;
  k.body = "#define STRIDE " + std::to_string(stride) + "\n" + kCopy;
  k.sites = {site(TraceSite::Kind::Read, 0), site(TraceSite::Kind::Write, 1)};
  k.buffers = {global("in"), global("out")};
  return k;
}

LaunchDims dims1(int64_t blocks, int64_t threads) {
  LaunchDims d;
  d.grid = {blocks, 1, 1};
  d.block = {threads, 1, 1};
  return d;
}

TEST(Traffic, CoalescedCopyUsesEveryByteOfEverySector) {
  const int64_t n = 64 * 256;
  std::vector<float> in(n, 1.0f), out(n);
  TrafficCounts c = run(copy_kernel(1), dims1(64, 256), {arg(in), arg(out)});
  ASSERT_EQ(c.global.size(), 2u);
  for (const auto& g : c.global) {
    EXPECT_EQ(g.requests, n / 32) << g.tensor;
    EXPECT_EQ(g.requested_bytes, n * 4) << g.tensor;
    EXPECT_EQ(g.sector_bytes, n * 4) << g.tensor;
    EXPECT_DOUBLE_EQ(g.efficiency(), 1.0) << g.tensor;
  }
  EXPECT_EQ(c.global[0].read_bytes, n * 4);
  EXPECT_EQ(c.global[1].write_bytes, n * 4);
  EXPECT_EQ(c.dram_read_bytes, n * 4);
  EXPECT_EQ(c.dram_write_bytes, n * 4);
  EXPECT_EQ(c.blocks, 64);
  EXPECT_EQ(c.threads, n);
  EXPECT_EQ(c.thread_accesses, 2 * n);
  EXPECT_TRUE(c.shared.empty());
  EXPECT_DOUBLE_EQ(c.bank_conflict_ways(), 1.0);
}

TEST(Traffic, Stride32ReadTouchesEightTimesTheSectors) {
  const int64_t n = 16 * 256;
  std::vector<float> in(n * 32, 1.0f), out(n);
  TrafficCounts c = run(copy_kernel(32), dims1(16, 256), {arg(in), arg(out)});
  const auto& read = c.global[0];
  EXPECT_EQ(read.requested_bytes, n * 4);
  EXPECT_EQ(read.sector_bytes, 8 * n * 4);  // one sector per lane: 32 instead of 4
  EXPECT_DOUBLE_EQ(read.efficiency(), 0.125);
  EXPECT_EQ(c.global[1].sector_bytes, n * 4);  // the writes stay coalesced
  EXPECT_EQ(c.dram_read_bytes, 8 * n * 4);
}

TEST(Traffic, AnL2SmallerThanTheReuseDistanceMissesAgain) {
  // Two passes over 4 KiB: a 64 KiB L2 keeps it, a 1 KiB one does not.
  const char* body = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> in, Tensor<float, 1, int> out) {
  float s = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) s += SL_LD(0, in.data, j);
  SL_ST(1, out.data, threadIdx.x, s);
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*static_cast<Tensor<float, 1, int>*>(p[0]),
                  *static_cast<Tensor<float, 1, int>*>(p[1]));
}
#endif
)";
  Kernel k;
  k.body = body;
  k.sites = {site(TraceSite::Kind::Read, 0), site(TraceSite::Kind::Write, 1)};
  k.buffers = {global("in"), global("out")};
  std::vector<float> in(1024, 1.0f), out(32);
  EXPECT_EQ(run(k, dims1(1, 32), {arg(in), arg(out)}, 64 << 10).dram_read_bytes, 4096);
  EXPECT_EQ(run(k, dims1(1, 32), {arg(in), arg(out)}, 1 << 10).dram_read_bytes, 2 * 4096);
}

const char* kTranspose = R"(
// A 32x32 tile of a [64, 64] matrix per block of (32, 8) threads.
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> in, Tensor<float, 1, int> out) {
  SL_DYNAMIC_SMEM(smem);
  float* tile = reinterpret_cast<float*>(smem);
  const int x = blockIdx.x * 32 + threadIdx.x, y0 = blockIdx.y * 32;
  for (int r = threadIdx.y; r < 32; r += 8)
    SL_ST(1, tile, r * PITCH + threadIdx.x, SL_LD(0, in.data, (y0 + r) * 64 + x));
  SL_SYNC(2);
  const int ox = blockIdx.y * 32 + threadIdx.x, oy0 = blockIdx.x * 32;
  for (int r = threadIdx.y; r < 32; r += 8)
    SL_ST(4, out.data, (oy0 + r) * 64 + ox, SL_LD(3, tile, threadIdx.x * PITCH + r));
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) {
  schedlab_kernel(*static_cast<Tensor<float, 1, int>*>(p[0]),
                  *static_cast<Tensor<float, 1, int>*>(p[1]));
}
#endif
)";

TrafficCounts transpose(int pitch) {
  Kernel k;
  k.body = "#define PITCH " + std::to_string(pitch) + "\n" + kTranspose;
  k.barrier = true;
  TraceBuffer tile;
  tile.name = tile.label = "tile";
  tile.space = MemorySpace::Shared;
  tile.elem_bytes = 4;
  tile.elements = 32 * pitch;
  tile.shared_offset = 0;
  TraceSite sync;
  sync.kind = TraceSite::Kind::Barrier;
  k.sites = {site(TraceSite::Kind::Read, 0), site(TraceSite::Kind::Write, 2), sync,
             site(TraceSite::Kind::Read, 2), site(TraceSite::Kind::Write, 1)};
  k.buffers = {global("in"), global("out"), tile};
  std::vector<float> in(64 * 64, 1.0f), out(64 * 64);
  LaunchDims d;
  d.grid = {2, 2, 1};
  d.block = {32, 8, 1};
  d.shared_bytes = size_t(32 * pitch * 4);
  // The tile's elements are fixed above; run() sets only the globals'.
  std::vector<TensorArg> args = {arg(in), arg(out)};
  return run(k, d, args);
}

TEST(Traffic, UnpaddedTileColumnReadsConflict32Ways) {
  TrafficCounts c = transpose(32);
  ASSERT_EQ(c.shared.size(), 2u);
  const auto& write = c.shared[0].is_write ? c.shared[0] : c.shared[1];
  const auto& read = c.shared[0].is_write ? c.shared[1] : c.shared[0];
  EXPECT_DOUBLE_EQ(write.conflict_ways(), 1.0);  // rows: 32 lanes in 32 banks
  EXPECT_DOUBLE_EQ(read.conflict_ways(), 32.0);  // a column: every lane in one bank
  EXPECT_EQ(read.requests, 4 * 32);              // 4 blocks, 8 warps, 4 rows each
  EXPECT_EQ(read.wavefronts, 32 * read.requests);
  EXPECT_DOUBLE_EQ(c.bank_conflict_ways(), 32.0);
  for (const auto& g : c.global) EXPECT_DOUBLE_EQ(g.efficiency(), 1.0) << g.tensor;
}

TEST(Traffic, PaddedTileHasNoConflicts) {
  TrafficCounts c = transpose(33);
  ASSERT_EQ(c.shared.size(), 2u);
  for (const auto& s : c.shared) EXPECT_DOUBLE_EQ(s.conflict_ways(), 1.0);
  EXPECT_EQ(c.smem_wavefronts(), c.smem_ideal_wavefronts());
}

TEST(SharedWavefronts, VectorsAreServedInPhases) {
  using Lanes = std::vector<std::pair<int64_t, int>>;
  Lanes v16(32), v8(32), bcast(32), two_way(32);
  for (int l = 0; l < 32; ++l) {
    v16[size_t(l)] = {16 * l, 16};    // 512 contiguous bytes: 4 phases of 8 lanes
    v8[size_t(l)] = {8 * l, 8};       // 256 bytes: 2 phases of 16 lanes
    bcast[size_t(l)] = {0, 4};        // one word for every lane
    two_way[size_t(l)] = {8 * l, 4};  // stride 2 words: 2 lanes per bank
  }
  EXPECT_EQ(schedlab::model::shared_wavefronts(v16, 32), std::make_pair(int64_t(4), int64_t(4)));
  EXPECT_EQ(schedlab::model::shared_wavefronts(v8, 32), std::make_pair(int64_t(2), int64_t(2)));
  EXPECT_EQ(schedlab::model::shared_wavefronts(bcast, 32), std::make_pair(int64_t(1), int64_t(1)));
  EXPECT_EQ(schedlab::model::shared_wavefronts(two_way, 32),
            std::make_pair(int64_t(2), int64_t(1)));
  Lanes idle(32, {0, 0});
  EXPECT_EQ(schedlab::model::shared_wavefronts(idle, 32), std::make_pair(int64_t(0), int64_t(0)));
}

TEST(L2Model, EvictsTheLeastRecentAndWritesBackDirtySectors) {
  L2Model l2(64);  // two sectors
  l2.touch(1, false);
  l2.touch(2, true);
  l2.touch(1, false);                  // hit
  l2.touch(3, false);                  // evicts 2 (dirty): one write-back
  EXPECT_EQ(l2.read_bytes(), 2 * 32);  // the load misses of 1 and 3; a store fetches nothing
  EXPECT_EQ(l2.write_bytes(), 32);
  l2.touch(3, true);
  l2.flush();  // 3 is dirty
  EXPECT_EQ(l2.write_bytes(), 64);
}

}  // namespace

// ---- dependent DRAM round trips of a block (the floor's chain)

TEST(BlockRoundTrips, PlainLoadsWaitInTheirIntervalCopiesAtTheirLanding) {
  using schedlab::model::block_round_trips;
  using Reads = std::map<uint64_t, int64_t>;
  using Lands = std::map<uint64_t, uint64_t>;
  // Plain loads: one round trip per interval with a load (the old count).
  EXPECT_EQ(block_round_trips(4, Reads{{0, 3}, {2, 1}, {4, 8}}, {}), 3);
  EXPECT_EQ(block_round_trips(4, {}, {}), 0);
  // cp.async landing in the interval it was issued in (wait_group 0): as plain.
  EXPECT_EQ(block_round_trips(3, {}, Lands{{0, 0}, {1, 1}, {2, 2}, {3, 3}}), 4);
  // A circular buffer of 3 stages, one interval per K step: the copy of
  // step i + 2 is issued in step i before the wait that lands step i, so
  // three round trips overlap: 9 steps take 3 round trips, not 9.
  Lands pipelined{{0, 0}, {1, 0}, {2, 0}};
  for (uint64_t i = 3; i < 9; ++i) pipelined[i] = i - 2;
  EXPECT_EQ(block_round_trips(8, {}, pipelined), 3);
  // A plain load in between still waits for its own round trip.
  EXPECT_EQ(block_round_trips(8, Reads{{4, 1}}, pipelined), 4);
}
