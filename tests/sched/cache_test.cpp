// cache_after, cache_before, cache_fork, recompute and set_memory_type: the rewired
// def/use graph, fusion outputs, memory types and dtypes after each call, and
// every user error they raise.
#include "schedlab/sched/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "../ir/test_fusions.h"
#include "schedlab/ir/verifier.h"
#include "test_support.h"

namespace schedlab::sched {
namespace {

using ir::DataType;
using ir::Fusion;
using ir::MemoryType;
using ir::TensorView;
using ir::testing::input;
using ir::testing::output;
using ir::testing::sym;
using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

/// The single LoadStoreOp defining t; fails the test otherwise.
const ir::LoadStoreOp* copy_of(const TensorView* t) {
  const ir::LoadStoreOp* ls = t->definition() ? t->definition()->as<ir::LoadStoreOp>() : nullptr;
  EXPECT_NE(ls, nullptr) << t->describe() << " is not defined by a LoadStoreOp";
  return ls;
}

void expect_fresh_copy_of_axes(const TensorView* c, const std::vector<ir::IterDomain*>& dom) {
  ASSERT_EQ(c->logical().size(), dom.size());
  for (size_t i = 0; i < dom.size(); ++i) {
    EXPECT_NE(c->logical()[i], dom[i]) << "axis " << i << " is shared, not copied";
    EXPECT_TRUE(c->logical()[i]->extent().same_as(dom[i]->extent())) << "axis " << i;
    EXPECT_EQ(c->logical()[i]->iter_type(), dom[i]->iter_type()) << "axis " << i;
  }
  EXPECT_EQ(c->loop(), c->logical());
}

// ---- cache_after ------------------------------------------------------------

TEST(CacheAfterTest, EveryUseReadsTheCache) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* a = ir::tv(ir::exp(x));
  TensorView* b = ir::tv(ir::neg(x));
  TensorView* y = output(f, ir::add(a, b), "y");

  TensorView* c = cache_after(x);

  const ir::LoadStoreOp* ls = copy_of(c);
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->in(), x);
  EXPECT_EQ(ls->op(), ir::LoadStoreOpType::Set);
  EXPECT_EQ(ls->cache_op(), ir::CacheOp::Unspecified);
  EXPECT_THAT(x->uses(), ElementsAre(c->definition()));
  EXPECT_THAT(c->uses(), UnorderedElementsAre(a->definition(), b->definition()));
  EXPECT_EQ(a->definition()->inputs()[0], c);
  EXPECT_EQ(b->definition()->inputs()[0], c);
  EXPECT_EQ(c->memory_type(), MemoryType::Local);
  EXPECT_EQ(x->memory_type(), MemoryType::Global);
  EXPECT_EQ(c->dtype(), DataType::F32);
  EXPECT_EQ(c->user_name(), "x_cache");
  expect_fresh_copy_of_axes(c, x->logical());
  EXPECT_THAT(f.inputs(), ElementsAre(x));
  EXPECT_THAT(f.outputs(), ElementsAre(y));
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheAfterTest, KeepsTheLoadPathAndCachePolicy) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F16, {sym("N")});
  output(f, ir::cast(x, DataType::F32), "y");

  TensorView* c = cache_after(x, ir::LoadStoreOpType::CpAsync, ir::CacheOp::Global);

  const ir::LoadStoreOp* ls = copy_of(c);
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->op(), ir::LoadStoreOpType::CpAsync);
  EXPECT_EQ(ls->cache_op(), ir::CacheOp::Global);
  EXPECT_EQ(c->dtype(), DataType::F16);
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheAfterTest, AnExpressionReadingTwiceReadsTheCacheTwice) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = output(f, ir::mul(x, x), "y");

  TensorView* c = cache_after(x);

  EXPECT_THAT(y->definition()->inputs(), ElementsAre(c, c));
  EXPECT_THAT(x->uses(), ElementsAre(c->definition()));
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheAfterTest, CacheOfAReductionDropsTheReducedAxes) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* s = ir::sum(x, {1});
  output(f, ir::exp(s), "y");

  TensorView* c = cache_after(s);

  expect_fresh_copy_of_axes(c, s->logical_no_reductions());
  EXPECT_FALSE(c->has_reduction());
  EXPECT_TRUE(c->user_name().empty());
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheAfterTest, AnOutputThatIsAlsoReadStaysTheOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = output(f, ir::exp(x), "a");
  TensorView* b = output(f, ir::neg(a), "b");

  TensorView* c = cache_after(a);

  EXPECT_THAT(f.outputs(), ElementsAre(a, b));
  EXPECT_EQ(b->definition()->inputs()[0], c);
  EXPECT_EQ(a->memory_type(), MemoryType::Global);
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheAfterTest, RejectsATensorWithoutUses) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = output(f, ir::exp(x), "y");
  std::string msg = user_error_of([&] { cache_after(y); });
  EXPECT_THAT(msg, HasSubstr("cache_after: T1 (y) has no uses"));
  EXPECT_THAT(msg, HasSubstr("expected a tensor that some expression reads"));
}

TEST(CacheAfterTest, RejectsAnInlinedTensor) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  a->set_user_name("a");
  TensorView* y = output(f, ir::neg(a), "y");
  a->set_compute_at_pos(1);
  std::string msg = user_error_of([&] { cache_after(a); });
  EXPECT_THAT(msg, HasSubstr("cache_after: T1 (a) is inlined at position 1"));
  EXPECT_THAT(msg, HasSubstr("expected compute_at_pos 0 (cache before inlining)"));
  EXPECT_EQ(y->definition()->inputs()[0], a) << "the failed call changed the IR";
}

// ---- cache_before -----------------------------------------------------------

TEST(CacheBeforeTest, MovesTheDefinitionOntoTheCache) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* y = output(f, ir::exp(x), "y");
  ir::Expr* exp_op = y->definition();

  TensorView* c = cache_before(y);

  EXPECT_EQ(c->definition(), exp_op);
  EXPECT_EQ(exp_op->out(), c);
  EXPECT_THAT(x->uses(), ElementsAre(exp_op));
  const ir::LoadStoreOp* ls = copy_of(y);
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->in(), c);
  EXPECT_THAT(c->uses(), ElementsAre(ls));
  EXPECT_THAT(f.outputs(), ElementsAre(y));
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
  EXPECT_EQ(c->memory_type(), MemoryType::Local);
  EXPECT_EQ(c->dtype(), DataType::F32);
  EXPECT_EQ(c->user_name(), "y_cache");
  expect_fresh_copy_of_axes(c, x->logical());
  expect_fresh_copy_of_axes(y, c->logical());
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheBeforeTest, TheCacheKeepsTheReductionAxes) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* s = output(f, ir::sum(x, {1}), "s");
  std::vector<ir::IterDomain*> before = s->logical();

  TensorView* c = cache_before(s);

  EXPECT_TRUE(c->definition()->is<ir::ReductionOp>());
  expect_fresh_copy_of_axes(c, before);
  EXPECT_TRUE(c->logical()[1]->is_reduction());
  EXPECT_FALSE(s->has_reduction());
  ASSERT_EQ(s->nlogical(), 1);
  EXPECT_TRUE(s->logical()[0]->extent().same_as(sym("N")));
  EXPECT_TRUE(s->definition()->is<ir::LoadStoreOp>());
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheBeforeTest, AnIntermediateStaysLocalAndKeepsItsUses) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  TensorView* y = output(f, ir::neg(a), "y");

  TensorView* c = cache_before(a);

  EXPECT_THAT(a->uses(), ElementsAre(y->definition()));
  EXPECT_EQ(a->memory_type(), MemoryType::Local);
  EXPECT_EQ(copy_of(a)->in(), c);
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheBeforeTest, RejectsAFusionInput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  output(f, ir::exp(x), "y");
  std::string msg = user_error_of([&] { cache_before(x); });
  EXPECT_THAT(msg, HasSubstr("cache_before: T0 (x) has no definition (a fusion input)"));
  EXPECT_THAT(msg, HasSubstr("expected a tensor computed by an expression"));
}

TEST(CacheBeforeTest, RejectsATransformedTensor) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = output(f, ir::exp(x), "y");
  y->split(0, 4);
  std::string msg = user_error_of([&] { cache_before(y); });
  EXPECT_THAT(msg, HasSubstr("cache_before: T1 (y) is already transformed"));
  EXPECT_THAT(msg, HasSubstr("cache before transforming"));
  EXPECT_EQ(y->definition()->kind(), ir::Expr::Kind::Unary) << "the failed call changed the IR";
}

TEST(CacheBeforeTest, RejectsAnInlinedTensor) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  a->set_user_name("a");
  output(f, ir::neg(a), "y");
  a->set_compute_at_pos(1);
  std::string msg = user_error_of([&] { cache_before(a); });
  EXPECT_THAT(msg, HasSubstr("cache_before: T1 (a) is inlined at position 1"));
  EXPECT_THAT(msg, HasSubstr("expected compute_at_pos 0"));
}

TEST(CacheBeforeTest, RejectsABoundTensor) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* y = output(f, ir::exp(x), "y");
  y->parallelize(1, ir::ParallelType::TIDx);
  std::string msg = user_error_of([&] { cache_before(y); });
  EXPECT_THAT(msg, HasSubstr("cache_before: T1 (y) axis 1 (ithreadIdx.x3{K}) is already bound"));
  EXPECT_THAT(msg, HasSubstr("cache before binding"));
}

TEST(CacheBeforeTest, RejectsAnInlinedProducer) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  a->set_user_name("a");
  TensorView* y = output(f, ir::neg(a), "y");
  a->set_compute_at_pos(1);
  std::string msg = user_error_of([&] { cache_before(y); });
  EXPECT_THAT(msg, HasSubstr("cache_before: producer T1 (a) of T2 (y) is inlined at position 1"));
  EXPECT_THAT(msg, HasSubstr("expected producers not yet inlined"));
}

// ---- cache_fork -------------------------------------------------------------

TEST(CacheForkTest, TheCopyBecomesTheOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* a = output(f, ir::exp(x), "a");
  TensorView* b = output(f, ir::neg(a), "b");

  TensorView* c = cache_fork(a);

  EXPECT_THAT(f.outputs(), ElementsAre(c, b));
  EXPECT_EQ(copy_of(c)->in(), a);
  EXPECT_THAT(a->uses(), UnorderedElementsAre(b->definition(), c->definition()));
  EXPECT_EQ(a->memory_type(), MemoryType::Local);
  EXPECT_EQ(c->memory_type(), MemoryType::Global);
  EXPECT_EQ(c->dtype(), DataType::F32);
  EXPECT_EQ(c->user_name(), "a_cache");
  expect_fresh_copy_of_axes(c, a->logical());
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(CacheForkTest, RejectsAnIntermediate) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = ir::tv(ir::exp(x));
  a->set_user_name("a");
  output(f, ir::neg(a), "y");
  std::string msg = user_error_of([&] { cache_fork(a); });
  EXPECT_THAT(msg, HasSubstr("cache_fork: T1 (a) is not a fusion output"));
  EXPECT_THAT(msg, HasSubstr("expected an output that other expressions also read"));
}

TEST(CacheForkTest, RejectsAnOutputWithoutUses) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = output(f, ir::exp(x), "y");
  std::string msg = user_error_of([&] { cache_fork(y); });
  EXPECT_THAT(msg, HasSubstr("cache_fork: fusion output T1 (y) has no uses"));
  EXPECT_THAT(f.outputs(), ElementsAre(y));
}

TEST(CacheForkTest, RejectsAFusionInputThatIsAlsoAnOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  f.add_output(x);
  output(f, ir::exp(x), "y");
  std::string msg = user_error_of([&] { cache_fork(x); });
  EXPECT_THAT(msg, HasSubstr("cache_fork: T0 (x) is a fusion input"));
  EXPECT_THAT(msg, HasSubstr("expected a computed fusion output"));
}

TEST(CacheForkTest, RejectsAnInlinedOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* a = output(f, ir::exp(x), "a");
  output(f, ir::neg(a), "b");
  a->set_compute_at_pos(1);
  std::string msg = user_error_of([&] { cache_fork(a); });
  EXPECT_THAT(msg, HasSubstr("cache_fork: T1 (a) is inlined at position 1"));
  EXPECT_THAT(msg, HasSubstr("expected compute_at_pos 0"));
}

// ---- recompute --------------------------------------------------------------

TEST(RecomputeTest, TheChosenConsumersReadACopyOfTheDefinition) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* e = ir::tv(ir::exp(x));
  e->set_user_name("e");
  TensorView* s = output(f, ir::sum(e, {1}), "s");
  TensorView* y = output(f, ir::neg(e), "y");

  TensorView* c = recompute(e, {y});

  ASSERT_NE(c->definition(), nullptr);
  const auto* u = c->definition()->as<ir::UnaryOp>();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->op(), ir::UnaryOpType::Exp);
  EXPECT_EQ(u->in(), x);  // the same operand, not a copy of it
  EXPECT_THAT(e->uses(), ElementsAre(s->definition()));
  EXPECT_THAT(c->uses(), ElementsAre(y->definition()));
  EXPECT_EQ(c->memory_type(), MemoryType::Local);
  EXPECT_EQ(c->user_name(), "e_recompute");
  expect_fresh_copy_of_axes(c, e->logical());
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(RecomputeTest, NoConsumersMeansEveryReaderAndEveryKindIsCopied) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* m = input(f, "m", DataType::F32, {sym("N")});
  TensorView* mb = ir::broadcast(m, {false, true});
  TensorView* d = ir::tv(ir::sub(x, mb));
  TensorView* w = ir::tv(ir::where(ir::binary(ir::BinaryOpType::Gt, d, x), d, x));
  TensorView* h = ir::tv(ir::cast(w, DataType::F64));
  TensorView* y = output(f, ir::mul(d, d), "y");
  TensorView* z = output(f, ir::neg(h), "z");

  // A binary read twice by one expression: both operands move to the copy.
  TensorView* d2 = recompute(d, {y});
  EXPECT_EQ(y->definition()->inputs()[0], d2);
  EXPECT_EQ(y->definition()->inputs()[1], d2);
  EXPECT_EQ(d2->definition()->as<ir::BinaryOp>()->op(), ir::BinaryOpType::Sub);
  // A broadcast, a where and a cast, each for all of its readers.
  TensorView* mb2 = recompute(mb, {});
  EXPECT_TRUE(mb->uses().empty());
  EXPECT_EQ(mb2->definition()->as<ir::BroadcastOp>()->is_broadcast_dim(),
            (std::vector<bool>{false, true}));
  TensorView* w2 = recompute(w, {});
  EXPECT_NE(w2->definition()->as<ir::WhereOp>(), nullptr);
  EXPECT_EQ(h->definition()->inputs()[0], w2);
  TensorView* h2 = recompute(h, {z});
  EXPECT_NE(h2->definition()->as<ir::CastOp>(), nullptr);
  EXPECT_EQ(h2->dtype(), DataType::F64);
  EXPECT_EQ(z->definition()->inputs()[0], h2);
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(RecomputeTest, RejectsAnInputAReductionANonConsumerAndAScheduledTensor) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* e = ir::tv(ir::exp(x));
  e->set_user_name("e");
  TensorView* s = ir::sum(e, {1});
  s->set_user_name("s");
  TensorView* y = output(f, ir::neg(e), "y");
  TensorView* z = output(f, ir::neg(x), "z");
  output(f, ir::neg(s), "t");
  EXPECT_THAT(user_error_of([&] { recompute(x, {}); }),
              HasSubstr("recompute: T0 (x) has no definition (a fusion input)"));
  EXPECT_THAT(user_error_of([&] { recompute(s, {}); }),
              HasSubstr("recompute: T2 (s) is a reduction; expected a tensor computed "
                        "elementwise"));
  EXPECT_THAT(user_error_of([&] { recompute(e, {z}); }),
              HasSubstr("recompute: T4 (z) does not read T1 (e); expected consumers of T1 (e)"));
  (void)y;
  e->split(1, 4);
  EXPECT_THAT(user_error_of([&] { recompute(e, {}); }),
              HasSubstr("recompute: T1 (e) is already transformed"));
}

// ---- set_memory_type --------------------------------------------------------

TEST(SetMemoryTypeTest, MovesAnIntermediate) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  output(f, ir::exp(x), "y");
  TensorView* c = cache_after(x);
  set_memory_type(c, MemoryType::Shared);
  EXPECT_EQ(c->memory_type(), MemoryType::Shared);
  set_memory_type(c, MemoryType::Global);
  EXPECT_EQ(c->memory_type(), MemoryType::Global);
  set_memory_type(x, MemoryType::Global);  // a no-op, but legal
  EXPECT_NO_THROW(ir::verify(f));
}

TEST(SetMemoryTypeTest, RejectsMovingAnInput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  output(f, ir::exp(x), "y");
  EXPECT_THAT(user_error_of([&] { set_memory_type(x, MemoryType::Shared); }),
              HasSubstr("set_memory_type: T0 (x) is a fusion input; expected Global memory, "
                        "found Shared"));
  EXPECT_EQ(x->memory_type(), MemoryType::Global);
}

TEST(SetMemoryTypeTest, RejectsMovingAnOutput) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = output(f, ir::exp(x), "y");
  EXPECT_THAT(user_error_of([&] { set_memory_type(y, MemoryType::Local); }),
              HasSubstr("set_memory_type: T1 (y) is a fusion output; expected Global memory, "
                        "found Local"));
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
}

}  // namespace
}  // namespace schedlab::sched
