// The queries a heuristic asks: reduction tensors, tensor sets, the reference
// tensor, the transpose scheduler's grouping, dependencies and the tensors
// between two sets.
#include "schedlab/sched/queries.h"

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
using ir::testing::output;
using ir::testing::sym;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// The tensor numbered n ("T<n>").
TensorView* tensor(const Fusion& f, int n) {
  return f.tensors().at(static_cast<size_t>(n));
}

// Softmax's tensors, by number: x T0, max T1, broadcast T2, sub T3, exp T4,
// sum T5, broadcast T6, y = div T7.

TEST(QueriesTest, ReductionTvsOfSoftmaxAreTheMaxAndTheSum) {
  auto f = ir::testing::make_softmax();
  std::vector<TensorView*> r = get_reduction_tvs(*f);
  ASSERT_THAT(r, ElementsAre(tensor(*f, 1), tensor(*f, 5)));
  EXPECT_EQ(r[0]->definition()->as<ir::ReductionOp>()->op(), ir::ReductionOpType::Max);
  EXPECT_EQ(r[1]->definition()->as<ir::ReductionOp>()->op(), ir::ReductionOpType::Sum);
}

TEST(QueriesTest, APointwiseFusionHasNoReductionTvs) {
  auto f = ir::testing::make_transpose();
  EXPECT_THAT(get_reduction_tvs(*f), IsEmpty());
}

TEST(QueriesTest, AllTvsExceptKeepsCreationOrder) {
  auto f = ir::testing::make_softmax();
  EXPECT_THAT(
      all_tvs_except(*f, {tensor(*f, 5), tensor(*f, 0), tensor(*f, 3)}),
      ElementsAre(tensor(*f, 1), tensor(*f, 2), tensor(*f, 4), tensor(*f, 6), tensor(*f, 7)));
  EXPECT_EQ(all_tvs_except(*f, {}), f->tensors());
}

TEST(QueriesTest, PointwiseReferenceIsTheWidestOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* b = input(f, "b", DataType::F32, {sym("K")});
  output(f, ir::exp(b), "z");                       // 1 axis
  output(f, ir::broadcast(b, {true, false}), "w");  // [1, K]: 1 real axis
  TensorView* y = output(f, ir::add(x, b), "y");    // 2 axes
  output(f, ir::neg(x), "v");                       // 2 axes, later: a tie
  EXPECT_EQ(find_reference_for(f), y);
}

TEST(QueriesTest, ReductionReferenceIsTheWidestReduction) {
  Fusion f;
  TensorView* v = input(f, "v", DataType::F32, {sym("K")});
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* s0 = ir::sum(v, {0});  // [rK]
  TensorView* s1 = ir::sum(x, {1});  // [iN, rK]
  output(f, ir::add(x, ir::broadcast(s1, {false, true})), "y");
  output(f, s0, "t");
  EXPECT_EQ(find_reference_for(f), s1);
}

TEST(QueriesTest, SoftmaxReferenceIsTheFirstReduction) {
  auto f = ir::testing::make_softmax();
  EXPECT_EQ(find_reference_for(*f), tensor(*f, 1));
}

TEST(QueriesTest, AFusionWithoutOutputsHasNoReference) {
  Fusion f;
  input(f, "x", DataType::F32, {sym("N")});
  EXPECT_EQ(find_reference_for(f), nullptr);
}

TEST(QueriesTest, TransposeMakesTwoInnerDimGroups) {
  // y[K, N] = transpose(x[N, K]) + z[K, N]: x is read along K, z and y along N.
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* z = input(f, "z", DataType::F32, {sym("K"), sym("N")});
  TensorView* y = output(f, ir::add(ir::transpose(x, 0, 1), z), "y");
  EXPECT_THAT(group_inputs_outputs_by_inner_dim(f), ElementsAre(ElementsAre(x), ElementsAre(z, y)));
}

TEST(QueriesTest, PointwiseMakesOneGroupAndSkipsRankZero) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* b = input(f, "b", DataType::F32, {sym("K")});
  TensorView* y = output(f, ir::add(x, b), "y");
  output(f, ir::sum(b, {}), "s");  // rank 0
  EXPECT_THAT(group_inputs_outputs_by_inner_dim(f), ElementsAre(ElementsAre(x, b, y)));
}

TEST(QueriesTest, IsDependencyOfFollowsDefinitions) {
  auto f = ir::testing::make_softmax();
  TensorView* x = tensor(*f, 0);
  TensorView* m = tensor(*f, 1);
  TensorView* e = tensor(*f, 4);
  TensorView* s = tensor(*f, 5);
  TensorView* y = tensor(*f, 7);
  EXPECT_TRUE(is_dependency_of(x, y));
  EXPECT_TRUE(is_dependency_of(m, s));
  EXPECT_TRUE(is_dependency_of(y, y));
  EXPECT_FALSE(is_dependency_of(y, x));
  EXPECT_FALSE(is_dependency_of(s, e));
}

TEST(QueriesTest, IsDependencyOfSeesNoPathBetweenSiblings) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = output(f, ir::exp(x), "a");
  TensorView* b = output(f, ir::neg(x), "b");
  EXPECT_FALSE(is_dependency_of(a, b));
  EXPECT_FALSE(is_dependency_of(b, a));
  EXPECT_FALSE(is_dependency_of(ir::constant(f, 2.0), a));
}

TEST(QueriesTest, ValsBetweenKeepsOnlyTensorsOnAPath) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  TensorView* b = ir::tv(ir::neg(x));
  TensorView* c = output(f, ir::add(a, b), "c");
  TensorView* d = output(f, ir::relu(x), "d");
  EXPECT_THAT(vals_between({x}, {c}), ElementsAre(x, a, b, c));
  EXPECT_THAT(vals_between({a}, {c}), ElementsAre(a, c));
  EXPECT_THAT(vals_between({x}, {c, d}), ElementsAre(x, a, b, c, d));
  EXPECT_THAT(vals_between({a}, {a}), ElementsAre(a));
  EXPECT_THAT(vals_between({c}, {x}), IsEmpty());
  EXPECT_THAT(vals_between({a}, {d}), IsEmpty());
  EXPECT_THAT(vals_between({}, {d}), IsEmpty());
}

TEST(QueriesTest, ValsBetweenIsTopologicalAfterCacheAfter) {
  // The cache is created last but computed first.
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  TensorView* y = output(f, ir::neg(a), "y");
  TensorView* c = cache_after(x);
  EXPECT_THAT(vals_between({x}, {y}), ElementsAre(x, c, a, y));
}

}  // namespace
}  // namespace schedlab::sched
