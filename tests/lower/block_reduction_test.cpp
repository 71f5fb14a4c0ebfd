// Block reductions (reduction axes bound to TIDx/TIDy/TIDz) on the CPU
// backend (or, built as lower_block_reduction_gpu_test, the CUDA backend),
// against the reference: inner and outer reductions, reductions over
// TIDy and over TIDx and TIDy together, block + rfactor, several rows per
// block, NaN propagation of max, persistent softmax, layernorm and rmsnorm
// (the row in registers, or in a workspace), the example schedule
// configs/schedules/softmax_block.sched, a repeated launch, Shared buffers
// over symbolic extents (sized at launch, and the launch error above the
// device limit), and the passes' guarantees (no block reduction under an
// unswitched branch, the workspace in dynamic shared memory, one if per
// predicate). Every generated unit also compiles with NVRTC for
// sm_90. SCHEDLAB_DUMP_KERNELS=1 prints every kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/lower.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::LoopTransform;
using ir::ParallelType;
using ir::TensorView;
using ::testing::HasSubstr;

/// Skips on the CUDA backend without a device (lower_test_util.h).
using BlockReduction = BackendTest;

/// N = 3 rows of K = 1, 31, 32, 33 and 1000: one element, around a warp, and
/// many more elements than threads.
std::vector<ir::SizeBindings> row_sizes() {
  std::vector<ir::SizeBindings> r;
  for (int64_t k : {1, 31, 32, 33, 1000}) r.push_back({{"N", 3}, {"K", k}});
  return r;
}

/// The same for an outer reduction (N is reduced): N = 1, 31, 32, 33, 1000
/// rows, K = 5 columns.
std::vector<ir::SizeBindings> col_sizes() {
  std::vector<ir::SizeBindings> r;
  for (int64_t n : {1, 31, 32, 33, 1000}) r.push_back({{"N", n}, {"K", 5}});
  return r;
}

/// Lowers the scheduled `def` and checks that it has a block reduction and
/// that NVRTC accepts it; returns the prepared kernel.
runtime::PreparedKernel prepare_block(const frontend::FusionDefinition& def,
                                      const ir::SizeBindings& sizes) {
  runtime::PreparedKernel p = prepare_or_report(def, sizes);
  EXPECT_THAT(p.source.source, HasSubstr(" sl_r = sl_block_reduce<"));
  EXPECT_TRUE(p.kernel.has_barrier) << "a block reduction synchronizes the block";
  EXPECT_GT(p.kernel.reduce_workspace_bytes, 0);
  expect_nvrtc_accepts(p.source);
  return p;
}

/// Lowers, compiles and runs the scheduled `def` at every size binding,
/// comparing with the reference evaluation of `plain`.
void expect_matches(const frontend::FusionDefinition& def, const frontend::FusionDefinition& plain,
                    const std::vector<ir::SizeBindings>& all_sizes) {
  expect_matches_at(def, plain, prepare_block(def, all_sizes.front()), all_sizes,
                    [](const auto& pl, const auto& p, auto& c, const auto& sz) {
                      return run_and_compare(pl, p, c, sz);
                    });
}

/// Loads `fusion`, schedules it and checks it at `sizes`.
void check(const std::string& fusion, const Schedule& schedule,
           const std::vector<ir::SizeBindings>& sizes) {
  auto def = load(fusion);
  auto plain = load(fusion);
  schedule(*def.fusion);
  expect_matches(def, plain, sizes);
}

/// An inner reduction y[N, rK]: a row per block, K split by `threads`:
/// [N, ceilDiv(K, threads), threads] bound BIDx, serial, TIDx.
Schedule inner(const std::string& out, int64_t threads) {
  return [=](Fusion& f) {
    TensorView* y = named(f, out);
    y->split(1, threads);
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(2, ParallelType::TIDx);
    propagate_and_inline(f, y);
  };
}

/// The persistent schedule: [N, persist, ceilDiv(K, persist)] bound BIDx,
/// serial, TIDx, so each thread keeps `persist` elements of the row in
/// registers (buffers inlined at the row are [persist]).
Schedule persistent(const std::string& out, int64_t persist) {
  return [=](Fusion& f) {
    TensorView* y = named(f, out);
    y->split(1, persist, /*inner_split=*/false);
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(2, ParallelType::TIDx);
    propagate_and_inline(f, y);
  };
}

TEST_F(BlockReduction, RowSum) {
  check("row_sum", inner("y", 32), row_sizes());
  check("row_sum", inner("y", 128), row_sizes());
}

TEST_F(BlockReduction, RowMax) {
  check("row_max", inner("y", 32), row_sizes());
  check("row_max", persistent("y", 4), row_sizes());
}

TEST_F(BlockReduction, RowSumWholeRowOnThreads) {
  // No serial part: the reduction axis itself is bound to TIDx (K threads).
  check(
      "row_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(1, ParallelType::TIDx);
      },
      row_sizes());
}

TEST_F(BlockReduction, RowMaxPropagatesNaN) {
  auto def = load("row_max");
  auto plain = load("row_max");
  inner("y", 32)(*def.fusion);
  ir::SizeBindings sizes{{"N", 4}, {"K", 33}};
  runtime::PreparedKernel p = prepare_block(def, sizes);
  auto compiled = test_backend().compile(p.source);
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 3, plain.input_ranges);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  inputs[0].data[1 * 33 + 5] = nan;    // row 1: a NaN in the serial part of thread 5
  inputs[0].data[2 * 33 + 32] = nan;   // row 2: in the tail (thread 0, second iteration)
  inputs[0].data[3 * 33 + 0] = nan;    // row 3: NaN first, then larger values
  inputs[0].data[3 * 33 + 1] = 100.0;  // (a max that ignored the NaN would return 100)
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  auto got = runtime::execute(test_backend(), *compiled, p, inputs, sizes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(std::isnan(got[0].data[0]));
  for (int row : {1, 2, 3}) EXPECT_TRUE(std::isnan(got[0].data[static_cast<size_t>(row)])) << row;
  auto c = ref::compare(got[0], want[0], ref::Tolerance::error_bound(ir::DataType::F32));
  EXPECT_TRUE(c.ok) << c.mismatches << " mismatches, first " << c.first_mismatch;
}

TEST_F(BlockReduction, SeveralRowsPerBlockOnTIDy) {
  // [ceilDiv(N, 4), 4, ceilDiv(K, 32), 32] bound BIDx, TIDy, serial, TIDx:
  // four independent block reductions per block, one per threadIdx.y.
  check("row_sum",
        [](Fusion& f) {
          TensorView* y = named(f, "y");
          y->split(1, 32)->split(0, 4);
          y->parallelize(0, ParallelType::BIDx);
          y->parallelize(1, ParallelType::TIDy);
          y->parallelize(3, ParallelType::TIDx);
          propagate_and_inline(f, y);
        },
        {{{"N", 3}, {"K", 1}}, {{"N", 7}, {"K", 33}}, {{"N", 9}, {"K", 1000}}});
}

TEST_F(BlockReduction, ReductionOverTIDy) {
  // Rows on TIDx, the reduction on TIDy: [ceilDiv(N, 32), 32, ceilDiv(K, 8), 8]
  // bound BIDx, TIDx, serial, TIDy.
  check("row_max",
        [](Fusion& f) {
          TensorView* y = named(f, "y");
          y->split(1, 8)->split(0, 32);
          y->parallelize(0, ParallelType::BIDx);
          y->parallelize(1, ParallelType::TIDx);
          y->parallelize(3, ParallelType::TIDy);
          propagate_and_inline(f, y);
        },
        {{{"N", 3}, {"K", 1}}, {{"N", 33}, {"K", 31}}, {{"N", 40}, {"K", 1000}}});
}

TEST_F(BlockReduction, ReductionOverTIDxAndTIDy) {
  // [N, ceilDiv(ceilDiv(K, 32), 4), 4, 32] bound BIDx, serial, TIDy, TIDx.
  check(
      "row_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(1, 32)->split(1, 4);
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(2, ParallelType::TIDy);
        y->parallelize(3, ParallelType::TIDx);
        propagate_and_inline(f, y);
      },
      row_sizes());
}

TEST_F(BlockReduction, ColumnSum) {
  // The outer reduction: y[rN, K] reordered to [K, rN]; columns on BIDx and
  // TIDy, the rows reduced over TIDx: [ceilDiv(K, 4), 4, ceilDiv(N, 32), 32].
  check(
      "col_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->reorder({{0, 1}, {1, 0}});
        y->split(1, 32)->split(0, 4);
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(1, ParallelType::TIDy);
        y->parallelize(3, ParallelType::TIDx);
        propagate_and_inline(f, y);
      },
      col_sizes());
}

TEST_F(BlockReduction, ColumnSumWithSerialColumnsInsideTheReduction) {
  // [ceilDiv(N, 32), 32, ceilDiv(K, 2), 2] bound serial, TIDx, BIDx, serial:
  // the reduction loops enclose a serial column loop of 2, so each thread
  // keeps two partials (y is a Global output: a register accumulator of 2).
  check(
      "col_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(1, 2)->split(0, 32);
        y->parallelize(1, ParallelType::TIDx);
        y->parallelize(2, ParallelType::BIDx);
        propagate_and_inline(f, y);
      },
      col_sizes());
}

TEST_F(BlockReduction, BlockAndRfactor) {
  // rfactor: partials[N, ceilDiv(K, 32) (reduced serially), 32 (TIDx)], then
  // y[N, r32] reduces the 32 partials over TIDx.
  check(
      "row_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(1, 32);
        TensorView* partials = sched::rfactor(y, {1});
        partials->parallelize(0, ParallelType::BIDx);
        partials->parallelize(2, ParallelType::TIDx);
        propagate_and_inline(f, partials);
      },
      row_sizes());
}

// ---------------------------------------------------------------------------
// A reduction whose reduction loops enclose an iteration loop, as nvFuser's
// [BIDx, serial R, TIDx, R] rfactor order: the accumulator is initialised
// once, before its first reduction loop, never again inside the serial one
// (issue: the rfactor partial was reset on every serial iteration).

struct ScriptCase {
  std::string name;
  std::string fusion;
  std::string script;
  bool block;  ///< whether the kernel has a block reduction
  std::vector<ir::SizeBindings> sizes;
};

/// GoogleTest prints a case by its name.
void PrintTo(const ScriptCase& c, std::ostream* os) { *os << c.name; }

class ReductionAroundIterationLoop : public BackendTestWithParam<ScriptCase> {};

TEST_P(ReductionAroundIterationLoop, MatchesReference) {
  const ScriptCase& c = GetParam();
  auto def = load(c.fusion);
  auto plain = load(c.fusion);
  frontend::apply_schedule_text(c.script, c.name + ".sched", def, {});
  runtime::PreparedKernel p =
      c.block ? prepare_block(def, c.sizes.front()) : prepare_or_report(def, c.sizes.front());
  if (!c.block) expect_nvrtc_accepts(p.source);
  expect_matches_at(def, plain, p, c.sizes, [](const auto& pl, const auto& pk, auto& cc, const auto& sz) {
    return run_and_compare(pl, pk, cc, sz);
  });
}

/// row_sum at N = 3 and ragged K (none, part of one, and many split
/// iterations), and N = 1.
std::vector<ir::SizeBindings> ragged_rows() {
  std::vector<ir::SizeBindings> r;
  for (int64_t k : {1, 7, 31, 32, 33, 1000}) r.push_back({{"N", 3}, {"K", k}});
  r.push_back({{"N", 1}, {"K", 9}});
  return r;
}

/// col_sum at ragged N (reduced), K = 5 and K = 33.
std::vector<ir::SizeBindings> ragged_cols() {
  std::vector<ir::SizeBindings> r;
  for (int64_t n : {1, 7, 31, 32, 33, 1000}) r.push_back({{"N", n}, {"K", 5}});
  r.push_back({{"N", 9}, {"K", 33}});
  return r;
}

/// The rfactor of the issue: y[N, rK] as [BIDx, serial R, TIDx, R4], the
/// partial keeps the two reduction axes ([1, 3]) around its TIDx axis.
std::string row_rfactor(bool cache, const std::string& extra) {
  return std::string(cache ? "c = cache_after(x)\n" : "") +
         "split(y, 1, 4)\n"
         "split(y, 1, 2)\n"
         "parallelize(y, 0, BIDx)\n"
         "parallelize(y, 2, TIDx)\n" +
         extra +
         "propagate_transformation(y)\n"
         "parallelize_all_like(y)\n"
         "p = rfactor(y, [1, 3])\n"
         "inline_most()\n";
}

INSTANTIATE_TEST_SUITE_P(
    All, ReductionAroundIterationLoop,
    ::testing::Values(
        ScriptCase{"rfactor_cached", "row_sum", row_rfactor(true, ""), true, ragged_rows()},
        ScriptCase{"rfactor_uncached", "row_sum", row_rfactor(false, ""), true, ragged_rows()},
        ScriptCase{"rfactor_unrolled", "row_sum", row_rfactor(true, "parallelize(y, 3, Unroll)\n"),
                   true, ragged_rows()},
        // The partial in Shared memory (a slot per thread), and the serial
        // reduction loop unrolled.
        ScriptCase{"rfactor_shared_partial_unrolled_serial", "row_sum",
                   "c = cache_after(x)\n"
                   "split(y, 1, 4)\n"
                   "split(y, 1, 2)\n"
                   "parallelize(y, 0, BIDx)\n"
                   "parallelize(y, 1, Unroll)\n"
                   "parallelize(y, 2, TIDx)\n"
                   "propagate_transformation(y)\n"
                   "parallelize_all_like(y)\n"
                   "p = rfactor(y, [1, 3])\n"
                   "set_memory_type(p, shared)\n"
                   "inline_most()\n",
                   true, ragged_rows()},
        // The axis between the reduction axes serial: the partial keeps 2
        // accumulators per row, each initialised once.
        ScriptCase{"rfactor_serial_between", "row_sum",
                   "c = cache_after(x)\n"
                   "split(y, 1, 4)\n"
                   "split(y, 1, 2)\n"
                   "parallelize(y, 0, BIDx)\n"
                   "propagate_transformation(y)\n"
                   "parallelize_all_like(y)\n"
                   "p = rfactor(y, [1, 3])\n"
                   "inline_most()\n",
                   false, ragged_rows()},
        // No rfactor: the serial R outer of a TIDx R, one block reduction.
        ScriptCase{"block_serial_outer_of_tidx", "row_sum",
                   "c = cache_after(x)\n"
                   "split(y, 1, 4)\n"
                   "split(y, 1, 2)\n"
                   "parallelize(y, 0, BIDx)\n"
                   "parallelize(y, 2, TIDx)\n"
                   "propagate_transformation(y)\n"
                   "parallelize_all_like(y)\n"
                   "inline_most()\n",
                   true, ragged_rows()},
        // The outer reduction rfactored the same way: col_sum's y[rN, K] as
        // [K (BIDx), serial R, TIDx, R4].
        ScriptCase{"outer_rfactor", "col_sum",
                   "c = cache_after(x)\n"
                   "split(y, 0, 4)\n"
                   "split(y, 0, 2)\n"
                   "reorder(y, {3: 0, 0: 1, 1: 2, 2: 3})\n"
                   "parallelize(y, 0, BIDx)\n"
                   "parallelize(y, 2, TIDx)\n"
                   "propagate_transformation(y)\n"
                   "parallelize_all_like(y)\n"
                   "p = rfactor(y, [1, 3])\n"
                   "inline_most()\n",
                   true, ragged_cols()},
        // The outer reduction without rfactor, its columns on TIDx between
        // its two reduction loops: [ceilDiv(K, 32) (BIDx), serial R, 32
        // (TIDx), R4], accumulated straight into the Global output.
        ScriptCase{"outer_columns_between", "col_sum",
                   "c = cache_after(x)\n"
                   "split(y, 1, 32)\n"
                   "split(y, 0, 4)\n"
                   "reorder(y, {2: 0, 0: 1, 3: 2, 1: 3})\n"
                   "parallelize(y, 0, BIDx)\n"
                   "parallelize(y, 2, TIDx)\n"
                   "propagate_transformation(y)\n"
                   "parallelize_all_like(y)\n"
                   "inline_most()\n",
                   false, ragged_cols()}),
    [](const ::testing::TestParamInfo<ScriptCase>& info) { return info.param.name; });

TEST_F(BlockReduction, FromASharedCache) {
  // x staged through a Shared cache inside the serial reduction loop:
  // barriers and a block reduction in one kernel, the workspace placed after
  // the Shared buffer.
  auto def = load("row_sum");
  auto plain = load("row_sum");
  Fusion& f = *def.fusion;
  TensorView* x_cache = sched::cache_after(f.inputs()[0]);
  sched::set_memory_type(x_cache, ir::MemoryType::Shared);
  inner("y", 32)(f);
  kir::Kernel k = lower::lower(f);
  EXPECT_EQ(k.shared_bytes, 32 * 4);
  EXPECT_EQ(k.reduce_workspace_offset, 128);
  EXPECT_THAT(codegen::print_kernel(k), HasSubstr("SL_SYNC("));
  EXPECT_EQ(runtime::launch_dims(k, {{"N", 3}, {"K", 40}}).shared_bytes, 128u + 32 * 4);
  expect_matches(def, plain, row_sizes());
}

TEST_F(BlockReduction, IntoSharedMemory) {
  // softmax's max reduction kept in Shared memory: the threads accumulate in
  // registers, combine, and all store the row's result, which a barrier
  // orders before the reads.
  check(
      "softmax",
      [](Fusion& f) {
        persistent("y", 8)(f);
        sched::set_memory_type(sched::get_reduction_tvs(f).front(), ir::MemoryType::Shared);
      },
      row_sizes());
}

// ---------------------------------------------------------------------------
// Shared buffers over symbolic extents: sized at launch in dynamic shared
// memory, after the block-reduction workspace.

/// softmax with x staged in a Shared cache that holds the whole row (the max
/// and the normalization read it): [N, ceilDiv(K, 128), 128] bound BIDx,
/// serial, TIDx; the cache, inlined at the row, spans ceilDiv(K, 128) * 128
/// elements, a symbolic extent.
void softmax_row_in_shared(Fusion& f) {
  TensorView* x_cache = sched::cache_after(f.inputs()[0]);
  sched::set_memory_type(x_cache, ir::MemoryType::Shared);
  inner("y", 128)(f);
}

TEST_F(BlockReduction, SharedRowOfSymbolicSize) {
  auto def = load("softmax");
  auto plain = load("softmax");
  softmax_row_in_shared(*def.fusion);
  kir::Kernel k = lower::lower(*def.fusion);
  ASSERT_EQ(k.dynamic_shared.size(), 1u);
  EXPECT_EQ(k.dynamic_shared[0]->size, -1);
  // The workspace (128 threads x 4 B) first, then the row: ceilDiv(K, 128) *
  // 128 floats at the next 16-byte boundary.
  EXPECT_EQ(runtime::launch_dims(k, {{"N", 3}, {"K", 1000}}).shared_bytes, 128u * 4 + 1024 * 4);
  EXPECT_EQ(runtime::launch_dims(k, {{"N", 3}, {"K", 1}}).shared_bytes, 128u * 4 + 128 * 4);
  std::string text = codegen::print_kernel(k);
  EXPECT_THAT(text, HasSubstr("// sized at launch"));
  EXPECT_THAT(text, HasSubstr("((sl_index_t)blockDim.x)"));
  std::vector<ir::SizeBindings> sizes = row_sizes();
  sizes.push_back({{"N", 2}, {"K", 20000}});  // an 80 KB row: above the 48 KiB default
  expect_matches(def, plain, sizes);
}

TEST_F(BlockReduction, SharedBuffersOfConstantAndSymbolicSize) {
  // A constant Shared buffer (the max, kept in Shared memory) before the
  // workspace, the row after it.
  check("softmax",
        [](Fusion& f) {
          softmax_row_in_shared(f);
          sched::set_memory_type(sched::get_reduction_tvs(f).front(), ir::MemoryType::Shared);
        },
        row_sizes());
}

TEST_F(BlockReduction, SharedRowAboveTheDeviceLimitIsALaunchError) {
  auto def = load("softmax");
  auto plain = load("softmax");
  softmax_row_in_shared(*def.fusion);
  ir::SizeBindings sizes{{"N", 2}, {"K", 100000}};  // 400 KB of row
  runtime::PreparedKernel p = prepare_block(def, sizes);
  auto compiled = test_backend().compile(p.source);
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 3, plain.input_ranges);
  std::string msg =
      user_error_of([&] { runtime::execute(test_backend(), *compiled, p, inputs, sizes); });
  EXPECT_THAT(msg, HasSubstr("launch: the kernel needs 400896 bytes of shared memory per block"));
  EXPECT_THAT(msg, HasSubstr("K=100000"));
  EXPECT_THAT(msg, HasSubstr("100096 x f32 = 400384 B (sized by the sizes)"));
  EXPECT_THAT(msg, HasSubstr("block-reduction workspace: 128 threads x 4 B"));
  EXPECT_THAT(msg, HasSubstr("backend allows at most"));
}

// ---------------------------------------------------------------------------
// Normalizations: softmax, log_softmax, layernorm and rmsnorm, with K split
// by the thread count (the serial part has ceilDiv(K, threads) iterations)
// and persistent (each thread keeps `persist` elements in registers).

using NormParam = std::tuple<std::string, std::string>;

class Normalization : public BackendTestWithParam<NormParam> {};

TEST_P(Normalization, MatchesReference) {
  const auto& [fusion, schedule] = GetParam();
  Schedule s = schedule == "threads_32"    ? inner("y", 32)
               : schedule == "threads_128" ? inner("y", 128)
                                           : persistent("y", 8);
  check(fusion, s, row_sizes());
}

INSTANTIATE_TEST_SUITE_P(
    All, Normalization,
    ::testing::Combine(::testing::Values("softmax", "log_softmax", "layernorm", "rmsnorm"),
                       ::testing::Values("threads_32", "threads_128", "persistent_8")),
    [](const ::testing::TestParamInfo<NormParam>& info) {
      return std::get<0>(info.param) + "__" + std::get<1>(info.param);
    });

TEST_F(BlockReduction, SoftmaxBlockScheduleFile) {
  const std::string path =
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/softmax_block.sched";
  auto def = load("softmax");
  auto plain = load("softmax");
  frontend::apply_schedule_file(path, def, {});
  std::vector<ir::SizeBindings> sizes = row_sizes();
  sizes.push_back({{"N", 33}, {"K", 1000}});
  sizes.push_back({{"N", 2}, {"K", 8192}});  // 1024 threads
  expect_matches(def, plain, sizes);

  // The time of the exec case (N=33, K=1000) on this backend, for the record.
  ir::SizeBindings at{{"N", 33}, {"K", 1000}};
  runtime::PreparedKernel p = runtime::prepare(*def.fusion, at);
  auto compiled = test_backend().compile(p.source);
  auto inputs = ref::make_inputs(*plain.fusion, at, 7, plain.input_ranges);
  std::vector<double> secs;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    runtime::execute(test_backend(), *compiled, p, inputs, at);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(secs.begin(), secs.end());
  std::printf("softmax_block N=33 K=1000: %.3f ms per execute (%s, median of 5)\n", secs[2] * 1e3,
              test_backend().name().c_str());
}

TEST_F(BlockReduction, RepeatedLaunchGivesTheSameResult) {
  auto def = load("layernorm");
  auto plain = load("layernorm");
  persistent("y", 8)(*def.fusion);
  ir::SizeBindings sizes{{"N", 5}, {"K", 333}};
  runtime::PreparedKernel p = prepare_block(def, sizes);
  auto compiled = test_backend().compile(p.source);
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 11, plain.input_ranges);
  auto first = runtime::execute(test_backend(), *compiled, p, inputs, sizes);
  auto second = runtime::execute(test_backend(), *compiled, p, inputs, sizes);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].data, second[0].data);
  EXPECT_EQ(run_and_compare(plain, p, *compiled, sizes, 11), "");
}

// ---------------------------------------------------------------------------
// What the passes guarantee.

TEST_F(BlockReduction, WorkspaceIsSizedByTheBlockAtLaunch) {
  auto def = load("softmax");
  persistent("y", 8)(*def.fusion);
  kir::Kernel k = lower::lower(*def.fusion);
  EXPECT_EQ(k.shared_bytes, 0);
  EXPECT_EQ(k.reduce_workspace_offset, 0);
  EXPECT_EQ(k.reduce_workspace_bytes, 4);
  auto dims = runtime::launch_dims(k, {{"N", 3}, {"K", 1000}});
  EXPECT_EQ(dims.block[0], 125);
  EXPECT_EQ(dims.shared_bytes, 125u * 4);
  std::string text = codegen::print_kernel(k);
  EXPECT_THAT(text, HasSubstr("SL_DYNAMIC_SMEM(sl_smem);"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "sl_block_reduce<true, false, false, [0-9]+, [0-9]+, [0-9]+, float>\\("));
  EXPECT_THAT(text, HasSubstr("SlOpMax()"));
  EXPECT_THAT(text, HasSubstr("SlOpSum()"));
  std::string log;
  runtime::nvrtc_compile(source_of(k), "sm_90", &log, kernel_cache_dir());
  EXPECT_EQ(log, "") << "NVRTC warns about the block reduction";
}

TEST_F(BlockReduction, GlobalOutputAccumulatesInRegisters) {
  // row_sum's y is the fusion output: threads keep partials in a register
  // accumulator and every thread of the row stores the result.
  auto def = load("row_sum");
  inner("y", 32)(*def.fusion);
  kir::Kernel k = lower::lower(*def.fusion);
  std::string text = codegen::print_kernel(k);
  EXPECT_THAT(text, HasSubstr("float T1_acc[1];"));
  // Every thread calls it; one whose element exists stores the result
  // (fuzz seed 1 case 4194: a slot past the end aliased a real one).
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "const float sl_r = sl_block_reduce<true, false, false, [0-9]+, [0-9]+, "
                        "[0-9]+, float>\\(SL_SITE\\([0-9]+\\), \\(.* \\? SL_LD\\([0-9]+, T1_acc, 0\\) "
                        ": 0\\.0f\\)"));
  EXPECT_THAT(text, ::testing::ContainsRegex("  if \\(.*\\) SL_ST\\([0-9]+, T1_acc, 0, sl_r\\);"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "SL_ST\\([0-9]+, T1\\.data, [^\n]*, SL_LD\\([0-9]+, T1_acc, 0\\)\\);"));
}

TEST_F(BlockReduction, StoresUnderOnePredicateShareOneIf) {
  // softmax_block's fused nest: the max's broadcast, x - max and exp store
  // under the same predicate, printed as one if; thread indices are locals.
  auto def = load("softmax");
  frontend::apply_schedule_file(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/softmax_block.sched", def, {});
  std::string text = codegen::print_kernel(lower::lower(*def.fusion));
  EXPECT_THAT(text, HasSubstr("  const sl_index_t sl_tx = threadIdx.x;\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "\\) \\{\n +SL_ST\\([0-9]+, T[0-9]+, 0, SL_LD\\([0-9]+, T[0-9]+, 0\\)\\);\n +"
                        "SL_ST\\([0-9]+, T[0-9]+, 0, \\(SL_LD\\([0-9]+, T0_in, [^\n]*\n +"
                        "SL_ST\\([0-9]+, T[0-9]+, [^\n]*, expf\\("));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("threadIdx.x)")));
}

TEST_F(BlockReduction, UnswitchKeepsABlockReductionOutOfBranches) {
  // Two rows per block, run serially and marked Unswitch: its nest holds a
  // block reduction, whose barriers must be reached by every thread, so the
  // nest is not split into predicated and unpredicated branches.
  auto def = load("row_sum");
  auto plain = load("row_sum");
  Fusion& f = *def.fusion;
  TensorView* y = named(f, "y");
  y->split(1, 32)->split(0, 2);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, LoopTransform::Unswitch);
  y->parallelize(3, ParallelType::TIDx);
  propagate_and_inline(f, y);
  kir::Kernel k = lower::lower(f);
  std::string text = codegen::print_kernel(k);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("else")));
  EXPECT_THAT(text, HasSubstr("sl_block_reduce<"));
  expect_matches(def, plain, {{{"N", 3}, {"K", 33}}, {{"N", 4}, {"K", 1000}}});
}

}  // namespace
}  // namespace schedlab::lower::testing
