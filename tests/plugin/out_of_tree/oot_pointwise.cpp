// oot_pointwise: a pointwise scheduler built outside the schedlab tree,
// against the installed plugin.hpp only.
#include <schedlab/plugin.hpp>

namespace pa = schedlab::plugin_api;

class OotPointwise : public pa::Plugin {
 public:
  std::string name() const override { return "oot_pointwise"; }
  std::string version() const override { return "0.1"; }
  std::string description() const override { return "out-of-tree pointwise scheduler"; }
  std::vector<pa::Param> params() const override {
    return {pa::Param::integer("block", 128, 32, 1024, "threads per block")};
  }
  void schedule(pa::Segment& seg, const pa::Params& p) override {
    pa::TensorView ref = seg.find_reference();
    while (ref.nloop() > 1) ref.merge(0);
    ref.split(0, p.integer("block"))
        .parallelize(0, pa::ParallelType::BIDx)
        .parallelize(1, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    seg.inline_most();
  }
};

SCHEDLAB_PLUGIN(OotPointwise)
