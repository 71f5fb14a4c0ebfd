// Structural equality, order and hashing of kernel-IR expressions
// (schedlab/lower/kir_equality.h), the typed built-ins and tensor sizes
// (kir::Builtin, kir::TensorDim) and their kernel-IR text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "schedlab/lower/kir_equality.h"
#include "schedlab/lower/kir_printer.h"

namespace schedlab::kir {
namespace {

using P = ir::ParallelType;

std::unique_ptr<Buffer> param(const std::string& name, int rank = 2) {
  auto b = std::make_unique<Buffer>();
  b->name = name;
  b->dtype = ir::DataType::F32;
  b->memory = ir::MemoryType::Global;
  b->is_param = true;
  b->rank = rank;
  return b;
}

ExprP c(int64_t v) {
  return Expr::integer(v);
}
ExprP v(const std::string& n) {
  return Expr::var(n);
}

/// Pairwise distinct expressions (built twice: equal ones are not shared).
std::vector<ExprP> distinct(const Buffer* a, const Buffer* b) {
  return {
      c(0),
      c(1),
      c(-1),
      Expr::boolean(true),
      Expr::boolean(false),
      Expr::floating(0.0, ir::DataType::F32),
      Expr::floating(-0.0, ir::DataType::F32),
      Expr::floating(0.0, ir::DataType::F64),
      v("i"),
      v("j"),
      Expr::var("i", ir::DataType::I32),
      Expr::launch_index(P::TIDx),
      Expr::launch_index(P::TIDy),
      Expr::launch_index(P::BIDx),
      Expr::launch_extent(P::TIDx),
      Expr::launch_extent(P::BIDx),
      Expr::launch_extent(P::BIDz),
      Expr::tensor_size(a, 0),
      Expr::tensor_size(a, 1),
      Expr::tensor_stride(a, 1),
      Expr::tensor_size(a, 1, 16),
      Expr::tensor_size(a, 1, 12),
      Expr::tensor_size(b, 1),  // a different buffer of the same name
      v("i") + v("j"),
      v("j") + v("i"),
      v("i") * v("j"),
      v("i") / c(4),
      v("i") % c(4),
      Expr::ceil_div(v("i"), c(4)),
      v("i") < v("j"),
      (v("i") < v("j")) && (v("j") < c(3)),
      v("i") ^ v("j"),
      Expr::launch_index(P::TIDx) * c(4) + v("i"),
      Expr::cast(v("i"), ir::DataType::F32),
      Expr::cast(v("i"), ir::DataType::F64),
      Expr::unary(ir::UnaryOpType::Exp, Expr::floating(1.0, ir::DataType::F32), ir::DataType::F32),
      Expr::binary(ir::BinaryOpType::Add, Expr::floating(1.0, ir::DataType::F32),
                   Expr::floating(2.0, ir::DataType::F32), ir::DataType::F32),
      Expr::select(v("i") < c(2), v("i"), c(0), ir::DataType::I64),
      Expr::load(a, v("i")),
      Expr::load(b, v("i")),
      Expr::load(a, v("j")),
      // the same element under each cache policy (ld.global.ca, .cg, .cs)
      Expr::load(a, v("i"), ir::CacheOp::AllLevels),
      Expr::load(a, v("i"), ir::CacheOp::Global),
      Expr::load(a, v("i"), ir::CacheOp::Streaming),
  };
}

TEST(KirEquality, EqualTreesAreEqualAndHashEqual) {
  auto a = param("T0"), b = param("T0");
  const std::vector<ExprP> x = distinct(a.get(), b.get()), y = distinct(a.get(), b.get());
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    SCOPED_TRACE(print_expr(x[i]));
    EXPECT_NE(x[i], y[i]);  // two trees, not one shared node
    EXPECT_TRUE(equal(x[i], y[i]));
    EXPECT_EQ(compare(*x[i], *y[i]), 0);
    EXPECT_EQ(hash(*x[i]), hash(*y[i]));
  }
  // A NaN equals itself (as a tree), so maps can hold it.
  const ExprP nan = Expr::floating(std::numeric_limits<double>::quiet_NaN(), ir::DataType::F32);
  EXPECT_TRUE(
      equal(nan, Expr::floating(std::numeric_limits<double>::quiet_NaN(), ir::DataType::F32)));
}

TEST(KirEquality, DifferentTreesDifferAndCompareAsATotalOrder) {
  auto a = param("T0"), b = param("T0");
  const std::vector<ExprP> x = distinct(a.get(), b.get());
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < x.size(); ++j) {
      if (i == j) continue;
      SCOPED_TRACE(print_expr(x[i]) + " vs " + print_expr(x[j]));
      EXPECT_FALSE(equal(x[i], x[j]));
      const int ij = compare(*x[i], *x[j]), ji = compare(*x[j], *x[i]);
      EXPECT_NE(ij, 0);
      EXPECT_EQ(ij<0, ji> 0);                // antisymmetric
      for (size_t k = 0; k < x.size(); ++k)  // transitive
        if (ij < 0 && compare(*x[j], *x[k]) < 0) {
          EXPECT_LT(compare(*x[i], *x[k]), 0);
        }
    }
  // Distinct trees rarely share a hash: at most one collision here.
  std::vector<size_t> hashes;
  for (const ExprP& e : x) hashes.push_back(hash(*e));
  std::sort(hashes.begin(), hashes.end());
  EXPECT_GE(std::unique(hashes.begin(), hashes.end()) - hashes.begin(),
            static_cast<std::ptrdiff_t>(x.size()) - 1);
}

TEST(KirEquality, CanonicalOrderPutsBlockUniformTermsBeforeLoopAndThreadIndices) {
  auto t = param("T0");
  std::vector<ExprP> terms = {Expr::launch_index(P::TIDx), v("i5"),
                              Expr::launch_index(P::BIDx), Expr::tensor_size(t.get(), 1),
                              v("i12") * v("j3"),          Expr::launch_extent(P::TIDx),
                              Expr::launch_extent(P::BIDx)};
  std::sort(terms.begin(), terms.end(), ExprLess());
  std::vector<std::string> text;
  for (const ExprP& e : terms) text.push_back(print_expr(e));
  EXPECT_THAT(text, ::testing::ElementsAre("(i12 * j3)", "T0.size[1]", "dim(TIDx)", "BIDx",
                                           "dim(BIDx)", "i5", "TIDx"));
}

TEST(KirEquality, MapsAndSubstitutionFindEqualTrees) {
  auto t = param("T0");
  ExprMap<ExprP> values;
  values[Expr::launch_extent(P::TIDx)] = c(128);
  values[Expr::tensor_size(t.get(), 1)] = c(1000);
  // Fresh nodes, equal to the keys: found.
  const ExprP e = Expr::launch_extent(P::TIDx) * v("i") + Expr::tensor_size(t.get(), 1);
  EXPECT_EQ(print_expr(substitute(e, values)), "((128 * i) + 1000)");
  // A whole subtree as a key; the quotient and the thread index are not keys.
  values[v("i") + v("j")] = c(7);
  EXPECT_EQ(print_expr(substitute((v("i") + v("j")) * Expr::tensor_size(t.get(), 1, 16), values)),
            "(7 * (T0.size[1] >> 4))");
  EXPECT_EQ(print_expr(substitute(Expr::launch_index(P::TIDx), values)), "TIDx");
  // Constants fold once bound.
  EXPECT_EQ(print_expr(substitute(Expr::launch_extent(P::TIDx) * c(2), values)), "256");
}

TEST(KirEquality, BuiltinsAndSizesPrintInKernelIrTerms) {
  auto t = param("T3", 3);
  EXPECT_EQ(print_expr(Expr::launch_index(P::TIDz)), "TIDz");
  EXPECT_EQ(print_expr(Expr::launch_index(P::BIDy)), "BIDy");
  EXPECT_EQ(print_expr(Expr::launch_extent(P::TIDx)), "dim(TIDx)");
  EXPECT_EQ(print_expr(Expr::launch_extent(P::BIDz)), "dim(BIDz)");
  EXPECT_EQ(print_expr(Expr::tensor_size(t.get(), 2)), "T3.size[2]");
  EXPECT_EQ(print_expr(Expr::tensor_stride(t.get(), 0)), "T3.stride[0]");
  EXPECT_EQ(print_expr(Expr::tensor_size(t.get(), 1, 32)), "(T3.size[1] >> 5)");
  EXPECT_EQ(print_expr(Expr::tensor_size(t.get(), 1, 48)), "(T3.size[1] / 48)");
}

}  // namespace
}  // namespace schedlab::kir
