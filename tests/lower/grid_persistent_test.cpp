// Grid persistence (sched::grid_persistent, lowering rule 8): a grid
// reduction whose result the same kernel reads, through a grid-wide barrier
// (an allreduce over the grid), on the CPU backend against the reference:
// softmax, layernorm and rmsnorm with few long rows split over blocks, one
// kernel each, sanitized clean; repeated launches (the barrier resets
// itself); NVRTC sm_80 and sm_90 accept the units; the residency refusal (more
// blocks than the emulated device holds at once); the sanitizer's protocol
// findings (a read of the partials before the barrier, a block that exits
// before it) and the untraced deadlock error; the user errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/lower/lower.h"
#include "schedlab/runtime/sanitizer.h"
#include "schedlab/sched/grid_persistent.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::ParallelType;
using ir::TensorView;
using ::testing::HasSubstr;

std::vector<TensorView*> reductions(Fusion& f) {
  std::vector<TensorView*> r;
  for (TensorView* t : f.tensors())
    if (t->definition() && t->definition()->is<ir::ReductionOp>()) r.push_back(t);
  return r;
}

/// Rows on BIDy, each row split [ceilDiv(ceilDiv(K, threads), serial) BIDx,
/// serial, threads TIDx] on the first reduction (the reference), every
/// reduction grid-persistent: the statistics are grid allreduces, the
/// elementwise math after them reads them in the same kernel.
Schedule grid_persistent_rows(int64_t threads, int64_t serial) {
  return [=](Fusion& f) {
    std::vector<TensorView*> red = reductions(f);
    TensorView* ref = red.front();
    ref->split(1, threads)->split(1, serial);
    ref->parallelize(0, ParallelType::BIDy);
    ref->parallelize(1, ParallelType::BIDx);
    ref->parallelize(3, ParallelType::TIDx);
    propagate_and_inline(f, ref);
    for (TensorView* r : red) sched::grid_persistent(r);
  };
}

runtime::PreparedKernel prepare_persistent(const frontend::FusionDefinition& def,
                                           const ir::SizeBindings& sizes) {
  runtime::PreparedKernel p = prepare_or_report(def, sizes);
  EXPECT_TRUE(p.kernel.grid_sync);
  EXPECT_TRUE(p.source.grid_sync);
  EXPECT_THAT(p.source.source, HasSubstr("sl_grid_sync("));
  EXPECT_THAT(p.source.source, ::testing::Not(HasSubstr("sl_grid_reduce<")));
  expect_nvrtc_accepts(p.source);
  return p;
}

/// Validates `fusion` under grid_persistent_rows at every size, plain and
/// sanitized (no finding).
void check(const std::string& fusion, int64_t threads, int64_t serial,
           const std::vector<ir::SizeBindings>& all_sizes) {
  for (const ir::SizeBindings& sizes : all_sizes) {
    auto def = load(fusion);
    auto plain = load(fusion);
    grid_persistent_rows(threads, serial)(*def.fusion);
    runtime::PreparedKernel p = prepare_persistent(def, sizes);
    runtime::LaunchDims dims = runtime::launch_dims(p.kernel, sizes);
    auto compiled = test_backend().compile(p.source);
    EXPECT_EQ(run_and_compare(plain, p, *compiled, sizes), "")
        << fusion << " at " << sizes_str(sizes) << " (grid " << dims.grid[0] << "x"
        << dims.grid[1] << ")\n"
        << codegen::print_kernel(p.kernel);
    auto inputs = ref::make_inputs(*plain.fusion, sizes, 3, plain.input_ranges);
    runtime::SanitizedRun s = runtime::execute_sanitized(test_backend(), p, inputs, sizes);
    EXPECT_EQ(s.report, "") << fusion << " at " << sizes_str(sizes);
    auto want = ref::evaluate(*plain.fusion, inputs, sizes);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(ref::compare(s.outputs[i], want[i],
                               ref::Tolerance::error_bound(plain.fusion->outputs()[i]->dtype()))
                      .ok)
          << "sanitized run, output " << i;
  }
}

TEST(GridPersistent, SoftmaxFewLongRowsIsOneKernel) {
  // 3 rows of 1000: 8 blocks per row of 32 threads x 4; 1, 33 and 4096 too.
  check("softmax", 32, 4,
        {{{"N", 3}, {"K", 1000}}, {{"N", 2}, {"K", 1}}, {{"N", 1}, {"K", 33}},
         {{"N", 2}, {"K", 4096}}});
}

TEST(GridPersistent, LayernormAndRmsnorm) {
  check("layernorm", 64, 4, {{{"N", 2}, {"K", 3000}}});
  check("rmsnorm", 64, 2, {{{"N", 3}, {"K", 2048}}});
}

/// softmax under grid_persistent_rows(32, 4) at N=2, K=1000: 8 blocks a row.
struct Planted {
  frontend::FusionDefinition def = load("softmax"), plain = load("softmax");
  ir::SizeBindings sizes{{"N", 2}, {"K", 1000}};
  runtime::PreparedKernel p;
  Planted() {
    grid_persistent_rows(32, 4)(*def.fusion);
    p = prepare_or_report(def, sizes);
  }
  /// p with its unit's text edited by `edit`.
  runtime::PreparedKernel with(const std::function<void(std::string&)>& edit) const {
    runtime::PreparedKernel q = runtime::prepare(*def.fusion, sizes);
    edit(q.source.source);
    return q;
  }
  std::vector<ref::HostTensor> inputs() const {
    return ref::make_inputs(*plain.fusion, sizes, 5, plain.input_ranges);
  }
};

/// The unit's first grid barrier line, "  sl_grid_sync(...);\n".
std::string first_grid_sync(const std::string& text) {
  const size_t at = text.find("sl_grid_sync(SL_SITE(");
  const size_t from = text.rfind('\n', at) + 1, to = text.find('\n', at) + 1;
  return text.substr(from, to - from);
}

TEST(GridPersistent, RepeatedLaunchesAndNvrtcSm80) {
  Planted k;
  auto compiled = test_backend().compile(k.p.source);
  for (uint64_t seed : {1u, 2u, 3u})
    EXPECT_EQ(run_and_compare(k.plain, k.p, *compiled, k.sizes, seed), "") << "launch " << seed;
  std::string log;
  EXPECT_NO_THROW(runtime::nvrtc_compile(k.p.source, "sm_80", &log, kernel_cache_dir())) << log;
  EXPECT_NO_THROW(runtime::nvrtc_compile(k.p.source, "sm_90", &log, kernel_cache_dir())) << log;
}

TEST(GridPersistent, AReadOfThePartialsBeforeTheBarrierIsASanitizerFinding) {
  // The first allreduce without its barrier: each block combines the row's
  // slots while the others may not have written theirs.
  Planted k;
  runtime::PreparedKernel q = k.with([](std::string& text) {
    const std::string sync = first_grid_sync(text);
    text.replace(text.find(sync), sync.size(), "");
  });
  runtime::SanitizedRun s = runtime::execute_sanitized(test_backend(), q, k.inputs(), k.sizes);
  ASSERT_FALSE(s.findings.empty()) << "a read of other blocks' partials before the barrier";
  bool partials = false;
  for (const runtime::SanitizerFinding& f : s.findings)
    partials |= (f.kind == runtime::SanitizerFinding::Kind::BlockRace ||
                 f.kind == runtime::SanitizerFinding::Kind::Uninitialized) &&
                f.message().find("T1_grid_partials") != std::string::npos;
  EXPECT_TRUE(partials) << s.report;
  // With the barrier: clean (the same kernel, unedited).
  EXPECT_EQ(runtime::execute_sanitized(test_backend(), k.p, k.inputs(), k.sizes).report, "");
}

TEST(GridPersistent, ABlockThatExitsBeforeTheBarrierIsAFindingTracedAndADeadlockUntraced) {
  Planted k;
  runtime::PreparedKernel q = k.with([](std::string& text) {
    const std::string sync = first_grid_sync(text);
    text.insert(text.find(sync), "  if (blockIdx.x == 1) return;\n");
  });
  runtime::SanitizedRun s = runtime::execute_sanitized(test_backend(), q, k.inputs(), k.sizes);
  bool exit_found = false;
  for (const runtime::SanitizerFinding& f : s.findings)
    if (f.kind == runtime::SanitizerFinding::Kind::GridBarrierExit) {
      exit_found = true;
      EXPECT_THAT(f.message(), HasSubstr("waits at the grid barrier"));
      EXPECT_THAT(f.message(), HasSubstr("while block (1,0,0) has exited"));
    }
  EXPECT_TRUE(exit_found) << s.report;
  EXPECT_STREQ(runtime::finding_kind_name(runtime::SanitizerFinding::Kind::GridBarrierExit),
               "grid-barrier-exit");
  // Untraced, the emulation reports the deadlock instead of hanging.
  auto compiled = test_backend().compile(q.source);
  EXPECT_THAT(user_error_of([&] {
                runtime::execute(test_backend(), *compiled, q, k.inputs(), k.sizes);
              }),
              HasSubstr("kernel deadlock: block (1,0,0) exited while 14 blocks (block (0,0,0) the "
                        "first) wait at the grid barrier"));
}

TEST(GridPersistent, MoreBlocksThanTheDeviceHoldsAtOnceAreRefusedAtLaunch) {
  // 32 threads and 1 vector a thread: 31250 blocks a row, 62500 in all; the
  // emulated H100 holds 132 SMs x 32 blocks.
  auto def = load("softmax");
  auto plain = load("softmax");
  grid_persistent_rows(32, 1)(*def.fusion);
  ir::SizeBindings sizes{{"N", 2}, {"K", 1000000}};
  runtime::PreparedKernel p = prepare_or_report(def, sizes);
  auto compiled = test_backend().compile(p.source);
  EXPECT_THAT(user_error_of([&] { run_and_compare(plain, p, *compiled, sizes); }),
              HasSubstr("a kernel with grid barriers (grid-persistent reductions) needs all 62500 "
                        "blocks of grid (31250,2,1) resident at once, but "
                        "schedlab-model-sm90 holds at most 4224 (132 SMs x 32 blocks of 32 "
                        "threads and 128 bytes of shared memory, limited by blocks)"));
}

TEST(GridPersistent, UserErrors) {
  // Without grid_persistent, the refusal names the option.
  auto def = load("softmax");
  Fusion& f = *def.fusion;
  std::vector<TensorView*> red = reductions(f);
  red[0]->split(1, 32);
  red[0]->parallelize(1, ParallelType::BIDx);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              HasSubstr("or the reduction grid_persistent (sched::grid_persistent, the script's "
                        "grid_persistent(t): a grid-wide barrier, with every block resident at "
                        "once)"));
  // Only a reduction can be grid-persistent.
  auto def2 = load("softmax");
  TensorView* x = def2.fusion->inputs()[0]->as<TensorView>();
  EXPECT_THAT(user_error_of([&] { sched::grid_persistent(x); }),
              HasSubstr("grid_persistent: T0 (x) is a fusion input; expected a tensor defined by "
                        "a reduction"));
  // A grid-persistent reduction needs a grid reduction.
  auto def3 = load("row_sum");
  sched::grid_persistent(named(*def3.fusion, "y"));
  EXPECT_THAT(user_error_of([&] { lower::lower(*def3.fusion); }),
              HasSubstr("is grid_persistent but none of its Reduction axes is bound to BIDx or "
                        "BIDy"));
}

}  // namespace
}  // namespace schedlab::lower::testing
