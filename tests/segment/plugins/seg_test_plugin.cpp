// Test plugins for the segmenter's CLI tests, with rules simple enough that
// `show --segments` output is stable whatever built-in plugins exist. Built
// three times (SEG_TEST_ONE_REDUCTION, SEG_TEST_FICKLE or neither):
//   one_reduction  takes a segment with exactly one reduction that nothing in
//                  the segment reads (a reduction scheduler with a prologue);
//   no_reduction   takes a segment without reductions;
//   fickle         takes the first segment it is asked about, then nothing
//                  (the host must catch a plugin that changes its mind).
// They leave the segment unscheduled: lowering gives the serial kernel,
// which is correct, so exec validates what the segmenter did.
#include <string>
#include <vector>

#include "schedlab/plugin.hpp"

namespace pa = schedlab::plugin_api;

class SegTest : public pa::Plugin {
 public:
#if defined(SEG_TEST_ONE_REDUCTION)
  std::string name() const override {
    return "one_reduction";
  }
#elif defined(SEG_TEST_FICKLE)
  std::string name() const override {
    return "fickle";
  }
#else
  std::string name() const override {
    return "no_reduction";
  }
#endif
  std::string version() const override {
    return "0.1";
  }
  std::string description() const override {
    return "segmenter test plugin: accepts by counting reductions, leaves the segment unscheduled";
  }
  std::vector<pa::Param> params() const override {
    return {};
  }

  pa::Verdict can_schedule(pa::Segment& seg, const pa::Params&) override {
    std::vector<pa::TensorView> red;
    for (const pa::TensorView& tv : seg.tensors())
      if (tv.op_kind() == pa::OpKind::Reduction) red.push_back(tv);
#if defined(SEG_TEST_FICKLE)
    if (asked_++ > 0) return pa::Verdict::no("fickle says yes only once");
#elif defined(SEG_TEST_ONE_REDUCTION)
    if (red.size() != 1)
      return pa::Verdict::no("one_reduction takes one reduction; found " +
                             std::to_string(red.size()));
    if (!red[0].consumers().empty())
      return pa::Verdict::no("one_reduction ends a segment with its reduction; " + red[0].str() +
                             " is read by " + red[0].consumers()[0].str());
#else
    if (!red.empty())
      return pa::Verdict::no("no_reduction takes no reductions; " + red[0].str() + " is a " +
                             red[0].op_name() + " reduction");
#endif
    return pa::Verdict::yes();
  }

  void compute_params(pa::Segment&, pa::Params&) override {}
  void schedule(pa::Segment&, const pa::Params&) override {}

#if defined(SEG_TEST_FICKLE)
 private:
  int asked_ = 0;  ///< can_schedule calls so far
#endif
};

SCHEDLAB_PLUGIN(SegTest)
