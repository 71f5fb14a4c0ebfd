// The math printer: tensor and expression spelling, and determinism. The
// whole-fusion layout is checked by the FileCheck tests (print_*.check).
#include "schedlab/ir/printer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "schedlab/ir/scalar_format.h"
#include "test_fusions.h"

namespace schedlab::ir {
namespace {

using ::testing::HasSubstr;
using testing::input;
using ::testing::StartsWith;
using testing::sym;

TEST(PrinterTest, TensorStr) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  EXPECT_EQ(tensor_str(x), "T0_g_f32[iS0{N}, iS1{K}]");
  TensorView* s = sum(x, {1});
  EXPECT_EQ(tensor_str(s), "T1_l_f32[iS2{N}, rS3{K}]");
  TensorView* b = broadcast(s, {false, true});
  EXPECT_EQ(tensor_str(b), "T2_l_f32[iS4{N}, bS5{1}]");
  TensorView* h =
      input(f, "h", DataType::BF16, {SizeExpr::ceil_div(sym("N"), SizeExpr::constant(4))});
  EXPECT_EQ(tensor_str(h), "T3_g_bf16[iS6{ceilDiv(N, 4)}]");
  TensorView* scalar = input(f, "s", DataType::I64, {});
  EXPECT_EQ(tensor_str(scalar), "T4_g_i64[]");
}

TEST(PrinterTest, TensorStrShowsMemoryParallelTypeAndComputeAt) {
  Fusion f;
  TensorView* x = f.make_tensor(DataType::F16, {sym("N"), sym("K")});
  x->set_memory_type(MemoryType::Shared);
  x->axis(0)->parallelize(ParallelType::BIDx);
  x->axis(1)->parallelize(ParallelType::TIDx);
  x->set_compute_at_pos(1);
  EXPECT_EQ(tensor_str(x), "T0_s_f16[iblockIdx.x0{N}, ithreadIdx.x1{K}] ca_pos(1)");
}

TEST(PrinterTest, IterDomainStr) {
  Fusion f;
  IterDomain* r = f.make_iter_domain(sym("K"), IterType::Reduction);
  EXPECT_EQ(r->str(), "rS0{K}");
  r->parallelize(ParallelType::TIDy);
  EXPECT_EQ(r->str(), "rthreadIdx.y0{K}");
  IterDomain* d = f.make_iter_domain(sym("D"), IterType::Iteration);
  d->parallelize(ParallelType::DIDx);
  EXPECT_EQ(d->str(), "ideviceIdx.x1{D}");
}

TEST(PrinterTest, ExprStrOfAReduction) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* m = max(x, {-1});
  m->set_user_name("m");
  EXPECT_EQ(expr_str(m->definition()),
            "T1_l_f32[iS2{N}, rS3{K}]   # m\n"
            "   = reduction(T0_g_f32[iS0{N}, iS1{K}], op = max, init = -inf)");
}

TEST(PrinterTest, ExprStrOfEachNodeKind) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  EXPECT_THAT(expr_str(add(x, constant(f, 0.5))->definition()),
              HasSubstr("= add(T0_g_f32[iS0{N}], f64(0.5))"));
  EXPECT_THAT(expr_str(mul(x, constant(f, 3, DataType::I32))->definition()),
              HasSubstr("= mul(T0_g_f32[iS0{N}], i32(3))"));
  Val* c = binary(BinaryOpType::Gt, x, constant(f, 1e-5, DataType::F32));
  EXPECT_THAT(expr_str(c->definition()),
              HasSubstr("T3_l_bool[iS3{N}]\n   = gt(T0_g_f32[iS0{N}], f32(1e-05))"));
  EXPECT_THAT(expr_str(where(c, x, constant(f, -INFINITY))->definition()),
              HasSubstr("= where(T3_l_bool[iS3{N}], T0_g_f32[iS0{N}], f64(-inf))"));
  EXPECT_THAT(expr_str(where(constant(f, 1, DataType::Bool), x, x)->definition()),
              HasSubstr("= where(bool(true), "));
  EXPECT_THAT(expr_str(cast(x, DataType::F16)->definition()), HasSubstr("= cast(T0_g_f32"));
  EXPECT_THAT(expr_str(set(x)->definition()), HasSubstr("= set(T0_g_f32[iS0{N}])"));
  EXPECT_THAT(expr_str(broadcast(x, {true, false})->definition()),
              HasSubstr(", flags = {true, false})"));
  TensorView* x2 = input(f, "x2", DataType::F32, {sym("N"), sym("K")});
  EXPECT_THAT(expr_str(transpose(x2, 0, 1)->definition()), HasSubstr(", new2old = {1, 0})"));
  EXPECT_THAT(expr_str(sum(x, {})->definition()), HasSubstr(", op = sum, init = 0)"));
  EXPECT_THAT(expr_str(reduce(ReductionOpType::Min, x, {})->definition()),
              HasSubstr(", op = min, init = inf)"));
}

TEST(PrinterTest, ExprStrNamesNonSetLoadStoreOps) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = f.make_tensor(DataType::F32, {sym("N")});
  y->set_memory_type(MemoryType::Shared);
  f.create<LoadStoreOp>(LoadStoreOpType::CpAsync, y, x);
  EXPECT_EQ(expr_str(y->definition()),
            "T1_s_f32[iS1{N}]\n   = set(T0_g_f32[iS0{N}], op = CpAsync)");
}

TEST(PrinterTest, PrintMathLayout) {
  auto f = testing::make_transpose();
  EXPECT_EQ(print_math(*f),
            "Fusion transpose\n"
            "Inputs:\n"
            "  T0_g_f32[iS0{N}, iS1{K}]   # x\n"
            "Outputs:\n"
            "  T1_g_f32[iS2{K}, iS3{N}]   # y\n"
            "\n"
            "%kernel_math {\n"
            "T1_g_f32[iS2{K}, iS3{N}]   # y\n"
            "   = permute(T0_g_f32[iS0{N}, iS1{K}], new2old = {1, 0})\n"
            "} // %kernel_math\n");
}

TEST(PrinterTest, PrintMathOmitsDeadExpressions) {
  Fusion f("dead");
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  exp(x);
  f.add_output(tv(neg(x)));
  std::string text = print_math(f);
  EXPECT_THAT(text, StartsWith("Fusion dead\n"));
  EXPECT_THAT(text, HasSubstr("= neg("));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("exp")));
}

TEST(PrinterTest, BuildingTheSameFusionTwicePrintsTheSameText) {
  using Maker = std::unique_ptr<Fusion> (*)();
  for (Maker make : {Maker{&testing::make_softmax}, Maker{&testing::make_layernorm},
                     Maker{&testing::make_transpose}, Maker{&testing::make_keepdim}}) {
    std::string first = print_math(*make());
    std::string second = print_math(*make());
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, second);
  }
}

TEST(PrinterTest, FormatScalar) {
  EXPECT_EQ(format_scalar(0.5, DataType::F32), "0.5");
  EXPECT_EQ(format_scalar(1e-5, DataType::F64), "1e-05");
  EXPECT_EQ(format_scalar(0.1, DataType::F64), "0.1");
  EXPECT_EQ(format_scalar(1.0 / 3.0, DataType::F64), "0.3333333333333333");
  // Shortest text that reads back to the same f32.
  EXPECT_EQ(format_scalar(static_cast<double>(1.0f / 3.0f), DataType::F32), "0.33333334");
  EXPECT_EQ(format_scalar(INFINITY, DataType::F32), "inf");
  EXPECT_EQ(format_scalar(-INFINITY, DataType::F16), "-inf");
  EXPECT_EQ(format_scalar(std::numeric_limits<double>::quiet_NaN(), DataType::F32), "nan");
  EXPECT_EQ(format_scalar(3, DataType::I32), "3");
  EXPECT_EQ(format_scalar(-7, DataType::I64), "-7");
  EXPECT_EQ(format_scalar(1, DataType::Bool), "true");
  EXPECT_EQ(format_scalar(0, DataType::Bool), "false");
  EXPECT_EQ(format_scalar(1e20, DataType::F64), "1e+20");
}

}  // namespace
}  // namespace schedlab::ir
