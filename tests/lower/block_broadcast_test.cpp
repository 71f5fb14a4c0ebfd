// A block broadcast (issue 37): m = max(x, axis=1) reduced over TIDx (split
// by the block, rfactored), mb = broadcast(m, [false, true]) kept Local with
// its broadcast axis split by the block and bound to TIDx, read by a
// consumer whose inner axis is TIDx: nvFuser's partial-transform user
// schedule (configs/schedules/max_sub_add_partial.sched, and the same
// schedule built here in C++ without caches). A block reduction is an
// allreduce here (sl_block_reduce returns the result to every thread), so
// each thread computes mb's element in its own registers: no guard on the
// broadcast axis, no shared slot, no barrier of its own. Checked on the CPU
// backend against the reference at several sizes (K not a multiple of the
// block, N > 1), traced under the sanitizer (clean), NVRTC for sm_80 and
// sm_90. Breaking it shows: with the guard on the broadcast axis planted
// back, the sanitizer reports threads reading mb they never wrote. The
// Shared variant (the old departure) is a block broadcast through shared
// memory: one thread writes, a barrier, every thread reads; a planted
// missing barrier is a sanitizer finding. The refusals that stay (a
// consumer not bound to TIDx, or bound with another extent) keep their
// message; a broadcast of an accumulator guarded on its own Broadcast axis
// is no block broadcast.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"

namespace schedlab::lower::testing {
namespace {

using ir::ParallelType;
using ir::TensorView;
using ::testing::HasSubstr;

/// Lowers the scheduled `def` at `sizes` (`plant` may edit the kernel IR
/// before it is printed, the test hook), runs it traced on the CPU backend
/// and compares with the reference of `plain`.
Traced run(const frontend::FusionDefinition& def, const frontend::FusionDefinition& plain,
           const ir::SizeBindings& sizes, const std::function<void(kir::Kernel&)>& plant = {}) {
  return run_traced(def, plain, sizes, "max_sub_add", 3, plant);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// configs/fusions/max_sub_add.yaml scheduled by the example script with `args`.
frontend::FusionDefinition scripted(const std::string& args) {
  auto def = load("max_sub_add");
  const std::string path =
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/max_sub_add_partial.sched";
  frontend::apply_schedule_text(read_file(path), path, def,
                                frontend::parse_schedule_args(args, "args"));
  return def;
}

/// nvFuser's schedule without caches: y split by `block`, propagated to
/// every tensor (through the broadcast to mb, its Broadcast axis split by
/// the block too, but not back to the max, as in nvFuser), m split by hand
/// and rfactored ([N, r ceilDiv(K, block), block] then [N, r block]), rows
/// on BIDx, the block on TIDx; mb and d stay Local, nothing inlined (or
/// everything, `inline_all`).
void nvfuser_schedule(ir::Fusion& f, int64_t block, bool inline_all = false) {
  TensorView* y = named(f, "y");
  TensorView* m = named(f, "m");
  y->split(1, block);
  sched::propagate_transformation(y, sched::all_tvs_except(f, f.inputs()));
  m->split(1, block);
  sched::rfactor(m, {1});
  const std::vector<TensorView*> all = sched::all_tvs_except(f, f.inputs());
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  sched::parallelize_all_like(y, -1, all);
  m->parallelize(0, ParallelType::BIDx);
  m->parallelize(1, ParallelType::TIDx);
  sched::parallelize_all_like(m, -1, all);
  if (inline_all) sched::inline_most(f);
}

/// The same bindings set by hand, mb's broadcast split by `mb_block` on
/// TIDx, its consumers d and y split by `consumer_block`, on TIDx or not.
void hand_schedule(ir::Fusion& f, int64_t mb_block, int64_t consumer_block, bool consumer_tidx) {
  TensorView* y = named(f, "y");
  TensorView* d = named(f, "d");
  TensorView* mb = named(f, "mb");
  TensorView* m = named(f, "m");
  mb->split(1, mb_block);  // its Broadcast axis, as propagation splits it
  y->split(1, consumer_block);
  sched::propagate_transformation(y, {d});
  m->split(1, 128);
  TensorView* mrf = sched::rfactor(m, {1});
  for (TensorView* t : {y, d, mb, mrf, m}) t->parallelize(0, ParallelType::BIDx);
  for (TensorView* t : {mb, mrf}) t->parallelize(2, ParallelType::TIDx);
  m->parallelize(1, ParallelType::TIDx);
  if (consumer_tidx)
    for (TensorView* t : {y, d}) t->parallelize(2, ParallelType::TIDx);
}

frontend::FusionDefinition built(int64_t block, bool inline_all = false) {
  auto def = load("max_sub_add");
  nvfuser_schedule(*def.fusion, block, inline_all);
  return def;
}

/// The kernel function of a unit, without the runtime header.
std::string kernel_of(const std::string& cuda) {
  return cuda.substr(cuda.find("schedlab_kernel("));
}

/// The CUDA lines of `cuda`'s kernel that store into `buffer`, each after
/// the line before it (where its guard would be).
std::vector<std::string> stores_of(const std::string& cuda, const std::string& buffer) {
  std::vector<std::string> r;
  std::istringstream in(kernel_of(cuda));
  const std::regex store("SL_ST\\([0-9]+, " + buffer + ", ");
  std::string before;
  for (std::string line; std::getline(in, line); before = line)
    if (std::regex_search(line, store)) r.push_back(before + "\n" + line);
  return r;
}

const std::vector<ir::SizeBindings> kSizes = {
    {{"N", 3}, {"K", 1032}},  // 8 whole blocks of 128 and 8 more
    {{"N", 5}, {"K", 100}},   // less than one block
    {{"N", 2}, {"K", 1}},     // one element per row
    {{"N", 4}, {"K", 256}},   // whole blocks
};

TEST(BlockBroadcast, BuiltScheduleValidatesCleanAtSeveralSizes) {
  auto plain = load("max_sub_add");
  for (bool inline_all : {false, true})
    for (const ir::SizeBindings& sizes : kSizes) {
      SCOPED_TRACE(sizes_str(sizes) + (inline_all ? ", inline_most" : ", nothing inlined"));
      auto def = built(128, inline_all);
      EXPECT_EQ(named(*def.fusion, "mb")->memory_type(), ir::MemoryType::Local);
      Traced r = run(def, plain, sizes);
      EXPECT_EQ(r.sanitized.report, "");
      EXPECT_EQ(r.mismatch, "");
    }
}

TEST(BlockBroadcast, EveryThreadWritesItsOwnCopyWithoutASharedSlot) {
  auto plain = load("max_sub_add");
  Traced r = run(built(128), plain, {{"N", 3}, {"K", 1032}});
  const std::string& cuda = r.kernel.source.source;
  const std::string mb = named(*built(128).fusion, "mb")->str();
  const std::string kernel = kernel_of(cuda);
  // Local, one register per thread, and no guard that leaves it to one thread.
  EXPECT_THAT(kernel, HasSubstr("float " + mb + "[1];"));
  EXPECT_EQ(stores_of(cuda, mb).size(), 1u) << kernel;
  for (const std::string& line : stores_of(cuda, mb))
    EXPECT_THAT(line, ::testing::Not(HasSubstr("sl_tx < 1"))) << kernel;
  // The block reduction's barriers are the kernel's only ones: no shared memory
  // but its workspace.
  EXPECT_THAT(kernel, ::testing::Not(HasSubstr("SL_SYNC(")));
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string log;
    try {
      runtime::nvrtc_compile(r.kernel.source, arch, &log, kernel_cache_dir());
    } catch (const UserError& e) {
      ADD_FAILURE() << arch << ": NVRTC rejected the unit: " << e.what() << "\n" << log;
    }
  }
}

/// Puts back the guard the broadcast axis had (threadIdx.x < 1: the one
/// thread at its position 0) on every store into `buffer`.
void guard_stores(kir::Kernel& k, const std::string& buffer) {
  struct Guard : kir::IRMutator {
    std::string name;
    int n = 0;
    using kir::IRMutator::visit;
    void mutate_body(std::vector<kir::StmtP>& body) override {
      for (auto& s : body) {
        mutate(*s);
        const auto* st = s->as<kir::Store>();
        if (!st || st->buffer->name != name) continue;
        auto g = kir::If::make(kir::Expr::launch_index(ParallelType::TIDx) < kir::Expr::integer(1));
        g->then_body.push_back(std::move(s));
        s = std::move(g);
        ++n;
      }
    }
  } g;
  g.name = buffer;
  g.mutate(*k.body);
  ASSERT_GT(g.n, 0) << "no store into " << buffer;
}

TEST(BlockBroadcast, AGuardOnTheBroadcastAxisLeavesThreadsReadingWhatTheyNeverWrote) {
  auto plain = load("max_sub_add");
  auto def = built(128);
  const std::string mb = named(*def.fusion, "mb")->str();
  Traced r = run(def, plain, {{"N", 3}, {"K", 300}},
                  [&](kir::Kernel& k) { guard_stores(k, mb); });
  EXPECT_THAT(r.sanitized.report, HasSubstr("uninitialized local read"));
  EXPECT_THAT(r.sanitized.report, HasSubstr("(mb) element 0 read by thread (1,0,0)"));
}

TEST(BlockBroadcast, ExampleScriptKeepsMbLocalAndValidatesClean) {
  auto plain = load("max_sub_add");
  for (auto [args, sizes] :
       std::vector<std::pair<std::string, ir::SizeBindings>>{
           {"", {{"N", 5}, {"K", 1032}}},
           {"block=32", {{"N", 3}, {"K", 72}}},
           {"block=64,vector=2", {{"N", 2}, {"K", 130}}}}) {
    SCOPED_TRACE(args + " at " + sizes_str(sizes));
    auto def = scripted(args);
    EXPECT_EQ(named(*def.fusion, "mb")->memory_type(), ir::MemoryType::Local);
    Traced r = run(def, plain, sizes);
    EXPECT_EQ(r.sanitized.report, "");
    EXPECT_EQ(r.mismatch, "");
  }
}

/// The Shared variant: one thread (position 0 of the broadcast axis) writes
/// mb's element, a barrier, every thread reads it.
frontend::FusionDefinition shared_variant() {
  auto def = built(128);
  sched::set_memory_type(named(*def.fusion, "mb"), ir::MemoryType::Shared);
  return def;
}

/// Removes the first barrier after the first store into `buffer`.
void drop_barrier_after(kir::Kernel& k, const std::string& buffer) {
  struct Drop : kir::IRMutator {
    std::string name;
    bool stored = false, dropped = false;
    using kir::IRMutator::visit;
    void mutate_body(std::vector<kir::StmtP>& body) override {
      std::vector<kir::StmtP> out;
      for (auto& s : body) {
        mutate(*s);
        if (stored && !dropped && s->kind == kir::Stmt::Kind::Sync) {
          dropped = true;
          continue;
        }
        stored |= kir::any_stmt(*s, [&](const kir::Stmt& t) {
          const auto* st = t.as<kir::Store>();
          return st && st->buffer->name == name;
        });
        out.push_back(std::move(s));
      }
      body = std::move(out);
    }
  } d;
  d.name = buffer;
  d.mutate(*k.body);
  ASSERT_TRUE(d.dropped) << "no barrier after the store into " << buffer;
}

TEST(BlockBroadcast, SharedVariantIsABarrieredBroadcastAndAMissingBarrierIsFound) {
  auto plain = load("max_sub_add");
  auto def = shared_variant();
  const std::string mb = named(*def.fusion, "mb")->str();
  Traced ok = run(def, plain, {{"N", 3}, {"K", 300}});
  EXPECT_EQ(ok.sanitized.report, "");
  EXPECT_EQ(ok.mismatch, "");
  for (const std::string& line : stores_of(ok.kernel.source.source, mb))
    EXPECT_THAT(line, HasSubstr("sl_tx < 1")) << "one thread owns the shared element";
  Traced planted = run(def, plain, {{"N", 3}, {"K", 300}},
                        [&](kir::Kernel& k) { drop_barrier_after(k, mb); });
  EXPECT_THAT(planted.sanitized.report, HasSubstr("shared-memory race between threads"));
  EXPECT_THAT(planted.sanitized.report, HasSubstr("(mb) element 0 written by thread (0,0,0)"));
}

TEST(BlockBroadcast, ABroadcastOfAGuardedAccumulatorStaysGuarded) {
  // m's max reduces a Broadcast axis, split by 32 onto TIDx: an accumulator
  // is guarded to the thread at position 0 of it (its one element counted
  // once), so the broadcast of it is no block broadcast and keeps the same
  // guard (fuzz seed 1 case 273: every thread copied the max, which only
  // thread 0 held; an uninitialized local read).
  const char* fusion = R"(fusion: broadcast_of_guarded_max
inputs:
  x: {dtype: f32, shape: [1, 1]}
body: |
  m = max(tanh(x), axis=1, keepdim=true)
  y = abs(m)
outputs: [y]
)";
  auto plain = frontend::parse_fusion_text(fusion, "bg.yaml");
  auto def = frontend::parse_fusion_text(fusion, "bg.yaml");
  frontend::apply_schedule_text(
      "split(y, 0, 32)\nparallelize(y, 0, BIDx)\nparallelize(y, 1, TIDx)\n"
      "propagate_transformation(y)\nparallelize_all_like(y)\ninline_most()\n",
      "bg.sched", def, {});
  Traced r = run(def, plain, {});
  EXPECT_EQ(r.sanitized.report, "");
  EXPECT_EQ(r.mismatch, "");
}

TEST(BlockBroadcast, TheHandScheduleValidates) {
  // The schedule the refusals below break, as it should be: mb and its
  // consumers on the same 128 threads.
  auto plain = load("max_sub_add");
  auto def = load("max_sub_add");
  hand_schedule(*def.fusion, 128, 128, true);
  Traced r = run(def, plain, {{"N", 3}, {"K", 300}});
  EXPECT_EQ(r.sanitized.report, "");
  EXPECT_EQ(r.mismatch, "");
}

TEST(BlockBroadcast, AConsumerNotBoundToTIDxIsStillRefused) {
  auto def = load("max_sub_add");
  hand_schedule(*def.fusion, 128, 128, /*consumer_tidx=*/false);
  std::string err = user_error_of([&] { runtime::prepare(*def.fusion, {{"N", 3}, {"K", 300}}); });
  EXPECT_THAT(err, HasSubstr("(d) reads elements of Local"));
  EXPECT_THAT(err, HasSubstr("(mb) computed by other threads"));
  EXPECT_THAT(err, HasSubstr("but no axis of the consumer bound to TIDx iterates exactly the same "
                             "elements"));
}

TEST(BlockBroadcast, AConsumerBoundToTIDxWithAnotherExtentIsStillRefused) {
  // d on 256 threads reads mb, which only the first 128 computed.
  auto def = load("max_sub_add");
  hand_schedule(*def.fusion, 128, 256, true);
  std::string err = user_error_of([&] { runtime::prepare(*def.fusion, {{"N", 3}, {"K", 300}}); });
  EXPECT_THAT(err, HasSubstr("(d) reads elements of Local"));
  EXPECT_THAT(err, HasSubstr("(mb) computed by other threads"));
}

}  // namespace
}  // namespace schedlab::lower::testing
