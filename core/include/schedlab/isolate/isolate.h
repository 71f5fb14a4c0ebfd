// schedlab/isolate: running a piece of work in a forked child process
// (`--isolate`; docs/sweeps.md, "Isolation"), so that a plugin that crashes, hangs or
// corrupts memory, or a kernel that does, costs one configuration and not the
// host.
//
// Owns: fork, the pipes back from the child, the timeout, reaping, and
// turning how the child ended into an Outcome: its result (the byte string the
// work returned), crashed (with the signal), timeout, a non-zero exit, or the
// schedlab error the work threw, carried back with its kind and message.
// May depend on: schedlab/base only. The sweep runner and the CLI build on it.
// Invariants: run_isolated never returns before the child is reaped (no
// zombies; on timeout the child gets SIGKILL) and never throws for the
// child's sake; the child never returns into the caller's stack, never runs
// atexit handlers or static destructors, and never flushes a stdio buffer the
// parent also holds (it ends with _exit).
//
// What the work may do in the child. The child is a copy of a possibly
// multithreaded parent in which only the forking thread exists; a lock another
// thread held at fork() stays held forever. Safe, because glibc resets them
// in the child: malloc/new, stdio and iostreams (stream locks), dlopen and
// dlsym (the loader lock), posix_spawn (the CPU backend's compiler). Not
// safe: any object whose own threads or std::mutex the parent was using at
// the time. In schedlab that means:
//   * a runtime::Backend made in the parent: the CPU backend's worker threads
//     do not exist in the child, so a launch would wait forever. Make the
//     backend inside the work (its on-disk compile cache is shared).
//   * a plugin::Registry or Watcher that another thread may be reloading:
//     resolve the plugin (registry.get(name)) in the parent, before the call,
//     and hand the shared_ptr to the work. The Plugin itself is immutable
//     and safe to call; only the host's log lock (plugin log lines) is
//     process-wide, so a thread logging at the fork would stall the child's
//     first log line.
//   * CUDA: a process that has initialized the driver (cuInit, e.g. the
//     `auto` backend probing for a device) cannot use CUDA in a forked
//     child. With --isolate on a GPU, let the parent never touch CUDA and
//     make the CUDA backend inside each child (a context per call).
// With a timeout set, such a mistake costs a timeout, never a hung parent.
// The work's writes to memory stay in the child: whatever the parent needs
// (a printed schedule, a kernel's source hash, a sweep record as JSON) must
// be in the returned string.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "schedlab/base/error.h"

namespace schedlab::isolate {

/// How an isolated call ended.
struct Outcome {
  enum class Status {
    Ok,       ///< the work returned; `payload` holds its result
    Crashed,  ///< a signal ended the child (`signal`): SIGSEGV, SIGABRT, ...
    Timeout,  ///< the child ran past the limit and was killed
    Failed,   ///< the work threw (`error` User or Internal), or the child exited
  };
  /// For Failed: what failed.
  enum class Error {
    None,      ///< not Failed
    User,      ///< the work threw a UserError: `loc` and `message` are its own
    Internal,  ///< an InternalError, or any other exception (its what())
    Exit,      ///< the child exited (`exit_code`) without returning a result
  };

  Status status = Status::Failed;
  Error error = Error::None;
  std::string payload;  ///< Ok: the bytes the work returned, unchanged
  int signal = 0;       ///< Crashed: the signal number
  int exit_code = 0;    ///< Error::Exit: the child's exit status
  SourceLoc loc;        ///< Error::User: the UserError's location
  /// Error::User: UserError::message(); Internal: what(); Exit: what happened.
  std::string message;
  /// The last bytes the child wrote to stderr (at most Options::stderr_tail_bytes).
  std::string stderr_tail;
  std::chrono::milliseconds timeout{0};  ///< the limit the call ran under (0: none)
  pid_t pid = 0;                         ///< the child's process id, for logs
  /// Crashed, Timeout, Error::Exit: what the work said it was doing when the
  /// child ended (Doing), e.g. "plugin 'x' schedule()"; "" when nothing.
  std::string doing;

  bool ok() const { return status == Status::Ok; }
};

struct Options {
  /// Kill the child (SIGKILL) after this long. Zero or less: no limit.
  std::chrono::milliseconds timeout{0};
  /// Copy the child's stderr to ours as it arrives (it is captured either way).
  bool forward_stderr = true;
  /// How much of the end of the child's stderr Outcome::stderr_tail keeps.
  size_t stderr_tail_bytes = 4096;
  /// Wait for the child's exit on a pidfd (Linux 5.3). false, or a kernel
  /// without pidfd_open, falls back to the end of the result pipe; the tests
  /// run both ways.
  bool use_pidfd = true;
  /// Called in the parent just before each fork and just after it, by the
  /// thread that forks: e.g. to hold a lock so that the child's copy of
  /// what it guards is whole. The child's copy of such a lock stays held,
  /// so the child must never take it.
  std::function<void()> before_fork, after_fork;
};

/// A forked child that serves requests, one at a time, until stopped: the
/// work of many isolated calls for the price of one fork. Each call() sends
/// a request and waits for the answer under Options::timeout, and ends as
/// run_isolated's would. A call that ends the child (a crash, a timeout, an
/// exit) leaves the worker stopped; the next call forks a fresh one. The
/// child is a copy of the parent at the moment of that fork (see above for
/// what it may do), so whatever changed in the parent since must travel in
/// the request. One thread uses a Worker at a time; several Workers may run
/// at once.
class Worker {
 public:
  /// Answers one request in the child: its result is the call's payload,
  /// what it throws the call's error.
  using Serve = std::function<std::string(const std::string& request)>;
  Worker(Serve serve, Options options);
  ~Worker();  ///< stop()
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Sends `request` to the child (forking it first if none is running) and
  /// waits for its answer.
  Outcome call(const std::string& request);
  /// Kills and reaps the child, if one is running.
  void stop();
  /// The child's process id; 0 when none is running.
  pid_t pid() const { return pid_; }
  /// How many children this worker has forked.
  size_t forks() const { return forks_; }

 private:
  /// Forks the child; false with the reason in `o` when that fails.
  bool start(Outcome& o);
  /// Reaps the child after it ended during a call and says how in `o`.
  void ended(Outcome& o, bool timed_out, const std::string& frame);

  Serve serve_;
  Options options_;
  void* doing_ = nullptr;  ///< the page the child's Doing writes (shared, kept across forks)
  pid_t pid_ = 0;
  int request_ = -1;  ///< our end of the request socket
  int result_ = -1;   ///< the read end of the answer pipe
  int err_ = -1;      ///< the read end of the child's stderr
  int pidfd_ = -1;    ///< the child's pidfd, or -1
  size_t forks_ = 0;
};

/// What the isolated work is doing while this object lives, for the parent
/// to name if the child dies in it (Outcome::doing: "crashed (SIGSEGV) in
/// plugin 'x' schedule()"). Nested objects name the innermost; the outer
/// one's text is back when the inner one ends. Outside an isolated child it
/// does nothing. The text lives in a page shared with the parent, at most
/// 1 KiB of it; one thread of the child at a time may use it (plugin calls
/// are made from one thread).
class Doing {
 public:
  explicit Doing(std::string_view what);
  ~Doing();
  Doing(const Doing&) = delete;
  Doing& operator=(const Doing&) = delete;

 private:
  bool active_ = false;
  std::string previous_;
};

/// Runs `work` in a forked child and waits for it; see Outcome. The child
/// resets the fatal and terminating signals to their defaults, writes no core
/// file, dies with the parent (PR_SET_PDEATHSIG), and keeps our stdout; its
/// stderr is forwarded and its tail kept. Stdio buffers are flushed before
/// the fork. Several threads may run calls at once (without a pidfd, a call
/// may then also wait for a sibling's child, which inherited its pipe).
Outcome run_isolated(const std::function<std::string()>& work, const Options& options);
/// run_isolated with a timeout and the default options.
Outcome run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout);

/// One line for a record or a table: "ok", "crashed (SIGSEGV)", "timeout
/// after 2 s", "timeout after 200 ms", "exited with status 3", each followed
/// by " in " and Outcome::doing when the work said what it was doing, or the
/// carried error's full diagnostic (UserError::what(), InternalError::what()).
std::string describe(const Outcome& o);
/// describe(o), then for a child that did not return normally the last lines
/// of its stderr, indented: what the CLI prints.
std::string report(const Outcome& o);
/// If the work threw, throws the same error again in the caller: a UserError
/// with its location and message, or an InternalError with its what().
/// Does nothing for every other outcome.
void rethrow_error(const Outcome& o);

/// "SIGSEGV", "SIGABRT", ...; "signal 42" for one without a name here.
std::string signal_name(int sig);

}  // namespace schedlab::isolate
