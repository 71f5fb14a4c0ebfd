// crashing: a plugin that takes its host down in one of its calls, the way a
// buggy heuristic does: a null write (SIGSEGV), abort() (SIGABRT, as a failed
// assert), an integer division by zero (SIGFPE), or an endless loop; and one
// that merely throws (CRASH_THROW), which the host turns into an error. Built
// once per (call, kind) by tests/isolate/CMakeLists.txt: CRASH_CALL is 1
// (can_schedule), 2 (compute_params) or 3 (schedule); CRASH_KIND is one of
// the CRASH_* below. PLUGIN_NAME names it.
// Every call that does not crash behaves: the schedule is test_pointwise's.
#include <csignal>
#include <cstdlib>
#include <stdexcept>

#include "schedlab/plugin.hpp"

#define CRASH_SEGV 1
#define CRASH_ABORT 2
#define CRASH_FPE 3
#define CRASH_HANG 4
#define CRASH_THROW 5

namespace pa = schedlab::plugin_api;

namespace {

// volatile everywhere: the compiler may neither prove the fault away nor
// treat the loop as one without side effects (which it may assume ends).
volatile int* volatile null_int = nullptr;
volatile int zero = 0;
volatile int one = 1;  // a constant dividend lets GCC turn 1 / x into compares
volatile unsigned long spins = 0;

void crash(const char* where) {
  pa::log(
      pa::LogLevel::Error,
      std::string(CRASH_KIND == CRASH_THROW ? "about to throw in " : "about to crash in ") + where);
#if CRASH_KIND == CRASH_SEGV
  *null_int = 42;
#elif CRASH_KIND == CRASH_ABORT
  std::abort();
#elif CRASH_KIND == CRASH_FPE
#if defined(__x86_64__) || defined(__i386__)
  volatile int r = one / zero;
  (void)r;
#else
  std::raise(SIGFPE);  // integer division by zero does not trap on this target
#endif
#elif CRASH_KIND == CRASH_HANG
  for (;;) spins = spins + 1;
#elif CRASH_KIND == CRASH_THROW
  throw std::runtime_error(std::string("thrown in ") + where);
#else
#error "CRASH_KIND must be one of the CRASH_* above"
#endif
}

}  // namespace

class Crashing : public pa::Plugin {
 public:
  std::string name() const override { return PLUGIN_NAME; }
  std::string version() const override { return "1.0"; }
  std::string description() const override { return "test plugin: crashes the host"; }
  std::vector<pa::Param> params() const override {
    return {pa::Param::integer("block", 128, 32, 1024, "threads per block")};
  }
  pa::Verdict can_schedule(pa::Segment&, const pa::Params&) override {
    if (CRASH_CALL == 1) crash("can_schedule");
    return pa::Verdict::yes();
  }
  void compute_params(pa::Segment&, pa::Params& p) override {
    if (CRASH_CALL == 2) crash("compute_params");
    p.set_integer("block", 64);
  }
  void schedule(pa::Segment& seg, const pa::Params& p) override {
    if (CRASH_CALL == 3) crash("schedule");
    pa::TensorView ref = seg.find_reference();
    while (ref.nloop() > 1) ref.merge(0);
    ref.split(0, p.integer("block"));
    ref.parallelize(0, pa::ParallelType::BIDx);
    ref.parallelize(1, pa::ParallelType::TIDx);
    seg.propagate_transformation(ref);
    seg.parallelize_all_like(ref);
    seg.inline_most();
  }
};

SCHEDLAB_PLUGIN(Crashing)
