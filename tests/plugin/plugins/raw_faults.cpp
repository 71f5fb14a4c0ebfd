// raw_faults: a C++ plugin that fills SchedlabPluginInfo itself (no
// SCHEDLAB_PLUGIN, so nothing converts its exceptions) and misbehaves in one
// call: FAULT_CALL is 0 (the entry point), 1 (can_schedule), 2
// (compute_params) or 3 (schedule); FAULT_KIND is 1 (throws a
// std::runtime_error), 2 (throws an int: `throw 42`), 3 (calls exit(0)),
// 4 (leaves a thread running in the plugin's code, which runs until the
// process exits), 5 (calls _exit(0)), 6 (returns 7, which is no status),
// 7 (can_schedule only: sets *accepted to 7) or 8 (calls _Exit(0)).
// The host must blame the plugin: a plugin_error naming the call and the
// exception or the value, or, for exit(0)/_exit(0)/_Exit(0), a failure
// (exit 1) and never a false success.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "schedlab/plugin.h"

namespace {

volatile unsigned long spins = 0;

/// Misbehaves when `call` is FAULT_CALL; returns the status the call should
/// return (garbage for kind 6).
int32_t fault(int call) {
  if (call != FAULT_CALL) return SCHEDLAB_OK;
#if FAULT_KIND == 1
  throw std::runtime_error("raw_faults: thrown through the C ABI");
#elif FAULT_KIND == 2
  throw 42;
#elif FAULT_KIND == 3
  std::exit(0);
#elif FAULT_KIND == 4
  std::thread([] {
    for (;;) {
      spins = spins + 1;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }).detach();
#elif FAULT_KIND == 5
  _exit(0);
#elif FAULT_KIND == 6
  return 7;
#elif FAULT_KIND == 7
  static_assert(FAULT_CALL == 1, "kind 7 garbles can_schedule's *accepted");
#elif FAULT_KIND == 8
  std::_Exit(0);
#else
#error "FAULT_KIND must be 1 to 8"
#endif
  return SCHEDLAB_OK;
}

const char* last_error() { return "raw_faults: no error"; }

int32_t can_schedule(SchedlabSegment*, const SchedlabParamSet*, int32_t* accepted, char*,
                     uint32_t) {
  if (int32_t status = fault(1)) return status;
  *accepted = FAULT_KIND == 7 ? 7 : 1;
  return SCHEDLAB_OK;
}

int32_t compute_params(SchedlabSegment*, SchedlabParamSet*) {
  return fault(2);
}

int32_t schedule(SchedlabSegment*, const SchedlabParamSet*) {
  return fault(3);
}

}  // namespace

extern "C" SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi*,
                                                                 SchedlabPluginInfo* info) {
  if (int32_t status = fault(0)) return status;
  SchedlabPluginInfo mine;
  std::memset(&mine, 0, sizeof mine);
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  mine.name = PLUGIN_NAME;
  mine.version = "0.1";
  mine.description = "misbehaves in one call (tests/plugin/plugins/raw_faults.cpp)";
  mine.last_error = &last_error;
  mine.can_schedule = &can_schedule;
  mine.compute_params = &compute_params;
  mine.schedule = &schedule;
  const uint32_t n = info->struct_size < sizeof mine ? info->struct_size : uint32_t(sizeof mine);
  mine.struct_size = n;
  std::memcpy(info, &mine, n);
  return SCHEDLAB_OK;
}
