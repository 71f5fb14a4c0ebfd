// The plugin registry: search path, name -> serving instance, reload by swap.
#include "schedlab/plugin/registry.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "python_file.h"
#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"

namespace schedlab::plugin {

namespace fs = std::filesystem;

std::string builtin_plugin_dir() {
  return base::builtin_plugin_dir();
}

std::vector<std::string> plugin_search_path(const std::vector<std::string>& explicit_dirs) {
  std::vector<std::string> dirs = explicit_dirs;
  if (const char* env = std::getenv("SCHEDLAB_PLUGIN_PATH")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');) {
      if (d.empty()) continue;
      std::error_code ec;
      if (!fs::is_directory(d, ec))
        std::fprintf(stderr, "warning: $SCHEDLAB_PLUGIN_PATH: '%s' is not a directory\n", d.c_str());
      dirs.push_back(d);  // searched all the same: it may appear later (watch)
    }
  }
  if (!builtin_plugin_dir().empty()) dirs.push_back(builtin_plugin_dir());
  return dirs;
}

Registry::Registry(std::vector<std::string> search_path) : search_path_(std::move(search_path)) {}

namespace {
std::atomic<bool> g_keep_mapped{false};

/// One spelling per file, whatever path named it (relative, through a link).
std::string file_id(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}
}  // namespace

void Registry::keep_plugins_mapped_at_destruction(bool keep) { g_keep_mapped = keep; }

Registry::~Registry() {
  if (g_keep_mapped) {
    // Deliberately never released: the mapping lives until the process ends.
    for (auto& [name, e] : entries_)
      for (const auto& p : {e.current, e.previous})
        if (p) new std::shared_ptr<const Plugin>(p);
  }
  // Instances still held elsewhere keep their mapping; only files go.
  if (!shadow_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(shadow_dir_, ec);
  }
}

std::string Registry::next_shadow(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shadow_dir_.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "schedlab-plugins-XXXXXX").string();
    user_assert(mkdtemp(tmpl.data()) != nullptr)
        << "cannot create a shadow directory for plugins under " << fs::temp_directory_path();
    shadow_dir_ = tmpl;
  }
  // A Python heuristic's snapshot keeps its .py name (python_file.h): the
  // loader tells it from a library by that.
  return (fs::path(shadow_dir_) /
          (fs::path(path).stem().string() + "." + std::to_string(++next_shadow_) +
           (is_python_file(path) ? ".py" : ".so")))
      .string();
}

void Registry::load_isolated(std::chrono::milliseconds timeout) {
  isolated_timeout_ = timeout;
}

std::shared_ptr<const Plugin> Registry::load(const std::string& path) {
  if (isolated_timeout_) return load_plugin_isolated(path, next_shadow(path), *isolated_timeout_);
  return load_plugin(path, next_shadow(path));
}

std::shared_ptr<const Plugin> Registry::add(const std::string& path) {
  std::shared_ptr<const Plugin> p = load(path);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(p->name());
  user_assert(it == entries_.end())
      << "duplicate plugin name '" << p->name() << "': '" << path
      << "' cannot be registered under it, it is taken by '" << it->second.path << "'";
  entries_[p->name()] = Entry{path, p, 1, 1, nullptr, 0, file_id(path)};
  return p;
}

std::vector<std::string> Registry::add_directory(const std::string& dir) {
  std::vector<std::string> errors;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return errors;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".so" && e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    const std::string id = file_id(f);
    const uintmax_t size = fs::file_size(f, ec);
    const fs::file_time_type mtime = fs::last_write_time(f, ec);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (std::any_of(entries_.begin(), entries_.end(),
                      [&](const auto& e) { return e.second.file_id == id; }))
        continue;  // loaded already
      auto it = failed_.find(id);
      if (it != failed_.end() && it->second.size == size && it->second.mtime == mtime) {
        errors.push_back(it->second.message);  // unchanged since it failed
        continue;
      }
    }
    try {
      add(f);
    } catch (const UserError& e) {
      errors.push_back(e.what());
      std::lock_guard<std::mutex> lock(mu_);
      failed_[id] = Failed{size, mtime, e.what()};
    }
  }
  return errors;
}

std::vector<std::string> Registry::add_search_path() {
  std::vector<std::string> errors;
  for (const std::string& d : search_path_) {
    auto e = add_directory(d);
    errors.insert(errors.end(), e.begin(), e.end());
  }
  return errors;
}

std::shared_ptr<const Plugin> Registry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.current;
}

std::shared_ptr<const Plugin> Registry::get(const std::string& name) {
  if (auto p = find(name)) return p;
  if (is_python_file(name)) {
    // A Python heuristic (`--plugin my.py`) is named by its file: the one
    // serving that file, else the file registered now.
    const std::string id = file_id(name);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [n, e] : entries_)
        if (e.file_id == id) return e.current;
    }
    return add(name);
  }
  for (const std::string& d : search_path_) {
    fs::path f = fs::path(d) / (name + ".so");
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) continue;
    auto p = add(f.string());
    user_assert(p->name() == name) << "plugin file '" << f.string() << "' names itself '"
                                   << p->name() << "', not '" << name << "'";
    return p;
  }
  // The file need not be named after the plugin: load the whole path. Files
  // that fail to load are skipped here; `schedlab plugins` reports them.
  add_search_path();
  if (auto p = find(name)) return p;
  std::string known, dirs;
  for (const auto& [n, e] : files()) known += (known.empty() ? "" : ", ") + n;
  for (const std::string& d : search_path_) dirs += (dirs.empty() ? "" : ", ") + d;
  user_error << "unknown plugin '" << name << "' (loaded: " << (known.empty() ? "none" : known)
             << "; searched " << (dirs.empty() ? "no directories" : dirs) << ")";
}

std::vector<std::shared_ptr<const Plugin>> Registry::plugins() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const Plugin>> r;
  for (const auto& [n, e] : entries_) r.push_back(e.current);
  return r;
}

std::vector<std::shared_ptr<const Plugin>> Registry::by_priority() const {
  std::vector<std::shared_ptr<const Plugin>> r = plugins();  // by name
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) {
    return a->priority() > b->priority();
  });
  return r;
}

std::vector<std::pair<std::string, std::string>> Registry::files() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> r;
  for (const auto& [n, e] : entries_) r.emplace_back(n, e.path);
  return r;
}

uint64_t Registry::generation(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  return it == entries_.end() ? 0 : it->second.generation;
}

ReloadResult Registry::reload(const std::string& name) {
  ReloadResult r;
  r.name = name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      r.message = "no plugin named '" + name + "' is registered";
      return r;
    }
    r.path = it->second.path;
    r.plugin = it->second.current;
    r.generation = it->second.generation;
  }
  std::shared_ptr<const Plugin> fresh;
  try {
    fresh = load(r.path);
    user_assert(fresh->name() == name) << "'" << r.path << "' now names itself '" << fresh->name()
                                       << "', not '" << name << "'; a reload must keep the name";
  } catch (const std::exception& e) {
    // Whatever went wrong (the host's own errors included), the last good
    // version keeps serving.
    r.message = e.what();
    return r;
  }
  std::shared_ptr<const Plugin> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = entries_[name];
    // The replaced version stays loaded as the rollback target; the one
    // that held that place before is released below, outside the lock.
    old = std::move(e.previous);
    e.previous = std::move(e.current);
    e.previous_generation = e.generation;
    e.current = fresh;
    r.generation = e.generation = ++e.latest;
  }
  r.ok = true;
  r.plugin = std::move(fresh);
  return r;
}

ReloadResult Registry::rollback(const std::string& name) {
  ReloadResult r;
  r.name = name;
  std::shared_ptr<const Plugin> abandoned;  // released after the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    r.message = "no plugin named '" + name + "' is registered";
    return r;
  }
  Entry& e = it->second;
  r.path = e.path;
  r.plugin = e.current;
  r.generation = e.generation;
  if (!e.previous) {
    r.message = "no earlier version of '" + name + "' is loaded to roll back to (generation " +
                std::to_string(e.generation) + " serves)";
    return r;
  }
  abandoned = std::move(e.current);
  r.rolled_back_from = e.generation;
  e.current = std::move(e.previous);
  e.generation = e.previous_generation;
  e.previous_generation = 0;
  r.ok = true;
  r.plugin = e.current;
  r.generation = e.generation;
  return r;
}

}  // namespace schedlab::plugin
