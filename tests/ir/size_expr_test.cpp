// SizeExpr: folding, evaluation, structural equality, printing, symbols.
#include "schedlab/ir/size_expr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedlab/base/error.h"

namespace schedlab::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const SizeExpr N = SizeExpr::symbol("N");
const SizeExpr K = SizeExpr::symbol("K");
SizeExpr c(int64_t v) {
  return SizeExpr::constant(v);
}

TEST(SizeExprTest, DefaultIsConstantOne) {
  SizeExpr e;
  ASSERT_TRUE(e.is_const());
  EXPECT_EQ(e.const_value(), 1);
}

TEST(SizeExprTest, MulOfConstantsFolds) {
  SizeExpr e = SizeExpr::mul(c(6), c(7));
  ASSERT_TRUE(e.is_const());
  EXPECT_EQ(e.const_value(), 42);
}

TEST(SizeExprTest, MulByOneFoldsToTheOtherOperand) {
  EXPECT_TRUE(SizeExpr::mul(c(1), N).same_as(N));
  EXPECT_TRUE(SizeExpr::mul(N, c(1)).same_as(N));
  EXPECT_EQ(SizeExpr::mul(N, c(1)).kind(), SizeExpr::Kind::Symbol);
}

TEST(SizeExprTest, MulOfSymbolsStaysSymbolic) {
  SizeExpr e = SizeExpr::mul(N, K);
  EXPECT_EQ(e.kind(), SizeExpr::Kind::Mul);
  EXPECT_TRUE(e.lhs().same_as(N));
  EXPECT_TRUE(e.rhs().same_as(K));
  EXPECT_EQ(SizeExpr::mul(N, c(4)).kind(), SizeExpr::Kind::Mul);
}

TEST(SizeExprTest, CeilDivOfConstantsFoldsRoundingUp) {
  EXPECT_EQ(SizeExpr::ceil_div(c(10), c(4)).const_value(), 3);
  EXPECT_EQ(SizeExpr::ceil_div(c(12), c(4)).const_value(), 3);
  EXPECT_EQ(SizeExpr::ceil_div(c(1), c(128)).const_value(), 1);
  EXPECT_EQ(SizeExpr::ceil_div(c(0), c(128)).const_value(), 0);
}

TEST(SizeExprTest, CeilDivByOneFolds) {
  EXPECT_TRUE(SizeExpr::ceil_div(N, c(1)).same_as(N));
  EXPECT_EQ(SizeExpr::ceil_div(N, c(128)).kind(), SizeExpr::Kind::CeilDiv);
  // A constant numerator over a symbol cannot fold.
  EXPECT_EQ(SizeExpr::ceil_div(c(128), N).kind(), SizeExpr::Kind::CeilDiv);
}

TEST(SizeExprTest, CeilDivByNonPositiveConstantIsInternalError) {
  EXPECT_THROW(SizeExpr::ceil_div(N, c(0)), InternalError);
  EXPECT_THROW(SizeExpr::ceil_div(c(8), c(-2)), InternalError);
}

TEST(SizeExprTest, EvaluateUnderBindings) {
  SizeBindings b{{"N", 1000}, {"K", 7}};
  EXPECT_EQ(N.evaluate(b), 1000);
  EXPECT_EQ(c(5).evaluate(b), 5);
  EXPECT_EQ(SizeExpr::mul(N, K).evaluate(b), 7000);
  EXPECT_EQ(SizeExpr::ceil_div(N, c(128)).evaluate(b), 8);
  EXPECT_EQ(SizeExpr::ceil_div(N, K).evaluate(b), 143);
  // ceilDiv(N, 128) * 128 rounds N up to a multiple of 128.
  EXPECT_EQ(SizeExpr::mul(SizeExpr::ceil_div(N, c(128)), c(128)).evaluate(b), 1024);
  EXPECT_EQ(SizeExpr::ceil_div(SizeExpr::mul(N, K), c(4)).evaluate(b), 1750);
}

TEST(SizeExprTest, EvaluateIsNulloptWhenASymbolIsUnbound) {
  SizeBindings only_n{{"N", 4}};
  EXPECT_EQ(K.evaluate(only_n), std::nullopt);
  EXPECT_EQ(SizeExpr::mul(N, K).evaluate(only_n), std::nullopt);
  EXPECT_EQ(SizeExpr::ceil_div(K, N).evaluate(only_n), std::nullopt);
  EXPECT_EQ(N.evaluate({}), std::nullopt);
  EXPECT_EQ(c(3).evaluate({}), 3);
}

TEST(SizeExprTest, EvaluateCeilDivByZeroBindingIsInternalError) {
  EXPECT_THROW(SizeExpr::ceil_div(N, K).evaluate({{"N", 4}, {"K", 0}}), InternalError);
}

TEST(SizeExprTest, SameAsIsStructural) {
  EXPECT_TRUE(N.same_as(SizeExpr::symbol("N")));
  EXPECT_FALSE(N.same_as(K));
  EXPECT_TRUE(c(8).same_as(c(8)));
  EXPECT_FALSE(c(8).same_as(c(9)));
  EXPECT_FALSE(c(1).same_as(N));
  // Separately built trees compare equal...
  EXPECT_TRUE(SizeExpr::ceil_div(SizeExpr::mul(N, K), c(4))
                  .same_as(SizeExpr::ceil_div(SizeExpr::mul(N, K), c(4))));
  // ...but equality is not algebraic: operand order and operators matter.
  EXPECT_FALSE(SizeExpr::mul(N, K).same_as(SizeExpr::mul(K, N)));
  EXPECT_FALSE(SizeExpr::mul(N, c(4)).same_as(SizeExpr::ceil_div(N, c(4))));
  // Folded constants equal literals.
  EXPECT_TRUE(SizeExpr::mul(c(2), c(3)).same_as(c(6)));
}

TEST(SizeExprTest, Str) {
  EXPECT_EQ(N.str(), "N");
  EXPECT_EQ(c(8).str(), "8");
  EXPECT_EQ(SizeExpr::ceil_div(N, c(128)).str(), "ceilDiv(N, 128)");
  EXPECT_EQ(SizeExpr::mul(N, K).str(), "(N * K)");
  EXPECT_EQ(SizeExpr::mul(SizeExpr::ceil_div(N, c(4)), K).str(), "(ceilDiv(N, 4) * K)");
}

TEST(SizeExprTest, CollectSymbolsInFirstSeenOrderWithoutRepeats) {
  std::vector<std::string> out;
  c(4).collect_symbols(out);
  EXPECT_THAT(out, IsEmpty());

  SizeExpr e = SizeExpr::mul(SizeExpr::ceil_div(K, N), SizeExpr::mul(N, SizeExpr::symbol("M")));
  e.collect_symbols(out);
  EXPECT_THAT(out, ElementsAre("K", "N", "M"));

  // Appends to what is there and keeps it unique.
  N.collect_symbols(out);
  SizeExpr::symbol("B").collect_symbols(out);
  EXPECT_THAT(out, ElementsAre("K", "N", "M", "B"));
}

TEST(SizeExprTest, AccessorsOnTheWrongKindAreInternalErrors) {
  EXPECT_THROW(N.const_value(), InternalError);
  EXPECT_THROW(c(1).symbol_name(), InternalError);
  EXPECT_THROW(N.lhs(), InternalError);
  EXPECT_THROW(c(3).rhs(), InternalError);
  EXPECT_EQ(N.symbol_name(), "N");
}

}  // namespace
}  // namespace schedlab::ir
