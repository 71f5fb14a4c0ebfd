// The segmenter (core/segment) with fake schedulers that read the IR, so the
// algorithm is tested on its own: the whole fusion first, greedy merges in
// the documented order, refused cycles, kept reasons, segment order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "segment_test_util.h"
#include "test_support.h"

namespace schedlab::segment {
namespace {

using test_support::load_config_fusion;
using test_support::user_error_of;
using ::testing::HasSubstr;
using testing::no_reduction;
using testing::one_reduction;

/// "whole", "merge {..} into {..}: accepted by x", ... one line per offer.
std::vector<std::string> log_lines(const Segmentation& s) {
  std::vector<std::string> r;
  for (const Offer& o : s.log) {
    switch (o.kind) {
      case Offer::Kind::Whole:
        r.push_back("whole");
        break;
      case Offer::Kind::Merge:
        r.push_back("merge " + group_str(o.groups[0]) + " into " + group_str(o.groups[1]));
        break;
      case Offer::Kind::Alone:
        r.push_back(group_str(o.groups[0]) + " alone");
        break;
      case Offer::Kind::Cycle:
        r.push_back("cycle " + group_str(o.groups[0]) + " into " + group_str(o.groups[1]) +
                    " through " + group_str(o.through));
        continue;
    }
    r.back() += o.accepted_by.empty() ? ": rejected" : ": " + o.accepted_by;
  }
  return r;
}

std::vector<std::string> segment_lines(const Segmentation& s) {
  std::vector<std::string> r;
  for (const SegmentedGroup& seg : s.segments)
    r.push_back(seg.scheduler + " " + group_str(seg.exprs));
  return r;
}

// softmax: T1 = max(x), T2 (m) = bcast(T1), T3 = x - m, T4 (e) = exp(T3),
// T5 = sum(e), T6 (s) = bcast(T5), T7 (y) = e / s.
TEST(Segmenter, SoftmaxGreedyOrderAndRefusedCycle) {
  auto def = load_config_fusion("softmax");
  Segmentation s = segment(*def.fusion, {{"N", 3}, {"K", 5}}, {one_reduction(), no_reduction()});
  EXPECT_THAT(
      log_lines(s),
      ::testing::ElementsAre("whole: rejected",
                             // pass 1, consumers in topological order, producers in operand order
                             "merge {T1} into {T2 (m)}: rejected",  // T1 is read by T2
                             "merge {T2 (m)} into {T3}: no_reduction",
                             "merge {T2 (m), T3} into {T4 (e)}: no_reduction",
                             "merge {T2 (m), T3, T4 (e)} into {T5}: one_reduction",
                             "merge {T2 (m), T3, T4 (e), T5} into {T6 (s)}: rejected",
                             // T7 reads e directly and through T6: merging would close a cycle
                             "cycle {T2 (m), T3, T4 (e), T5} into {T7 (y)} through {T6 (s)}",
                             "merge {T6 (s)} into {T7 (y)}: no_reduction",
                             // pass 2: only unions not considered before
                             "merge {T1} into {T2 (m), T3, T4 (e), T5}: rejected",
                             "merge {T2 (m), T3, T4 (e), T5} into {T6 (s), T7 (y)}: rejected",
                             // step 3
                             "{T1} alone: one_reduction"));
  EXPECT_THAT(segment_lines(s),
              ::testing::ElementsAre("one_reduction {T1}", "one_reduction {T2 (m), T3, T4 (e), T5}",
                                     "no_reduction {T6 (s), T7 (y)}"));
  EXPECT_TRUE(s.complete());
  EXPECT_NO_THROW(require_complete(s));
}

TEST(Segmenter, EveryRejectionKeepsItsReasonInPriorityOrder) {
  auto def = load_config_fusion("softmax");
  Segmentation s = segment(*def.fusion, {}, {one_reduction(), no_reduction()});
  ASSERT_FALSE(s.log.empty());
  const Offer& whole = s.log.front();
  ASSERT_EQ(whole.rejections.size(), 2u);
  EXPECT_EQ(whole.rejections[0].scheduler, "one_reduction");
  EXPECT_EQ(whole.rejections[0].reason, "one_reduction takes one reduction; found 2");
  EXPECT_EQ(whole.rejections[1].scheduler, "no_reduction");
  EXPECT_EQ(whole.rejections[1].reason, "no_reduction takes no reductions; T1 is a max reduction");
  // An accepted offer keeps the refusals of the schedulers before the one that took it.
  const SegmentedGroup& last = s.segments.back();
  EXPECT_EQ(last.scheduler, "no_reduction");
  ASSERT_EQ(last.rejections.size(), 1u);
  EXPECT_EQ(last.rejections[0].reason, "one_reduction takes one reduction; found 0");
}

TEST(Segmenter, WholeFusionFirstAndPriorityDecides) {
  int asked_second = 0;
  Scheduler anything{"anything", [](ir::Fusion&, const ir::SizeBindings&) {
                       return Verdict{true, ""};
                     }};
  Scheduler second{"second", [&](ir::Fusion&, const ir::SizeBindings&) {
                     ++asked_second;
                     return Verdict{true, ""};
                   }};
  auto def = load_config_fusion("layernorm");
  Segmentation s = segment(*def.fusion, {}, {anything, second});
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].scheduler, "anything");
  EXPECT_EQ(s.log.size(), 1u);
  EXPECT_EQ(asked_second, 0);
  EXPECT_EQ(s.segments[0].exprs.size(), def.fusion->exprs_for_outputs().size());
  // The one segment is a standalone copy of the whole math.
  EXPECT_EQ(s.segments[0].fusion.fusion->name(), "layernorm_s0");
  ir::verify(*s.segments[0].fusion.fusion);
}

// A scheduler that schedules what it is offered (it must not, but cannot
// harm anything): the original and later offers are untouched copies.
TEST(Segmenter, OffersAreFreshCopies) {
  auto def = load_config_fusion("softmax");
  const std::string before = ir::print_math(*def.fusion);
  auto unscheduled = [](const ir::Fusion& f) {
    for (const ir::TensorView* t : f.tensors())
      if (t->loop() != t->logical()) return false;
    return true;
  };
  Scheduler meddler{"meddler", [&](ir::Fusion& f, const ir::SizeBindings&) {
                      EXPECT_TRUE(unscheduled(f));
                      f.outputs()[0]->split(0, 2);
                      return Verdict{false, "no"};
                    }};
  Scheduler checker = one_reduction();
  checker.accepts = [&, inner = checker.accepts](ir::Fusion& f, const ir::SizeBindings& sz) {
    EXPECT_TRUE(unscheduled(f)) << "the scheduler after the meddler got its copy";
    return inner(f, sz);
  };
  Segmentation s = segment(*def.fusion, {}, {meddler, checker, no_reduction()});
  EXPECT_EQ(ir::print_math(*def.fusion), before);
  EXPECT_TRUE(s.complete());
  for (const SegmentedGroup& seg : s.segments) EXPECT_TRUE(unscheduled(*seg.fusion.fusion));
}

TEST(Segmenter, NobodyTakesAReduction) {
  auto def = load_config_fusion("softmax");
  Segmentation s = segment(*def.fusion, {}, {no_reduction()});
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(segment_lines(s).front(), " {T1}");
  EXPECT_EQ(user_error_of([&] { require_complete(s); }),
            "no scheduler accepts {T1} of fusion 'softmax': no_reduction: no_reduction takes no "
            "reductions; T1 is a max reduction");
}

TEST(Segmenter, NoSchedulersAtAll) {
  auto def = load_config_fusion("add");
  Segmentation s = segment(*def.fusion, {}, {});
  EXPECT_EQ(user_error_of([&] { require_complete(s); }),
            "no scheduler accepts {T2 (z)} of fusion 'add': no schedulers to offer it to");
}

// The printed form, as `schedlab show --segments` prints it.
TEST(Segmenter, PrintedSegmentation) {
  auto def = load_config_fusion("softmax");
  Segmentation s = segment(*def.fusion, {}, {one_reduction(), no_reduction()});
  std::string text = print_segmentation(s);
  EXPECT_THAT(text, HasSubstr("Segmentation of softmax: 3 segments (schedulers in priority "
                              "order: one_reduction, no_reduction)\n"
                              "segment 0: one_reduction {T1}\n"
                              "  inputs: T0 (x)\n"
                              "  outputs: T1\n"
                              "segment 1: one_reduction {T2 (m), T3, T4 (e), T5}\n"
                              "  inputs: T0 (x), T1\n"
                              "  outputs: T4 (e), T5\n"
                              "segment 2: no_reduction {T6 (s), T7 (y)}\n"
                              "  inputs: T4 (e), T5\n"
                              "  outputs: T7 (y)\n"
                              "offers:\n"
                              "  1. whole fusion (7 expressions): rejected\n"
                              "    one_reduction: one_reduction takes one reduction; found 2\n"));
  EXPECT_THAT(text, HasSubstr("  7. merge {T2 (m), T3, T4 (e), T5} into {T7 (y)}: refused, it "
                              "would close a cycle through {T6 (s)}\n"));
  EXPECT_THAT(text, HasSubstr("  3. merge {T2 (m)} into {T3}: accepted by no_reduction\n"
                              "    one_reduction: one_reduction takes one reduction; found 0\n"));
}

class AllFusions : public ::testing::TestWithParam<std::string> {};

// Properties on every standard fusion: each live expression in exactly one
// segment; segments in an order where every crossing tensor is produced by
// an earlier segment; every segment accepted by the scheduler named.
TEST_P(AllFusions, SegmentsPartitionAndAreOrdered) {
  auto def = load_config_fusion(GetParam());
  const ir::Fusion& f = *def.fusion;
  Segmentation s = segment(f, {}, {one_reduction(), no_reduction()});
  ASSERT_TRUE(s.complete()) << print_segmentation(s);
  std::multiset<const ir::Expr*> covered;
  std::set<const ir::TensorView*> available(f.inputs().begin(), f.inputs().end());
  for (const SegmentedGroup& seg : s.segments) {
    covered.insert(seg.exprs.begin(), seg.exprs.end());
    ir::verify(*seg.fusion.fusion);
    for (const ir::TensorView* t : seg.fusion.original_inputs())
      EXPECT_TRUE(available.count(t)) << t->describe() << " read before it is produced\n"
                                      << print_segmentation(s);
    for (const ir::TensorView* t : seg.fusion.original_outputs()) available.insert(t);
    std::vector<Scheduler> all = {one_reduction(), no_reduction()};
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const Scheduler& sc) { return sc.name == seg.scheduler; });
    ASSERT_NE(it, all.end());
    EXPECT_TRUE(it->accepts(*seg.fusion.fusion, {}).accepted);
  }
  auto live = f.exprs_for_outputs();
  EXPECT_EQ(covered, std::multiset<const ir::Expr*>(live.begin(), live.end()));
  for (const ir::TensorView* t : f.outputs()) EXPECT_TRUE(available.count(t));
}

std::vector<std::string> standard_fusions() {
  std::vector<std::string> names;
  for (const auto& p :
       test_support::files_with_extension(test_support::config_fusion_dir(), ".yaml"))
    names.push_back(std::filesystem::path(p).stem().string());
  return names;
}
INSTANTIATE_TEST_SUITE_P(Configs, AllFusions, ::testing::ValuesIn(standard_fusions()),
                         [](const auto& info) { return info.param; });

// A 2,000-statement chain (issue 16: the segmenter was quadratic): every
// 8th statement subtracts its operand's row sum, the rest are pointwise, so
// the greedy merges run all the way down. The segments are what the
// algorithm says they are (each reduction ends a one_reduction segment that
// starts after the previous one; the pointwise tail is no_reduction's), and
// run in order they compute what the whole fusion computes.
TEST(Segmenter, LongChainSegmentsAndEvaluates) {
  constexpr int kOps = 2000;
  std::string text = "fusion: long_chain\ninputs:\n  x: {dtype: f32, shape: [N, K]}\nbody: |\n";
  std::string prev = "x";
  for (int i = 1; i <= kOps; ++i) {
    const std::string t = "t" + std::to_string(i);
    if (i % 8 == 0)
      text += "  " + t + " = " + prev + " - sum(" + prev + ", axis=1, keepdim=true)\n";
    else
      text += "  " + t + " = " + prev + (i % 2 ? " * 0.5\n" : " + 1\n");
    prev = t;
  }
  text += "outputs: [" + prev + "]\n";
  auto def = frontend::parse_fusion_text(text, "long_chain.yaml");
  const ir::Fusion& f = *def.fusion;
  const ir::SizeBindings sizes{{"N", 3}, {"K", 5}};
  Segmentation s = segment(f, sizes, {one_reduction(), no_reduction()});
  ASSERT_TRUE(s.complete());
  // One reduction per 8 statements, each ending a segment of its own kind;
  // the sum's broadcast and subtraction open the next segment.
  ASSERT_EQ(s.segments.size(), static_cast<size_t>(kOps / 8 + 1));
  size_t exprs = 0;
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const SegmentedGroup& seg = s.segments[i];
    exprs += seg.exprs.size();
    const bool last = i + 1 == s.segments.size();
    EXPECT_EQ(seg.scheduler, last ? "no_reduction" : "one_reduction") << "segment " << i;
    if (!last) {
      EXPECT_TRUE(seg.exprs.back()->is<ir::ReductionOp>()) << "segment " << i;
    }
  }
  EXPECT_EQ(exprs, f.exprs_for_outputs().size());
  std::vector<const ir::Extraction*> chain;
  for (const SegmentedGroup& seg : s.segments) chain.push_back(&seg.fusion);
  auto inputs = ref::make_inputs(f, sizes, 3, def.input_ranges);
  auto want = ref::evaluate(f, inputs, sizes);
  auto got = testing::evaluate_chain(f, chain, inputs, sizes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, want[0].data);
}

}  // namespace
}  // namespace schedlab::segment
