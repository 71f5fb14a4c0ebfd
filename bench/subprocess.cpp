// Running other programs: see subprocess.h.
#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "schedlab/base/error.h"
#include "schedlab/runtime/communicator.h"

extern char** environ;

namespace schedlab::cli {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const std::string& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

int exit_code(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 255;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
  internal_assert(!argv.empty()) << "run_process: no program";
  int out[2], err[2];
  internal_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0)
      << "pipe: " << std::strerror(errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  std::vector<char*> args = c_argv(argv);
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    user_error << "cannot run " << argv[0] << ": " << std::strerror(rc);
  }
  ProcessResult r;
  // Both pipes at once: a program that fills one while we block on the
  // other would never finish.
  std::array<pollfd, 2> fds = {pollfd{out[0], POLLIN, 0}, pollfd{err[0], POLLIN, 0}};
  std::array<std::string*, 2> into = {&r.out, &r.err};
  for (int open = 2; open > 0;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  r.status = wait_process(pid);
  return r;
}

pid_t start_process(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env, const std::string& log) {
  internal_assert(!argv.empty()) << "start_process: no program";
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (!env.count(var.substr(0, var.find('=')))) vars.push_back(var);
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  std::vector<char*> args = c_argv(argv), envp = c_argv(vars);
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  user_assert(rc == 0) << "cannot run " << argv[0] << ": " << std::strerror(rc);
  return pid;
}

int wait_process(pid_t pid) {
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0)
    if (errno != EINTR) return 255;
  return exit_code(wstatus);
}

int relaunch_as_ranks(int ranks, const std::string& what) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> self;
  for (std::string a; std::getline(in, a, '\0');) self.push_back(a);
  internal_assert(!self.empty()) << what << ": cannot read /proc/self/cmdline";
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) self[0] = exe.string();
  const std::vector<std::string> argv = runtime::launcher_command(ranks, self);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  user_assert(rc == 0) << what << ": cannot start the launcher '" << argv[0]
                       << "': " << std::strerror(rc)
                       << " (install Open MPI's mpirun, or start schedlab under mpirun or srun)";
  return wait_process(pid);
}

}  // namespace schedlab::cli
