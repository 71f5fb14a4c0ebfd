// test_pointwise: the good test plugin. Schedules a pointwise fusion the way
// nvFuser's pointwise scheduler does in its simplest form: flatten the
// reference, split it into blocks, bind, propagate, inline. Built twice
// (TEST_PLUGIN_VERSION "1.0" and "2.0") so the reload tests can swap versions.
#include <algorithm>
#include <cmath>

#include "schedlab/plugin.hpp"

#ifndef TEST_PLUGIN_VERSION
#define TEST_PLUGIN_VERSION "1.0"
#endif
// bench/ builds it again under another name.
#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test_pointwise"
#endif

namespace pa = schedlab::plugin_api;

class TestPointwise : public pa::Plugin {
 public:
  std::string name() const override { return TEST_PLUGIN_NAME; }
  std::string version() const override { return TEST_PLUGIN_VERSION; }
  std::string description() const override {
    return "test plugin: flatten, split by block, bind BIDx/TIDx, inline";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::integer("block", 128, 32, 1024, "threads per block"),
        pa::Param::real("waves", 2.0, 0.5, 64.0, "blocks per SM compute_params aims for"),
        pa::Param::choice("grid", {"bidx", "serial"}, "bidx", "bind the outer loop to BIDx or not"),
        pa::Param::boolean("log_progress", false, "log 'schedule: start' before scheduling"),
    };
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    if (seg.outputs().empty()) return pa::Verdict::no("the segment has no outputs");
    for (const pa::TensorView& tv : seg.tensors())
      if (tv.op_kind() == pa::OpKind::Reduction)
        return pa::Verdict::no(name() + " schedules pointwise fusions only; " + tv.str() +
                               " is a " + tv.op_name() + " reduction");
    return pa::Verdict::yes();
  }

  // The largest power-of-two block, no bigger than the device allows, that
  // still gives every SM `waves` blocks.
  void compute_params(pa::Segment& seg, pa::Params& p) override {
    pa::TensorView ref = seg.find_reference();
    int64_t numel = 1;
    for (const pa::AxisInfo& a : ref.logical()) numel *= std::max<int64_t>(a.extent, 1);
    pa::DeviceProperties d = seg.device();
    double want_blocks = d.sm_count * p.real("waves");
    int64_t block = 32;
    while (block * 2 <= d.max_threads_per_block && numel / (block * 2) >= want_blocks) block *= 2;
    p.set_integer("block", block);
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    if (p.boolean("log_progress")) pa::log(pa::LogLevel::Info, "schedule: start");
    pa::TensorView ref = seg.find_reference();
    while (ref.nloop() > 1) ref.merge(0);
    ref.split(0, p.integer("block"));
    if (p.choice("grid") == "bidx") ref.parallelize(0, pa::ParallelType::BIDx);
    ref.parallelize(1, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    seg.inline_most();
    // The device as the plugin sees it: the CLI tests check which one, and
    // that a device model says it is one (is_model).
    if (p.boolean("log_progress")) {
      const pa::DeviceProperties d = seg.device();
      pa::log(pa::LogLevel::Info, "schedule: done for " + d.name +
                                      (d.is_model ? ", a model device" : ", a real device"));
    }
  }
};

SCHEDLAB_PLUGIN(TestPointwise)
