// string_params: a test plugin whose parameters are strings (ABI 1.1), to
// follow one value from the schema default through compute_params, --set
// and can_schedule to schedule: it logs what schedule receives, rejects
// label "reject" naming it, and its compute_params chooses a label from the
// segment. It schedules nothing (an unscheduled fusion is a valid kernel).
#include <string>
#include <vector>

#include "schedlab/plugin.hpp"

namespace pa = schedlab::plugin_api;

class StringParams : public pa::Plugin {
 public:
  std::string name() const override { return "string_params"; }
  std::string version() const override { return "1.1"; }
  std::string description() const override { return "string parameters, round trip"; }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::integer("block", 128, 32, 1024, "threads per block"),
        pa::Param::string("label", "plain", "a label"),
        pa::Param::string("note", "", "free text, empty by default"),
    };
  }
  pa::Verdict can_schedule(pa::Segment&, const pa::Params& p) override {
    if (p.string("label") == "reject")
      return pa::Verdict::no("label is '" + p.string("label") + "'");
    return pa::Verdict::yes();
  }
  void compute_params(pa::Segment& seg, pa::Params& p) override {
    p.set_string("label", "chosen for " + seg.name());
  }
  void schedule(pa::Segment&, const pa::Params& p) override {
    pa::log(pa::LogLevel::Info, "block=" + std::to_string(p.integer("block")) + " label=[" +
                                    p.string("label") + "] note=[" + p.string("note") + "]");
  }
};

SCHEDLAB_PLUGIN(StringParams)
