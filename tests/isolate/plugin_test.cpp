// Isolation with real plugins and real kernels: plugins that segfault, abort,
// divide by zero or hang inside can_schedule, compute_params or schedule,
// loaded through the plugin registry and called in a child through
// run_isolated, end as crashed (with their signal) or timeout, and the test
// process goes on to schedule, lower, compile and launch a good plugin's
// kernel in the next child, whose result matches the same work done here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "schedlab/isolate/isolate.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/compare.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/debug_print.h"
#include "test_support.h"

namespace schedlab::isolate {
namespace {

using ::testing::HasSubstr;
using Status = Outcome::Status;
using std::chrono::milliseconds;

// A limit for work that must finish (a compile, a launch): never a timing
// assertion. The hangs get a short one.
constexpr milliseconds kNoHang{120'000};
constexpr milliseconds kHangLimit{200};

std::string kernel_cache() {
  return std::string(SCHEDLAB_BINARY_DIR) + "/tests/isolate/kernel_cache";
}

/// A fusion of configs/fusions bound to sizes, as a plugin's HostSegment.
struct Bound {
  frontend::FusionDefinition def;
  plugin::HostSegment seg;
};
Bound bind(const std::string& fusion, const ir::SizeBindings& sizes = {{"N", 37}, {"K", 29}}) {
  Bound b{test_support::load_config_fusion(fusion), {}};
  b.seg.fusion = b.def.fusion.get();
  b.seg.sizes = frontend::bind_sizes(b.def, sizes);
  return b;
}

/// What each call of a plugin returns to the parent, as text.
std::string schedule_and_print(const plugin::Plugin& p, Bound& b) {
  p.schedule(b.seg, p.compute_params(b.seg));
  return sched::print_scheduled_fusion(*b.def.fusion);
}

/// Schedules, lowers, compiles and runs on a CPU backend made here (a
/// backend's worker threads never cross a fork), and validates against the
/// reference: {"hash", "outputs", "verdict"}.
std::string run_kernel(const plugin::Plugin& p, Bound& b,
                       const std::string& inject_into_kernel = "") {
  p.schedule(b.seg, p.compute_params(b.seg));
  auto prepared = runtime::prepare(*b.def.fusion, b.seg.sizes);
  if (!inject_into_kernel.empty()) {
    // A wild store, as an out-of-bounds index would make: a volatile null
    // pointer the compiler cannot see through, written by one thread.
    std::string& src = prepared.source.source;
    const size_t sig = src.find("extern \"C\" __global__ void ");
    const size_t body = src.find(") {\n", sig) + 4;
    src.insert(body, inject_into_kernel);
    src.insert(sig, "static int* volatile sl_wild = nullptr;\n");
  }
  auto plain = test_support::load_config_fusion(b.def.fusion->name());
  auto inputs = ref::make_inputs(*plain.fusion, b.seg.sizes, 7, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, b.seg.sizes);
  auto backend = runtime::make_cpu_backend(model::model_device_properties(), kernel_cache());
  auto compiled = backend->compile(prepared.source);
  auto got = runtime::execute(*backend, *compiled, prepared, inputs, b.seg.sizes);
  nlohmann::json r{{"hash", prepared.source.hash()}, {"verdict", "ok"}};
  for (size_t i = 0; i < got.size(); ++i) {
    r["outputs"].push_back(got[i].data);
    auto c =
        ref::compare(got[i], want[i],
                     ref::Tolerance::error_bound(b.def.fusion->outputs()[i]->dtype()));
    if (!c.ok) r["verdict"] = c.first_mismatch;
  }
  return r.dump();
}

class IsolatePlugin : public ::testing::Test {
 protected:
  IsolatePlugin() : registry_({ISOLATE_PLUGIN_DIR}) {
    EXPECT_THAT(registry_.add_directory(ISOLATE_PLUGIN_DIR), ::testing::IsEmpty());
  }
  void TearDown() override {
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child was left unreaped";
    EXPECT_EQ(errno, ECHILD);
  }
  // Resolved here, in the parent, before each fork: the registry's lock is
  // the parent's business (isolate.h).
  std::shared_ptr<const plugin::Plugin> get(const std::string& name) { return registry_.get(name); }

  /// A good plugin still works, isolated, after whatever happened before:
  /// its scheduled fusion comes back as printed here by the same schedule.
  void expect_good_plugin_still_works() {
    auto good = get("isolate_pointwise");
    Bound here = bind("pointwise_add_mul");
    const std::string expected = schedule_and_print(*good, here);
    Bound there = bind("pointwise_add_mul");
    const std::string unscheduled = sched::print_scheduled_fusion(*there.def.fusion);
    Outcome o = run_isolated([&] { return schedule_and_print(*good, there); }, kNoHang);
    ASSERT_TRUE(o.ok()) << report(o);
    EXPECT_EQ(o.payload, expected);
    EXPECT_NE(o.payload, unscheduled);
    // The child scheduled its copy; ours is untouched.
    EXPECT_EQ(sched::print_scheduled_fusion(*there.def.fusion), unscheduled);
  }

  plugin::Registry registry_;
};

TEST_F(IsolatePlugin, SegfaultInScheduleIsCrashedAndTheHostGoesOn) {
  auto p = get("segv_schedule");
  Bound b = bind("pointwise_add_mul");
  Options op;
  op.timeout = kNoHang;
  op.forward_stderr = false;
  Outcome o = run_isolated([&] { return schedule_and_print(*p, b); }, op);
  EXPECT_EQ(o.status, Status::Crashed);
  // The call it died in (isolate::Doing, set by the host around every plugin call).
  EXPECT_EQ(o.doing, "plugin 'segv_schedule' schedule()");
  EXPECT_EQ(describe(o), "crashed (SIGSEGV) in plugin 'segv_schedule' schedule()");
  // The plugin's last words, through the host's log, in the child's stderr.
  EXPECT_EQ(report(o),
            "crashed (SIGSEGV) in plugin 'segv_schedule' schedule(); its stderr ended with:\n"
            "  plugin 'segv_schedule': error: about to crash in schedule");
  expect_good_plugin_still_works();
}

TEST_F(IsolatePlugin, AbortInScheduleIsCrashed) {
  auto p = get("abort_schedule");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return schedule_and_print(*p, b); }, kNoHang);
  EXPECT_EQ(describe(o), "crashed (SIGABRT) in plugin 'abort_schedule' schedule()");
  EXPECT_THAT(o.stderr_tail, HasSubstr("about to crash in schedule"));
  expect_good_plugin_still_works();
}

TEST_F(IsolatePlugin, HangInScheduleIsATimeout) {
  auto p = get("hang_schedule");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return schedule_and_print(*p, b); }, kHangLimit);
  EXPECT_EQ(o.status, Status::Timeout);
  EXPECT_EQ(describe(o), "timeout after 200 ms in plugin 'hang_schedule' schedule()");
  expect_good_plugin_still_works();
}

TEST_F(IsolatePlugin, AbortInCanScheduleIsCrashedAndTheOtherCallsStillWork) {
  auto p = get("abort_can_schedule");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated(
      [&] {
        plugin::Verdict v = p->can_schedule(b.seg, p->defaults());
        return std::string(v.accepted ? "accepted" : "rejected: " + v.reason);
      },
      kNoHang);
  EXPECT_EQ(describe(o), "crashed (SIGABRT) in plugin 'abort_can_schedule' can_schedule()");
  // Only can_schedule crashes: the same plugin schedules, isolated.
  Outcome s = run_isolated([&] { return schedule_and_print(*p, b); }, kNoHang);
  ASSERT_TRUE(s.ok()) << report(s);
  Bound here = bind("pointwise_add_mul");
  EXPECT_EQ(s.payload, schedule_and_print(*p, here));
}

TEST_F(IsolatePlugin, DivisionByZeroInComputeParamsIsCrashed) {
  auto p = get("fpe_compute_params");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return p->format(p->compute_params(b.seg)); }, kNoHang);
  EXPECT_EQ(describe(o), "crashed (SIGFPE) in plugin 'fpe_compute_params' compute_params()");
  EXPECT_THAT(o.stderr_tail, HasSubstr("about to crash in compute_params"));
  expect_good_plugin_still_works();
}

TEST_F(IsolatePlugin, HangInComputeParamsIsATimeout) {
  auto p = get("hang_compute_params");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return p->format(p->compute_params(b.seg)); }, kHangLimit);
  EXPECT_EQ(describe(o), "timeout after 200 ms in plugin 'hang_compute_params' compute_params()");
  expect_good_plugin_still_works();
}

TEST_F(IsolatePlugin, APluginsThrowComesBackAsTheSameUserError) {
  auto p = get("throw_schedule");
  Bound here = bind("pointwise_add_mul");
  const std::string expected = test_support::user_error_of([&] { schedule_and_print(*p, here); });
  EXPECT_THAT(expected, HasSubstr("thrown in schedule"));
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return schedule_and_print(*p, b); }, kNoHang);
  EXPECT_EQ(o.error, Outcome::Error::User);
  EXPECT_EQ(o.message, expected);
  EXPECT_EQ(test_support::user_error_of([&] { rethrow_error(o); }), expected);
}

TEST_F(IsolatePlugin, TheLoweredKernelComesBackFromTheChild) {
  auto good = get("isolate_pointwise");
  Bound here = bind("pointwise_add_mul");
  good->schedule(here.seg, good->compute_params(here.seg));
  const runtime::KernelSource expected = runtime::prepare(*here.def.fusion, here.seg.sizes).source;
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated(
      [&] {
        good->schedule(b.seg, good->compute_params(b.seg));
        auto src = runtime::prepare(*b.def.fusion, b.seg.sizes).source;
        return src.hash() + "\n" + src.source;
      },
      kNoHang);
  ASSERT_TRUE(o.ok()) << report(o);
  EXPECT_EQ(o.payload, expected.hash() + "\n" + expected.source);
}

TEST_F(IsolatePlugin, AKernelRunsOnTheCpuBackendInTheChild) {
  auto good = get("isolate_pointwise");
  // The same work here first; this process keeps its backend (and its idle
  // worker threads) alive across the fork.
  Bound here = bind("pointwise_add_mul");
  auto parent_backend = runtime::make_cpu_backend(model::model_device_properties(), kernel_cache());
  const std::string expected = run_kernel(*good, here);
  EXPECT_EQ(nlohmann::json::parse(expected)["verdict"], "ok");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated([&] { return run_kernel(*good, b); }, kNoHang);
  ASSERT_TRUE(o.ok()) << report(o);
  auto got = nlohmann::json::parse(o.payload);
  EXPECT_EQ(got["verdict"], "ok");
  // Bit for bit: the same kernel on the same inputs.
  EXPECT_EQ(got, nlohmann::json::parse(expected));
}

TEST_F(IsolatePlugin, AKernelThatFaultsCrashesTheChildOnly) {
  auto good = get("isolate_pointwise");
  Bound b = bind("pointwise_add_mul");
  Outcome o = run_isolated(
      [&] {
        return run_kernel(*good, b,
                          "  if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) *sl_wild = 1;\n");
      },
      kNoHang);
  // Outside any plugin call: nothing to name.
  EXPECT_EQ(o.doing, "");
  EXPECT_EQ(describe(o), "crashed (SIGSEGV)");
  // The next launch, in the next child, runs and validates.
  Bound next = bind("pointwise_add_mul");
  Outcome ok = run_isolated([&] { return run_kernel(*good, next); }, kNoHang);
  ASSERT_TRUE(ok.ok()) << report(ok);
  EXPECT_EQ(nlohmann::json::parse(ok.payload)["verdict"], "ok");
}

}  // namespace
}  // namespace schedlab::isolate

namespace schedlab::isolate {
namespace {

// A plugin that logs in an isolated child while another thread of the parent
// keeps taking the host's log lock (set_log_sink): the fork must not hand the
// child a lock held by a thread that does not exist there (pthread_atfork in
// core/plugin/host_api.cpp). Without that, some child blocks on its first
// log line and the call times out.
TEST_F(IsolatePlugin, PluginLogsInAChildWhileTheParentLogs) {
  auto good = get("isolate_pointwise");
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) plugin::set_log_sink([](int, const std::string&, const std::string&) {});
  });
  int ok = 0;
  for (int i = 0; i < 20; ++i) {
    Bound b = bind("pointwise_add_mul");
    Outcome o = run_isolated(
        [&] {
          good->schedule(b.seg,
                         good->with_settings(good->compute_params(b.seg), {"log_progress=true"}));
          return std::string("scheduled");
        },
        milliseconds(2'000));  // a limit for a hang, not a timing assertion
    EXPECT_TRUE(o.ok()) << "fork " << i << ": " << report(o);
    ok += o.ok();
  }
  stop = true;
  churn.join();
  plugin::set_log_sink({});
  EXPECT_EQ(ok, 20);
}

}  // namespace
}  // namespace schedlab::isolate
