// The host API table: each C entry checks its arguments, calls the ir/sched
// function it names, and turns any error into a status plus last_error.
//
// The entries live by role: the queries in host_api_queries.cpp, the
// scheduling primitives in host_api_primitives.cpp, the checks they share in
// host_api_args.h; here the table itself, last_error and logging, and the
// per-thread record of the plugin call in progress (CallScope).
#include "host_api.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include "host_api_args.h"

namespace schedlab::plugin {
namespace {

/// The plugin this thread is calling into (CallScope).
thread_local const std::string* tls_current_plugin = nullptr;
/// The call into it ("schedule"), beside tls_current_plugin.
thread_local const char* tls_current_call = nullptr;

// ---- errors and logging

const char* api_last_error() {
  return host_args::last_error().c_str();
}

void api_log(int32_t level, const char* message) {
  try {
    log_line(level, tls_current_plugin != nullptr ? *tls_current_plugin : std::string("?"),
             message != nullptr ? message : "(null)");
  } catch (...) {
    // Logging never fails a plugin.
  }
}

SchedlabHostApi make_table() {
  SchedlabHostApi t{};
  t.struct_size = sizeof t;
  t.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  t.last_error = &api_last_error;
  t.log = &api_log;
  add_query_entries(t);
  add_primitive_entries(t);
  return t;
}

std::mutex log_mutex;
LogSink log_sink;

// isolate::run_isolated forks while other threads may be logging: a child
// that inherited log_mutex locked would block on its first plugin log line
// forever. Holding the lock across fork() hands both sides an unlocked one.
const bool log_mutex_fork_safe = [] {
  pthread_atfork([] { log_mutex.lock(); }, [] { log_mutex.unlock(); }, [] { log_mutex.unlock(); });
  return true;
}();

}  // namespace

const SchedlabHostApi* host_api() {
  static const SchedlabHostApi table = make_table();
  return &table;
}

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(log_mutex);
  log_sink = std::move(sink);
}

void log_line(int level, const std::string& plugin, const std::string& message) {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    sink = log_sink;
  }
  if (sink) return sink(level, plugin, message);
  static constexpr const char* kLevels[] = {"debug", "info", "warning", "error"};
  const char* l = level >= 0 && level <= 3 ? kLevels[level] : "log";
  std::lock_guard<std::mutex> lock(log_mutex);
  std::cerr << "plugin '" << plugin << "': " << l << ": " << message << "\n";
}

namespace {

/// exit() called from inside a plugin's call. Without this the host would end
/// with the plugin's status (exit(0): a false success, with no output and no
/// word of why); instead the plugin is blamed and the process fails (1).
/// _exit() runs no handler: the schedlab program interposes it instead
/// (bench/exit_hook.cpp, with current_plugin_call()).
void exit_during_plugin_call() {
  if (tls_current_plugin == nullptr) return;
  std::fflush(stdout);
  std::fprintf(stderr,
               "error: plugin '%s' called exit() inside its %s call; a plugin must return "
               "a status and never end the process (the plugin's failure, not schedlab's)\n",
               tls_current_plugin->c_str(), tls_current_call != nullptr ? tls_current_call : "");
  // Out of the call: an interposed _Exit must not blame the plugin twice.
  tls_current_plugin = nullptr;
  std::_Exit(1);
}

/// A forked child is no longer inside its parent's plugin call: a plugin
/// that forks and ends the child with _exit(0) must get exactly that, and
/// nothing of the parent's call may leak into an --isolate child either.
void forget_call_in_child() {
  tls_current_plugin = nullptr;
  tls_current_call = nullptr;
}

}  // namespace

PluginCall current_plugin_call() noexcept {
  if (tls_current_plugin == nullptr) return {};
  return {tls_current_plugin->c_str(), tls_current_call != nullptr ? tls_current_call : ""};
}

CallScope::CallScope(const std::string& plugin, const char* call)
    : previous_(tls_current_plugin),
      previous_call_(tls_current_call),
      doing_("plugin '" + plugin + "' " + call + "()") {
  static const bool registered = std::atexit(exit_during_plugin_call) == 0 &&
                                 pthread_atfork(nullptr, nullptr, forget_call_in_child) == 0;
  (void)registered;
  tls_current_plugin = &plugin;
  tls_current_call = call;
}
CallScope::~CallScope() {
  tls_current_plugin = previous_;
  tls_current_call = previous_call_;
}

}  // namespace schedlab::plugin
