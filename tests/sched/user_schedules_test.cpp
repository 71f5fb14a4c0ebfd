// nvFuser-style user schedules applied to the fusions in configs/fusions: each
// test loads a fusion file, schedules it the way an nvFuser user (or one of
// nvFuser's schedulers) would, and asserts the resulting loop domains,
// bindings, memory types and inline positions. The negative tests are real
// mistakes made in these flows; each checks the message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/sched/sched.h"
#include "test_support.h"

namespace schedlab::sched {
namespace {

using ir::Fusion;
using ir::IterType;
using ir::LoopTransform;
using ir::MemoryType;
using ir::ParallelType;
using ir::TensorView;
using test_support::axis_sig;
using test_support::domain_sig;
using test_support::load_config_fusion;
using test_support::loop_sig;
using test_support::named;
using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// The first operand of t's definition.
TensorView* producer_of(const TensorView* t) {
  return t->definition()->inputs().front()->as<TensorView>();
}

/// Prints the scheduled fusion when the test has failed (or is unwinding
/// from an unexpected error) by the time the guard goes out of scope.
class PrintOnFailure {
 public:
  explicit PrintOnFailure(const Fusion& f) : f_(f) {}
  PrintOnFailure(const PrintOnFailure&) = delete;
  PrintOnFailure& operator=(const PrintOnFailure&) = delete;
  ~PrintOnFailure() {
    if (::testing::Test::HasFailure() || std::uncaught_exceptions() > 0)
      std::cout << print_scheduled_fusion(f_) << std::flush;
  }

 private:
  const Fusion& f_;
};

void check_valid(const Fusion& f) {
  EXPECT_NO_THROW(ir::verify(f));
  EXPECT_NO_THROW(validate_bindings(f));
}

// ---------------------------------------------------------------------------
// 1. Pointwise: flatten the output, split by the block size, bind, propagate
// and inline (nvFuser's pointwise user schedule).

TEST(UserSchedule, PointwiseAddMulMergeSplitPropagateInline) {
  auto def = load_config_fusion("pointwise_add_mul");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* out = named(f, "out");
  ASSERT_NE(out, nullptr);
  out->merge(0);
  out->split(0, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  EXPECT_THAT(loop_sig(out),
              ElementsAre("iblockIdx.x{ceilDiv((N * K), 128)}", "ithreadIdx.x{128}"));
  propagate_transformation(out);
  parallelize_all_like(out);
  inline_most(f);
  check_valid(f);

  for (TensorView* tv : f.tensors()) {
    SCOPED_TRACE(print_tensor(tv));
    if (f.is_input(tv)) {
      EXPECT_EQ(tv->compute_at_pos(), 0);
      EXPECT_EQ(tv->memory_type(), MemoryType::Global);
      continue;
    }
    ASSERT_EQ(tv->nloop(), 2);
    EXPECT_EQ(tv->axis(0)->parallel_type(), ParallelType::BIDx);
    EXPECT_EQ(tv->axis(1)->parallel_type(), ParallelType::TIDx);
    EXPECT_EQ(tv->axis(1)->extent().str(), "128");
    for (const ir::IterDomain* id : tv->loop()) {
      EXPECT_EQ(id->loop_transform(), LoopTransform::Serial);
      EXPECT_NE(id->iter_type(), IterType::Reduction);
    }
    EXPECT_EQ(tv->memory_type(), tv == out ? MemoryType::Global : MemoryType::Local);
    // Every intermediate is computed inside the output's two loops.
    EXPECT_EQ(tv->compute_at_pos(), tv == out ? 0 : 2);
  }
  // The full-size intermediates flatten exactly like the output.
  for (const char* name : {"s", "p", "q"})
    EXPECT_THAT(loop_sig(named(f, name)),
                ElementsAre("iblockIdx.x{ceilDiv((N * K), 128)}", "ithreadIdx.x{128}"))
        << name;
  // The broadcast of b [K] -> [1, K] merges its broadcast axis with K.
  ASSERT_EQ(producer_of(named(f, "q")), named(f, "p"));
  TensorView* bcast = named(f, "q")->definition()->inputs()[1]->as<TensorView>();
  ASSERT_NE(bcast, nullptr);
  ASSERT_TRUE(bcast->definition()->is<ir::BroadcastOp>());
  EXPECT_EQ(bcast->axis(1)->extent().str(), "128");
}

TEST(UserSchedule, BiasReluMergeSplitPropagateInline) {
  auto def = load_config_fusion("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  ASSERT_NE(y, nullptr);
  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  inline_most(f);
  check_valid(f);
  TensorView* add = producer_of(y);
  EXPECT_THAT(loop_sig(add),
              ElementsAre("iblockIdx.x{ceilDiv((N * K), 128)}", "ithreadIdx.x{128}"));
  EXPECT_EQ(add->compute_at_pos(), 2);
  TensorView* bcast = add->definition()->inputs()[1]->as<TensorView>();
  ASSERT_TRUE(bcast->definition()->is<ir::BroadcastOp>());
  ASSERT_EQ(bcast->nloop(), 2);
  EXPECT_EQ(bcast->axis(0)->parallel_type(), ParallelType::BIDx);
  EXPECT_EQ(bcast->axis(1)->parallel_type(), ParallelType::TIDx);
  EXPECT_EQ(bcast->compute_at_pos(), 2);
  EXPECT_EQ(y->compute_at_pos(), 0);
}

// ---------------------------------------------------------------------------
// 2. Shared-memory caches: cache_after on an input (in shared memory) and
// cache_before on the output, then the pointwise schedule.

TEST(UserSchedule, SharedMemoryCachesBiasRelu) {
  auto def = load_config_fusion("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* x = named(f, "x");
  TensorView* y = named(f, "y");
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  ir::Expr* relu = y->definition();
  TensorView* x_smem = cache_after(x);
  set_memory_type(x_smem, MemoryType::Shared);
  TensorView* y_local = cache_before(y);
  ir::verify(f);

  // The graph is rewired: x is read only by the copy into its cache, and the
  // relu now produces the cache, which y copies.
  ASSERT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->uses()[0], x_smem->definition());
  ASSERT_TRUE(x_smem->definition()->is<ir::LoadStoreOp>());
  EXPECT_EQ(x_smem->definition()->as<ir::LoadStoreOp>()->op(), ir::LoadStoreOpType::Set);
  EXPECT_EQ(x_smem->user_name(), "x_cache");
  EXPECT_EQ(y_local->definition(), relu);
  ASSERT_TRUE(y->definition()->is<ir::LoadStoreOp>());
  EXPECT_EQ(y->definition()->op_name(), "set");
  EXPECT_EQ(producer_of(y), y_local);
  EXPECT_EQ(f.outputs(), std::vector<TensorView*>{y});
  // The add reads the cache, not x.
  TensorView* add = producer_of(y_local);
  EXPECT_EQ(producer_of(add), x_smem);

  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  inline_most(f);
  check_valid(f);

  EXPECT_EQ(x_smem->memory_type(), MemoryType::Shared);
  EXPECT_EQ(y_local->memory_type(), MemoryType::Local);
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
  EXPECT_EQ(x->memory_type(), MemoryType::Global);
  for (TensorView* tv : {x_smem, add, y_local, y}) {
    SCOPED_TRACE(print_tensor(tv));
    EXPECT_THAT(loop_sig(tv),
                ElementsAre("iblockIdx.x{ceilDiv((N * K), 128)}", "ithreadIdx.x{128}"));
  }
  EXPECT_EQ(x_smem->compute_at_pos(), 2);
  EXPECT_EQ(add->compute_at_pos(), 2);
  EXPECT_EQ(y_local->compute_at_pos(), 2);
  EXPECT_EQ(y->compute_at_pos(), 0);
  EXPECT_EQ(x->compute_at_pos(), 0);
}

// nvFuser's vectorized pointwise schedule: the input is loaded and the output
// stored four elements at a time; the computation in between is inlined
// fully, the vector accesses only up to their vector axis.
TEST(UserSchedule, BiasReluVectorizedLoadStore) {
  auto def = load_config_fusion("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* x = named(f, "x");
  TensorView* y = named(f, "y");
  TensorView* xc = cache_after(x);
  TensorView* yc = cache_before(y);
  y->merge(0)->split(0, 4)->split(0, 128);  // [ceilDiv(ceilDiv(N * K, 4), 128), 128, 4]
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  xc->parallelize(-1, LoopTransform::Vectorize);
  y->parallelize(-1, LoopTransform::Vectorize);
  inline_most(f);
  check_valid(f);
  EXPECT_THAT(loop_sig(xc), ElementsAre("iblockIdx.x{ceilDiv(ceilDiv((N * K), 4), 128)}",
                                        "ithreadIdx.x{128}", "iS{4}_vect"));
  EXPECT_THAT(loop_sig(y), ElementsAre("iblockIdx.x{ceilDiv(ceilDiv((N * K), 4), 128)}",
                                       "ithreadIdx.x{128}", "iS{4}_vect"));
  TensorView* add = producer_of(yc);
  EXPECT_THAT(loop_sig(add), ElementsAre("iblockIdx.x{ceilDiv(ceilDiv((N * K), 4), 128)}",
                                         "ithreadIdx.x{128}", "iS{4}"));
  EXPECT_EQ(xc->compute_at_pos(), 2);   // its own vector axis
  EXPECT_EQ(add->compute_at_pos(), 3);  // fully, into the relu
  EXPECT_EQ(yc->compute_at_pos(), 2);   // its consumer's vector axis
  EXPECT_EQ(y->compute_at_pos(), 0);
  EXPECT_THAT(user_error_of([&] { inline_at(yc, 3); }),
              AllOf(HasSubstr("axis 2 of consumer T4 (y)"),
                    HasSubstr("is Vectorize, which cannot be shared with a producer"),
                    HasSubstr("the largest legal position is 2")));
}

// ---------------------------------------------------------------------------
// 3. Softmax, persistent style: the row is split into a fixed number of
// per-thread chunks (outer split) and the chunk index is bound to TIDx.

TEST(UserSchedule, SoftmaxPersistentPropagateInline) {
  auto def = load_config_fusion("softmax");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* e = named(f, "e");
  ASSERT_NE(y, nullptr);
  ASSERT_NE(e, nullptr);
  y->split(1, 4, /*inner_split=*/false);  // [N, 4, ceilDiv(K, 4)]
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  check_valid(f);

  EXPECT_THAT(loop_sig(y), ElementsAre("iblockIdx.x{N}", "iS{4}", "ithreadIdx.x{ceilDiv(K, 4)}"));
  EXPECT_THAT(loop_sig(e), ElementsAre("iblockIdx.x{N}", "iS{4}", "ithreadIdx.x{ceilDiv(K, 4)}"));
  auto reds = get_reduction_tvs(f);
  ASSERT_EQ(reds.size(), 2u);
  for (TensorView* r : reds) {
    SCOPED_TRACE(print_tensor(r));
    EXPECT_THAT(loop_sig(r), ElementsAre("iblockIdx.x{N}", "rS{4}", "rthreadIdx.x{ceilDiv(K, 4)}"));
    EXPECT_EQ(r->axis(2)->iter_type(), IterType::Reduction);
    EXPECT_EQ(r->axis(2)->parallel_type(), ParallelType::TIDx);
  }
  // The broadcasts (m, s) split their broadcast axis the same way.
  for (const char* name : {"m", "s"}) {
    TensorView* b = named(f, name);
    SCOPED_TRACE(print_tensor(b));
    ASSERT_EQ(b->nloop(), 3);
    EXPECT_EQ(b->axis(0)->parallel_type(), ParallelType::BIDx);
    EXPECT_TRUE(b->axis(1)->is_broadcast());
    EXPECT_TRUE(b->axis(2)->is_broadcast());
  }

  inline_most(f);
  check_valid(f);
  // A reduction finishes before its consumer reads it: inlined at the row.
  for (TensorView* r : reds) EXPECT_EQ(r->compute_at_pos(), 1) << print_tensor(r);
  EXPECT_EQ(max_inline_position(reds[0]), 1);
  // e feeds both the sum (inside its serial reduction loop) and y (inside
  // y's own loops): those are different loop nests past the row, so e is
  // computed once per row into its own buffer (a persistent buffer) and
  // inlined at 1. Its single-consumer producer x - m is inlined fully.
  EXPECT_EQ(e->compute_at_pos(), 1);
  EXPECT_EQ(producer_of(e)->compute_at_pos(), 3);  // x - m
  // The broadcasts m and s are not checked: schedlab inlines them at 3,
  // nvFuser would hoist their trailing broadcast axes (position 1).
  EXPECT_EQ(y->compute_at_pos(), 0);
  EXPECT_EQ(named(f, "x")->compute_at_pos(), 0);
}

// ---------------------------------------------------------------------------
// 4. inline_at and inline_selected_at on the gelu chain.

TEST(UserSchedule, GeluInlineAtAndSelectedAt) {
  auto def = load_config_fusion("gelu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* cdf = named(f, "cdf");
  ASSERT_NE(y, nullptr);
  ASSERT_NE(cdf, nullptr);
  // x / sqrt(2) -> erf -> 1 + . -> 0.5 * . (cdf) -> x * cdf (y)
  TensorView* t3 = cdf->definition()->inputs()[1]->as<TensorView>();
  ASSERT_NE(t3, nullptr);
  TensorView* t2 = t3->definition()->inputs()[1]->as<TensorView>();
  TensorView* t1 = producer_of(t2);
  ASSERT_EQ(producer_of(t1), named(f, "x"));

  y->split(1, 32);  // [N, ceilDiv(K, 32), 32]
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  for (TensorView* tv : {t1, t2, t3, cdf})
    EXPECT_THAT(loop_sig(tv),
                ElementsAre("iblockIdx.x{N}", "iS{ceilDiv(K, 32)}", "ithreadIdx.x{32}"))
        << print_tensor(tv);

  // Positions only grow here: nvFuser's inlineAt never lowers one, so a
  // schedule that relies on lowering it would not port.
  // Relative to cdf's first loop only.
  inline_selected_at({t1, t2, t3}, cdf, 1);
  for (TensorView* tv : {t1, t2, t3}) EXPECT_EQ(tv->compute_at_pos(), 1) << print_tensor(tv);
  inline_at(cdf, 1);
  EXPECT_EQ(cdf->compute_at_pos(), 1);
  inline_selected_at({t1, t2, t3}, y, 2);
  EXPECT_EQ(t1->compute_at_pos(), 2);
  EXPECT_EQ(t2->compute_at_pos(), 2);
  EXPECT_EQ(t3->compute_at_pos(), 2);
  EXPECT_EQ(cdf->compute_at_pos(), 1);
  inline_selected_at({t1, t2, t3, cdf}, y, -1);
  for (TensorView* tv : {t1, t2, t3, cdf}) EXPECT_EQ(tv->compute_at_pos(), 3) << print_tensor(tv);
  EXPECT_EQ(max_inline_position(y), 0);
  // The output has no consumer to be inlined into.
  EXPECT_THAT(user_error_of([&] { inline_at(y, 1); }),
              HasSubstr("it has no consumers; the largest legal position is 0"));
  check_valid(f);
}

// A real mistake: reordering the output after its producers were scheduled
// like it. The producers can then only share the first loop.
TEST(UserSchedule, GeluInlinePastLegalMaximum) {
  auto def = load_config_fusion("gelu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* cdf = named(f, "cdf");
  y->split(1, 32);
  propagate_transformation(y);
  y->reorder({{1, 2}});  // [N, 32, ceilDiv(K, 32)]
  EXPECT_EQ(max_inline_position(cdf), 1);
  EXPECT_THAT(user_error_of([&] { inline_at(cdf, 2); }),
              AllOf(HasSubstr("cannot inline T4 (cdf) at position 2"),
                    HasSubstr("does not map to axis 1 of consumer T5 (y)"),
                    HasSubstr("the largest legal position is 1")));
  EXPECT_EQ(cdf->compute_at_pos(), 0);
  inline_at(cdf, 3, /*best_effort=*/true);
  EXPECT_EQ(cdf->compute_at_pos(), 1);
  inline_at(cdf, 1);
  EXPECT_EQ(cdf->compute_at_pos(), 1);
  check_valid(f);
}

// ---------------------------------------------------------------------------
// 5. rfactor of a split reduction (row_sum).

TEST(UserSchedule, RowSumRfactorSplitReduction) {
  auto def = load_config_fusion("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* x = named(f, "x");
  TensorView* y = named(f, "y");
  ASSERT_NE(y, nullptr);
  y->split(1, 128);  // [N, rceilDiv(K, 128), r128]
  EXPECT_THAT(loop_sig(y), ElementsAre("iS{N}", "rS{ceilDiv(K, 128)}", "rS{128}"));
  TensorView* rf = rfactor(y, {1});
  ir::verify(f);

  // Producer: reduces the outer part, keeps 128 partial sums per row.
  EXPECT_EQ(rf->user_name(), "y_rf");
  EXPECT_EQ(producer_of(rf), x);
  EXPECT_EQ(producer_of(y), rf);
  ASSERT_TRUE(y->definition()->is<ir::ReductionOp>());
  EXPECT_EQ(y->definition()->as<ir::ReductionOp>()->op(), ir::ReductionOpType::Sum);
  ASSERT_TRUE(rf->has_root());
  EXPECT_THAT(domain_sig(rf->root()), ElementsAre("iS{N}", "rS{K}"));
  EXPECT_THAT(domain_sig(rf->logical()), ElementsAre("iS{N}", "rS{ceilDiv(K, 128)}", "iS{128}"));
  EXPECT_THAT(loop_sig(rf), ElementsAre("iS{N}", "rS{ceilDiv(K, 128)}", "iS{128}"));
  EXPECT_EQ(rf->memory_type(), MemoryType::Local);
  // Consumer: the output reduces the 128 partials and stays in global memory.
  EXPECT_FALSE(y->has_root());
  EXPECT_THAT(domain_sig(y->logical()), ElementsAre("iS{N}", "rS{128}"));
  EXPECT_THAT(loop_sig(y), ElementsAre("iS{N}", "rS{128}"));
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
  EXPECT_EQ(f.outputs(), std::vector<TensorView*>{y});

  // Block reduction: one row per block, the partials across threads.
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  parallelize_all_like(y);
  EXPECT_THAT(loop_sig(rf),
              ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(K, 128)}", "ithreadIdx.x{128}"));
  inline_most(f);
  check_valid(f);
  EXPECT_EQ(rf->compute_at_pos(), 1);
  EXPECT_EQ(y->compute_at_pos(), 0);
}

TEST(UserSchedule, RowSumRfactorTwiceTidxInnermost) {
  auto def = load_config_fusion("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* x = named(f, "x");
  TensorView* y = named(f, "y");
  y->split(1, 128);  // [N, rceilDiv(K, 128), r128]
  y->split(2, 32);   // [N, rceilDiv(K, 128), r4, r32]
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(3, ParallelType::TIDx);
  EXPECT_THAT(loop_sig(y),
              ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(K, 128)}", "rS{4}", "rthreadIdx.x{32}"));
  TensorView* rf1 = rfactor(y, {1});
  ir::verify(f);
  EXPECT_THAT(loop_sig(rf1),
              ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(K, 128)}", "iS{4}", "ithreadIdx.x{32}"));
  // Root axes that no split touched are the loop axes themselves.
  EXPECT_THAT(domain_sig(rf1->root()), ElementsAre("iblockIdx.x{N}", "rS{K}"));
  EXPECT_THAT(loop_sig(y), ElementsAre("iblockIdx.x{N}", "rS{4}", "rthreadIdx.x{32}"));
  TensorView* rf2 = rfactor(y, {1});
  ir::verify(f);
  EXPECT_THAT(loop_sig(rf2), ElementsAre("iblockIdx.x{N}", "rS{4}", "ithreadIdx.x{32}"));
  // As in nvFuser's TransformRFactor, the reduction root axis that is not
  // rfactored becomes an Iteration axis of the producer.
  EXPECT_THAT(domain_sig(rf2->root()), ElementsAre("iblockIdx.x{N}", "rS{4}", "ithreadIdx.x{32}"));
  EXPECT_THAT(loop_sig(y), ElementsAre("iblockIdx.x{N}", "rthreadIdx.x{32}"));
  // x -> rf1 -> rf2 -> y
  EXPECT_EQ(producer_of(rf1), x);
  EXPECT_EQ(producer_of(rf2), rf1);
  EXPECT_EQ(producer_of(y), rf2);
  EXPECT_EQ(get_reduction_tvs(f), (std::vector<TensorView*>{rf1, rf2, y}));

  inline_most(f);
  check_valid(f);
  EXPECT_EQ(rf1->compute_at_pos(), 1);
  EXPECT_EQ(rf2->compute_at_pos(), 1);
}

// ---------------------------------------------------------------------------
// 6. var_mean style (nvFuser's inner reduction scheduler) on layernorm, whose
// mean and variance are two inner reductions: cache the input with a
// streaming load, split the row by the vector width and then by the block
// size, rfactor the serial and vectorized parts, and keep the TIDx part for
// the block reduction.

TEST(UserSchedule, LayernormVarMeanStyle) {
  auto def = load_config_fusion("layernorm");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* x = named(f, "x");
  TensorView* y = named(f, "y");
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  TensorView* xc = cache_after(x, ir::LoadStoreOpType::Set, ir::CacheOp::Streaming);
  ASSERT_TRUE(xc->definition()->is<ir::LoadStoreOp>());
  EXPECT_EQ(xc->definition()->as<ir::LoadStoreOp>()->op(), ir::LoadStoreOpType::Set);
  EXPECT_EQ(xc->definition()->as<ir::LoadStoreOp>()->cache_op(), ir::CacheOp::Streaming);
  ASSERT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->uses()[0], xc->definition());

  auto reds = get_reduction_tvs(f);  // the sums of the mean and the variance
  ASSERT_EQ(reds.size(), 2u);
  TensorView* ref = reds.back();
  ref->split(1, 4);    // [N, rceilDiv(K, 4), r4]
  ref->split(1, 128);  // [N, rceilDiv(ceilDiv(K, 4), 128), r128, r4]
  EXPECT_THAT(loop_sig(ref),
              ElementsAre("iS{N}", "rS{ceilDiv(ceilDiv(K, 4), 128)}", "rS{128}", "rS{4}"));
  propagate_transformation(ref);
  for (TensorView* tv : f.tensors()) {
    // Skip the inputs and the broadcasts ([N, 1] of the statistics, [1, K]
    // of weight and bias).
    if (f.is_input(tv) || tv->logical().front()->is_broadcast() ||
        tv->logical().back()->is_broadcast())
      continue;
    SCOPED_TRACE(print_tensor(tv));
    ASSERT_EQ(tv->nloop(), 4);
    EXPECT_EQ(tv->axis(0)->extent().str(), "N");
    EXPECT_EQ(tv->axis(1)->extent().str(), "ceilDiv(ceilDiv(K, 4), 128)");
    EXPECT_EQ(tv->axis(2)->extent().str(), "128");
    EXPECT_EQ(tv->axis(3)->extent().str(), "4");
  }
  std::vector<TensorView*> rfs;
  for (TensorView* r : reds) rfs.push_back(rfactor(r, {1, 3}));
  ir::verify(f);
  for (size_t i = 0; i < reds.size(); ++i) {
    SCOPED_TRACE(print_tensor(rfs[i]));
    EXPECT_THAT(loop_sig(rfs[i]),
                ElementsAre("iS{N}", "rS{ceilDiv(ceilDiv(K, 4), 128)}", "iS{128}", "rS{4}"));
    EXPECT_THAT(loop_sig(reds[i]), ElementsAre("iS{N}", "rS{128}"));
    EXPECT_EQ(producer_of(reds[i]), rfs[i]);
  }

  TensorView* rf = rfs.back();
  rf->parallelize(0, ParallelType::BIDx);
  rf->parallelize(2, ParallelType::TIDx);
  parallelize_all_like(rf);
  xc->parallelize(-1, LoopTransform::Vectorize);
  inline_most(f);
  check_valid(f);

  // The input cache: one streaming vector load of 4 per thread per step.
  EXPECT_THAT(loop_sig(xc), ElementsAre("iblockIdx.x{N}", "iS{ceilDiv(ceilDiv(K, 4), 128)}",
                                        "ithreadIdx.x{128}", "iS{4}_vect"));
  EXPECT_EQ(xc->axis(-1)->loop_transform(), LoopTransform::Vectorize);
  EXPECT_EQ(xc->axis(-1)->extent().str(), "4");
  EXPECT_EQ(xc->memory_type(), MemoryType::Local);
  // The reduction consumers reduce the per-thread partials over TIDx.
  for (TensorView* r : reds) {
    SCOPED_TRACE(print_tensor(r));
    EXPECT_THAT(loop_sig(r), ElementsAre("iblockIdx.x{N}", "rthreadIdx.x{128}"));
    EXPECT_EQ(r->axis(1)->iter_type(), IterType::Reduction);
    EXPECT_EQ(r->axis(1)->parallel_type(), ParallelType::TIDx);
    EXPECT_EQ(r->compute_at_pos(), 1);
  }
  for (TensorView* p : rfs) {
    SCOPED_TRACE(print_tensor(p));
    EXPECT_THAT(loop_sig(p), ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(ceilDiv(K, 4), 128)}",
                                         "ithreadIdx.x{128}", "rS{4}"));
    EXPECT_EQ(p->compute_at_pos(), 1);
  }
  EXPECT_THAT(loop_sig(y), ElementsAre("iblockIdx.x{N}", "iS{ceilDiv(ceilDiv(K, 4), 128)}",
                                       "ithreadIdx.x{128}", "iS{4}"));
  // The cache feeds the mean's reduction and d = x - mean, which run their
  // loops past the row in different loop nests: it is inlined at the row.
  EXPECT_EQ(xc->compute_at_pos(), 1);
  EXPECT_EQ(max_inline_position(xc), 1);
  EXPECT_THAT(user_error_of([&] { inline_at(xc, 4); }),
              AllOf(HasSubstr("run loop 1 in different loop nests"),
                    HasSubstr("the largest legal position is 1")));
}

// nvFuser's own order: rfactor right after splitting the reference, then
// propagate from the rfactor producer (the reference of the inner reduction
// scheduler). The root -> logical split of the producer must reach the
// other tensors as well.
TEST(UserSchedule, LayernormPropagateFromRfactorProducer) {
  auto def = load_config_fusion("layernorm");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* xc = cache_after(named(f, "x"), ir::LoadStoreOpType::Set, ir::CacheOp::Streaming);
  auto reds = get_reduction_tvs(f);
  ASSERT_EQ(reds.size(), 2u);
  TensorView* red = reds.back();
  red->split(1, 4);
  red->split(1, 128);
  TensorView* rf = rfactor(red, {1, 3});
  rf->parallelize(0, ParallelType::BIDx);
  rf->parallelize(2, ParallelType::TIDx);
  propagate_transformation(rf);
  parallelize_all_like(rf);
  ir::verify(f);
  for (TensorView* tv : {xc, named(f, "d"), named(f, "y")}) {
    SCOPED_TRACE(print_tensor(tv));
    EXPECT_THAT(loop_sig(tv), ElementsAre("iblockIdx.x{N}", "iS{ceilDiv(ceilDiv(K, 4), 128)}",
                                          "ithreadIdx.x{128}", "iS{4}"));
  }
  EXPECT_THAT(loop_sig(red), ElementsAre("iblockIdx.x{N}", "rthreadIdx.x{128}"));
  // The other reduction is split like the reference, then rfactored too.
  TensorView* other = reds.front();
  EXPECT_THAT(loop_sig(other), ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(ceilDiv(K, 4), 128)}",
                                           "rthreadIdx.x{128}", "rS{4}"));
  TensorView* other_rf = rfactor(other, {1, 3});
  EXPECT_THAT(loop_sig(other_rf), ElementsAre("iblockIdx.x{N}", "rS{ceilDiv(ceilDiv(K, 4), 128)}",
                                              "ithreadIdx.x{128}", "rS{4}"));
  EXPECT_THAT(loop_sig(other), ElementsAre("iblockIdx.x{N}", "rthreadIdx.x{128}"));
  xc->parallelize(-1, LoopTransform::Vectorize);
  inline_most(f);
  check_valid(f);
  EXPECT_EQ(rf->compute_at_pos(), 1);
  EXPECT_EQ(other_rf->compute_at_pos(), 1);
  EXPECT_EQ(xc->compute_at_pos(), 1);  // read by two loop nests, see above
  // d feeds d * d (the variance) and y: also two nests past the row.
  EXPECT_EQ(named(f, "d")->compute_at_pos(), 1);
}

// ---------------------------------------------------------------------------
// Mistakes users make in these flows.

TEST(UserScheduleErrors, VectorizeBeforeSplit) {
  auto def = load_config_fusion("layernorm");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* xc = cache_after(named(f, "x"), ir::LoadStoreOpType::Set, ir::CacheOp::Streaming);
  EXPECT_THAT(user_error_of([&] { xc->parallelize(-1, LoopTransform::Vectorize); }),
              AllOf(HasSubstr("cannot vectorize " + xc->describe() + " axis 1"),
                    HasSubstr("of symbolic extent K; expected a constant extent (split by the "
                              "vector width first)")));
  EXPECT_EQ(xc->axis(-1)->loop_transform(), LoopTransform::Serial);
  // Splitting off the vector width first is the fix.
  xc->split(1, 4);
  xc->parallelize(-1, LoopTransform::Vectorize);
  EXPECT_EQ(axis_sig(xc->axis(-1)), "iS{4}_vect");
  // ...and a width past 16 bytes is not a vector.
  TensorView* w = named(f, "weight");
  TensorView* wc = cache_after(w);
  wc->split(0, 8);
  EXPECT_THAT(user_error_of([&] { wc->parallelize(-1, LoopTransform::Vectorize); }),
              HasSubstr("width 8 x 4 bytes; expected a power of two of at most 16 bytes"));
}

TEST(UserScheduleErrors, RfactorAllReductionAxes) {
  auto def = load_config_fusion("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  y->split(1, 128);
  EXPECT_THAT(user_error_of([&] {
                rfactor(y, {1, 2});
              }),
              HasSubstr("all 2 reduction axes of T1 (y) are selected; expected to leave at least "
                        "one for the consumer to reduce"));
  EXPECT_THAT(user_error_of([&] { rfactor(y, {0}); }),
              HasSubstr("axis 0 (iS2{N}) is not a Reduction"));
  // Nothing changed.
  EXPECT_EQ(producer_of(y), named(f, "x"));
  EXPECT_THAT(loop_sig(y), ElementsAre("iS{N}", "rS{ceilDiv(K, 128)}", "rS{128}"));
  ir::verify(f);
}

TEST(UserScheduleErrors, InlineReductionPastItsReductionAxis) {
  auto def = load_config_fusion("softmax");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  y->split(1, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagate_transformation(y);
  parallelize_all_like(y);
  TensorView* mx = get_reduction_tvs(f).front();
  EXPECT_THAT(user_error_of([&] { inline_at(mx, 2); }),
              AllOf(HasSubstr("cannot inline T1 at position 2"),
                    HasSubstr("is a Reduction, which must finish before any consumer reads it"),
                    HasSubstr("the largest legal position is 1")));
  EXPECT_THAT(user_error_of([&] { inline_at(mx, -1); }),
              HasSubstr("the largest legal position is 1"));
  EXPECT_EQ(mx->compute_at_pos(), 0);
  inline_at(mx, 1);
  EXPECT_EQ(mx->compute_at_pos(), 1);
  check_valid(f);
}

TEST(UserScheduleErrors, CacheAfterTensorWithNoUses) {
  auto def = load_config_fusion("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  EXPECT_THAT(user_error_of([&] { cache_after(y); }),
              HasSubstr("cache_after: T4 (y) has no uses; expected a tensor that some "
                        "expression reads"));
  // cache_before is the primitive for an output.
  TensorView* c = cache_before(y);
  EXPECT_EQ(producer_of(y), c);
  ir::verify(f);
}

TEST(UserScheduleErrors, SharedMemoryFusionOutput) {
  auto def = load_config_fusion("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  EXPECT_THAT(user_error_of([&] { set_memory_type(y, MemoryType::Shared); }),
              HasSubstr("set_memory_type: T4 (y) is a fusion output; expected Global memory, "
                        "found Shared"));
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
  EXPECT_THAT(user_error_of([&] { set_memory_type(named(f, "x"), MemoryType::Shared); }),
              HasSubstr("is a fusion input; expected Global memory, found Shared"));
  // The fix: stage the output through a cache, and put that in shared memory.
  TensorView* c = cache_before(y);
  set_memory_type(c, MemoryType::Shared);
  EXPECT_EQ(c->memory_type(), MemoryType::Shared);
  EXPECT_EQ(y->memory_type(), MemoryType::Global);
  ir::verify(f);
}

}  // namespace
}  // namespace schedlab::sched
