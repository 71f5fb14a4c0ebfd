// fuse_mma (core/sched/mma.cpp) and the MmaOp it makes: the matmul and
// linear composites of configs/fusions, fused and scheduled on CUDA cores
// (tiles of the output over blocks and threads, or split-K through rfactor
// and a block reduction), run on the CPU backend and compared with the
// reference of the unscheduled fusion at sizes that are and are not
// multiples of the tiles; the reference of the fused fusion equals that of
// the composite; each refusal names the tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/printer.h"
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

using FuseMma = BackendTest;

/// The matmul's sum: the fusion's only reduction.
TensorView* the_sum(const Fusion& f) {
  auto r = sched::get_reduction_tvs(f);
  EXPECT_EQ(r.size(), 1u);
  return r.at(0);
}

/// Output tiles on CUDA cores: [M, N, rK] -> [Mo BIDy, tm TIDy, No BIDx, tn TIDx, rK].
void tiles(Fusion& f, TensorView* mm, int m, int n, int k) {
  mm->reorder({{k, 2}, {n, 1}, {m, 0}});
  mm->split(0, 4);
  mm->split(2, 32);
  mm->parallelize(0, ParallelType::BIDy);
  mm->parallelize(1, ParallelType::TIDy);
  mm->parallelize(2, ParallelType::BIDx);
  mm->parallelize(3, ParallelType::TIDx);
  propagate_and_inline(f, mm);
}

/// Split-K: [M BIDy, N BIDx, rK] with K split by 8; the 8 partial sums
/// (rfactor) are reduced across TIDx.
void split_k(Fusion& f, TensorView* mm, int m, int n, int k) {
  mm->reorder({{k, 2}, {n, 1}, {m, 0}});
  mm->split(2, 8);
  sched::propagate_transformation(mm);
  sched::rfactor(mm, {2});
  mm->parallelize(0, ParallelType::BIDy);
  mm->parallelize(1, ParallelType::BIDx);
  mm->parallelize(2, ParallelType::TIDx);
  sched::parallelize_all_like(mm);
  sched::inline_most(f);
}

std::vector<ir::SizeBindings> matmul_sizes() {
  return {{{"M", 3}, {"N", 5}, {"K", 16}},
          {{"M", 130}, {"N", 70}, {"K", 48}},
          {{"M", 1}, {"N", 1}, {"K", 16}},
          {{"M", 64}, {"N", 16}, {"K", 64}},
          {{"M", 2}, {"N", 3}, {"K", 5}}};
}

/// Fuses the matmul of `fusion`, schedules it and runs it at every size.
void check(const std::string& fusion, int m, int n, int k,
           void (*schedule)(Fusion&, TensorView*, int, int, int)) {
  auto def = load(fusion);
  auto plain = load(fusion);
  TensorView* mm = sched::fuse_mma(the_sum(*def.fusion));
  ASSERT_TRUE(mm->definition()->is<ir::MmaOp>());
  schedule(*def.fusion, mm, m, n, k);
  std::vector<ir::SizeBindings> sizes = matmul_sizes();
  if (fusion.starts_with("batched"))
    for (auto& s : sizes) s["B"] = 2;
  expect_matches_at(def, plain, prepare_or_report(def, sizes.front()), sizes,
                    [](const auto& pl, const auto& p, auto& c, const auto& sz) {
                      return run_and_compare(pl, p, c, sz);
                    });
}

// matmul's sum is [M, rK, N]; linear's [M, N, rK]; the batched one [B, M, rK, N]
// (B is left outermost and serial).
TEST_F(FuseMma, MatmulBf16OnOutputTiles) {
  check("matmul_bf16", 0, 2, 1, tiles);
}
TEST_F(FuseMma, MatmulF16OnOutputTiles) {
  check("matmul_f16", 0, 2, 1, tiles);
}
TEST_F(FuseMma, MatmulBf16SplitK) {
  check("matmul_bf16", 0, 2, 1, split_k);
}
TEST_F(FuseMma, LinearBiasGeluOnOutputTiles) {
  check("linear_bias_gelu_bf16", 0, 1, 2, tiles);
}
TEST_F(FuseMma, LinearBiasGeluSplitK) {
  check("linear_bias_gelu_bf16", 0, 1, 2, split_k);
}

TEST(FuseMmaIr, TheMmaReadsTheHalfTensorsAndPrintsAsMma) {
  auto def = load("matmul_bf16");
  TensorView* mm = sched::fuse_mma(the_sum(*def.fusion));
  const auto* op = mm->definition()->as<ir::MmaOp>();
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->a()->dtype(), ir::DataType::BF16);
  EXPECT_EQ(op->b()->dtype(), ir::DataType::BF16);
  EXPECT_EQ(mm->dtype(), ir::DataType::F32);
  EXPECT_THAT(ir::print_math(*def.fusion), HasSubstr("= mma("));
  EXPECT_THAT(ir::print_math(*def.fusion), ::testing::Not(HasSubstr("= mul(")));
  // Still a reduction for the queries a heuristic asks.
  EXPECT_EQ(sched::get_reduction_tvs(*def.fusion), std::vector<TensorView*>{mm});
}

TEST(FuseMmaIr, TheFusedFusionEvaluatesAsTheComposite) {
  for (const char* name : {"matmul_bf16", "linear_bias_gelu_bf16", "batched_matmul_bf16"}) {
    auto def = load(name);
    auto plain = load(name);
    sched::fuse_mma(the_sum(*def.fusion));
    ir::SizeBindings sizes = {{"B", 2}, {"M", 7}, {"N", 9}, {"K", 33}};
    auto inputs = ref::make_inputs(*plain.fusion, sizes, 3, plain.input_ranges);
    auto want = ref::evaluate(*plain.fusion, inputs, sizes);
    auto got = ref::evaluate(*def.fusion, inputs, sizes);
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].data, want[i].data) << name;
      EXPECT_EQ(got[i].error.size(), want[i].error.size()) << name;
    }
  }
}

TEST(FuseMmaIr, RefusesWhatIsNotAContraction) {
  auto row = load("row_sum");
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(the_sum(*row.fusion)); }),
              HasSubstr("which is not a product; expected sum(a * b)"));
  auto mx = load("row_max");
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(the_sum(*mx.fusion)); }),
              HasSubstr("expected a sum over a product"));
  auto input = load("matmul_bf16");
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(input.fusion->inputs()[0]); }),
              HasSubstr("is a fusion input; expected a sum over a product"));
  auto split = load("matmul_bf16");
  the_sum(*split.fusion)->split(0, 4);
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(the_sum(*split.fusion)); }),
              HasSubstr("is already scheduled"));
}

TEST(FuseMmaIr, RefusesAProductReadElsewhereAndABroadcastReducedAxis) {
  Fusion f("twice");
  TensorView* a =
      f.make_tensor(ir::DataType::F32, {ir::SizeExpr::symbol("M"), ir::SizeExpr::symbol("K")});
  f.add_input(a);
  TensorView* p = ir::tv(ir::mul(a, a));
  TensorView* s = ir::sum(p, {1});
  f.add_output(s);
  f.add_output(p);
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(s); }), HasSubstr("is also read elsewhere"));

  Fusion g("broadcast_k");
  TensorView* x =
      g.make_tensor(ir::DataType::F32, {ir::SizeExpr::symbol("M"), ir::SizeExpr::symbol("K")});
  TensorView* v = g.make_tensor(ir::DataType::F32, {ir::SizeExpr::symbol("M")});
  g.add_input(x);
  g.add_input(v);
  TensorView* vb = ir::broadcast(v, {false, true});  // [M, 1]: constant along K
  TensorView* t = ir::sum(ir::tv(ir::mul(x, vb)), {1});
  g.add_output(t);
  EXPECT_THAT(user_error_of([&] { sched::fuse_mma(t); }), HasSubstr("along which T"));
}

TEST(MatmulComposite, ErrorsNameTheOperandAndAxis) {
  Fusion f("bad");
  auto sym = [](const char* s) { return ir::SizeExpr::symbol(s); };
  TensorView* a = f.make_tensor(ir::DataType::BF16, {sym("M"), sym("K")});
  TensorView* b = f.make_tensor(ir::DataType::BF16, {sym("J"), sym("N")});
  TensorView* c = f.make_tensor(ir::DataType::F16, {sym("K"), sym("N")});
  TensorView* v = f.make_tensor(ir::DataType::BF16, {sym("K")});
  TensorView* i = f.make_tensor(ir::DataType::I32, {sym("K"), sym("N")});
  for (TensorView* t : {a, b, c, v, i}) f.add_input(t);
  EXPECT_THAT(user_error_of([&] { ir::matmul(a, b); }),
              HasSubstr("matmul: the contracted axes differ: axis 1 of"));
  EXPECT_THAT(user_error_of([&] { ir::matmul(a, c); }),
              HasSubstr("expected operands of one dtype"));
  EXPECT_THAT(user_error_of([&] { ir::matmul(a, v); }),
              HasSubstr("to have shape [..., K, N] (rank >= 2), found shape [K]"));
  EXPECT_THAT(user_error_of([&] { ir::matmul(i, i); }),
              HasSubstr("expected a bf16, f16 or f32 operand"));
  EXPECT_THAT(user_error_of([&] { ir::linear(a, c); }),
              HasSubstr("linear: expected operands of one dtype"));
  EXPECT_THAT(user_error_of([&] { ir::linear(a, a, c); }), HasSubstr("linear: expected the bias"));
}

}  // namespace
}  // namespace schedlab::lower::testing
