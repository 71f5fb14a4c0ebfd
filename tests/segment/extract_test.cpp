// ir::extract (core/ir/extract.cpp), tested here next to its only client,
// the segmenter: extracted fusions verify, keep the math, names and sizes,
// and chaining the pieces' reference results gives the whole fusion's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedlab/ir/arith.h"
#include "schedlab/ir/extract.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/runtime/executor.h"
#include "segment_test_util.h"
#include "test_support.h"

namespace schedlab::ir {
namespace {

using segment::testing::evaluate_chain;
using segment::testing::ragged_sizes;
using test_support::load_config_fusion;
using test_support::named;

std::vector<const Expr*> live_exprs(const Fusion& f) {
  auto live = f.exprs_for_outputs();
  std::vector<const Expr*> r;
  for (const Expr* e : f.exprs())
    if (std::find(live.begin(), live.end(), e) != live.end()) r.push_back(e);
  return r;
}

std::vector<std::string> standard_fusions() {
  std::vector<std::string> names;
  for (const auto& p :
       test_support::files_with_extension(test_support::config_fusion_dir(), ".yaml"))
    names.push_back(std::filesystem::path(p).stem().string());
  return names;
}

/// The whole fusion's reference outputs, and the chained pieces', at both
/// the default and a ragged size; they must agree exactly (same math in
/// double, same order).
void expect_chain_matches(const frontend::FusionDefinition& def,
                          const std::vector<Extraction>& pieces, const std::string& what) {
  const Fusion& f = *def.fusion;
  std::vector<const Extraction*> chain;
  for (const Extraction& x : pieces) chain.push_back(&x);
  for (const SizeBindings& sizes : {frontend::bind_sizes(def, {}), ragged_sizes(f)}) {
    auto inputs = ref::make_inputs(f, sizes, 3, def.input_ranges);
    auto want = ref::evaluate(f, inputs, sizes);
    auto got = evaluate_chain(f, chain, inputs, sizes);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].shape, want[i].shape) << what << ": output " << i;
      EXPECT_EQ(got[i].data, want[i].data) << what << ": output " << i;
    }
  }
}

class StandardFusion : public ::testing::TestWithParam<std::string> {};

// Extracting every live expression reproduces the fusion: the same printed
// math (inputs, outputs, numbering, user names, extents).
TEST_P(StandardFusion, WholeExtractionPrintsTheSame) {
  auto def = load_config_fusion(GetParam());
  Extraction x = extract(*def.fusion, live_exprs(*def.fusion), def.fusion->name());
  verify(*x.fusion);
  EXPECT_EQ(print_math(*x.fusion), print_math(*def.fusion));
}

// One piece per expression: every piece verifies, and the chain of their
// reference results is the whole fusion's.
TEST_P(StandardFusion, OnePiecePerExpressionChainsToTheWhole) {
  auto def = load_config_fusion(GetParam());
  std::vector<Extraction> pieces;
  for (const Expr* e : live_exprs(*def.fusion)) {
    pieces.push_back(extract(*def.fusion, {e}, "piece"));
    verify(*pieces.back().fusion);
    // A piece's only computed tensor is the copy of e's output.
    EXPECT_EQ(pieces.back().fusion->exprs().size(), 1u);
    EXPECT_EQ(pieces.back().original_of(pieces.back().fusion->exprs()[0]->out()), e->out());
  }
  expect_chain_matches(def, pieces, GetParam() + " one piece per expression");
}

// Two pieces, cut at every point of the topological order.
TEST_P(StandardFusion, EveryPrefixCutChainsToTheWhole) {
  auto def = load_config_fusion(GetParam());
  auto exprs = live_exprs(*def.fusion);
  for (size_t cut = 1; cut < exprs.size(); ++cut) {
    std::vector<Extraction> pieces;
    pieces.push_back(extract(*def.fusion, {exprs.begin(), exprs.begin() + cut}, "head"));
    pieces.push_back(extract(*def.fusion, {exprs.begin() + cut, exprs.end()}, "tail"));
    for (const Extraction& x : pieces) verify(*x.fusion);
    expect_chain_matches(def, pieces, GetParam() + " cut at " + std::to_string(cut));
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, StandardFusion, ::testing::ValuesIn(standard_fusions()),
                         [](const auto& info) { return info.param; });

// A tensor from another piece whose definition reduced an axis arrives
// without the Reduction axis; user names stay.
TEST(Extract, ReductionResultArrivesWithoutItsReductionAxis) {
  auto def = load_config_fusion("softmax");
  const Fusion& f = *def.fusion;
  const TensorView* m = named(f, "m");  // broadcast(T1 = max(x)), T1 = [iN, rK]
  Extraction x = extract(f, {m->definition()}, "bcast");
  verify(*x.fusion);
  ASSERT_EQ(x.fusion->inputs().size(), 1u);
  const TensorView* in = x.fusion->inputs()[0];
  EXPECT_EQ(x.original_of(in), m->definition()->inputs()[0]);
  ASSERT_EQ(in->nlogical(), 1);
  EXPECT_EQ(in->logical()[0]->extent().str(), "N");
  EXPECT_FALSE(in->has_reduction());
  ASSERT_EQ(x.fusion->outputs().size(), 1u);
  EXPECT_EQ(x.fusion->outputs()[0]->user_name(), "m");
  EXPECT_EQ(x.copy.at(m), x.fusion->outputs()[0]);
  EXPECT_EQ(x.fusion->outputs()[0]->memory_type(), MemoryType::Global);
}

// layernorm's `var = ... / K` alone: K reaches the kernel through an extra,
// unused input (x, the first input with K in its shape), and it lowers.
TEST(Extract, SizeUsedAsValueGetsACarrierInput) {
  auto def = load_config_fusion("layernorm");
  const Fusion& f = *def.fusion;
  const TensorView* var = named(f, "var");
  Extraction x = extract(f, {var->definition()}, "var");
  verify(*x.fusion);
  auto originals = x.original_inputs();
  ASSERT_EQ(originals.size(), 2u);
  EXPECT_EQ(originals[1], named(f, "x"));
  EXPECT_TRUE(x.fusion->inputs()[1]->uses().empty());
  EXPECT_EQ(x.fusion->size_symbols(), (std::vector<std::string>{"N", "K"}));
  runtime::PreparedKernel p = runtime::prepare(*x.fusion, {{"N", 3}, {"K", 5}});
  EXPECT_THAT(p.source.source, ::testing::HasSubstr("__global__"));
}

// Outputs: what the original outputs and what a *live* expression outside
// reads; a dead reader does not make a tensor escape.
TEST(Extract, OutputsAreWhatLiveExpressionsOutsideRead) {
  Fusion f("dead");
  TensorView* x = f.make_tensor(DataType::F32, {SizeExpr::symbol("N")});
  x->set_user_name("x");
  f.add_input(x);
  TensorView* a = tv(add(x, constant(f, 1.0, DataType::F32)));
  TensorView* dead = tv(exp(a));  // never output
  TensorView* y = tv(mul(a, constant(f, 2.0, DataType::F32)));
  TensorView* z = tv(neg(y));
  f.add_output(z);
  f.add_output(y);
  ASSERT_TRUE(dead->uses().empty());

  Extraction both = extract(f, {a->definition(), y->definition()}, "ay");
  verify(*both.fusion);
  // y is a fusion output and z (outside) reads it; a is read only inside and by the dead exp.
  EXPECT_EQ(both.original_outputs(), (std::vector<const TensorView*>{y}));

  Extraction only_a = extract(f, {a->definition()}, "a");
  EXPECT_EQ(only_a.original_outputs(), (std::vector<const TensorView*>{a}));

  // Original outputs come first, in the original's order (z before y).
  Extraction tail = extract(f, {y->definition(), z->definition()}, "yz");
  EXPECT_EQ(tail.original_outputs(), (std::vector<const TensorView*>{z, y}));
  EXPECT_EQ(tail.original_inputs(), (std::vector<const TensorView*>{a}));
}

TEST(Extract, AnExpressionOfAnotherFusionIsAnInternalError) {
  auto a = load_config_fusion("add");
  auto b = load_config_fusion("add");
  EXPECT_THROW(extract(*a.fusion, {b.fusion->exprs()[0]}, "x"), InternalError);
}

}  // namespace
}  // namespace schedlab::ir
