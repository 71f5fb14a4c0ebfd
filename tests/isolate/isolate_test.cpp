// run_isolated on plain work: every way a child can end (a result, each
// fatal signal, heap corruption, a timeout, an exit, each kind of
// exception), results larger than a pipe, the child's stdout and stderr,
// signals interrupting the parent's wait, and a parent with busy threads.
// Each case runs twice: with a pidfd and with the pre-5.3 fallback. After
// each test the process has no child left, reaped or not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "schedlab/isolate/isolate.h"

namespace schedlab::isolate {
namespace {

using ::testing::HasSubstr;
using Status = Outcome::Status;
using Error = Outcome::Error;
using std::chrono::milliseconds;

// Generous: a limit for work that must finish, never a timing assertion.
constexpr milliseconds kNoHang{60'000};

volatile int* volatile null_int = nullptr;
volatile int zero = 0;
volatile int one = 1;  // a constant dividend lets GCC turn 1 / x into compares
volatile unsigned long spins = 0;

/// A payload no two positions of which agree by accident.
std::string pattern(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

/// Redirects one of our file descriptors into a temporary file while alive.
class Capture {
 public:
  explicit Capture(int fd) : fd_(fd), file_(std::tmpfile()) {
    std::fflush(nullptr);
    saved_ = ::dup(fd_);
    ::dup2(::fileno(file_), fd_);
  }
  /// Restores the descriptor and returns what was written to it.
  std::string finish() {
    std::fflush(nullptr);
    ::dup2(saved_, fd_);
    ::close(saved_);
    std::rewind(file_);
    std::string s;
    for (int c; (c = std::fgetc(file_)) != EOF;) s += static_cast<char>(c);
    std::fclose(file_);
    return s;
  }

 private:
  int fd_, saved_;
  FILE* file_;
};

class Isolate : public ::testing::TestWithParam<bool> {
 protected:
  Options opts(milliseconds timeout = kNoHang) const {
    Options o;
    o.timeout = timeout;
    o.use_pidfd = GetParam();
    return o;
  }
  void TearDown() override {
    // Every child was reaped: waitpid finds none at all.
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
  }
};

INSTANTIATE_TEST_SUITE_P(Wait, Isolate, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "pidfd" : "pipe_eof";
                         });

// ---- results

TEST_P(Isolate, ReturnsTheWorkResultAndRunsInAnotherProcess) {
  const pid_t parent = ::getpid();
  Outcome o = run_isolated([&] { return "pid " + std::to_string(::getpid()); }, opts());
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(o.status, Status::Ok);
  EXPECT_EQ(o.error, Error::None);
  EXPECT_NE(o.pid, parent);
  EXPECT_EQ(o.payload, "pid " + std::to_string(o.pid));
  EXPECT_EQ(describe(o), "ok");
  EXPECT_EQ(report(o), "ok");
  EXPECT_NO_THROW(rethrow_error(o));
}

TEST_P(Isolate, NoLimitWithZeroTimeout) {
  Outcome o = run_isolated([] { return std::string("done"); }, opts(milliseconds(0)));
  EXPECT_EQ(o.payload, "done");
  EXPECT_EQ(o.timeout.count(), 0);
}

TEST_P(Isolate, EmptyAndBinaryResultsArriveUnchanged) {
  EXPECT_EQ(run_isolated([] { return std::string(); }, opts()).payload, "");
  std::string bytes("\0R\xff\n\0", 5);
  Outcome o = run_isolated([&] { return bytes; }, opts());
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(o.payload, bytes);
}

TEST_P(Isolate, ResultLargerThanAPipeIsReadWhileTheChildWrites) {
  const std::string big = pattern(32u << 20);
  Outcome o = run_isolated([&] { return big; }, opts());
  ASSERT_TRUE(o.ok()) << describe(o);
  EXPECT_EQ(o.payload.size(), big.size());
  EXPECT_TRUE(o.payload == big);
}

TEST_P(Isolate, TheChildsWritesStayInTheChild) {
  std::vector<int> data{1, 2, 3};
  Outcome o = run_isolated(
      [&] {
        data.assign(1000, 7);
        return std::to_string(data.size());
      },
      opts());
  EXPECT_EQ(o.payload, "1000");
  EXPECT_EQ(data, (std::vector<int>{1, 2, 3}));
}

// ---- crashes

struct CrashCase {
  const char* name;
  int signal;
  void (*crash)();
};

void segv() {
  *null_int = 1;
}
void abrt() {
  std::abort();
}
void trap() {
  __builtin_trap();
}
void fpe() {
#if defined(__x86_64__) || defined(__i386__)
  volatile int r = one / zero;
  (void)r;
#else
  std::raise(SIGFPE);  // integer division by zero does not trap on this target
#endif
}
// Touching a mapped page past the end of its file.
void bus() {
  FILE* f = std::tmpfile();
  auto* p =
      static_cast<volatile char*>(::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, ::fileno(f), 0));
  if (p != MAP_FAILED) (void)p[0];
}

TEST_P(Isolate, EachFatalSignalIsCrashedWithItsName) {
  const CrashCase cases[] = {
    {"SIGSEGV", SIGSEGV, segv},
    {"SIGABRT", SIGABRT, abrt},
    {"SIGFPE", SIGFPE, fpe},
    {"SIGBUS", SIGBUS, bus},
#if defined(__x86_64__) || defined(__i386__)
    {"SIGILL", SIGILL, trap},  // ud2
#endif
  };
  for (const CrashCase& c : cases) {
    Outcome o = run_isolated(
        [&]() -> std::string {
          c.crash();
          return "survived";
        },
        opts());
    EXPECT_EQ(o.status, Status::Crashed) << c.name << ": " << describe(o);
    EXPECT_EQ(o.signal, c.signal) << c.name;
    EXPECT_EQ(signal_name(o.signal), c.name);
    EXPECT_EQ(describe(o), std::string("crashed (") + c.name + ")");
    EXPECT_EQ(o.payload, "");
  }
  (void)trap;
}

TEST_P(Isolate, HeapCorruptionInTheChildIsCrashedWithGlibcsDiagnostic) {
  Options op = opts();
  op.forward_stderr = false;
  Outcome o = run_isolated(
      [] {
        char* volatile p = new char[32];
        delete[] p;
        delete[] p;  // glibc's tcache check aborts
        return std::string("survived");
      },
      op);
  EXPECT_EQ(describe(o), "crashed (SIGABRT)");
  EXPECT_THAT(o.stderr_tail, HasSubstr("double free"));
  // Our heap is our own.
  std::vector<std::string> v(1000, std::string(100, 'z'));
  EXPECT_EQ(v.back().size(), 100u);
}

TEST_P(Isolate, ASignalWithoutANameHereIsNumbered) {
  const int sig = SIGRTMIN + 1;
  Outcome o = run_isolated(
      [&] {
        std::raise(sig);
        return std::string("survived");
      },
      opts());
  EXPECT_EQ(describe(o), "crashed (signal " + std::to_string(sig) + ")");
}

TEST_P(Isolate, AParentsSignalHandlerDoesNotHideTheCrash) {
  struct sigaction catcher {
  }, old{};
  catcher.sa_handler = [](int) { ::_exit(0); };  // would look like a clean exit
  sigemptyset(&catcher.sa_mask);
  ::sigaction(SIGSEGV, &catcher, &old);
  Outcome o = run_isolated(
      [] {
        segv();
        return std::string("survived");
      },
      opts());
  ::sigaction(SIGSEGV, &old, nullptr);
  EXPECT_EQ(describe(o), "crashed (SIGSEGV)");
}

TEST_P(Isolate, DoingNamesWhereTheChildDied) {
  Outcome o = run_isolated(
      [] {
        Doing outer("plugin 'p' schedule()");
        { Doing inner("plugin 'p' log()"); }  // ended: the outer one is back
        segv();
        return std::string("survived");
      },
      opts());
  EXPECT_EQ(o.doing, "plugin 'p' schedule()");
  EXPECT_EQ(describe(o), "crashed (SIGSEGV) in plugin 'p' schedule()");
  Options op = opts();
  op.timeout = milliseconds(200);
  Outcome t = run_isolated(
      [] {
        Doing d("spinning");
        for (;;) spins = spins + 1;
        return std::string();
      },
      op);
  EXPECT_EQ(describe(t), "timeout after 200 ms in spinning");
  // In the parent a Doing does nothing, and a child that says nothing names nothing.
  { Doing here("in the parent"); }
  Outcome quiet = run_isolated(
      [] {
        segv();
        return std::string();
      },
      opts());
  EXPECT_EQ(describe(quiet), "crashed (SIGSEGV)");
}

TEST_P(Isolate, AWorkersNextCallStartsWithNothingDone) {
  Worker w(
      [](const std::string& req) {
        if (req != "quiet") {
          Doing d("request " + req);
          if (req == "die") segv();
        }
        if (req == "quiet") segv();
        return req;
      },
      opts());
  EXPECT_TRUE(w.call("1").ok());  // its Doing ended with it
  EXPECT_EQ(describe(w.call("die")), "crashed (SIGSEGV) in request die");
  // The next child (the same shared page) dies saying nothing: nothing is named.
  EXPECT_EQ(describe(w.call("quiet")), "crashed (SIGSEGV)");
  EXPECT_EQ(w.forks(), 2u);
}

TEST_P(Isolate, ForkHooksRunInTheParentAroundEachForkOnly) {
  // The sweep runner holds a lock over each fork so that a worker's copy of
  // what it guards is whole: the child sees the lock held and the state as
  // it was, the parent gets it back after each fork.
  std::mutex mu;
  int before = 0, after = 0;
  Options o = opts();
  o.before_fork = [&] {
    mu.lock();
    ++before;
  };
  o.after_fork = [&] {
    ++after;
    mu.unlock();
  };
  Worker w(
      [&](const std::string& req) {
        if (req == "die") segv();
        const bool held = !mu.try_lock();
        return std::to_string(before) + "," + std::to_string(after) + (held ? ",held" : ",free");
      },
      o);
  EXPECT_EQ(w.call("a").payload, "1,0,held");
  EXPECT_EQ(w.call("b").payload, "1,0,held");  // the same child: no fork
  EXPECT_EQ(after, 1);
  ASSERT_TRUE(mu.try_lock());
  mu.unlock();
  EXPECT_EQ(describe(w.call("die")), "crashed (SIGSEGV)");
  EXPECT_EQ(w.call("c").payload, "2,1,held");  // a fresh fork, hooks again
  EXPECT_EQ(before, 2);
  EXPECT_EQ(after, 2);
  ASSERT_TRUE(mu.try_lock());
  mu.unlock();
}

TEST_P(Isolate, ReportEndsWithTheLastLinesOfStderr) {
  Options op = opts();
  op.forward_stderr = false;
  Outcome o = run_isolated(
      [] {
        for (int i = 1; i <= 10; ++i) std::fprintf(stderr, "line %d\n", i);
        std::fprintf(stderr, "Assertion `block > 0' failed.\n\n");
        std::abort();
        return std::string();
      },
      op);
  EXPECT_EQ(report(o),
            "crashed (SIGABRT); its stderr ended with:\n  line 4\n  line 5\n  line 6\n  line 7\n"
            "  line 8\n  line 9\n  line 10\n  Assertion `block > 0' failed.");
}

// ---- timeouts

TEST_P(Isolate, AHangIsKilledAtTheLimitAndReaped) {
  Options op = opts(milliseconds(200));
  op.forward_stderr = false;
  Outcome o = run_isolated(
      [] {
        std::fprintf(stderr, "spinning\n");
        for (;;) spins = spins + 1;
        return std::string();
      },
      op);
  EXPECT_EQ(o.status, Status::Timeout);
  EXPECT_EQ(describe(o), "timeout after 200 ms");
  EXPECT_EQ(o.timeout, milliseconds(200));
  // Written before the kill, read after it.
  EXPECT_EQ(o.stderr_tail, "spinning\n");
  EXPECT_EQ(report(o), "timeout after 200 ms; its stderr ended with:\n  spinning");
  // Reaped: the pid names no process, not even a zombie.
  errno = 0;
  EXPECT_EQ(::kill(o.pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_P(Isolate, AChildBlockedOnAFullPipeStillTimesOut) {
  // It never returns, and its stderr is far larger than a pipe holds.
  Options op = opts(milliseconds(200));
  op.forward_stderr = false;
  Outcome o = run_isolated(
      [] {
        const std::string chunk(1 << 16, 'x');
        for (;;) std::fwrite(chunk.data(), 1, chunk.size(), stderr);
        return std::string();
      },
      op);
  EXPECT_EQ(o.status, Status::Timeout);
  EXPECT_EQ(o.stderr_tail.size(), op.stderr_tail_bytes);
}

TEST(IsolateDescribe, TimeoutsInSecondsWhenWhole) {
  Outcome o;
  o.status = Status::Timeout;
  o.timeout = milliseconds(2000);
  EXPECT_EQ(describe(o), "timeout after 2 s");
  o.timeout = milliseconds(1500);
  EXPECT_EQ(describe(o), "timeout after 1.5 s");
  o.timeout = milliseconds(200);
  EXPECT_EQ(describe(o), "timeout after 200 ms");
}

// ---- errors the work throws, and exits

TEST_P(Isolate, AUserErrorComesBackAsAUserErrorWithItsLocationAndMessage) {
  const SourceLoc where{"sweeps/softmax.yaml", 12, 5};
  Outcome o = run_isolated(
      [&]() -> std::string {
        user_error_at(where) << "block: expected a power of two, found 96";
        return "unreachable";
      },
      opts());
  EXPECT_EQ(o.status, Status::Failed);
  EXPECT_EQ(o.error, Error::User);
  EXPECT_EQ(o.loc.str(), "sweeps/softmax.yaml:12:5");
  EXPECT_EQ(o.message, "block: expected a power of two, found 96");
  EXPECT_EQ(describe(o),
            "sweeps/softmax.yaml:12:5: error: block: expected a power of two, found 96");
  try {
    rethrow_error(o);
    ADD_FAILURE() << "rethrow_error threw nothing";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), o.message);
    EXPECT_EQ(e.loc().str(), "sweeps/softmax.yaml:12:5");
    EXPECT_STREQ(e.what(), describe(o).c_str());
  }
}

TEST_P(Isolate, AUserErrorWithoutALocationKeepsItsMessage) {
  Outcome o = run_isolated(
      []() -> std::string {
        user_assert(1 + 1 == 3) << "split: factor must be positive, got 0 (T3 axis 1)";
        return "";
      },
      opts());
  EXPECT_EQ(o.error, Error::User);
  EXPECT_FALSE(o.loc.valid());
  EXPECT_EQ(describe(o), "error: split: factor must be positive, got 0 (T3 axis 1)");
}

TEST_P(Isolate, AnInternalErrorComesBackAsInternal) {
  std::string expected;
  try {
    internal_assert(zero == 1) << "lowering lost T4";
  } catch (const InternalError& e) {
    expected = e.what();
  }
  Outcome o = run_isolated(
      []() -> std::string {
        internal_assert(zero == 1) << "lowering lost T4";
        return "";
      },
      opts());
  EXPECT_EQ(o.error, Error::Internal);
  // Same file, other line: compare what follows the location.
  EXPECT_THAT(o.message, HasSubstr("condition `zero == 1` failed: lowering lost T4"));
  EXPECT_THAT(o.message, HasSubstr("internal error (a bug in schedlab"));
  EXPECT_THAT(expected, HasSubstr("condition `zero == 1` failed: lowering lost T4"));
  EXPECT_THROW(rethrow_error(o), InternalError);
  try {
    rethrow_error(o);
  } catch (const InternalError& e) {
    EXPECT_EQ(e.what(), o.message);
  }
}

TEST_P(Isolate, OtherExceptionsComeBackAsInternalWithTheirWhat) {
  Outcome o =
      run_isolated([]() -> std::string { throw std::out_of_range("vector::at: 7 >= 3"); }, opts());
  EXPECT_EQ(o.error, Error::Internal);
  EXPECT_EQ(describe(o), "vector::at: 7 >= 3");
  Outcome n = run_isolated([]() -> std::string { throw 42; }, opts());
  EXPECT_EQ(n.error, Error::Internal);
  EXPECT_EQ(describe(n), "the isolated work threw an exception not derived from std::exception");
}

TEST_P(Isolate, AnExitIsReportedWithItsStatus) {
  Outcome o = run_isolated(
      []() -> std::string {
        ::_exit(3);
        return "";
      },
      opts());
  EXPECT_EQ(o.status, Status::Failed);
  EXPECT_EQ(o.error, Error::Exit);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(describe(o), "exited with status 3");
  EXPECT_NO_THROW(rethrow_error(o));
  Outcome z = run_isolated(
      []() -> std::string {
        ::_exit(0);
        return "";
      },
      opts());
  EXPECT_EQ(z.error, Error::Exit);
  EXPECT_EQ(describe(z), "the isolated work exited with status 0 before returning a result");
}

// ---- stdout, stderr

TEST_P(Isolate, StdoutIsSharedAndEachByteAppearsOnce) {
  Capture out(STDOUT_FILENO);
  std::printf("before|");  // buffered in the parent when the child is forked
  Outcome o = run_isolated(
      [] {
        std::printf("child|");  // buffered in the child when the work returns
        return std::string("r");
      },
      opts());
  std::printf("after");
  EXPECT_EQ(out.finish(), "before|child|after");
  EXPECT_TRUE(o.ok());
}

TEST_P(Isolate, StderrIsForwardedAndItsTailKept) {
  const std::string text = pattern(100000);
  Options op = opts();
  op.stderr_tail_bytes = 1000;
  Capture err(STDERR_FILENO);
  Outcome o = run_isolated(
      [&] {
        std::fwrite(text.data(), 1, text.size(), stderr);
        return std::string("r");
      },
      op);
  const std::string forwarded = err.finish();
  EXPECT_TRUE(forwarded == text) << forwarded.size() << " bytes forwarded";
  EXPECT_EQ(o.stderr_tail, text.substr(text.size() - 1000));
  EXPECT_EQ(report(o), "ok");  // a child that returned needs no stderr in its report
}

TEST_P(Isolate, StderrIsKeptButNotForwardedWhenAsked) {
  Options op = opts();
  op.forward_stderr = false;
  Capture err(STDERR_FILENO);
  Outcome o = run_isolated(
      [] {
        std::cerr << "only in the tail\n";
        return std::string();
      },
      op);
  EXPECT_EQ(err.finish(), "");
  EXPECT_EQ(o.stderr_tail, "only in the tail\n");
}

// ---- the parent's side: signals, threads

std::atomic<int> usr1_seen{0};

TEST_P(Isolate, SignalsInterruptingTheWaitAreRetried) {
  struct sigaction counting {
  }, old{};
  counting.sa_handler = [](int) { usr1_seen.fetch_add(1); };
  sigemptyset(&counting.sa_mask);
  counting.sa_flags = 0;  // no SA_RESTART: poll, read and waitpid see EINTR
  ::sigaction(SIGUSR1, &counting, &old);
  usr1_seen = 0;
  const std::string big = pattern(4u << 20);
  Outcome o = run_isolated(
      [&] {
        for (int i = 0; i < 200; ++i) ::kill(::getppid(), SIGUSR1);
        return big;
      },
      opts());
  ::sigaction(SIGUSR1, &old, nullptr);
  ASSERT_TRUE(o.ok()) << describe(o);
  EXPECT_TRUE(o.payload == big);
  EXPECT_GT(usr1_seen.load(), 0);
}

TEST_P(Isolate, ABusyMultithreadedParentForksUsableChildren) {
  // Two threads hammer the allocator and a shared FILE (its lock) while we
  // fork; the children allocate and print to the same FILE. glibc resets
  // those locks in a child, so none may hang (which would be a timeout).
  FILE* sink = std::fopen("/dev/null", "w");
  ASSERT_NE(sink, nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int t = 0; t < 2; ++t)
    busy.emplace_back([&] {
      while (!stop) {
        std::vector<std::string> v(64, std::string(256, 'x'));
        std::fprintf(sink, "%zu\n", v.size());
      }
    });
  for (int i = 0; i < 20; ++i) {
    Outcome o = run_isolated(
        [&] {
          std::vector<std::string> v(1000, std::string(1000, 'y'));
          std::fprintf(sink, "%zu\n", v.size());
          return std::to_string(v.size() * v[0].size());
        },
        opts());
    EXPECT_EQ(o.payload, "1000000") << i << ": " << describe(o);
  }
  stop = true;
  for (auto& t : busy) t.join();
  std::fclose(sink);
}

TEST_P(Isolate, ConcurrentCallsFromSeveralThreadsEachGetTheirOwnResult) {
  constexpr int kThreads = 4, kCalls = 5;
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::string want = std::to_string(t) + ":" + std::to_string(i);
        got[t].push_back(run_isolated([&] { return want + pattern(100000 * (t + 1)); }, opts())
                             .payload.substr(0, want.size()));
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kCalls; ++i)
      EXPECT_EQ(got[t][i], std::to_string(t) + ":" + std::to_string(i));
}

}  // namespace
}  // namespace schedlab::isolate
