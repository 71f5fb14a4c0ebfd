// One writer per results file; previous files kept (results_lock.h).
#include "schedlab/report/results_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "schedlab/base/error.h"

namespace schedlab::report {

namespace fs = std::filesystem;

ResultsLock::ResultsLock(const std::string& results_path) : lock_path_(results_path + ".lock") {
  // The lock lives beside the results: their directory may not exist yet.
  if (fs::path dir = fs::path(results_path).parent_path(); !dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
  }
  fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  user_assert(fd_ >= 0) << "cannot open the lock file '" << lock_path_
                        << "' of results file '" << results_path
                        << "': " << std::strerror(errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      user_error << "results file '" << results_path
                 << "' is being written by another schedlab process"
                 << (holder.empty() ? "" : " (pid " + holder + ")")
                 << "; expected one writer per results file: wait for it to finish, or give "
                    "this run another -o";
    user_error << "cannot lock results file '" << results_path << "' (" << lock_path_
               << "): " << std::strerror(err);
  }
  // Who holds it, for the next writer's message.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only a courtesy to the next writer's message.
  }
}

ResultsLock::~ResultsLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string keep_previous(const std::string& path) {
  const std::string prev = path + ".prev";
  std::error_code ec;
  std::string older;
  if (fs::exists(prev, ec)) {
    // Only a file is ours to move: never something a user put there.
    user_assert(fs::is_regular_file(prev, ec))
        << "run: cannot keep the previous results '" << path << "' as '" << prev
        << "': that is not a results file (a directory or a special file); expected a file "
           "or nothing there (move it, or use --resume)";
    for (int n = 1;; ++n) {
      older = prev + "." + std::to_string(n);
      if (!fs::exists(older, ec)) break;
    }
    fs::rename(prev, older, ec);
    user_assert(!ec) << "run: cannot keep the earlier previous results '" << prev << "' as '"
                     << older << "': " << ec.message()
                     << "; expected to be able to rename it (remove it, or use --resume)";
  }
  fs::rename(path, prev, ec);
  user_assert(!ec) << "run: cannot keep the previous results '" << path << "' as '" << prev
                   << "': " << ec.message()
                   << "; expected to be able to replace that file (remove it, or use --resume)";
  return older;
}

}  // namespace schedlab::report
