// Reshape and view ops (issue 37): the ViewOp's domains (root = the
// input's axes, logical split and merged from it), the reference evaluator
// (a row-major reinterpretation; expand reads its broadcast element),
// propagation across a view (propagate_transformation and propagate_reshape)
// and lowering through the rfactor-style root indexing: a pointwise chain
// through a flatten and a split reshape, scheduled by one reference past the
// view, validated and sanitized on the CPU backend, NVRTC sm_90. A view
// whose producer is not given the view's transforms (inlined without
// propagation) is refused by lowering, never run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lower_test_util.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/reshape.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/sched/propagate_reshape.h"

namespace schedlab::lower::testing {
namespace {

using ir::ParallelType;
using ir::SizeExpr;
using ir::TensorView;
using test_support::domain_sig;
using test_support::loop_sig;
using test_support::named;
using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

frontend::FusionDefinition parse(const std::string& body, const std::string& shape = "[N, H, W]") {
  return frontend::parse_fusion_text(
      "inputs:\n  x: {dtype: f32, shape: " + shape + "}\nbody: |\n" + body, "reshape_test.yaml");
}

TEST(ReshapeIr, FlattenMergesTheRootIntoTheLogicalDomain) {
  auto def = parse("  t = exp(x)\n  y = flatten(t, 1, 2)\noutputs: [y]\n");
  ir::verify(*def.fusion);
  TensorView* y = named(*def.fusion, "y");
  ASSERT_TRUE(y->has_root());
  EXPECT_THAT(domain_sig(y->root()), ElementsAre("iS{N}", "iS{H}", "iS{W}"));
  EXPECT_THAT(domain_sig(y->logical()), ElementsAre("iS{N}", "iS{(H * W)}"));
  EXPECT_EQ(y->definition()->op_name(), "reshape");
  EXPECT_THAT(ir::print_math(*def.fusion), HasSubstr("fn = flatten"));
}

TEST(ReshapeIr, MinusOneSplitsOffAConstantAndBroadcastsComeAndGo) {
  auto def = parse("  y = reshape(x, [N, 1, 4, -1])\n  z = squeeze(y, 1)\n"
                   "  u = unsqueeze(z, -1)\noutputs: [u]\n",
                   "[N, K, 1]");
  TensorView* y = named(*def.fusion, "y");
  // x's broadcast is in the root, not in the logical domain; the new 1 is.
  EXPECT_THAT(domain_sig(y->root()), ElementsAre("iS{N}", "iS{K}", "bS{1}", "bS{1}"));
  EXPECT_THAT(domain_sig(y->logical()), ElementsAre("iS{N}", "bS{1}", "iS{4}", "iS{ceilDiv(K, 4)}"));
  EXPECT_THAT(domain_sig(named(*def.fusion, "u")->logical()),
              ElementsAre("iS{N}", "iS{4}", "iS{ceilDiv(K, 4)}", "bS{1}"));
  ir::verify(*def.fusion);
  EXPECT_THAT(ir::check_view_sizes(*def.fusion, {{"N", 2}, {"K", 10}}),
              HasSubstr("the axis of extent K = 10 is split into 4 pieces"));
  EXPECT_EQ(ir::check_view_sizes(*def.fusion, {{"N", 2}, {"K", 12}}), "");
}

TEST(ReshapeIr, ConstantShapesMergeThenSplit) {
  // [4, 6] -> [3, 8]: 4 is not a multiple of 3, so 4 and 6 merge first.
  auto def = parse("  y = reshape(x, [3, 8])\noutputs: [y]\n", "[4, 6]");
  EXPECT_THAT(domain_sig(named(*def.fusion, "y")->logical()), ElementsAre("iS{3}", "iS{8}"));
  // [N, K] -> [N, -1, 2]: K splits into ceilDiv(K, 2) and 2.
  auto half = parse("  y = reshape(x, [N, -1, 2])\noutputs: [y]\n", "[N, K]");
  EXPECT_THAT(domain_sig(named(*half.fusion, "y")->logical()),
              ElementsAre("iS{N}", "iS{ceilDiv(K, 2)}", "iS{2}"));
  // [N, K] -> [K, N] would split N * K by the named size K.
  EXPECT_THAT(user_error_of([] { parse("  y = reshape(x, [K, N])\noutputs: [y]\n", "[N, K]"); }),
              HasSubstr("needs a constant on one side"));
}

TEST(ReshapeRef, ReshapeIsRowMajorAndExpandRepeats) {
  auto def = parse("  y = reshape(x, [3, 2])\n  b = reshape(x, [1, 6])\n"
                   "  e = expand(b, [4, -1])\noutputs: [y, e]\n",
                   "[2, 3]");
  ref::HostTensor in{ir::DataType::F32, {2, 3}, {0, 1, 2, 3, 4, 5}};
  auto out = ref::evaluate(*def.fusion, {in}, {});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[0].data, in.data);
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{4, 6}));
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 6; ++c) {
      EXPECT_EQ(out[1].data[static_cast<size_t>(r * 6 + c)], c);
    }
}

/// Lowers `def` at `sizes`, runs it sanitized on the CPU backend and compares
/// it with the reference of `plain`; "" when it validates clean.
std::string run_clean(const frontend::FusionDefinition& def, const frontend::FusionDefinition& plain,
                      const ir::SizeBindings& sizes) {
  auto p = prepare_or_report(def, sizes);
  expect_nvrtc_accepts(p.source);
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 5, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  auto run = runtime::execute_sanitized(cpu_backend(), p, inputs, sizes, "reshape");
  std::string why;
  if (!run.findings.empty()) why += std::to_string(run.findings.size()) + " sanitizer findings\n";
  for (size_t i = 0; i < want.size(); ++i) {
    auto c = ref::compare(run.outputs[i], want[i],
                          ref::Tolerance::error_bound(plain.fusion->outputs()[i]->dtype()));
    if (!c.ok) {
      why += c.first_mismatch + "\n";
    }
  }
  return why;
}

const char* kChain = "  t = exp(x) * 2\n  f = flatten(t, 1, 2)\n  y = f + 1\noutputs: [y]\n";

/// y merged and split by 32 on [BIDx, TIDx], propagated, inlined.
void flat_schedule(ir::Fusion& f, bool reshape_first) {
  if (reshape_first) {
    EXPECT_EQ(sched::propagate_reshape(f), 1);
  }
  TensorView* y = named(f, "y");
  y->merge(0);
  y->split(0, 32);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_and_inline(f, y);
}

TEST(ReshapeLower, PointwiseChainThroughFlattenIsOneInlinedKernel) {
  for (bool reshape_first : {false, true}) {  // NOLINT
    auto def = parse(kChain);
    auto plain = parse(kChain);
    flat_schedule(*def.fusion, reshape_first);
    ir::verify(*def.fusion);
    // The view's merge replayed on t: its loop maps to y's, so it inlines whole.
    TensorView* t = named(*def.fusion, "t");
    EXPECT_THAT(loop_sig(t), ElementsAre("iblockIdx.x{ceilDiv((N * (H * W)), 32)}",
                                         "ithreadIdx.x{32}"));
    EXPECT_EQ(t->compute_at_pos(), 2);
    for (const ir::SizeBindings& s : {ir::SizeBindings{{"N", 3}, {"H", 5}, {"W", 7}},
                                      ir::SizeBindings{{"N", 2}, {"H", 33}, {"W", 4}}}) {
      EXPECT_EQ(run_clean(def, plain, s), "") << sizes_str(s);
    }
  }
}

TEST(ReshapeLower, PropagateReshapeGivesProducersTheViewsShape) {
  auto def = parse(kChain);
  EXPECT_EQ(sched::propagate_reshape(*def.fusion), 1);
  EXPECT_THAT(loop_sig(named(*def.fusion, "t")), ElementsAre("iS{N}", "iS{(H * W)}"));
  EXPECT_THAT(loop_sig(def.fusion->inputs()[0]), ElementsAre("iS{N}", "iS{(H * W)}"));
}

TEST(ReshapeLower, SplitReshapeAndPermuteValidate) {
  const char* body =
      "  t = x + 1\n  h = reshape(t, [B, S, 4, -1])\n  y = permute(h, [0, 2, 1, 3])\n"
      "outputs: [y]\n";
  auto def = parse(body, "[B, S, E]");
  auto plain = parse(body, "[B, S, E]");
  TensorView* y = named(*def.fusion, "y");
  y->merge(0);
  y->merge(0);
  y->merge(0);
  y->split(0, 64);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_and_inline(*def.fusion, y);
  EXPECT_EQ(named(*def.fusion, "t")->compute_at_pos(), 2);
  for (const ir::SizeBindings& s : {ir::SizeBindings{{"B", 2}, {"S", 3}, {"E", 8}},
                                    ir::SizeBindings{{"B", 3}, {"S", 5}, {"E", 36}}}) {
    EXPECT_EQ(run_clean(def, plain, s), "") << sizes_str(s);
  }
}

TEST(ReshapeLower, AProducerInlinesOnlyWhereTheViewKeepsItsAxes) {
  // t is not given the view's merge (no propagation across it): it shares
  // only N with the view's loop [N, H * W], so inline_most inlines it at 1,
  // and inline_at past that is refused with the axis that does not map.
  auto def = parse(kChain);
  auto plain = parse(kChain);
  TensorView* y = named(*def.fusion, "y");
  y->merge(0);
  y->split(0, 32);
  sched::inline_most(*def.fusion);
  TensorView* t = named(*def.fusion, "t");
  EXPECT_EQ(t->compute_at_pos(), 1);
  EXPECT_EQ(run_clean(def, plain, {{"N", 3}, {"H", 5}, {"W", 7}}), "");
  EXPECT_THAT(user_error_of([&] { sched::inline_at(t, 2); }),
              HasSubstr("does not map to axis 1 of consumer T3 (f)"));
}

}  // namespace
}  // namespace schedlab::lower::testing
