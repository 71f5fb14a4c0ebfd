// isolate: fork a worker, send it requests, carry its answers or its death
// back. A request is length-prefixed on a socket; the child answers each on
// a pipe with a length-prefixed frame (a tag byte, then length-prefixed
// fields). The parent reads that pipe and the child's stderr while it
// waits, so an answer larger than a pipe buffer never blocks the child, and
// decides what happened from the answer first and, when the child ended
// instead, from its wait status. run_isolated is one call of a worker.
#include "schedlab/isolate/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
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
#include <new>
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

// ---- what the child is doing (Doing) ----

/// A page shared by a worker and its children: the text of the innermost
/// Doing. Written by the child only; read by the parent once the child is
/// gone, or cleared by it while the child waits for a request.
struct DoingPage {
  static constexpr size_t kCapacity = 1024;
  size_t size = 0;
  char text[kCapacity];
};

/// This process's page when it is an isolated child; null otherwise.
DoingPage* g_doing = nullptr;

void set_doing(std::string_view what) {
  const size_t n = std::min(what.size(), DoingPage::kCapacity);
  std::memcpy(g_doing->text, what.data(), n);
  g_doing->size = n;
}

std::string read_doing(const void* page) {
  if (page == nullptr) return "";
  const auto* p = static_cast<const DoingPage*>(page);
  return std::string(p->text, std::min(p->size, DoingPage::kCapacity));
}

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

/// Reads exactly n bytes (blocking); false at EOF or on an error.
bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

/// A length-prefixed message, as both directions carry them.
std::string framed(const std::string& body) {
  std::string out;
  put_field(out, body);
  return out;
}

[[noreturn]] void child_main(const Worker::Serve& serve, pid_t parent, int request, int result_w,
                             int err_w, void* doing) {
  g_doing = static_cast<DoingPage*>(doing);
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

  if (err_w != STDERR_FILENO) {
    ::dup2(err_w, STDERR_FILENO);
    ::close(err_w);
  }
  // Whatever another thread buffered between our flush and the fork is the
  // parent's to print.
  ::__fpurge(stdout);

  // One request at a time until the parent stops us (or goes away).
  for (;;) {
    uint64_t n = 0;
    if (!read_all(request, reinterpret_cast<char*>(&n), sizeof n)) ::_exit(0);
    std::string req(n, '\0');
    if (!read_all(request, req.data(), n)) ::_exit(0);
    const std::string frame = framed(run_work([&] { return serve(req); }));
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    if (!write_all(result_w, frame.data(), frame.size())) ::_exit(kChildCannotReport);
  }
}

// ---- the parent ----

bool open_pipe(int (&fds)[2]) {
  return ::pipe2(fds, O_CLOEXEC) == 0;
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

/// The Outcome for a child that answered: its frame.
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
    o.error = Outcome::Error::Internal;
    o.message = "the isolated work's answer is malformed (" + std::to_string(frame.size()) +
                " bytes)";
  }
}

/// The answer in `buf` once it has arrived whole: its frame, removed from buf.
bool take_answer(std::string& buf, std::string& frame) {
  uint64_t n = 0;
  if (buf.size() < sizeof n) return false;
  std::memcpy(&n, buf.data(), sizeof n);
  if (buf.size() - sizeof n < n) return false;
  frame.assign(buf, sizeof n, n);
  buf.erase(0, sizeof n + n);
  return true;
}

void spawn_failure(Outcome& o, const std::string& what, int err) {
  o.status = Outcome::Status::Failed;
  o.error = Outcome::Error::Internal;
  o.message = "cannot run isolated: " + what + " failed: " + errno_str(err);
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

Worker::Worker(Serve serve, Options options)
    : serve_(std::move(serve)), options_(std::move(options)) {}

Worker::~Worker() {
  stop();
  if (doing_ != nullptr) ::munmap(doing_, sizeof(DoingPage));
}

Doing::Doing(std::string_view what) {
  if (g_doing == nullptr) return;
  active_ = true;
  previous_ = read_doing(g_doing);
  set_doing(what);
}

Doing::~Doing() {
  if (active_) set_doing(previous_);
}

bool Worker::start(Outcome& o) {
  // Both processes would print what is buffered now; print it once, here.
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);

  // The request travels on a socket: a send to a child that died is EPIPE
  // (MSG_NOSIGNAL), not a SIGPIPE for the whole host.
  int req[2] = {-1, -1}, res[2] = {-1, -1}, err[2] = {-1, -1};
  bool opened = ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req) == 0;
  opened = opened && open_pipe(res) && open_pipe(err);
  if (!opened) {
    const int e = errno;
    for (int* fds : {req, res, err}) close_fd(fds[0]), close_fd(fds[1]);
    spawn_failure(o, "pipe", e);
    return false;
  }
  // Without the page (mmap failed) a death is still reported, just not where.
  if (doing_ == nullptr) {
    void* page = ::mmap(nullptr, sizeof(DoingPage), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) doing_ = new (page) DoingPage;
  }
  const pid_t parent = ::getpid();
  if (options_.before_fork) options_.before_fork();
  const pid_t pid = ::fork();
  if (pid != 0 && options_.after_fork) options_.after_fork();
  if (pid == 0) {
    ::close(req[0]);
    ::close(res[0]);
    ::close(err[0]);
    child_main(serve_, parent, req[1], res[1], err[1], doing_);
  }
  close_fd(req[1]);
  close_fd(res[1]);
  close_fd(err[1]);
  if (pid < 0) {
    const int e = errno;
    close_fd(req[0]), close_fd(res[0]), close_fd(err[0]);
    spawn_failure(o, "fork", e);
    return false;
  }
  ++forks_;
  pid_ = pid;
  request_ = req[0];
  result_ = res[0];
  err_ = err[0];
  ::fcntl(result_, F_SETFL, O_NONBLOCK);
  ::fcntl(err_, F_SETFL, O_NONBLOCK);
  // Linux >= 5.3 tells us the child exited even if a grandchild still holds
  // its pipes; before that, the end of the answer pipe has to do.
#ifdef SYS_pidfd_open
  if (options_.use_pidfd) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
  return true;
}

void Worker::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int e = 0;
    reap(pid_, e);
  }
  pid_ = 0;
  close_fd(request_);
  close_fd(result_);
  close_fd(err_);
  close_fd(pidfd_);
}

Outcome Worker::call(const std::string& request) {
  Outcome o;
  o.timeout = std::max(options_.timeout, std::chrono::milliseconds(0));
  if (pid_ == 0 && !start(o)) return o;
  o.pid = pid_;
  const auto start = Clock::now();

  auto to_tail = [&](const char* p, size_t n) {
    if (options_.forward_stderr) write_all(STDERR_FILENO, p, n);
    o.stderr_tail.append(p, n);
    if (o.stderr_tail.size() > options_.stderr_tail_bytes)
      o.stderr_tail.erase(0, o.stderr_tail.size() - options_.stderr_tail_bytes);
  };
  std::string buf, frame;
  auto to_buf = [&](const char* p, size_t n) { buf.append(p, n); };

  // The child waits for the request: nothing writes the page now.
  if (doing_ != nullptr) static_cast<DoingPage*>(doing_)->size = 0;
  // The request: a child that died meanwhile shows as EPIPE, and the wait
  // below then finds it gone.
  const std::string msg = framed(request);
  for (size_t sent = 0; sent < msg.size();) {
    ssize_t w = ::send(request_, msg.data() + sent, msg.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
    sent += static_cast<size_t>(w);
  }

  // Read both pipes until the answer is whole, the child exits, or the
  // limit passes.
  enum Source { ResultPipe, StderrPipe, ChildExit };
  bool answered = false, exited = false, timed_out = false;
  int poll_errno = 0;
  while (!answered && !exited) {
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
         {std::pair{result_, ResultPipe}, {err_, StderrPipe}, {pidfd_, ChildExit}})
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
          if (!drain(result_, to_buf)) {
            close_fd(result_);
            exited = exited || pidfd_ < 0;
          }
          answered = take_answer(buf, frame);
          break;
        case StderrPipe:
          if (!drain(err_, to_tail)) close_fd(err_);
          break;
        case ChildExit:
          exited = true;
          break;
      }
    }
  }
  if (answered) {
    // What the child wrote to stderr before answering belongs to this call.
    if (err_ >= 0) drain(err_, to_tail);
    decode(frame, o);
    return o;
  }
  if (timed_out || poll_errno != 0) ::kill(pid_, SIGKILL);
  int wait_errno = 0;
  const int status = reap(pid_, wait_errno);
  pid_ = 0;
  // The child is gone: what it wrote is in the pipes now.
  if (result_ >= 0) drain(result_, to_buf);
  if (err_ >= 0) drain(err_, to_tail);
  const bool whole = take_answer(buf, frame);
  stop();
  o.doing = read_doing(doing_);

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
    // Exited with status 0: an answer that arrived with the exit counts.
    if (whole) {
      decode(frame, o);
    } else {
      o.error = Outcome::Error::Exit;
      o.message = buf.empty() ? "the isolated work exited with status 0 before returning a result"
                              : "the isolated work's result was cut short (" +
                                    std::to_string(buf.size()) + " bytes)";
    }
  }
  return o;
}

Outcome run_isolated(const std::function<std::string()>& work, const Options& options) {
  Worker worker([&](const std::string&) { return work(); }, options);
  return worker.call("");
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
  const std::string in = o.doing.empty() ? "" : " in " + o.doing;
  switch (o.status) {
    case Outcome::Status::Ok:
      return "ok";
    case Outcome::Status::Crashed:
      return "crashed (" + signal_name(o.signal) + ")" + in;
    case Outcome::Status::Timeout:
      return "timeout after " + duration_str(o.timeout) + in;
    case Outcome::Status::Failed:
      break;
  }
  switch (o.error) {
    case Outcome::Error::User:
      return UserError(o.loc, o.message).what();
    case Outcome::Error::Exit:
      return (o.exit_code != 0 ? "exited with status " + std::to_string(o.exit_code) : o.message) +
             in;
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
