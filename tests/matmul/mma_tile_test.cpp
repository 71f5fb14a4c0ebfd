// sched::mma_tile and the lowering of an MmaOp tile to mma.sync m16n8k16
// (core/lower/mma_tile.cpp): matmuls and linear layers of configs/fusions
// scheduled with a warp per CTA and an instruction tile per warp, run on the
// CPU backend (its exact emulation of mma.sync, core/codegen/mma.cuh) and
// compared with the reference of the unscheduled fusion at sizes that are and
// are not multiples of 16 x 8 x 16; NVRTC compiles the CUDA for sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/sched/sched.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::ParallelType;
using ir::TensorView;
using test_support::user_error_of;
using ::testing::HasSubstr;

using MmaTile = BackendTest;

/// fuse_mma, then [.., Mo BIDy, No BIDx, rKo, lane TIDx, fragment, k16]; the
/// operands staged in shared memory once per K step. m, n, k: the sum's axes.
TensorView* schedule_tile(Fusion& f, int m, int n, int k) {
  TensorView* mm = sched::fuse_mma(sched::get_reduction_tvs(f).at(0));
  const int b = mm->nloop() - 3;                  // leading batch axes stay outermost, serial
  mm->reorder({{m, b}, {n, b + 1}, {k, b + 2}});  // [.., M, N, rK]
  mm->split(b, 16);                               // [.., Mo, m16, N, rK]
  mm->split(b + 2, 8);                            // [.., Mo, m16, No, n8, rK]
  mm->split(b + 4, 16);                           // [.., Mo, m16, No, n8, rKo, k16]
  mm->reorder({{b + 1, b + 3}, {b + 2, b + 1}, {b + 3, b + 4}, {b + 4, b + 2}});
  sched::mma_tile(mm);  // [.., Mo, No, rKo, lane, frag, k16]
  mm->parallelize(b, ParallelType::BIDy);
  mm->parallelize(b + 1, ParallelType::BIDx);
  sched::propagate_transformation(mm);
  sched::parallelize_all_like(mm);
  const auto* op = mm->definition()->as<ir::MmaOp>();
  for (TensorView* operand : {op->a(), op->b()}) {
    operand->set_memory_type(ir::MemoryType::Shared);
  }
  sched::inline_most(f);
  for (TensorView* operand : {op->a(), op->b()}) sched::inline_at(operand, b + 3);
  return mm;
}

std::vector<ir::SizeBindings> sizes() {
  return {{{"M", 16}, {"N", 8}, {"K", 16}},
          {{"M", 130}, {"N", 70}, {"K", 48}},
          {{"M", 1}, {"N", 1}, {"K", 16}},
          {{"M", 2}, {"N", 3}, {"K", 5}},
          {{"M", 33}, {"N", 16}, {"K", 64}}};
}

void check(const std::string& fusion, int m, int n, int k) {
  auto def = load(fusion);
  auto plain = load(fusion);
  schedule_tile(*def.fusion, m, n, k);
  std::vector<ir::SizeBindings> all = sizes();
  if (fusion.starts_with("batched"))
    for (auto& s : all) s["B"] = 2;
  runtime::PreparedKernel p = prepare_or_report(def, all.front());
  EXPECT_THAT(p.source.source, HasSubstr("sl_mma_m16n8k16<"));
  expect_nvrtc_accepts(p.source);
  expect_matches_at(def, plain, p, all,
                    [](const auto& pl, const auto& pk, auto& c, const auto& sz) {
                      return run_and_compare(pl, pk, c, sz);
                    });
}

// matmul's sum is [M, rK, N]; linear's [M, N, rK]; the batched one [B, M, rK, N].
TEST_F(MmaTile, MatmulBf16) {
  check("matmul_bf16", 0, 2, 1);
}
TEST_F(MmaTile, MatmulF16) {
  check("matmul_f16", 0, 2, 1);
}
TEST_F(MmaTile, LinearBiasGeluBf16) {
  check("linear_bias_gelu_bf16", 0, 1, 2);
}
TEST_F(MmaTile, BatchedMatmulBf16) {
  check("batched_matmul_bf16", 1, 3, 2);
}

TEST(MmaTileSanitized, NoFindingAtEdges) {
  // Traced on the CPU backend: the race sanitizer sees every shared-memory
  // write of the operand tiles and the lanes' reads of each other's elements.
  for (const ir::SizeBindings& sz : {ir::SizeBindings{{"M", 130}, {"N", 70}, {"K", 48}},
                                     ir::SizeBindings{{"M", 2}, {"N", 3}, {"K", 5}}}) {
    auto def = load("matmul_bf16");
    auto plain = load("matmul_bf16");
    schedule_tile(*def.fusion, 0, 2, 1);
    runtime::PreparedKernel p = prepare_or_report(def, sz);
    auto inputs = ref::make_inputs(*plain.fusion, sz, 5, plain.input_ranges);
    auto want = ref::evaluate(*plain.fusion, inputs, sz);
    auto run = runtime::execute_sanitized(cpu_backend(), p, inputs, sz, "matmul_bf16");
    EXPECT_EQ(run.report, "") << sizes_str(sz);
    auto c = ref::compare(run.outputs.at(0), want.at(0), ref::Tolerance::error_bound(ir::DataType::BF16));
    EXPECT_TRUE(c.ok) << c.first_mismatch;
  }
}

/// The message of lowering `def` at 16x8x16.
std::string lowering_error(const frontend::FusionDefinition& def) {
  return user_error_of([&] { runtime::prepare(*def.fusion, {{"M", 16}, {"N", 8}, {"K", 16}}); });
}

TEST(MmaTileRules, OperandsInRegistersOrInsideTheTileAreRefused) {
  auto local = load("matmul_bf16");
  TensorView* mm = schedule_tile(*local.fusion, 0, 2, 1);
  mm->definition()->as<ir::MmaOp>()->a()->set_memory_type(ir::MemoryType::Local);
  // The generic rule (a Local tensor read by other threads) refuses it first.
  EXPECT_THAT(lowering_error(local), HasSubstr("computed by other threads"));
  auto inside = load("matmul_bf16");
  mm = schedule_tile(*inside.fusion, 0, 2, 1);
  sched::inline_at(mm->definition()->as<ir::MmaOp>()->b(), 5);
  EXPECT_THAT(lowering_error(inside), HasSubstr("inside the tile's loops (from 3)"));
}

TEST(MmaTileRules, AMovedTileAxisIsRefused) {
  auto def = load("matmul_bf16");
  TensorView* mm = schedule_tile(*def.fusion, 0, 2, 1);
  mm->axis(-2)->set_loop_transform(ir::LoopTransform::Unroll);
  EXPECT_THAT(lowering_error(def), HasSubstr("is no longer its innermost loop axes [lane 32"));
}

TEST(MmaTileRules, AnotherTIDxExtentIsRefused) {
  auto def = load("linear_bias_gelu_bf16");
  schedule_tile(*def.fusion, 0, 1, 2);
  // The bias's f32 copy in Shared memory over TIDx 4: threadIdx.x would no
  // longer be the lane alone.
  TensorView* bias = test_support::named(*def.fusion, "bias");
  TensorView* copy = bias->uses().at(0)->out();
  copy->set_memory_type(ir::MemoryType::Shared);
  copy->parallelize(1, ParallelType::TIDx);  // [No BIDx, 4 TIDx, 2]
  EXPECT_THAT(lowering_error(def), HasSubstr("expected every TIDx axis of the kernel to span 32"));
}

TEST(MmaTileRules, ScheduleErrorsNameTheTensor) {
  auto f32 = load("matmul_bf16");
  TensorView* mm = sched::fuse_mma(sched::get_reduction_tvs(*f32.fusion).at(0));
  EXPECT_THAT(user_error_of([&] { sched::mma_tile(mm); }),
              HasSubstr("expected the instruction tile's m axis"));
  auto row = load("row_sum");
  EXPECT_THAT(user_error_of([&] { sched::mma_tile(sched::get_reduction_tvs(*row.fusion).at(0)); }),
              HasSubstr("is not defined by an mma"));
  Fusion g("f32");
  auto sym = [](const char* n) { return ir::SizeExpr::symbol(n); };
  TensorView* a = g.make_tensor(ir::DataType::F32, {sym("M"), sym("K")});
  TensorView* b = g.make_tensor(ir::DataType::F32, {sym("K"), sym("N")});
  g.add_input(a);
  g.add_input(b);
  TensorView* c = ir::matmul(a, b);
  g.add_output(c);
  TensorView* s = sched::fuse_mma(sched::get_reduction_tvs(g).at(0));
  EXPECT_THAT(user_error_of([&] { sched::mma_tile(s); }),
              HasSubstr("takes bf16 or f16 (an f32 matmul runs on CUDA cores)"));
}

}  // namespace
}  // namespace schedlab::lower::testing
