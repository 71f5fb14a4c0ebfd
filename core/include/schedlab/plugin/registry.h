// schedlab/plugin: the registry of loaded plugins, the search path, and hot
// reload (docs/plugins.md, "Hot reload").
//
// Owns: which plugin serves each name, the shadow directory that loaded
// copies live in, and the watcher that reloads a plugin when its file changes.
// May depend on: schedlab/plugin/host.h, schedlab/base.
// Invariants: every plugin is mapped from a private shadow copy, so its file
// may be rewritten at any time. A reload swaps the registry's shared_ptr
// under a lock: callers holding the old instance keep using it until they
// release it, and a failed reload leaves the last good version serving.
// The version a reload replaced stays loaded until the next reload, so a
// caller that finds the new one bad can roll back to it (rollback(), as
// cr.h does). Nothing here lets an error escape a reload or a rollback: it
// becomes a ReloadResult.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "schedlab/plugin/host.h"

namespace schedlab::plugin {

/// The directory the build puts the built-in plugins in.
std::string builtin_plugin_dir();
/// Where plugins are looked for, in order: `explicit_dirs`, then the
/// colon-separated $SCHEDLAB_PLUGIN_PATH, then builtin_plugin_dir().
std::vector<std::string> plugin_search_path(const std::vector<std::string>& explicit_dirs = {});

/// What one reload (or rollback) attempt did.
struct ReloadResult {
  std::string name;                      ///< the plugin's registry name
  std::string path;                      ///< its file
  bool ok = false;                       ///< the new (rollback: the earlier) version serves now
  std::string message;                   ///< why it failed; empty when ok
  uint64_t generation = 0;               ///< the version serving after the attempt
  std::shared_ptr<const Plugin> plugin;  ///< the version serving after the attempt
  uint64_t rolled_back_from = 0;         ///< rollback: the generation abandoned
};

class Registry {
 public:
  /// `search_path`: directories for get(name) to look in when the name is
  /// not loaded yet (see plugin_search_path).
  explicit Registry(std::vector<std::string> search_path = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Loads the plugin at `path` and registers it under its own name.
  /// user_error if it does not load, or if that name is taken (naming both files).
  std::shared_ptr<const Plugin> add(const std::string& path);
  /// Loads every *.so of `dir` (a missing directory is skipped). Returns one
  /// message per file that failed; the others are registered. Each file is
  /// loaded once: one already registered (by add, get or an earlier
  /// directory load, under any spelling of its path) is skipped, and one
  /// that failed is reported again with its first message until it changes
  /// (size or mtime), so loading a directory twice changes nothing.
  std::vector<std::string> add_directory(const std::string& dir);
  /// add_directory for each search-path directory: the same result, and no
  /// plugin loaded twice, however often it is called.
  std::vector<std::string> add_search_path();

  /// The plugin serving `name`. When it is not registered yet: the first
  /// <dir>/<name>.so on the search path, else every plugin on the path is
  /// loaded and looked through. user_error listing what is known otherwise.
  /// A path ending in .py is a Python heuristic, named by its file: the
  /// plugin serving that file, else the file add()ed.
  std::shared_ptr<const Plugin> get(const std::string& name);
  /// The plugin serving `name`, or null.
  std::shared_ptr<const Plugin> find(const std::string& name) const;
  /// Every registered plugin, by name.
  std::vector<std::shared_ptr<const Plugin>> plugins() const;
  /// Every registered plugin in priority order (Plugin::priority(): higher
  /// first, equal priorities by name): the order in which the segmenter
  /// offers segments, to those that volunteer (Plugin::volunteers()).
  std::vector<std::shared_ptr<const Plugin>> by_priority() const;
  /// (name, file) of every registered plugin.
  std::vector<std::pair<std::string, std::string>> files() const;

  /// Reloads `name` from its file: copy to a new shadow, load, negotiate,
  /// validate, then swap it in. Never throws for the plugin's sake: on any
  /// failure the current version stays and the result says why. The new
  /// version must keep the name.
  ReloadResult reload(const std::string& name);
  /// Puts back the version the last successful reload of `name` replaced
  /// (cr.h's rollback: the caller found the new one crashing, hanging or
  /// wrong where the earlier one passed). It serves, under its own
  /// generation, until the next reload; a second rollback in a row has
  /// nothing to go back to and fails (ok false, the reason in message).
  ReloadResult rollback(const std::string& name);
  /// The generation serving `name`: 1 after add, then each successful reload
  /// takes the next number; a rollback restores the earlier one's. 0 when
  /// `name` is not registered.
  uint64_t generation(const std::string& name) const;

  /// From now on, load every plugin (add, get, reload) in a forked child
  /// (load_plugin_isolated, under `timeout`): the registry then serves
  /// descriptions, and no plugin code runs in this process. For `--isolate`.
  void load_isolated(std::chrono::milliseconds timeout);
  /// load_isolated()'s limit; nullopt when plugins load in this process.
  std::optional<std::chrono::milliseconds> isolated_timeout() const { return isolated_timeout_; }

  /// For a program about to exit (the CLI sets it once, in main): registries
  /// destroyed from then on leave the plugins they serve mapped. A plugin may
  /// have left a thread running; unmapping its code under that thread would
  /// crash the host after every record is written. The process's exit ends
  /// the thread instead. Off by default (tests, long-lived hosts, reloads).
  static void keep_plugins_mapped_at_destruction(bool keep);

 private:
  struct Entry {
    std::string path;                        ///< the file being served
    std::shared_ptr<const Plugin> current;   ///< what get() returns
    uint64_t generation = 0;                 ///< current's generation
    uint64_t latest = 0;                     ///< the highest generation handed out
    std::shared_ptr<const Plugin> previous;  ///< what the last reload replaced, or null
    uint64_t previous_generation = 0;        ///< previous's generation
    std::string file_id;                     ///< path's canonical form (add_directory)
  };
  /// A file add_directory failed to load: its size and mtime then, and why.
  struct Failed {
    uintmax_t size = 0;
    std::filesystem::file_time_type mtime;
    std::string message;
  };
  std::string next_shadow(const std::string& path);
  /// load_plugin, or load_plugin_isolated after load_isolated().
  std::shared_ptr<const Plugin> load(const std::string& path);
  std::optional<std::chrono::milliseconds> isolated_timeout_;

  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, Failed> failed_;  ///< by file_id
  std::vector<std::string> search_path_;
  std::string shadow_dir_;  ///< created on first use, removed with the registry
  uint64_t next_shadow_ = 0;
};

/// Watches the files of the plugins registered when it starts (their
/// directories, for inotify) and reloads a plugin when its file changes:
/// inotify on the containing directories (a rewrite, or a new file renamed
/// over it), or polling when inotify is unavailable or asked for. A change
/// is acted on once the file is quiet (no event, or the same size and mtime,
/// for `settle`); polling, which cannot see the writer close the file, gives
/// a quiet file that is not yet a complete ELF image (incomplete_elf) ten
/// more intervals to be finished. reload() then checks the copy is a
/// complete ELF image before loading it. Every attempt is reported to `on_reload`, on the
/// watcher's thread; the default prints failures and successes to stderr.
class Watcher {
 public:
  enum class Mode { Auto, Inotify, Poll };
  using Callback = std::function<void(const ReloadResult&)>;
  explicit Watcher(Registry& registry, Callback on_reload = {}, Mode mode = Mode::Auto,
                   std::chrono::milliseconds settle = std::chrono::milliseconds(50));
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;
  /// The mechanism in use (Inotify or Poll).
  Mode mode() const { return mode_; }

 private:
  struct Stamp;  ///< a file's size and mtime, for polling
  static Stamp stamp(const std::string& path);
  void run_inotify();
  void run_poll(std::map<std::string, Stamp> served);
  void report(const ReloadResult& r);

  Registry& registry_;
  Callback on_reload_;
  Mode mode_;
  std::chrono::milliseconds settle_;
  int inotify_fd_ = -1;
  int stop_fd_ = -1;  ///< eventfd that wakes the inotify loop to stop
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

/// The default Watcher callback: one line on stderr per attempt.
void print_reload(const ReloadResult& r);

}  // namespace schedlab::plugin
