// The host's C API table and the per-call segment context behind a
// SchedlabSegment handle. Internal to core/plugin.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedlab/isolate/isolate.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"
#include "schedlab/sched/id_map.h"

/// The host side of a SchedlabSegment handle: the HostSegment being
/// scheduled and the call's state. One lives on the stack for each call into
/// a plugin; the strings handed out during the call live in it, which is what
/// makes them valid "until the call returns".
struct SchedlabSegment {
  schedlab::plugin::HostSegment* segment = nullptr;
  std::string plugin;                       ///< who is calling, for log lines
  std::deque<std::string> strings;          ///< strings returned during this call
  std::deque<std::vector<int32_t>> arrays;  ///< arrays returned during this call
  /// Known tensor handles, each with its index in Fusion::tensors() (the
  /// transform log's name for it; stable, tensors are only ever added).
  /// Refreshed on a miss.
  std::unordered_map<const void*, int64_t> tensors;
  /// _axes_mapped's loop maps (exact, permissive), each with the fusion's
  /// IterDomain count it was built at: every change a map sees (a split, a
  /// merge, a cache or rfactor tensor) adds IterDomains, so an equal count
  /// means an equal map. A heuristic asks per tensor pair; building the map
  /// for each question made can_schedule quadratic in the fusion's length.
  std::unique_ptr<schedlab::sched::LoopMap> loop_maps[2];
  size_t loop_maps_ids[2] = {0, 0};
};

namespace schedlab::plugin {

/// The table every plugin receives; static, so it outlives every plugin.
const SchedlabHostApi* host_api();
/// Fill in the table's query entries (host_api_queries.cpp) and its
/// scheduling primitives (host_api_primitives.cpp).
void add_query_entries(SchedlabHostApi& t);
void add_primitive_entries(SchedlabHostApi& t);

/// Sends a log line from `plugin` to the current sink.
void log_line(int level, const std::string& plugin, const std::string& message);

/// Names the plugin this thread is calling into and the call ("schedule"),
/// for the log entry (which takes no handle), for the exit hooks
/// (current_plugin_call) and, in an isolated child, for the parent should
/// the call crash or hang (isolate::Doing: "crashed (SIGSEGV) in plugin 'x'
/// schedule()"). Scopes nest. `call` must outlive the scope.
class CallScope {
 public:
  CallScope(const std::string& plugin, const char* call);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  const std::string* previous_;
  const char* previous_call_;
  isolate::Doing doing_;
};

}  // namespace schedlab::plugin
