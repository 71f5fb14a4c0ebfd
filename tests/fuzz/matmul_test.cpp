// The fuzzer's matmul kind (core/fuzz/matmul_gen.cpp, docs/fuzz.md
// "Matmuls"): a fixed seed draws matmuls and linears among its cases, each a
// contraction followed by its epilogue, with every feature the kind has.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "schedlab/fuzz/fuzz.h"

namespace schedlab::fuzz {
namespace {

bool is_matmul(const Case& c) {
  return c.fusion.features.count("matmul") || c.fusion.features.count("linear");
}

/// The indices below `cases` of seed `seed` whose fusion is of the matmul kind.
std::vector<uint64_t> matmul_cases(uint64_t seed, uint64_t cases) {
  std::vector<uint64_t> r;
  for (uint64_t i = 0; i < cases; ++i)
    if (is_matmul(generate_case(seed, i))) r.push_back(i);
  return r;
}

TEST(FuzzMatmul, AFixedSeedDrawsDozensOfMatmulsInAFewHundredCases) {
  // One case in eight or so (kMatmulChance 0.12): about 36 of 300.
  const size_t n = matmul_cases(1, 300).size();
  EXPECT_GE(n, 20u);
  EXPECT_LE(n, 60u);
}

TEST(FuzzMatmul, AMatmulCaseIsAContractionThenAnEpilogue) {
  for (uint64_t i : matmul_cases(1, 100)) {
    const GenFusion f = generate_case(1, i).fusion;
    SCOPED_TRACE(f.text());
    ASSERT_FALSE(f.body.empty());
    const std::string& first = f.body.front().expr;
    EXPECT_TRUE(first.rfind("matmul(", 0) == 0 || first.rfind("linear(", 0) == 0) << first;
    // The operands feed the contraction and nothing else (their K axis is
    // not in the result's shape), except as a copied output (set).
    for (size_t s = 1; s < f.body.size(); ++s) {
      if (f.body[s].expr.rfind("set(", 0) == 0) continue;
      for (const std::string& u : f.body[s].uses)
        for (const char* operand : {"a", "at", "b", "bt", "x", "w", "wt"})
          EXPECT_NE(u, operand) << f.body[s].name << " = " << f.body[s].expr;
    }
  }
}

TEST(FuzzMatmul, MatmulCasesCoverTheKindsFeatures) {
  std::set<std::string> seen;
  for (uint64_t i : matmul_cases(1, 1000)) {
    const Case c = generate_case(1, i);
    seen.insert(c.fusion.features.begin(), c.fusion.features.end());
  }
  for (const char* f :
       {"matmul", "linear", "linear_bias", "linear_rank1", "matmul_batch",
        "matmul_batch_broadcast", "matmul_transposed", "matmul_bf16", "matmul_f16", "matmul_f32",
        "matmul_aligned_16", "matmul_unaligned", "matmul_extent_1", "epilogue_row", "epilogue_col",
        "epilogue_res", "epilogue_gelu", "reduce_sum", "output_bf16"})
    EXPECT_TRUE(seen.count(f)) << "no matmul case with feature " << f << " in 1000 cases";
}

}  // namespace
}  // namespace schedlab::fuzz
