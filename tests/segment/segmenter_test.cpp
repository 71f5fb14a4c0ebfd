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
      case Offer::Kind::Forward:
        r.push_back("forward " + group_str(o.groups[0]) + " into " + group_str(o.groups[1]));
        break;
      case Offer::Kind::Remainder:
        r.push_back(group_str(o.groups[0]) + " after forwarding " + group_str(o.groups[1]));
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

/// "contraction": takes exactly one reduction, after which nothing has more
/// iteration axes than its result (a pointwise epilogue), and, with
/// `no_broadcast_inputs`, no input with a broadcast axis (the matmul plugin's
/// rule: an operand is broadcast inside its segment).
Scheduler contraction(const std::string& name = "contraction", bool no_broadcast_inputs = true) {
  return {name, [no_broadcast_inputs](ir::Fusion& f, const ir::SizeBindings&) {
            auto r = testing::reductions(f);
            if (r.size() != 1)
              return Verdict{false,
                             "contraction takes one reduction; found " + std::to_string(r.size())};
            auto iter_axes = [](const ir::TensorView* t) {
              int n = 0;
              for (const ir::IterDomain* id : t->logical())
                n += !id->is_broadcast() && !id->is_reduction();
              return n;
            };
            std::set<const ir::TensorView*> after{r.front()->out()};
            for (const ir::Expr* e : f.exprs())
              for (const ir::Val* v : e->inputs())
                if (after.count(static_cast<const ir::TensorView*>(v)) &&
                    after.insert(e->out()).second &&
                    iter_axes(e->out()) > iter_axes(r.front()->out()))
                  return Verdict{false, e->out()->str() + " is no epilogue"};
            if (no_broadcast_inputs)
              for (const ir::TensorView* in : f.inputs())
                for (const ir::IterDomain* id : in->logical())
                  if (id->is_broadcast())
                    return Verdict{false, "input " + in->str() + " has a broadcast axis"};
            return Verdict{true, ""};
          }};
}

// mlp_tp_bf16: h = cast(linear(x, w1), f32); g = cast(gelu(h), bf16);
// y = linear(g, w2). The greedy merges end the first segment with the second
// linear's broadcast of g (T17, and its cast T19), which the contraction
// refuses as an input; forwarding moves the two into the second segment, so
// both contractions are contraction segments and g crosses as it is.
TEST(Segmenter, BroadcastCrossingSegmentsMovesToItsReader) {
  auto def = load_config_fusion("mlp_tp_bf16");
  const ir::Fusion& f = *def.fusion;
  const ir::SizeBindings sizes{{"M", 4}, {"K", 16}, {"N", 32}};
  Segmentation s =
      segment(f, sizes, {contraction(), contraction("any_reduction", false), no_reduction()});
  ASSERT_TRUE(s.complete());
  EXPECT_THAT(segment_lines(s),
              ::testing::ElementsAre(
                  "contraction {T3, T4, T5, T6, T7, T8, T9, T10 (h), T11, T12, T13, T14, T15, "
                  "T16 (g)}",
                  "contraction {T17, T18, T19, T20, T21, T22, T23 (y)}"));
  auto lines = log_lines(s);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2],
            "forward {T17, T19} into {T18, T20, T21, T22, T23 (y)}: contraction");
  EXPECT_EQ(lines.back(),
            "{T3, T4, T5, T6, T7, T8, T9, T10 (h), T11, T12, T13, T14, T15, T16 (g)} after "
            "forwarding {T17, T19}: contraction");
  ASSERT_EQ(s.segments[0].fusion.original_outputs().size(), 1u);
  EXPECT_EQ(s.segments[0].fusion.original_outputs()[0]->user_name(), "g");
  // The chain runs on: the segments compute the fusion.
  std::vector<const ir::Extraction*> chain;
  for (const SegmentedGroup& seg : s.segments) chain.push_back(&seg.fusion);
  auto inputs = ref::make_inputs(f, sizes, 3, def.input_ranges);
  auto want = ref::evaluate(f, inputs, sizes);
  auto got = testing::evaluate_chain(f, chain, inputs, sizes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, want[0].data);

  // Without a scheduler that refuses the broadcast input, the same move is
  // offered, and kept only if both changed segments are accepted: here the
  // reader's union is refused, so nothing moves.
  Scheduler picky = contraction("picky", false);
  picky.accepts = [inner = picky.accepts](ir::Fusion& fu, const ir::SizeBindings& sz) {
    bool t17 = false;
    for (const ir::Expr* e : fu.exprs()) t17 |= e->out()->str() == "T17";
    if (t17 && fu.exprs().back()->out()->str() == "T23")
      return Verdict{false, "no T17 with the second linear"};
    return inner(fu, sz);
  };
  Segmentation kept = segment(f, sizes, {picky, no_reduction()});
  ASSERT_TRUE(kept.complete());
  auto kept_lines = log_lines(kept);
  EXPECT_EQ(kept_lines.back(), "forward {T17, T19} into {T18, T20, T21, T22, T23 (y)}: rejected");
  ASSERT_EQ(kept.segments.size(), 2u);
  EXPECT_EQ(kept.segments[0].exprs.back()->out()->describe(), "T19");
}

}  // namespace
}  // namespace schedlab::segment
