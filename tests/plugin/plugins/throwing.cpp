// throwing: a plugin that throws from its own code. SCHEDLAB_PLUGIN must turn
// each exception into SCHEDLAB_ERR_PLUGIN and the message.
#include <stdexcept>

#include "schedlab/plugin.hpp"

namespace pa = schedlab::plugin_api;

class Throwing : public pa::Plugin {
 public:
  std::string name() const override { return "throwing"; }
  std::string version() const override { return "1.0"; }
  std::string description() const override { return "test plugin: throws"; }
  pa::Verdict can_schedule(pa::Segment&, const pa::Params&) override {
    throw std::logic_error("can_schedule exploded");
  }
  void compute_params(pa::Segment&, pa::Params&) override { throw 42; }
  void schedule(pa::Segment& seg, const pa::Params&) override {
    throw std::runtime_error("boom while scheduling " + seg.name());
  }
};

SCHEDLAB_PLUGIN(Throwing)
