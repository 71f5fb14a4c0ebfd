// TensorView loop transforms (core/ir/transforms.cpp): the loop domain each
// one produces, and one test per rule asserting the diagnostic, which names
// the tensor, the axis and the rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../ir/test_fusions.h"
#include "schedlab/ir/arith.h"
#include "test_support.h"

namespace schedlab::ir {
namespace {

using test_support::user_error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::sym;

/// T0 (x), a fusion input of the given shape; its axes are iS0, iS1, ...
TensorView* input(Fusion& f, const std::vector<SizeExpr>& shape, DataType t = DataType::F32) {
  return testing::input(f, "x", t, shape);
}

std::vector<std::string> loop_strs(const TensorView* tv) {
  std::vector<std::string> r;
  for (const IterDomain* id : tv->loop()) r.push_back(id->str());
  return r;
}

// ---- what each transform produces -----------------------------------------

TEST(TransformsTest, InnerSplitPutsTheFactorInside) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  x->split(0, 128);
  EXPECT_THAT(loop_strs(x), ElementsAre("iS2{ceilDiv(N, 128)}", "iS3{128}", "iS1{K}"));
  EXPECT_THAT(x->logical(), ElementsAre(f.iter_domains()[0].get(), f.iter_domains()[1].get()));
}

TEST(TransformsTest, OuterSplitPutsTheFactorOutside) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(-1, 4, /*inner_split=*/false);
  EXPECT_THAT(loop_strs(x), ElementsAre("iS1{4}", "iS2{ceilDiv(N, 4)}"));
  const auto* s = x->axis(0)->definition()->as<Split>();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->str(), "Split: iS0{N} by factor 4 (outer) -> iS1{4}, iS2{ceilDiv(N, 4)}");
}

TEST(TransformsTest, SplitOfAConstantFolds) {
  Fusion f;
  TensorView* x = input(f, {SizeExpr::constant(10)});
  x->split(0, 4);
  EXPECT_THAT(loop_strs(x), ElementsAre("iS1{3}", "iS2{4}"));
}

TEST(TransformsTest, SplitKeepsTheIterType) {
  Fusion f;
  TensorView* y = sum(input(f, {sym("N"), sym("K")}), {1});
  y->split(1, 32);
  EXPECT_THAT(loop_strs(y), ElementsAre("iS2{N}", "rS4{ceilDiv(K, 32)}", "rS5{32}"));
}

TEST(TransformsTest, MergeMultipliesTheExtents) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K"), SizeExpr::constant(4)});
  x->merge(0);
  EXPECT_THAT(loop_strs(x), ElementsAre("iS3{(N * K)}", "iS2{4}"));
  x->merge(0, -1);
  EXPECT_THAT(loop_strs(x), ElementsAre("iS4{((N * K) * 4)}"));
}

TEST(TransformsTest, MergeWithABroadcastKeepsTheOtherType) {
  Fusion f;
  TensorView* y = sum(input(f, {SizeExpr::constant(1), sym("K")}), {1});
  y->merge(0);
  EXPECT_THAT(loop_strs(y), ElementsAre("rS4{K}"));
}

TEST(TransformsTest, ReorderWithAFullMap) {
  Fusion f;
  TensorView* x = input(f, {sym("A"), sym("B"), sym("C")});
  x->reorder({{0, 2}, {1, 0}, {2, 1}});
  EXPECT_THAT(loop_strs(x), ElementsAre("iS1{B}", "iS2{C}", "iS0{A}"));
}

TEST(TransformsTest, ReorderWithAPartialMapKeepsTheRestInOrder) {
  Fusion f;
  TensorView* x = input(f, {sym("A"), sym("B"), sym("C"), sym("D")});
  x->reorder({{-1, 0}});
  EXPECT_THAT(loop_strs(x), ElementsAre("iS3{D}", "iS0{A}", "iS1{B}", "iS2{C}"));
  x->reorder({{0, -1}, {-1, 1}});
  EXPECT_THAT(loop_strs(x), ElementsAre("iS0{A}", "iS2{C}", "iS1{B}", "iS3{D}"));
}

TEST(TransformsTest, LoopHistoryIsInApplicationOrder) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  TensorView* other = input(f, {sym("M")});
  x->merge(0);
  other->split(0, 2);  // another tensor's transform is not in x's history
  x->split(0, 128)->split(0, 4, false)->reorder({{0, -1}});
  std::vector<std::string> h;
  for (const IterDomainExpr* e : x->loop_history()) h.push_back(e->str());
  EXPECT_THAT(h, ElementsAre("Merge: iS0{N} and iS1{K} -> iS3{(N * K)}",
                             "Split: iS3{(N * K)} by factor 128 -> iS6{ceilDiv((N * K), 128)}, "
                             "iS7{128}",
                             "Split: iS6{ceilDiv((N * K), 128)} by factor 4 (outer) -> iS8{4}, "
                             "iS9{ceilDiv(ceilDiv((N * K), 128), 4)}"));
  EXPECT_TRUE(other->loop_history().size() == 1u);
}

TEST(TransformsTest, ParallelizeBindsAndPrints) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), SizeExpr::constant(4)});
  x->split(0, 128)->parallelize(0, ParallelType::BIDx)->parallelize(1, ParallelType::TIDx);
  x->parallelize(-1, LoopTransform::Vectorize);
  EXPECT_THAT(loop_strs(x),
              ElementsAre("iblockIdx.x2{ceilDiv(N, 128)}", "ithreadIdx.x3{128}", "iS1{4}_vect"));
  x->parallelize(0, ParallelType::BIDx);  // rebinding the same axis is fine
  x->parallelize(0, ParallelType::Serial)->parallelize(1, ParallelType::BIDx);
  EXPECT_EQ(x->axis(1)->parallel_type(), ParallelType::BIDx);
}

TEST(TransformsTest, VectorizeOfSixteenBytesIsLegal) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), SizeExpr::constant(8)}, DataType::F16);
  x->parallelize(1, LoopTransform::Vectorize);
  EXPECT_EQ(x->axis(1)->loop_transform(), LoopTransform::Vectorize);
}

TEST(TransformsTest, BulkOnATmaLoad) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  TensorView* c = f.make_tensor(DataType::F32, {sym("N")});
  f.create<LoadStoreOp>(LoadStoreOpType::Tma, c, x);
  c->parallelize(0, LoopTransform::Bulk);
  EXPECT_EQ(c->axis(0)->str(), "iS1{N}_bulk");
}

// ---- one test per rule --------------------------------------------------------

TEST(TransformsErrorTest, AxisOutOfRange) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  auto range = [](const std::string& op, int axis) {
    return AllOf(HasSubstr(op + ": axis " + std::to_string(axis) + " is out of range for T0 (x)"),
                 HasSubstr("with 2 loop axes; expected an axis in [-2, 1]"));
  };
  EXPECT_THAT(user_error_of([&] { x->split(2, 4); }), range("split", 2));
  EXPECT_THAT(user_error_of([&] { x->split(-3, 4); }), range("split", -3));
  EXPECT_THAT(user_error_of([&] { x->merge(1); }), range("merge", 2));
  EXPECT_THAT(user_error_of([&] { x->merge(-3, 0); }), range("merge", -3));
  EXPECT_THAT(user_error_of([&] { x->reorder({{5, 0}}); }), range("reorder", 5));
  EXPECT_THAT(user_error_of([&] { x->reorder({{0, -3}}); }), range("reorder", -3));
  EXPECT_THAT(user_error_of([&] { x->parallelize(2, ParallelType::TIDx); }),
              range("parallelize", 2));
  EXPECT_THAT(user_error_of([&] { x->parallelize(-3, LoopTransform::Unroll); }),
              range("parallelize", -3));
  EXPECT_THAT(user_error_of([&] { x->axis(-3); }), range("axis", -3));
  EXPECT_THAT(loop_strs(x), ElementsAre("iS0{N}", "iS1{K}"));  // nothing half-applied
}

TEST(TransformsErrorTest, SplitFactorMustBePositive) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  EXPECT_THAT(user_error_of([&] { x->split(1, -2); }),
              HasSubstr("split: factor must be positive, got -2 (T0 (x) axis 1 (iS1{K}))"));
  EXPECT_THAT(user_error_of([&] { x->split(0, 0); }),
              HasSubstr("split: factor must be positive, got 0 (T0 (x) axis 0 (iS0{N}))"));
}

TEST(TransformsErrorTest, MergeOfReductionWithIteration) {
  Fusion f;
  TensorView* y = sum(input(f, {sym("N"), sym("K")}), {1});
  y->set_user_name("y");
  std::string msg = user_error_of([&] { y->merge(0); });
  EXPECT_THAT(msg, HasSubstr("merge: cannot merge Iteration T1 (y) axis 0 (iS2{N}) with "
                             "Reduction axis 1 (rS3{K}); expected both Reduction or both "
                             "non-Reduction"));
  EXPECT_THAT(user_error_of([&] { y->merge(1, 0); }),
              HasSubstr("merge: cannot merge Reduction T1 (y) axis 1 (rS3{K}) with Iteration"));
}

TEST(TransformsErrorTest, MergeOfAnAxisWithItself) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  EXPECT_THAT(user_error_of([&] { x->merge(1, -1); }),
              HasSubstr("merge: cannot merge T0 (x) axis 1 (iS1{K}) with itself; expected two "
                        "different axes"));
}

TEST(TransformsErrorTest, TransformInsideTheComputeAtPosition) {
  Fusion f;
  TensorView* x = input(f, {sym("A"), sym("B"), sym("C")});
  x->set_compute_at_pos(2);
  auto inlined = [](const std::string& op, const std::string& axis) {
    return HasSubstr(op + ": T0 (x) axis " + axis +
                     " is inside the compute-at position 2; expected an axis at or after it");
  };
  EXPECT_THAT(user_error_of([&] { x->split(1, 4); }), inlined("split", "1 (iS1{B})"));
  EXPECT_THAT(user_error_of([&] { x->merge(1); }), inlined("merge", "1 (iS1{B})"));
  EXPECT_THAT(user_error_of([&] { x->merge(2, 0); }), inlined("merge", "0 (iS0{A})"));
  EXPECT_THAT(user_error_of([&] { x->reorder({{2, 0}}); }), inlined("reorder", "0 (iS0{A})"));
  // At or after the position is fine, and so is a reorder that fixes the prefix.
  x->split(2, 4)->reorder({{0, 0}, {-1, 2}});
  EXPECT_THAT(loop_strs(x), ElementsAre("iS0{A}", "iS1{B}", "iS4{4}", "iS3{ceilDiv(C, 4)}"));
}

TEST(TransformsErrorTest, TransformOfABoundAxis) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  x->parallelize(0, ParallelType::BIDx)->parallelize(1, LoopTransform::Unroll);
  EXPECT_THAT(user_error_of([&] { x->split(0, 4); }),
              HasSubstr("split: T0 (x) axis 0 (iblockIdx.x0{N}) is already bound to BIDx; "
                        "expected a Serial axis"));
  EXPECT_THAT(user_error_of([&] { x->split(1, 4); }),
              HasSubstr("split: T0 (x) axis 1 (iS1{K}_unroll) is already bound to Unroll"));
  EXPECT_THAT(user_error_of([&] { x->merge(0); }),
              HasSubstr("merge: T0 (x) axis 0 (iblockIdx.x0{N}) is already bound to BIDx"));
}

TEST(TransformsErrorTest, ReorderMovesAnAxisTwice) {
  Fusion f;
  TensorView* x = input(f, {sym("A"), sym("B"), sym("C")});
  EXPECT_THAT(user_error_of([&] {
                x->reorder({{0, 1}, {-3, 2}});
              }),
              HasSubstr("reorder: T0 (x) axis 0 (iS0{A}) is moved twice (to positions 1 and "
                        "2); expected each loop axis at most once"));
}

TEST(TransformsErrorTest, ReorderMovesTwoAxesToOnePosition) {
  Fusion f;
  TensorView* x = input(f, {sym("A"), sym("B"), sym("C")});
  EXPECT_THAT(user_error_of([&] {
                x->reorder({{0, 2}, {1, -1}});
              }),
              HasSubstr("reorder: axes 0 and 1 of T0 (x) are both moved to position -1; "
                        "expected distinct new positions"));
}

TEST(TransformsErrorTest, ParallelTypeBoundTwice) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  x->parallelize(0, ParallelType::TIDx);
  EXPECT_THAT(user_error_of([&] { x->parallelize(1, ParallelType::TIDx); }),
              HasSubstr("parallelize: TIDx is already bound to T0 (x) axis 0 "
                        "(ithreadIdx.x0{N}); cannot also bind T0 (x) axis 1 (iS1{K})"));
}

TEST(TransformsErrorTest, VectorizeNotInnermost) {
  Fusion f;
  TensorView* x = input(f, {SizeExpr::constant(4), SizeExpr::constant(4)});
  EXPECT_THAT(user_error_of([&] { x->parallelize(0, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize T0 (x) axis 0 (iS0{4}); expected the "
                        "innermost loop axis (1)"));
}

TEST(TransformsErrorTest, VectorizeSymbolicExtent) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  EXPECT_THAT(user_error_of([&] { x->parallelize(0, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize T0 (x) axis 0 (iS0{N}) of symbolic "
                        "extent N; expected a constant extent"));
}

TEST(TransformsErrorTest, VectorizeWidthNotAPowerOfTwo) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(0, 3);
  EXPECT_THAT(user_error_of([&] { x->parallelize(1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize T0 (x) axis 1 (iS2{3}): width 3 x 4 "
                        "bytes; expected a power of two of at most 16 bytes"));
}

TEST(TransformsErrorTest, VectorizeWiderThanSixteenBytes) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(0, 8);
  EXPECT_THAT(user_error_of([&] { x->parallelize(-1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize T0 (x) axis 1 (iS2{8}): width 8 x 4 "
                        "bytes; expected a power of two of at most 16 bytes"));
}

// Fuzz seed 33 case 369: parallelize_all_like bound a cache's inner axis to
// BIDx, then it was vectorized; its Local buffer held one lane per block while
// the vector load wrote two (the sanitizer's out-of-bounds write).
TEST(TransformsErrorTest, VectorizeAnAxisBoundToBlocksOrThreads) {
  for (ParallelType p : {ParallelType::BIDx, ParallelType::TIDx}) {
    Fusion f;
    TensorView* x = input(f, {sym("N")});
    x->split(0, 2);
    x->parallelize(1, p);
    EXPECT_THAT(user_error_of([&] { x->parallelize(1, LoopTransform::Vectorize); }),
                HasSubstr(std::string("parallelize: cannot vectorize T0 (x) axis 1 (") +
                          (p == ParallelType::BIDx ? "iblockIdx.x" : "ithreadIdx.x")));
    EXPECT_THAT(user_error_of([&] { x->parallelize(1, LoopTransform::Vectorize); }),
                HasSubstr(": it is bound to " + std::string(parallel_type_name(p)) +
                          ", and a vector's lanes are one thread's"));
  }
}

TEST(TransformsErrorTest, VectorizeReductionAxis) {
  Fusion f;
  TensorView* y = sum(input(f, {sym("N"), SizeExpr::constant(4)}), {1});
  EXPECT_THAT(user_error_of([&] { y->parallelize(1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize Reduction T1 axis 1 (rS3{4}); expected "
                        "a non-Reduction axis"));
}

// The rules of a vector copy that are certain at the call (core/ir/
// transforms.cpp check_vectorizable); lowering checks them again, with the
// ones later calls can still change.

TEST(TransformsTest, VectorizeTheInnerSplitOfAMergedInnermostAxis) {
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), sym("K")}));
  c->merge(0)->split(0, 4);
  c->parallelize(-1, LoopTransform::Vectorize);
  EXPECT_EQ(c->axis(-1)->loop_transform(), LoopTransform::Vectorize);
}

TEST(TransformsErrorTest, VectorizeMathIsAnError) {
  Fusion f;
  TensorView* e = tv(exp(input(f, {sym("N"), sym("K")})));
  e->split(1, 4);
  EXPECT_THAT(user_error_of([&] { e->parallelize(2, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + e->describe() + " axis 2 (" +
                        e->axis(2)->str() + "): " + e->describe() +
                        " is defined by exp; expected a copy: vectorize the cache that "
                        "cache_after or cache_before makes"));
  EXPECT_EQ(e->axis(2)->loop_transform(), LoopTransform::Serial);
}

TEST(TransformsErrorTest, VectorizeAnOutputFedByAReduction) {
  // col_sum's y[rN, K] with K split by 4: y is written by the reduction.
  Fusion f;
  TensorView* y = sum(input(f, {sym("N"), sym("K")}), {0});
  f.add_output(y);
  y->split(1, 4);
  EXPECT_THAT(user_error_of([&] { y->parallelize(2, LoopTransform::Vectorize); }),
              AllOf(HasSubstr("parallelize: cannot vectorize " + y->describe() + " axis 2 (" +
                              y->axis(2)->str() + "): " + y->describe() +
                              " is defined by reduction (it is the result of a reduction"),
                    HasSubstr("expected a copy"),
                    HasSubstr("cache_before on the unscheduled reduction output")));
}

TEST(TransformsErrorTest, VectorizeASplitOfAnOuterLogicalAxis) {
  // [N, K] -> [ceilDiv(N, 4), K, 4]: the 4 elements are K apart in memory.
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), sym("K")}));
  c->split(0, 4)->reorder({{1, 2}, {2, 1}});
  EXPECT_THAT(user_error_of([&] { c->parallelize(2, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 2 (" +
                        c->axis(2)->str() + "): it splits " + c->logical()[0]->str() +
                        ", which is not the innermost logical axis " + c->logical()[1]->str() +
                        "; expected the inner part of split(innermost, 4) of the innermost "
                        "logical axis " +
                        c->logical()[1]->str() + ", so that the 4 elements are adjacent in memory"));
}

TEST(TransformsTest, VectorizeTheInnerPartOfNestedInnerSplits) {
  // nvFuser's var_mean user schedule: K split by 1024, then by 4; each
  // 4-wide vector lies inside one 1024-element chunk, adjacent and aligned.
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), sym("K")}));
  c->split(1, 1024)->split(2, 4);  // [N, ceilDiv(K, 1024), 256, 4]
  c->parallelize(3, LoopTransform::Vectorize);
  EXPECT_EQ(c->axis(3)->loop_transform(), LoopTransform::Vectorize);
}

TEST(TransformsErrorTest, VectorizeNestedSplitsWhoseChunkIsNotAMultiple) {
  // A chunk of 1022 elements: its 4-wide vectors would straddle chunks.
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), sym("K")}));
  c->split(1, 1022)->split(2, 4);
  EXPECT_THAT(user_error_of([&] { c->parallelize(3, LoopTransform::Vectorize); }),
              AllOf(HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 3 (" +
                              c->axis(3)->str() + "): it splits " + c->axis(2)->definition()->as<Split>()->in()->str() +
                              ", the inner part of Split: "),
                    HasSubstr("whose extent 1022 is not a multiple of the vector width 4 "
                              "(vectors would straddle its chunks)")));
  // An outer split's inner part (extent ceilDiv(K, 64)) is no chunk at all.
  Fusion g;
  TensorView* d = set(input(g, {sym("N"), sym("K")}));
  d->split(1, 64, /*inner_split=*/false)->split(2, 4);
  EXPECT_THAT(user_error_of([&] { d->parallelize(3, LoopTransform::Vectorize); }),
              HasSubstr("which is not the innermost logical axis"));
}

TEST(TransformsErrorTest, VectorizeTheOuterPartOfASplit) {
  // [N, 8] -> [N, 4, 2] -> reordered [N, 2, 4]: the vector axis is the outer part.
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), SizeExpr::constant(8)}));
  c->split(1, 2)->reorder({{1, 2}, {2, 1}});
  EXPECT_THAT(user_error_of([&] { c->parallelize(2, LoopTransform::Vectorize); }),
              AllOf(HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 2 (" +
                              c->axis(2)->str() + "): it is the outer part of Split: "),
                    HasSubstr("expected the inner part of split(innermost, 4)")));
}

TEST(TransformsErrorTest, VectorizeAnotherLogicalAxis) {
  // [4, K] reordered to [K, 4]: the vectorized axis is logical axis 0.
  Fusion f;
  TensorView* c = set(input(f, {SizeExpr::constant(4), sym("K")}));
  c->reorder({{0, 1}});
  EXPECT_THAT(user_error_of([&] { c->parallelize(1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 1 (" +
                        c->axis(1)->str() + "): it is logical axis " + c->logical()[0]->str() +
                        ", not the innermost one"));
}

TEST(TransformsErrorTest, VectorizeABroadcastInnermostCache) {
  // An [N, 1] cache of a broadcast: there are no 4 adjacent elements.
  Fusion f;
  TensorView* b = broadcast(input(f, {sym("N")}), {false, true});
  TensorView* c = set(b);
  c->split(1, 4);
  EXPECT_THAT(user_error_of([&] { c->parallelize(2, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 2 (" +
                        c->axis(2)->str() + ") by 4: the innermost logical axis of " +
                        c->describe() + " is " + c->logical()[1]->str() +
                        " (a broadcast); expected an innermost extent that is a multiple of 4"));
}

TEST(TransformsErrorTest, VectorizeASizeOneInnermostCache) {
  // An [N, 1] input (its size-1 axis is a broadcast) cached and flattened:
  // the merge hides the size-1 axis, the rule does not.
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), SizeExpr::constant(1)}));
  c->merge(0)->split(0, 4);
  EXPECT_THAT(user_error_of([&] { c->parallelize(1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 1 (" +
                        c->axis(1)->str() + ") by 4: the innermost logical axis of " +
                        c->describe() + " is " + c->logical()[1]->str() +
                        " (a broadcast); expected an innermost extent that is a multiple of 4"));
}

TEST(TransformsErrorTest, VectorizeByMoreThanAConstantInnermostExtent) {
  Fusion f;
  TensorView* c = set(input(f, {sym("N"), SizeExpr::constant(2)}));
  c->merge(0)->split(0, 4);
  EXPECT_THAT(user_error_of([&] { c->parallelize(1, LoopTransform::Vectorize); }),
              HasSubstr("parallelize: cannot vectorize " + c->describe() + " axis 1 (" +
                        c->axis(1)->str() + ") by 4: the innermost logical axis of " +
                        c->describe() + " is " + c->logical()[1]->str() +
                        " (constant extent 2); expected an innermost extent that is a multiple "
                        "of 4"));
}

TEST(TransformsErrorTest, BulkNeedsATmaLoad) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  TensorView* c = set(x);
  auto bulk = [](const std::string& t, const std::string& axis) {
    return HasSubstr("parallelize: cannot make " + t + " axis 0 (" + axis +
                     ") Bulk; expected a tensor defined by a Tma load");
  };
  EXPECT_THAT(user_error_of([&] { c->parallelize(0, LoopTransform::Bulk); }), bulk("T1", "iS1{N}"));
  EXPECT_THAT(user_error_of([&] { x->parallelize(0, LoopTransform::Bulk); }),
              bulk("T0 (x)", "iS0{N}"));
}

}  // namespace
}  // namespace schedlab::ir
