// The reload watcher: inotify on the plugins' directories, polling as the
// fallback. It decides *when* to reload; Registry::reload does the rest.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"

namespace schedlab::plugin {

namespace fs = std::filesystem;

/// How many polling intervals a quiet but incomplete plugin file is given to
/// be finished before the watcher reloads it and reports the failure.
constexpr int kIncompleteIntervals = 10;

void print_reload(const ReloadResult& r) {
  if (r.ok)
    std::cerr << "plugin '" << r.name << "': reloaded " << r.path << " (version "
              << r.plugin->version() << ", generation " << r.generation << ")\n";
  else
    std::cerr << "plugin '" << r.name << "': reload of " << r.path << " failed, keeping "
              << (r.plugin ? "version " + r.plugin->version()
                           : std::string("the last good version"))
              << " (generation " << r.generation << "): " << r.message << "\n";
}

/// What polling compares: a file's size and modification time.
struct Watcher::Stamp {
  off_t size = -1;
  struct timespec mtime {};
  bool operator==(const Stamp& o) const {
    return size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

Watcher::Stamp Watcher::stamp(const std::string& path) {
  Stamp s;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    s.size = st.st_size;
    s.mtime = st.st_mtim;
  }
  return s;
}

Watcher::Watcher(Registry& registry, Callback on_reload, Mode mode,
                 std::chrono::milliseconds settle)
    : registry_(registry), on_reload_(std::move(on_reload)), mode_(mode), settle_(settle) {
  if (mode_ != Mode::Poll) {
    inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (inotify_fd_ < 0 || stop_fd_ < 0) {
      if (inotify_fd_ >= 0) close(inotify_fd_);
      if (stop_fd_ >= 0) close(stop_fd_);
      inotify_fd_ = stop_fd_ = -1;
      mode_ = Mode::Poll;
    } else {
      mode_ = Mode::Inotify;
    }
  }
  // Directories are watched before the thread starts, so that a change made
  // right after construction is never missed.
  if (mode_ == Mode::Inotify) {
    for (const auto& [name, path] : registry_.files())
      inotify_add_watch(inotify_fd_, fs::path(path).parent_path().c_str(),
                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE);
    thread_ = std::thread([this] { run_inotify(); });
  } else {
    // Likewise the stamps a change is measured against.
    std::map<std::string, Stamp> served;
    for (const auto& [name, path] : registry_.files()) served[name] = stamp(path);
    thread_ = std::thread([this, served] { run_poll(served); });
  }
}

Watcher::~Watcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(stop_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void Watcher::report(const ReloadResult& r) {
  try {
    if (on_reload_)
      on_reload_(r);
    else
      print_reload(r);
  } catch (...) {
    // A failing callback must not take the watcher down.
  }
}

namespace {

/// Lexically normal absolute form, for matching event names against files.
std::string normal(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal().string();
}

}  // namespace

void Watcher::run_inotify() {
  std::map<int, fs::path> dirs;  // watch descriptor -> directory
  for (const auto& [name, path] : registry_.files()) {
    fs::path dir = fs::path(path).parent_path();
    int wd = inotify_add_watch(inotify_fd_, dir.c_str(),
                               IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE);
    if (wd >= 0) dirs[wd] = dir;
  }
  // A name is reloaded once a writer has closed it (or renamed a finished
  // file over it) and no further event has come for `settle`.
  std::set<std::string> closed;
  alignas(inotify_event) char buf[8192];
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int timeout = closed.empty() ? -1 : static_cast<int>(settle_.count());
    int n = poll(fds, 2, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) return;
    if (n > 0 && (fds[0].revents & POLLIN)) {
      std::map<std::string, std::string> by_path;  // normal path -> name
      for (const auto& [name, path] : registry_.files()) by_path[normal(path)] = name;
      ssize_t len;
      while ((len = read(inotify_fd_, buf, sizeof buf)) > 0) {
        for (char* p = buf; p < buf + len;) {
          auto* ev = reinterpret_cast<inotify_event*>(p);
          p += sizeof(inotify_event) + ev->len;
          auto d = dirs.find(ev->wd);
          if (ev->len == 0 || d == dirs.end()) continue;
          auto it = by_path.find(normal(d->second / ev->name));
          if (it == by_path.end()) continue;
          if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) closed.insert(it->second);
        }
      }
      continue;  // any event restarts the quiet period
    }
    for (const std::string& name : closed) report(registry_.reload(name));
    closed.clear();
  }
}

void Watcher::run_poll(std::map<std::string, Stamp> served) {
  std::map<std::string, Stamp> seen = served;  // by name
  std::map<std::string, int> unfinished;       // intervals an incomplete file stayed quiet
  auto interval = std::max(settle_, std::chrono::milliseconds(10));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
    lock.unlock();
    for (const auto& [name, path] : registry_.files()) {
      Stamp now = stamp(path);
      if (!served.count(name)) served[name] = seen[name] = now;
      // Changed since it was served, and the same size and mtime as one
      // interval ago: the writer looks done. Polling cannot see the close
      // that inotify waits for, so a writer that stalls for an interval (a
      // linker on a loaded machine, cp between its truncate and its write)
      // looks done too: a file that is not yet a complete ELF image is
      // given kIncompleteIntervals more before it is reloaded, and its
      // failure reported (its writer stopped).
      if (!(now == seen[name])) unfinished.erase(name);
      bool quiet = !(now == served[name]) && now == seen[name] && now.size >= 0;
      if (quiet && !incomplete_elf(path).empty() && ++unfinished[name] <= kIncompleteIntervals)
        quiet = false;
      if (quiet) {
        unfinished.erase(name);
        served[name] = now;
        report(registry_.reload(name));
      }
      seen[name] = now;
    }
    lock.lock();
  }
}

}  // namespace schedlab::plugin
