// bad_split: a plugin whose schedule is invalid (split by 0). The host's user
// error must come back to the caller with its message unchanged.
#include "schedlab/plugin.hpp"

namespace pa = schedlab::plugin_api;

class BadSplit : public pa::Plugin {
 public:
  std::string name() const override { return "bad_split"; }
  std::string version() const override { return "1.0"; }
  std::string description() const override { return "test plugin: splits by 0"; }
  void schedule(pa::Segment& seg, const pa::Params&) override { seg.outputs().at(0).split(0, 0); }
};

SCHEDLAB_PLUGIN(BadSplit)
