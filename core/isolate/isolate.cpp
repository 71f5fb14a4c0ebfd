// isolate: fork, run the work in the child, carry its result or its death
// back. The child frames its answer on a pipe (a tag byte, then
// length-prefixed fields); the parent reads that pipe and the child's stderr
// while it waits, so a result larger than a pipe buffer never blocks the
// child, and decides what happened from the wait status first and the frame
// second.
#include "schedlab/isolate/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

namespace schedlab::isolate {
namespace {

using Clock = std::chrono::steady_clock;

// Frame tags.
constexpr char kResult = 'R';    // payload
constexpr char kUser = 'U';      // file, line, col, message
constexpr char kInternal = 'I';  // message

// The child's exit status when it cannot even report (its parent is gone, or
// the result pipe failed); the parent sees it as an Exit failure.
constexpr int kChildCannotReport = 125;

std::string errno_str(int err) {
  return std::strerror(err);
}

// ---- the frame ----

void put_field(std::string& out, const std::string& s) {
  const uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += s;
}

/// Reads fields back; every read fails softly on a truncated frame.
class FrameReader {
 public:
  explicit FrameReader(const std::string& s) : s_(s) {}
  bool field(std::string& out) {
    uint64_t n = 0;
    if (s_.size() - pos_ < sizeof n) return false;
    std::memcpy(&n, s_.data() + pos_, sizeof n);
    pos_ += sizeof n;
    if (s_.size() - pos_ < n) return false;
    out.assign(s_, pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  size_t pos_ = 1;  // past the tag
};

// ---- the child ----

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// What the work's end turns into: a frame, never an exception.
std::string run_work(const std::function<std::string()>& work) {
  std::string frame;
  try {
    std::string payload = work();
    frame.reserve(payload.size() + 9);
    frame += kResult;
    put_field(frame, payload);
  } catch (const UserError& e) {
    frame.assign(1, kUser);
    put_field(frame, e.loc().file);
    put_field(frame, std::to_string(e.loc().line));
    put_field(frame, std::to_string(e.loc().col));
    put_field(frame, e.message());
  } catch (const std::exception& e) {  // InternalError and the rest
    frame.assign(1, kInternal);
    put_field(frame, e.what());
  } catch (...) {
    frame.assign(1, kInternal);
    put_field(frame, "the isolated work threw an exception not derived from std::exception");
  }
  return frame;
}

// The signals whose default action ends the process. A handler the parent
// installed (a crash reporter, a SIGINT flag for a graceful stop) must not
// keep the child alive or hide how it died.
constexpr int kResetSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,  SIGABRT, SIGTRAP, SIGSYS,
                                 SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ};

[[noreturn]] void child_main(const std::function<std::string()>& work, pid_t parent, int result_w,
                             int err_w, int result_r, int err_r) {
  // Die with the parent (the forking thread, which waits here until we are
  // reaped, so in practice with the process); then check it did not die
  // before the request took effect.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kChildCannotReport);

  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : kResetSignals) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
  // A sweep of deliberately crashing plugins must not write a core per point.
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);

  ::close(result_r);
  ::close(err_r);
  if (err_w != STDERR_FILENO) {
    ::dup2(err_w, STDERR_FILENO);
    ::close(err_w);
  }
  // Whatever another thread buffered between our flush and the fork is the
  // parent's to print.
  ::__fpurge(stdout);

  const std::string frame = run_work(work);
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(write_all(result_w, frame.data(), frame.size()) ? 0 : kChildCannotReport);
}

// ---- the parent ----

struct Pipe {
  int r = -1, w = -1;
};

bool open_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p = {fds[0], fds[1]};
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Reads what `fd` has now (non-blocking) into `sink`. Returns false at EOF
/// or on an error, true when it would block.
template <typename Sink>
bool drain(int fd, Sink&& sink) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

/// The wait status of `pid`, or -1 with the reason in `err`.
int reap(pid_t pid, int& err) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    err = errno;
    return -1;
  }
  return status;
}

int to_int(const std::string& s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

/// The Outcome for a child that exited with status 0: its frame.
void decode(const std::string& frame, Outcome& o) {
  FrameReader in(frame);
  std::string a, b, c, d;
  if (!frame.empty() && frame[0] == kResult && in.field(a) && in.done()) {
    o.status = Outcome::Status::Ok;
    o.payload = std::move(a);
  } else if (!frame.empty() && frame[0] == kUser && in.field(a) && in.field(b) && in.field(c) &&
             in.field(d) && in.done()) {
    o.error = Outcome::Error::User;
    o.loc = SourceLoc{a, to_int(b), to_int(c)};
    o.message = std::move(d);
  } else if (!frame.empty() && frame[0] == kInternal && in.field(a) && in.done()) {
    o.error = Outcome::Error::Internal;
    o.message = std::move(a);
  } else {
    o.error = Outcome::Error::Exit;
    o.message = frame.empty() ? "the isolated work exited with status 0 before returning a result"
                              : "the isolated work's result was cut short (" +
                                    std::to_string(frame.size()) + " bytes)";
  }
}

Outcome spawn_failure(const std::string& what, int err) {
  Outcome o;
  o.error = Outcome::Error::Internal;
  o.message = "cannot run isolated: " + what + " failed: " + errno_str(err);
  return o;
}

std::string duration_str(std::chrono::milliseconds ms) {
  const auto n = ms.count();
  if (n % 1000 == 0) return std::to_string(n / 1000) + " s";
  if (n < 1000) return std::to_string(n) + " ms";
  std::ostringstream os;
  os << static_cast<double>(n) / 1000.0 << " s";
  return os.str();
}

}  // namespace

Outcome run_isolated(const std::function<std::string()>& work, const Options& options) {
  Outcome o;
  o.timeout = std::max(options.timeout, std::chrono::milliseconds(0));

  // Both processes would print what is buffered now; print it once, here.
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);

  Pipe result, err;
  if (!open_pipe(result)) return spawn_failure("pipe", errno);
  if (!open_pipe(err)) {
    const int e = errno;
    close_fd(result.r), close_fd(result.w);
    return spawn_failure("pipe", e);
  }
  const pid_t parent = ::getpid();
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) child_main(work, parent, result.w, err.w, result.r, err.r);
  close_fd(result.w);
  close_fd(err.w);
  if (pid < 0) {
    const int e = errno;
    close_fd(result.r), close_fd(err.r);
    return spawn_failure("fork", e);
  }
  o.pid = pid;
  ::fcntl(result.r, F_SETFL, O_NONBLOCK);
  ::fcntl(err.r, F_SETFL, O_NONBLOCK);

  // Linux >= 5.3 tells us the child exited even if a grandchild still holds
  // its pipes; before that, the end of the result pipe has to do.
  int pidfd = -1;
#ifdef SYS_pidfd_open
  if (options.use_pidfd) pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif

  std::string frame;
  auto to_frame = [&](const char* p, size_t n) { frame.append(p, n); };
  auto to_tail = [&](const char* p, size_t n) {
    if (options.forward_stderr) write_all(STDERR_FILENO, p, n);
    o.stderr_tail.append(p, n);
    if (o.stderr_tail.size() > options.stderr_tail_bytes)
      o.stderr_tail.erase(0, o.stderr_tail.size() - options.stderr_tail_bytes);
  };

  // Read both pipes until the child exits or the limit passes.
  enum Source { ResultPipe, StderrPipe, ChildExit };
  bool exited = false, timed_out = false;
  int poll_errno = 0;
  while (!exited) {
    int wait_ms = -1;
    if (o.timeout.count() > 0) {
      const auto left =
          o.timeout - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    }
    pollfd fds[3];
    Source source[3];
    nfds_t n = 0;
    for (auto [fd, what] :
         {std::pair{result.r, ResultPipe}, {err.r, StderrPipe}, {pidfd, ChildExit}})
      if (fd >= 0) {
        fds[n] = {fd, POLLIN, 0};
        source[n++] = what;
      }
    if (n == 0) break;  // no pidfd, both pipes closed: the child is gone or going
    if (::poll(fds, n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      poll_errno = errno;  // cannot wait any more: kill, reap, and say why
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      switch (source[i]) {
        case ResultPipe:
          if (!drain(result.r, to_frame)) {
            close_fd(result.r);
            exited = exited || pidfd < 0;
          }
          break;
        case StderrPipe:
          if (!drain(err.r, to_tail)) close_fd(err.r);
          break;
        case ChildExit:
          exited = true;
          break;
      }
    }
  }
  if (timed_out || poll_errno != 0) ::kill(pid, SIGKILL);
  int wait_errno = 0;
  const int status = reap(pid, wait_errno);
  // The child is gone: what it wrote is in the pipes now.
  if (result.r >= 0) drain(result.r, to_frame);
  if (err.r >= 0) drain(err.r, to_tail);
  close_fd(result.r);
  close_fd(err.r);
  close_fd(pidfd);

  if (status < 0 || poll_errno != 0) {
    o.error = Outcome::Error::Internal;
    o.message = status < 0 ? "cannot run isolated: waitpid failed: " + errno_str(wait_errno)
                           : "cannot run isolated: poll failed: " + errno_str(poll_errno);
  } else if (WIFSIGNALED(status)) {
    // A child that finished on its own just as the limit struck keeps its
    // own ending; only our SIGKILL is a timeout.
    if (timed_out && WTERMSIG(status) == SIGKILL) {
      o.status = Outcome::Status::Timeout;
    } else {
      o.status = Outcome::Status::Crashed;
      o.signal = WTERMSIG(status);
    }
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    o.error = Outcome::Error::Exit;
    o.exit_code = WEXITSTATUS(status);
    o.message = "the isolated work exited with status " + std::to_string(o.exit_code);
  } else {
    decode(frame, o);
  }
  return o;
}

Outcome run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout) {
  Options options;
  options.timeout = timeout;
  return run_isolated(work, options);
}

std::string signal_name(int sig) {
  static constexpr std::pair<int, const char*> kNames[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGKILL, "SIGKILL"},
      {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
  for (const auto& [number, name] : kNames)
    if (number == sig) return name;
  return "signal " + std::to_string(sig);
}

std::string describe(const Outcome& o) {
  switch (o.status) {
    case Outcome::Status::Ok:
      return "ok";
    case Outcome::Status::Crashed:
      return "crashed (" + signal_name(o.signal) + ")";
    case Outcome::Status::Timeout:
      return "timeout after " + duration_str(o.timeout);
    case Outcome::Status::Failed:
      break;
  }
  switch (o.error) {
    case Outcome::Error::User:
      return UserError(o.loc, o.message).what();
    case Outcome::Error::Exit:
      return o.exit_code != 0 ? "exited with status " + std::to_string(o.exit_code) : o.message;
    case Outcome::Error::Internal:
    case Outcome::Error::None:
      break;
  }
  return o.message;
}

std::string report(const Outcome& o) {
  std::string r = describe(o);
  const bool died = o.status == Outcome::Status::Crashed || o.status == Outcome::Status::Timeout ||
                    o.error == Outcome::Error::Exit;
  if (!died || o.stderr_tail.empty()) return r;
  // The last few lines: enough for an assertion message or a plugin's log.
  constexpr size_t kLines = 8;
  std::vector<std::string> lines;
  std::istringstream in(o.stderr_tail);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return r;
  r += "; its stderr ended with:";
  for (size_t i = lines.size() > kLines ? lines.size() - kLines : 0; i < lines.size(); ++i)
    r += "\n  " + lines[i];
  return r;
}

void rethrow_error(const Outcome& o) {
  if (o.status != Outcome::Status::Failed) return;
  if (o.error == Outcome::Error::User) throw UserError(o.loc, o.message);
  if (o.error == Outcome::Error::Internal) throw InternalError(o.message);
}

}  // namespace schedlab::isolate
