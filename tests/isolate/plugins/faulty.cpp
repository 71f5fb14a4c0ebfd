// faulty: one plugin, built once and installed under many file names, that
// misbehaves the way its file name says: faulty_<kind>_<call>.so, <call>
// being entry, can, compute or schedule, and <kind> one of
//   segv, abort, hang, exit0 (exit(0)), quickexit (_exit(0)), throw (a
//   std::runtime_error through the C ABI), throw42 (`throw 42`), thread (a
//   thread left running in the plugin's code), params (the entry reports
//   100,000,000 parameters; <call> is entry).
// It fills SchedlabPluginInfo itself (no SCHEDLAB_PLUGIN), so nothing
// converts its exceptions. When it does not misbehave it accepts and
// schedules the fusion serially (it touches nothing), which is valid.
// Under `run --isolate` none of it may cost a healthy scheduler a record
// (tests/isolate/fault_matrix.sh).
#include <dlfcn.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

#include "schedlab/plugin.h"

namespace {

volatile int* volatile null_int = nullptr;
volatile unsigned long spins = 0;

struct Fault {
  std::string name, kind, call;
};

/// From our own file: .../faulty_<kind>_<call>[.<shadow number>].so.
const Fault& fault() {
  static const Fault f = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&fault), &info);
    std::string file = info.dli_fname != nullptr ? info.dli_fname : "";
    file = file.substr(file.rfind('/') + 1);
    file = file.substr(0, file.find('.'));
    Fault r;
    r.name = file;
    const size_t a = file.find('_'), b = file.rfind('_');
    if (a != std::string::npos && b > a) {
      r.kind = file.substr(a + 1, b - a - 1);
      r.call = file.substr(b + 1);
    }
    return r;
  }();
  return f;
}

void misbehave(const char* call) {
  const Fault& f = fault();
  if (f.call != call) return;
  if (f.kind == "segv") *null_int = 42;
  if (f.kind == "abort") std::abort();
  if (f.kind == "hang")
    for (;;) spins = spins + 1;
  if (f.kind == "exit0") std::exit(0);
  if (f.kind == "quickexit") ::_exit(0);
  if (f.kind == "throw") throw std::runtime_error("faulty: thrown through the C ABI");
  if (f.kind == "throw42") throw 42;
  if (f.kind == "thread")
    std::thread([] {
      for (;;) {
        spins = spins + 1;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }).detach();
}

const char* last_error() {
  return "faulty: no error";
}

int32_t can_schedule(SchedlabSegment*, const SchedlabParamSet*, int32_t* accepted, char*,
                     uint32_t) {
  misbehave("can");
  *accepted = 1;
  return SCHEDLAB_OK;
}

int32_t compute_params(SchedlabSegment*, SchedlabParamSet*) {
  misbehave("compute");
  return SCHEDLAB_OK;
}

int32_t schedule(SchedlabSegment*, const SchedlabParamSet*) {
  misbehave("schedule");
  return SCHEDLAB_OK;
}

SchedlabParamDesc one_param() {
  SchedlabParamDesc d{};
  d.struct_size = sizeof d;
  d.kind = SCHEDLAB_PARAM_INT;
  d.name = "block";
  d.doc = "unused";
  d.int_default = 1;
  d.int_min = 1;
  d.int_max = 2;
  return d;
}

const SchedlabParamDesc kParams[1] = {one_param()};

}  // namespace

extern "C" SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi*,
                                                                 SchedlabPluginInfo* info) {
  misbehave("entry");
  SchedlabPluginInfo mine;
  std::memset(&mine, 0, sizeof mine);
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  mine.name = fault().name.c_str();
  mine.version = "0.1";
  mine.description = "misbehaves as its file name says (tests/isolate/plugins/faulty.cpp)";
  mine.last_error = &last_error;
  mine.can_schedule = &can_schedule;
  mine.compute_params = &compute_params;
  mine.schedule = &schedule;
  mine.params = kParams;
  mine.param_count = fault().kind == "params" ? 100000000u : 1u;
  const uint32_t n = info->struct_size < sizeof mine ? info->struct_size : uint32_t(sizeof mine);
  mine.struct_size = n;
  std::memcpy(info, &mine, n);
  return SCHEDLAB_OK;
}
