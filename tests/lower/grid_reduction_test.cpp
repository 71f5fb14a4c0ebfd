// Grid reductions (reduction axes bound to BIDx/BIDy) on the CPU backend (or,
// built as lower_grid_reduction_gpu_test, the CUDA backend), against the
// reference: row sums with the reduction split over blocks
// (serial, block + grid, rfactor), column sums with the rows over BIDy or
// BIDx, a full reduction over one and over two block dimensions, row max, every
// reduction op and grid-reducible dtype with several grid reductions in one
// kernel, an f16 input reduced in f32, the
// example schedule configs/schedules/row_sum_grid.sched, repeated launches
// that reuse the same workspaces (the semaphores reset themselves), and the
// user errors. Every generated unit also compiles with NVRTC for sm_90.
// SCHEDLAB_DUMP_KERNELS=1 prints every kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/lower.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::ParallelType;
using ir::TensorView;
using ::testing::HasSubstr;

/// Skips on the CUDA backend without a device (lower_test_util.h).
using GridReduction = BackendTest;

/// N = 3 rows of K = 1, 31, 33, 1000, 4096 and 100000.
std::vector<ir::SizeBindings> row_sizes() {
  std::vector<ir::SizeBindings> r;
  for (int64_t k : {1, 31, 33, 1000, 4096, 100000}) r.push_back({{"N", 3}, {"K", k}});
  return r;
}

/// N = 1, 31, 33, 1000, 4096 and 100000 rows (reduced), K = 5 columns.
std::vector<ir::SizeBindings> col_sizes() {
  std::vector<ir::SizeBindings> r;
  for (int64_t n : {1, 31, 33, 1000, 4096, 100000}) r.push_back({{"N", n}, {"K", 5}});
  return r;
}

/// Lowers the scheduled `def`, checks that it has a grid reduction and that
/// NVRTC accepts it; returns the prepared kernel.
runtime::PreparedKernel prepare_grid(const frontend::FusionDefinition& def,
                                     const ir::SizeBindings& sizes,
                                     const runtime::KernelOptions& options = {}) {
  runtime::PreparedKernel p = prepare_or_report(def, sizes, options);
  EXPECT_THAT(p.source.source, HasSubstr("sl_grid_reduce<"));
  int workspaces = 0;
  for (const kir::Param& param : p.kernel.params)
    workspaces += param.source == kir::Param::Source::GridWorkspace;
  EXPECT_GE(workspaces, 2) << "partials and semaphores";
  expect_nvrtc_accepts(p.source);
  return p;
}

void expect_matches(const frontend::FusionDefinition& def, const frontend::FusionDefinition& plain,
                    const std::vector<ir::SizeBindings>& all_sizes) {
  expect_matches_at(def, plain, prepare_grid(def, all_sizes.front()), all_sizes,
                    [](const auto& pl, const auto& p, auto& c, const auto& sz) {
                      return run_and_compare(pl, p, c, sz);
                    });
}

void check(const std::string& fusion, const Schedule& schedule,
           const std::vector<ir::SizeBindings>& sizes) {
  auto def = load(fusion);
  auto plain = load(fusion);
  schedule(*def.fusion);
  expect_matches(def, plain, sizes);
}

/// [N, ceilDiv(K, chunk), chunk] bound BIDy, BIDx, serial: each block sums a
/// chunk of a row serially, the last block of the row combines the chunks.
Schedule row_serial_grid(const std::string& out, int64_t chunk) {
  return [=](Fusion& f) {
    TensorView* y = named(f, out);
    y->split(1, chunk);
    y->parallelize(0, ParallelType::BIDy);
    y->parallelize(1, ParallelType::BIDx);
    propagate_and_inline(f, y);
  };
}

/// [N, ceilDiv(ceilDiv(K, 32), serial), serial, 32] bound serial, BIDx,
/// serial, TIDx: every block loops over the rows, and each row is a block
/// reduction and then a grid reduction.
Schedule row_block_grid(const std::string& out, int64_t serial) {
  return [=](Fusion& f) {
    TensorView* y = named(f, out);
    y->split(1, 32)->split(1, serial);
    y->parallelize(1, ParallelType::BIDx);
    y->parallelize(3, ParallelType::TIDx);
    propagate_and_inline(f, y);
  };
}

TEST_F(GridReduction, RowSumSerialPerBlock) {
  check("row_sum", row_serial_grid("y", 256), row_sizes());
}

TEST_F(GridReduction, RowSumBlockAndGrid) {
  check("row_sum", row_block_grid("y", 64), row_sizes());
}

TEST_F(GridReduction, RowMax) {
  check("row_max", row_serial_grid("y", 512), row_sizes());
  check("row_max", row_block_grid("y", 16), row_sizes());
}

TEST_F(GridReduction, RowSumRfactor) {
  // rfactor: partials[N, ceilDiv(K, chunk) (BIDx), r chunk (serial)], then
  // y[N, r ceilDiv(K, chunk)] reduces the chunks' partials over BIDx.
  check(
      "row_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(1, 512);
        TensorView* partials = sched::rfactor(y, {2});
        partials->parallelize(0, ParallelType::BIDy);
        partials->parallelize(1, ParallelType::BIDx);
        propagate_and_inline(f, partials);
      },
      row_sizes());
}

TEST_F(GridReduction, ColSumRowsOnBIDy) {
  // [ceilDiv(N, 1024), 1024, ceilDiv(K, 32), 32] bound BIDy, serial, BIDx, TIDx.
  check(
      "col_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(0, 1024);
        y->split(2, 32);
        y->parallelize(0, ParallelType::BIDy);
        y->parallelize(2, ParallelType::BIDx);
        y->parallelize(3, ParallelType::TIDx);
        propagate_and_inline(f, y);
      },
      col_sizes());
}

TEST_F(GridReduction, ColSumRowsOnBIDx) {
  // [ceilDiv(N, 512), 512, K] bound BIDx, serial, TIDx (a thread per column).
  check(
      "col_sum",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->split(0, 512);
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(2, ParallelType::TIDx);
        propagate_and_inline(f, y);
      },
      col_sizes());
}

TEST_F(GridReduction, SumAllOverBIDx) {
  // [ceilDiv(N*K, 2048), 64, 32] bound BIDx, serial, TIDx: a 0-d result.
  check(
      "sum_all",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->merge(0)->split(0, 32)->split(0, 64);
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(2, ParallelType::TIDx);
        propagate_and_inline(f, y);
      },
      row_sizes());
}

TEST_F(GridReduction, SumAllOverBIDxAndBIDy) {
  // [ceilDiv(N*K, 1024), 4, 256] bound BIDx, BIDy, serial: the partials of
  // blocks in two dimensions.
  check(
      "sum_all",
      [](Fusion& f) {
        TensorView* y = named(f, "y");
        y->merge(0)->split(0, 256)->split(0, 4);
        y->parallelize(0, ParallelType::BIDx);
        y->parallelize(1, ParallelType::BIDy);
        propagate_and_inline(f, y);
      },
      row_sizes());
}

TEST_F(GridReduction, EveryOpAndTypeSeveralInOneKernel) {
  // Five grid reductions in one kernel, each with its own workspaces: i64 and
  // f64 sums, i32 max and min, an f64 product and an f64 max.
  const char* text = R"(
fusion: grid_types
inputs:
  a: {dtype: i64, shape: [N, K], range: [-9, 9]}
  b: {dtype: f64, shape: [N, K], range: [0.999, 1.001]}
  c: {dtype: i32, shape: [N, K], range: [-9, -1]}
body: |
  s = sum(a, axis=1)
  d = sum(b, axis=1)
  q = max(c, axis=1)
  r = min(c, axis=1)
  p = prod(b, axis=1)
  m = max(b, axis=1)
outputs: [s, d, q, r, p, m]
)";
  auto def = frontend::parse_fusion_text(text, "grid_types");
  auto plain = frontend::parse_fusion_text(text, "grid_types");
  for (const char* out : {"s", "d", "q", "r", "p", "m"}) {
    TensorView* t = named(*def.fusion, out);
    t->split(1, 64);
    t->parallelize(0, ParallelType::BIDy);
    t->parallelize(1, ParallelType::BIDx);
  }
  // One size-generic kernel, run at every K.
  runtime::PreparedKernel p = prepare_grid(def, {{"N", 3}, {"K", 9}}, runtime::KernelOptions{true});
  int workspaces = 0;
  for (const kir::Param& param : p.kernel.params)
    workspaces += param.source == kir::Param::Source::GridWorkspace;
  EXPECT_EQ(workspaces, 12);
  auto compiled = test_backend().compile(p.source);
  for (int64_t k : {1, 33, 1000, 4096})
    EXPECT_EQ(
        run_and_compare(plain, p, *compiled, {{"N", 3}, {"K", k}}),
        "")
        << k;
}

TEST_F(GridReduction, HalfInputReducesInF32) {
  // An f16 input reduced in f32, which a grid reduction supports; the
  // reduction itself is never of a half type. (sum(x) of f16 is the f32 sum
  // cast back to f16, a consumer a grid reduction's kernel cannot hold: the
  // segmenter gives the cast a kernel of its own. Here the f32 sum is the output.)
  const char* text = R"(
fusion: half_sum
inputs:
  x: {dtype: f16, shape: [N, K]}
body: |
  y = sum(cast(x, f32), axis=1)
outputs: [y]
)";
  auto def = frontend::parse_fusion_text(text, "half_sum");
  auto plain = frontend::parse_fusion_text(text, "half_sum");
  TensorView* y = named(*def.fusion, "y");
  ASSERT_EQ(y->dtype(), ir::DataType::F32);
  y->split(1, 64);
  y->parallelize(1, ParallelType::BIDx);
  propagate_and_inline(*def.fusion, y);
  expect_matches(def, plain, {{{"N", 3}, {"K", 1}}, {{"N", 3}, {"K", 1000}}});
}

TEST_F(GridReduction, ExampleSchedule) {
  auto def = load("row_sum");
  auto plain = load("row_sum");
  frontend::apply_schedule_file(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/row_sum_grid.sched", def, {});
  std::string text =
      codegen::print_kernel(runtime::prepare(*def.fusion, {{"N", 3}, {"K", 9}}).kernel);
  EXPECT_THAT(text, HasSubstr("sl_block_reduce<"));
  EXPECT_THAT(text, HasSubstr("sl_grid_reduce<"));
  expect_matches(def, plain, row_sizes());
}

/// Launches p twice on the same buffers, zeroed once: the second launch must
/// not see the first one's semaphores, which the last blocks reset to 0.
TEST_F(GridReduction, RepeatedLaunchReusesResetSemaphores) {
  auto def = load("row_sum");
  auto plain = load("row_sum");
  row_block_grid("y", 4)(*def.fusion);
  ir::SizeBindings sizes{{"N", 3}, {"K", 1000}};
  runtime::PreparedKernel p = prepare_grid(def, sizes);
  auto compiled = test_backend().compile(p.source);
  runtime::Backend& b = test_backend();
  const kir::Kernel& k = p.kernel;
  runtime::LaunchDims dims = runtime::launch_dims(k, sizes);
  EXPECT_GT(dims.grid[0], 1);
  std::vector<runtime::TensorArg> args;
  std::vector<size_t> bytes;
  for (const kir::Param& param : k.params) {
    runtime::TensorArg a;
    a.dtype = param.buffer->dtype;
    a.sizes = runtime::param_shape(param, dims, sizes);
    a.strides.assign(a.sizes.size(), 1);
    for (size_t i = a.sizes.size(); i-- > 1;) a.strides[i - 1] = a.strides[i] * a.sizes[i];
    int64_t n = 1;
    for (int64_t s : a.sizes) n *= s;
    bytes.push_back(static_cast<size_t>(n * ir::dtype_size(a.dtype)));
    a.data = b.alloc(bytes.back());
    b.memset_zero(a.data, bytes.back());
    args.push_back(std::move(a));
  }
  ASSERT_EQ(k.params[0].source, kir::Param::Source::Input);
  ASSERT_EQ(k.params[1].source, kir::Param::Source::Output);
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto inputs = ref::make_inputs(*plain.fusion, sizes, seed, plain.input_ranges);
    auto want = ref::evaluate(*plain.fusion, inputs, sizes);
    std::vector<float> x(inputs[0].data.begin(), inputs[0].data.end());
    b.copy_to_device(args[0].data, x.data(), bytes[0]);
    b.launch(*compiled, dims, args);
    std::vector<float> y(3);
    b.copy_to_host(y.data(), args[1].data, bytes[1]);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(y[i], want[0].data[i], 1e-3) << "launch " << seed << ", row " << i;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (!k.params[i].semaphore) continue;
      std::vector<int32_t> sem(bytes[i] / 4);
      b.copy_to_host(sem.data(), args[i].data, bytes[i]);
      for (int32_t s : sem) EXPECT_EQ(s, 0) << "a semaphore not reset after launch " << seed;
    }
  }
  for (auto& a : args) b.free(a.data);
  // And through execute, which zeroes the workspaces per launch.
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(run_and_compare(plain, p, *compiled, sizes, 11 + i), "");
}

TEST_F(GridReduction, ResultReadInTheSameKernelIsAUserError) {
  auto def = load("softmax");
  Fusion& f = *def.fusion;
  // The max over the row (m is its keepdim broadcast), read by x - m.
  TensorView* max = nullptr;
  for (TensorView* t : f.tensors())
    if (!max && t->definition() && t->definition()->is<ir::ReductionOp>()) max = t;
  ASSERT_NE(max, nullptr);
  max->split(1, 32);
  max->parallelize(1, ParallelType::BIDx);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              HasSubstr("a grid reduction's result is read inside the same kernel; expected it "
                        "to be a fusion output (segmentation comes later)"));
}

TEST_F(GridReduction, BIDzIsAUserError) {
  auto def = load("col_sum");
  named(*def.fusion, "y")->parallelize(0, ParallelType::BIDz);
  EXPECT_THAT(user_error_of([&] { lower::lower(*def.fusion); }),
              HasSubstr("is a Reduction bound to BIDz"));
}

}  // namespace
}  // namespace schedlab::lower::testing
