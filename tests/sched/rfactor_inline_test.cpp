// rfactor, propagate_transformation, parallelize_all_like and the inline_*
// primitives: positive cases assert domains, bindings and positions; every
// rule has a negative case that checks the message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../ir/test_fusions.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/sched/sched.h"
#include "test_support.h"

namespace schedlab::sched {
namespace {

using ir::DataType;
using ir::Fusion;
using ir::ParallelType;
using ir::SizeExpr;
using ir::TensorView;
using ir::testing::sym;
using test_support::loop_sig;
using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// An f32 fusion input of shape [N, K].
TensorView* input2d(Fusion& f, const char* name = "x") {
  return ir::testing::input(f, name, DataType::F32, {sym("N"), sym("K")});
}

TEST(Rfactor, SplitReductionMakesPartialProducer) {
  Fusion f;
  auto* x = input2d(f);
  auto* s = ir::sum(x, {1});
  f.add_output(s);
  s->split(1, 128);
  ASSERT_EQ(s->nloop(), 3);
  TensorView* p = rfactor(s, {1});
  ir::verify(f);
  // P reduces the outer part and keeps 128 partials per row.
  ASSERT_EQ(p->nloop(), 3);
  EXPECT_TRUE(p->loop()[1]->is_reduction());
  EXPECT_FALSE(p->loop()[2]->is_reduction());
  EXPECT_EQ(p->loop()[2]->extent().str(), "128");
  EXPECT_TRUE(p->has_root());
  EXPECT_EQ(p->root().size(), 2u);
  EXPECT_EQ(p->logical().size(), 3u);
  // The consumer reduces the 128 partials.
  ASSERT_EQ(s->nloop(), 2);
  EXPECT_FALSE(s->loop()[0]->is_reduction());
  EXPECT_TRUE(s->loop()[1]->is_reduction());
  EXPECT_EQ(s->loop()[1]->extent().str(), "128");
  EXPECT_EQ(s->definition()->inputs()[0], p);
  EXPECT_EQ(p->definition()->inputs()[0], x);
}

TEST(Rfactor, TwiceAndBindingsKept) {
  Fusion f;
  auto* x = input2d(f);
  auto* s = ir::sum(x, {1});
  f.add_output(s);
  s->split(1, 128);  // [N, K/128, 128]
  s->split(2, 32);   // [N, K/128, 4, 32]
  s->parallelize(0, ParallelType::BIDx);
  s->parallelize(3, ParallelType::TIDx);
  TensorView* p1 = rfactor(s, {1});
  ir::verify(f);
  EXPECT_EQ(s->nloop(), 3);  // [N, 4, 32]
  TensorView* p2 = rfactor(s, {1});
  ir::verify(f);
  EXPECT_EQ(s->nloop(), 2);  // [N, 32]
  EXPECT_EQ(s->loop()[0]->parallel_type(), ParallelType::BIDx);
  EXPECT_EQ(s->loop()[1]->parallel_type(), ParallelType::TIDx);
  EXPECT_EQ(p1->loop()[0]->parallel_type(), ParallelType::BIDx);
  EXPECT_EQ(p2->definition()->inputs()[0], p1);
  EXPECT_EQ(s->definition()->inputs()[0], p2);
}

TEST(Rfactor, Errors) {
  Fusion f;
  auto* x = input2d(f);
  auto* e = ir::tv(ir::exp(x));
  auto* s = ir::sum(e, {1});
  f.add_output(s);
  EXPECT_THAT(user_error_of([&] { rfactor(e, {1}); }), HasSubstr("is not defined by a reduction"));
  EXPECT_THAT(user_error_of([&] { rfactor(s, {1}); }),
              HasSubstr("all 1 reduction axes of T2 are selected"));
  s->split(1, 4);
  EXPECT_THAT(user_error_of([&] { rfactor(s, {0}); }), HasSubstr("is not a Reduction"));
  EXPECT_THAT(user_error_of([&] { rfactor(s, {1, 1}); }), HasSubstr("listed twice"));
  EXPECT_THAT(user_error_of([&] { rfactor(s, {5}); }), HasSubstr("out of range"));
  EXPECT_THAT(user_error_of([&] { rfactor(s, {}); }), HasSubstr("expected at least one axis"));
}

// Softmax, scheduled the way nvFuser's pointwise-style tests do: flatten the
// output, split by 128, bind, propagate, inline.
TEST(Propagate, SoftmaxFromOutput) {
  Fusion f;
  auto* x = input2d(f);
  auto* m = ir::max(x, {1}, true);
  auto* e = ir::tv(ir::exp(ir::sub(x, m)));
  auto* s = ir::sum(e, {1}, true);
  auto* y = ir::tv(ir::div(e, s));
  f.add_output(y);
  y->split(1, 32);  // [N, K/32, 32]
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  ir::verify(f);
  // e maps fully: same loop shape and bindings.
  EXPECT_THAT(loop_sig(e), ElementsAre("iblockIdx.x{N}", "iS{ceilDiv(K, 32)}", "ithreadIdx.x{32}"));
  // The reductions split their reduction axis the same way.
  auto reds = get_reduction_tvs(f);
  ASSERT_EQ(reds.size(), 2u);
  for (auto* r : reds) {
    ASSERT_EQ(r->nloop(), 3) << ir::tensor_str(r);
    EXPECT_TRUE(r->loop()[1]->is_reduction());
    EXPECT_EQ(r->loop()[2]->parallel_type(), ParallelType::TIDx);
  }
  inline_most(f);
  ir::verify(f);
  validate_bindings(f);
  // A reduction stops inlining at its first reduction axis.
  for (auto* r : reds) EXPECT_EQ(r->compute_at_pos(), 1) << ir::tensor_str(r);
  // e is read by the sum and by y, whose loops past the row are different
  // loop nests: it stays at the row.
  EXPECT_EQ(e->compute_at_pos(), 1);
  EXPECT_EQ(x->compute_at_pos(), 0);
}

TEST(Propagate, PointwiseMergeSplit) {
  Fusion f;
  auto* x = input2d(f);
  auto* b = f.make_tensor(DataType::F32, {SizeExpr::symbol("K")});
  f.add_input(b);
  auto* t = ir::tv(ir::add(x, b));  // broadcast of b inserted
  auto* y = ir::tv(ir::relu(t));
  f.add_output(y);
  y->merge(0);
  y->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  inline_most(f);
  ir::verify(f);
  validate_bindings(f);
  for (auto* tv : f.tensors()) {
    if (f.is_input(tv)) continue;
    ASSERT_EQ(tv->nloop(), 2) << ir::tensor_str(tv);
    EXPECT_EQ(tv->loop()[0]->parallel_type(), ParallelType::BIDx) << ir::tensor_str(tv);
    EXPECT_EQ(tv->loop()[1]->parallel_type(), ParallelType::TIDx) << ir::tensor_str(tv);
    if (tv != y) {
      EXPECT_EQ(tv->compute_at_pos(), 2) << ir::tensor_str(tv);
    }
  }
}

TEST(Inline, AtPositionAndErrors) {
  Fusion f;
  auto* x = input2d(f);
  auto* s = ir::sum(x, {1}, true);  // T1 reduction, T2 broadcast
  auto* y = ir::tv(ir::sub(x, s));
  f.add_output(y);
  auto* r = s->definition()->inputs()[0]->as<TensorView>();
  EXPECT_EQ(max_inline_position(r), 1);
  inline_at(r, 1);
  EXPECT_EQ(r->compute_at_pos(), 1);
  EXPECT_THAT(user_error_of([&] { inline_at(r, 2); }),
              HasSubstr("is a Reduction, which must finish before any consumer reads it; the "
                        "largest legal position is 1"));
  inline_at(r, 2, /*best_effort=*/true);
  EXPECT_EQ(r->compute_at_pos(), 1);
  EXPECT_THAT(user_error_of([&] { inline_at(x, 1); }), HasSubstr("is a fusion input"));
  EXPECT_THAT(user_error_of([&] { inline_at(s, 3); }), HasSubstr("out of range"));
  EXPECT_THAT(user_error_of([&] { inline_at(y, 1); }), HasSubstr("it has no consumers"));
  // Mismatched loops: transpose the consumer's loop order.
  y->reorder({{0, 1}});
  EXPECT_THAT(user_error_of([&] { inline_at(s, 1); }), HasSubstr("does not map to axis 0"));
}

TEST(Inline, ConflictingBindings) {
  Fusion f;
  auto* x = input2d(f);
  auto* e = ir::tv(ir::exp(x));
  auto* y = ir::tv(ir::neg(e));
  f.add_output(y);
  e->parallelize(0, ParallelType::TIDx);
  y->parallelize(0, ParallelType::BIDx);
  EXPECT_THAT(user_error_of([&] { inline_at(e, 1); }),
              HasSubstr("is bound to TIDx but axis 0 of consumer T2 (iblockIdx.x"));
  // Bindings changed after inlining are caught by validate_bindings.
  e->parallelize(0, ParallelType::BIDx);
  inline_at(e, 1);
  e->loop()[0]->parallelize(ParallelType::TIDy);
  EXPECT_THAT(user_error_of([&] { validate_bindings(f); }), HasSubstr("bindings must agree"));
}

TEST(Inline, SelectedAt) {
  Fusion f;
  auto* x = input2d(f);
  auto* a = ir::tv(ir::exp(x));
  auto* b = ir::tv(ir::neg(a));
  auto* y = ir::tv(ir::unary(ir::UnaryOpType::Abs, b));
  f.add_output(y);
  inline_selected_at({a, b}, y, 1);
  EXPECT_EQ(a->compute_at_pos(), 1);
  EXPECT_EQ(b->compute_at_pos(), 1);
  inline_selected_at({a, b}, y, -1);
  EXPECT_EQ(a->compute_at_pos(), 2);
  EXPECT_THAT(user_error_of([&] { inline_selected_at({a}, y, 3); }), HasSubstr("out of range"));
}

TEST(Propagate, RefusesInlined) {
  Fusion f;
  auto* x = input2d(f);
  auto* e = ir::tv(ir::exp(x));
  auto* y = ir::tv(ir::neg(e));
  f.add_output(y);
  y->split(1, 4, true);
  inline_at(e, 1);
  EXPECT_THAT(user_error_of([&] { propagate_transformation(y); }),
              HasSubstr("propagate, then inline"));
}

TEST(ParallelizeAllLike, TypesAndPositionFilter) {
  Fusion f;
  auto* x = input2d(f);
  auto* e = ir::tv(ir::exp(x));
  auto* y = ir::tv(ir::neg(e));
  f.add_output(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  parallelize_all_like(y, 1);
  EXPECT_EQ(e->loop()[0]->parallel_type(), ParallelType::BIDx);
  EXPECT_EQ(e->loop()[1]->parallel_type(), ParallelType::Serial);
  parallelize_all_like(y, -1, {e}, {ParallelType::TIDx});
  EXPECT_EQ(e->loop()[1]->parallel_type(), ParallelType::TIDx);
  EXPECT_THAT(user_error_of([&] { parallelize_all_like(y, 7); }), HasSubstr("out of range"));
}

// Issue 33, bullet 6: over w[1, K], t3 = max(w, 1, keepdim) is [b{1}, b{1}],
// and t3 + max(w, 1) ties both axes of t3 (and of the sum) to w's row b{1},
// the second through t2r's row broadcast onto t3's keepdim axis. The
// reference's BIDx goes to one of them; binding both was a user error raised
// inside the built-in plugins' own schedule.
TEST(ParallelizeAllLike, TwoAxesTiedToOneReferenceAxisTakeItsBindingOnce) {
  Fusion f;
  auto* w = ir::testing::input(f, "w", DataType::F32, {SizeExpr::constant(1), sym("K")});
  auto* t2r = ir::max(w, {1});
  auto* t3 = ir::max(w, {1}, /*keepdim=*/true);
  auto* t9 = ir::tv(ir::add(t3, t2r));
  f.add_output(t9);
  t2r->parallelize(0, ParallelType::BIDx);
  parallelize_all_like(t2r);
  ir::verify(f);
  for (TensorView* tv : {t3, t9}) {
    ASSERT_EQ(tv->nloop(), 2) << tv->describe();
    EXPECT_EQ(tv->loop()[0]->parallel_type(), ParallelType::BIDx) << tv->describe();
    EXPECT_EQ(tv->loop()[1]->parallel_type(), ParallelType::Serial) << tv->describe();
  }
}

// Of two axes tied to one reference axis, the one that is not a Broadcast
// (it iterates the reference's extent) takes the binding: a = x[None, :] is
// [b{1}, N], and a + x[:, None] ties a's b{1} to x's N too.
TEST(ParallelizeAllLike, TheNonBroadcastAxisOfATiedPairTakesTheBinding) {
  Fusion f;
  auto* x = ir::testing::input(f, "x", DataType::F32, {sym("N")});
  auto* e = ir::tv(ir::exp(x));
  auto* a = ir::broadcast(e, {true, false});
  auto* c = ir::broadcast(x, {false, true});
  auto* z = ir::tv(ir::add(a, c));
  f.add_output(z);
  e->parallelize(0, ParallelType::BIDx);
  parallelize_all_like(e, -1, {a});
  EXPECT_EQ(a->loop()[0]->parallel_type(), ParallelType::Serial);
  EXPECT_EQ(a->loop()[1]->parallel_type(), ParallelType::BIDx);
}

TEST(Transforms, InsideProducerInlinePositionIsRejected) {
  Fusion f;
  auto* x = input2d(f);
  auto* e = ir::tv(ir::exp(x));
  auto* y = ir::tv(ir::neg(e));
  f.add_output(y);
  inline_at(e, 2);
  EXPECT_THAT(user_error_of([&] { y->split(0, 4); }),
              HasSubstr("is inside the inline position 2 of its producer T1"));
}

}  // namespace
}  // namespace schedlab::sched
