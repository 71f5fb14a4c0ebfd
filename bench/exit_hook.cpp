// _exit and _Exit, interposed for the schedlab program: a plugin that ends the
// process from inside one of its calls is blamed and the process fails (1).
//
// exit() inside a plugin call is caught by an atexit handler
// (core/plugin/host_api.cpp), but _exit() and _Exit() run no handler: without
// this a plugin's _exit(0) would end `exec` or `run` with a silent, false
// success. The program exports these two symbols (bench/CMakeLists.txt:
// --export-dynamic-symbol), so a plugin's call binds here rather than to libc.
// Outside a plugin call they do exactly what libc's do: the exit_group system
// call with the given status, nothing else (no handler, no flush). glibc's own
// calls (exit() ending the process, a failed posix_spawn child) use internal
// aliases and never come here; the program's own calls do (the --isolate
// child's last step, the exec time limit), outside any plugin call.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "schedlab/plugin/host.h"

namespace {

/// Writes without stdio (its locks may be held by the thread that called
/// into the plugin's stdio, and no buffer is flushed after this anyway).
void write_str(const char* s) {
  for (size_t n = std::strlen(s); n > 0;) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void end_process(const char* fn, int status) noexcept {
  const schedlab::plugin::PluginCall c = schedlab::plugin::current_plugin_call();
  if (c.plugin != nullptr) {
    write_str("error: plugin '");
    write_str(c.plugin);
    write_str("' called ");
    write_str(fn);
    write_str(" inside its ");
    write_str(c.call);
    write_str(
        " call; a plugin must return a status and never end the process (the plugin's "
        "failure, not schedlab's)\n");
    status = 1;
  }
  for (;;) ::syscall(SYS_exit_group, status);
}

}  // namespace

extern "C" [[noreturn]] void _exit(int status) {
  end_process("_exit()", status);
}
extern "C" [[noreturn]] void _Exit(int status) noexcept {
  end_process("_Exit()", status);
}
