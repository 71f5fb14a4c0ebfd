// A/B twins of a sweep's schedulers: see schedlab/sweep/run/ab.h.
#include "schedlab/sweep/run/ab.h"

#include <fmt/format.h>

#include "schedlab/base/error.h"

namespace schedlab::sweep {

AbPlan plan_ab(const SweepSpec& spec, std::shared_ptr<const plugin::Plugin> old,
               const std::function<std::string(const SchedulerSpec&)>& plugin_name_of) {
  AbPlan plan{spec, {}};
  plan.spec.schedulers.clear();
  std::vector<std::string> used;
  for (const SchedulerSpec& s : spec.schedulers) {
    plan.spec.schedulers.push_back(s);
    // `auto` may pick the plugin: it gets a twin too.
    const bool picks = s.kind == SchedulerKind::Auto;
    const std::string name = picks ? kAutoSpelling : plugin_name_of(s);
    used.push_back(name);
    if (!picks && name != old->name()) continue;
    SchedulerSpec twin = s;
    twin.name = s.name + kAbOldSuffix;
    user_assert(!spec.scheduler(twin.name))
        << "--ab: the sweep already has a scheduler named '" << twin.name
        << "', the name the old build's twin of '" << s.name << "' would take";
    plan.swaps.emplace(twin.name, old);
    plan.spec.schedulers.push_back(std::move(twin));
  }
  user_assert(!plan.swaps.empty())
      << "--ab: no scheduler of sweep '" << spec.name << "' uses plugin '" << old->name()
      << "' (the old build's name, from " << old->path() << "); the sweep uses "
      << fmt::format("{}", fmt::join(used, ", "));
  return plan;
}

}  // namespace schedlab::sweep
