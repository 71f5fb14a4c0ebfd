// print_tensor and print_scheduled_fusion: the lines a reader relies on
// (domains, the transforms between them, bindings, memory, inline position).
#include "schedlab/sched/debug_print.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "../ir/test_fusions.h"
#include "schedlab/sched/cache.h"

namespace schedlab::sched {
namespace {

using ir::DataType;
using ir::Fusion;
using ir::TensorView;
using ir::testing::input;
using ir::testing::sym;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(DebugPrintTest, AnUnscheduledInputPrintsItsDomains) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  EXPECT_EQ(print_tensor(x),
            "T0_g_f32[iS0{N}, iS1{K}]   # x\n"
            " logical domain : (iS0{N}, iS1{K})\n"
            " loop domain : (iS0{N}, iS1{K})\n"
            " memory : Global\n");
}

TEST(DebugPrintTest, AScheduledTensorListsItsTransformsInOrder) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* y = ir::tv(ir::exp(x));  // iS2{N}, iS3{K}
  f.add_output(y);
  y->merge(0);
  y->split(0, 128);
  y->parallelize(0, ir::ParallelType::BIDx);
  y->parallelize(1, ir::ParallelType::TIDx);
  std::string s = print_tensor(y);
  SCOPED_TRACE(s);
  EXPECT_THAT(s, HasSubstr("T1_g_f32[iblockIdx.x5{ceilDiv((N * K), 128)}, ithreadIdx.x6{128}]\n"));
  EXPECT_THAT(s, HasSubstr(" logical domain : (iS2{N}, iS3{K})\n"
                           "  Merge: iS2{N} and iS3{K} -> iS4{(N * K)}\n"
                           "  Split: iS4{(N * K)} by factor 128 -> "
                           "iblockIdx.x5{ceilDiv((N * K), 128)}, ithreadIdx.x6{128}\n"
                           " loop domain : (iblockIdx.x5{ceilDiv((N * K), 128)}, "
                           "ithreadIdx.x6{128})\n"));
  EXPECT_THAT(s, Not(HasSubstr("root domain")));
  EXPECT_THAT(s, HasSubstr(" memory : Global\n"));
}

TEST(DebugPrintTest, ShowsTheInlinePositionAndMemory) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* a = ir::tv(ir::exp(x));
  f.add_output(ir::tv(ir::neg(a)));
  set_memory_type(a, ir::MemoryType::Shared);
  a->set_compute_at_pos(1);
  std::string s = print_tensor(a);
  EXPECT_THAT(s, HasSubstr("T1_s_f32[iS2{N}, iS3{K}] ca_pos(1)\n"));
  EXPECT_THAT(s, HasSubstr(" memory : Shared\n"));
  pad_shared(a, 1);
  EXPECT_THAT(print_tensor(a), HasSubstr(" memory : Shared, rows padded by 1 (pad_shared)\n"));
  pad_shared(a, 0);
  swizzle(a, 8);
  EXPECT_THAT(print_tensor(a),
              HasSubstr(" memory : Shared, rows swizzled with width 8 (swizzle)\n"));
}

TEST(DebugPrintTest, ARootDomainListsTheTransformsToLogical) {
  // An rfactor producer's shape, built by hand: logical = root with the
  // reduction axis split by 4.
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* s = ir::sum(x, {1});  // iS2{N}, rS3{K}
  std::vector<ir::IterDomain*> root = s->logical();
  auto [outer, inner] = f.split(root[1], 4, /*inner_split=*/true);
  s->set_domains(root, {root[0], outer, inner});
  std::string p = print_tensor(s);
  SCOPED_TRACE(p);
  EXPECT_THAT(p, HasSubstr(" root domain : (iS2{N}, rS3{K})\n"
                           "  Split: rS3{K} by factor 4 -> rS4{ceilDiv(K, 4)}, rS5{4}\n"
                           " logical domain : (iS2{N}, rS4{ceilDiv(K, 4)}, rS5{4})\n"
                           " loop domain : (iS2{N}, rS4{ceilDiv(K, 4)}, rS5{4})\n"));
}

TEST(DebugPrintTest, TheScheduledFusionShowsEachExpressionWithItsDomains) {
  auto f = ir::testing::make_softmax();
  TensorView* y = f->outputs()[0];
  y->split(1, 32);
  std::string s = print_scheduled_fusion(*f);
  SCOPED_TRACE(s);
  EXPECT_THAT(s, HasSubstr("Fusion softmax (scheduled)\n%kernel {\n"));
  EXPECT_THAT(s, HasSubstr("T1_l_f32[iS2{N}, rS3{K}]\n"
                           "   = reduction(T0_g_f32[iS0{N}, iS1{K}], op = max, init = -inf)\n"
                           "    logical domain : (iS2{N}, rS3{K})\n"
                           "    loop domain : (iS2{N}, rS3{K})\n"
                           "    memory : Local\n"));
  EXPECT_THAT(s, HasSubstr("     Split: "));
  EXPECT_THAT(s, HasSubstr("} // %kernel\nOutputs:\n  T7_g_f32["));
  EXPECT_THAT(s, HasSubstr("   # y\n"));
}

}  // namespace
}  // namespace schedlab::sched
