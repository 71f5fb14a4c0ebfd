// rollback_plugin: the plugin the watch rollback test swaps under `schedlab
// watch`. Its good build (ROLLBACK_FAULT 0) sums each row of row_sum as a
// block reduction: 128 threads, each over K/128 elements, then a tree. Its
// bad builds fail in schedule: 1 segfaults, 2 never returns, 3 sums each row
// serially in one thread, a legal schedule whose rounding error over a long
// row exceeds the sweep's absolute tolerance (wrong_result) where the block
// reduction's stays well within it.
#include "schedlab/plugin.hpp"

#ifndef ROLLBACK_FAULT
#define ROLLBACK_FAULT 0
#endif

namespace pa = schedlab::plugin_api;

namespace {
volatile int* volatile null_int = nullptr;
volatile unsigned long spins = 0;
}  // namespace

class RollbackPlugin : public pa::Plugin {
 public:
  std::string name() const override { return "rollback_plugin"; }
  std::string version() const override { return ROLLBACK_VERSION; }
  std::string description() const override { return "watch rollback test: row sums"; }
  pa::Verdict can_schedule(pa::Segment&, const pa::Params&) override { return pa::Verdict::yes(); }
  void compute_params(pa::Segment&, pa::Params&) override {}
  void schedule(pa::Segment& seg, const pa::Params&) override {
#if ROLLBACK_FAULT == 1
    *null_int = 1;
#elif ROLLBACK_FAULT == 2
    for (;;) spins = spins + 1;
#endif
    pa::TensorView ref = seg.find_reference();  // y = sum(x, axis=1): [N, K(r)]
#if ROLLBACK_FAULT != 3
    ref.split(1, 128);  // [N, K/128, 128]
    ref.parallelize(2, pa::ParallelType::TIDx);
#endif
    ref.parallelize(0, pa::ParallelType::BIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    seg.inline_most();
  }
};

SCHEDLAB_PLUGIN(RollbackPlugin)
