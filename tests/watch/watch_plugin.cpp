// watch_plugin: the plugin the watch end-to-end test edits. Its heuristic's
// block size is the one constant below; the test rewrites it while
// `schedlab watch` runs and expects the new choice in the next table.
#include <algorithm>

#include "schedlab/plugin.hpp"

#define WATCH_BLOCK 64

namespace pa = schedlab::plugin_api;

class WatchPlugin : public pa::Plugin {
 public:
  std::string name() const override { return "watch_plugin"; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "watch test: flatten, split by a fixed block, bind BIDx/TIDx, inline";
  }
  std::vector<pa::Param> params() const override {
    return {pa::Param::integer("block", 32, 32, 1024, "threads per block")};
  }
  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    for (const pa::TensorView& tv : seg.tensors())
      if (tv.op_kind() == pa::OpKind::Reduction) return pa::Verdict::no("pointwise only");
    return pa::Verdict::yes();
  }
  void compute_params(pa::Segment&, pa::Params& p) override { p.set_integer("block", WATCH_BLOCK); }
  void schedule(pa::Segment& seg, const pa::Params& p) override {
    pa::TensorView ref = seg.find_reference();
    while (ref.nloop() > 1) ref.merge(0);
    ref.split(0, p.integer("block"));
    ref.parallelize(0, pa::ParallelType::BIDx);
    ref.parallelize(1, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    seg.inline_most();
  }
};

SCHEDLAB_PLUGIN(WatchPlugin)
