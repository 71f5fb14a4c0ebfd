// A/B verdicts: see schedlab/report/ab.h.
#include "schedlab/report/ab.h"

#include <fmt/format.h>

#include <array>
#include <map>

#include "schedlab/report/verdict.h"

namespace schedlab::report {
namespace {

constexpr std::string_view kOld = "@old";

/// The ok records with times.
std::vector<const Record*> timed(const std::vector<const Record*>& rs) {
  std::vector<const Record*> out;
  for (const Record* r : rs)
    if (r->status == Status::Ok && !r->times_us.empty()) out.push_back(r);
  return out;
}

}  // namespace

std::vector<AbVerdict> ab_verdicts(const std::vector<Record>& records, double alpha) {
  // (fusion, size, scheduler without @old) -> [new records, old records]
  std::map<std::string, std::array<std::vector<const Record*>, 2>> groups;
  std::vector<std::string> order;
  for (const Record& r : records) {
    const bool old = r.scheduler.ends_with(kOld);
    const std::string sched =
        old ? r.scheduler.substr(0, r.scheduler.size() - kOld.size()) : r.scheduler;
    const std::string key = r.fusion + "\x1f" + r.size_key() + "\x1f" + sched;
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second[old ? 1 : 0].push_back(&r);
  }
  std::vector<AbVerdict> out;
  for (const std::string& key : order) {
    const auto& [now, before] = groups[key];
    if (before.empty() || now.empty()) continue;
    AbVerdict v;
    v.fusion = now.front()->fusion;
    v.size_label = now.front()->size_label();
    v.size_key = now.front()->size_key();
    v.scheduler = now.front()->scheduler;
    const Record* o = best_by_ratio(timed(before), nullptr);
    const Record* n = best_by_ratio(timed(now), o);
    if (n) v.new_config = n->config_label();
    if (o) v.old_config = o->config_label();
    if (!n || !o) {
      v.note = !n && !o ? "no valid point in either build"
               : !n     ? "no valid point in the new build"
                        : "no valid point in the old build";
    } else if (same_kernel(*n, *o)) {
      v.same_kernel = true;
    } else {
      v.ratio = time_ratio(*n, *o);
      v.significant = v.ratio->significant(alpha, min_effect_of(*n));
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string render_ab(const std::vector<AbVerdict>& verdicts) {
  std::string out;
  for (const AbVerdict& v : verdicts) {
    std::string line = fmt::format("{} {} {}: ", v.fusion, v.size_label, v.scheduler);
    if (!v.note.empty()) {
      line += v.note;
    } else if (v.same_kernel) {
      line += "same kernel in both builds";
    } else {
      line += fmt::format("new build {} than old, p={:.3g}", verdict_text(*v.ratio, v.significant),
                          v.ratio->p);
    }
    if (!v.new_config.empty() && !v.old_config.empty() && v.new_config != v.old_config)
      line += fmt::format("; {} instead of {}", v.new_config, v.old_config);
    out += line + "\n";
  }
  return out;
}

}  // namespace schedlab::report
