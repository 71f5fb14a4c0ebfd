// script: the built-in plugin that schedules with a schedule script
// (configs/schedules/*.sched, docs/schedule-scripts.md): the zero-compile
// way to try a schedule, and the way to sweep a hand schedule's
// {placeholders}. Written only against the plugin API.
//
// A plugin links nothing from libschedlab, so it cannot run the script
// language itself; ABI 1.1's host entry apply_schedule_script parses the file
// with the frontend's parser and applies it with the frontend's applier,
// exactly as `schedlab show --schedule` does. Every error of the script comes
// back as a user error with its file:line:col, unchanged.
//
// Parameters (both strings, ABI 1.1):
//   script  which script. A name that is an existing file (relative to the
//           working directory) or that contains a '/' is a path. Any other
//           name is looked up, as NAME then NAME.sched, in each directory of
//           $SCHEDLAB_SCHEDULE_PATH (colon-separated), then in the source
//           tree's configs/schedules (SCHEDLAB_SCHEDULE_DIR, compiled in as
//           the CLI compiles in configs/fusions). Default "": no script, and
//           can_schedule says so.
//   args    values for the script's {placeholders}, "k=v,k=v" (integers),
//           overriding its params(...) defaults. A name the script does not
//           use or declare is an error naming the script's placeholders.
// There is nothing to choose: compute_params keeps the given values, and a
// script's own defaults are its params(...) line.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace pa = schedlab::plugin_api;
namespace fs = std::filesystem;

#ifndef SCHEDLAB_SCHEDULE_DIR
#error "SCHEDLAB_SCHEDULE_DIR: the source tree's configs/schedules (plugins/script/CMakeLists.txt)"
#endif

namespace {

/// Where script names are looked up, in order.
std::vector<std::string> schedule_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SCHEDLAB_SCHEDULE_PATH")) {
    std::string all = env;
    for (size_t at = 0; at <= all.size();) {
      size_t colon = std::min(all.find(':', at), all.size());
      if (colon > at) dirs.push_back(all.substr(at, colon - at));
      at = colon + 1;
    }
  }
  dirs.emplace_back(SCHEDLAB_SCHEDULE_DIR);
  return dirs;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// The file `script` names, or "" with `why` set.
std::string resolve(const std::string& script, std::string& why) {
  if (script.empty()) {
    why =
        "no schedule script given; set one with --set script=NAME_OR_PATH (a name in "
        "configs/schedules, e.g. softmax_block.sched)";
    return "";
  }
  if (is_file(script)) return script;
  if (script.find('/') != std::string::npos) {
    why = "schedule script '" + script + "' does not exist or is not a regular file";
    return "";
  }
  std::string searched;
  for (const std::string& dir : schedule_dirs()) {
    for (const std::string& name : {script, script + ".sched"})
      if (is_file(fs::path(dir) / name)) return (fs::path(dir) / name).string();
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  why = "no schedule script '" + script + "' in the working directory or in " + searched +
        " (tried '" + script + "' and '" + script + ".sched'; $SCHEDLAB_SCHEDULE_PATH adds " +
        "directories)";
  return "";
}

}  // namespace

class Script : public pa::Plugin {
 public:
  std::string name() const override { return "script"; }
  /// It needs a schedule text, so it cannot volunteer for a segment.
  int priority() const override { return SCHEDLAB_PRIORITY_NEVER_OFFERED; }
  std::string version() const override { return "1.0"; }
  std::string description() const override {
    return "a schedule script (configs/schedules/*.sched) applied by the host's parser";
  }
  std::vector<pa::Param> params() const override {
    return {
        pa::Param::string("script", "",
                          "a path, or a name in $SCHEDLAB_SCHEDULE_PATH or configs/schedules"),
        pa::Param::string("args", "", "{placeholder} values k=v,k=v over the script's params()"),
    };
  }

  pa::Verdict can_schedule(pa::Segment&, const pa::Params& p) override {
    std::string why;
    if (resolve(p.string("script"), why).empty()) return pa::Verdict::no(why);
    return pa::Verdict::yes();
  }

  void schedule(pa::Segment& seg, const pa::Params& p) override {
    std::string why;
    std::string path = resolve(p.string("script"), why);
    if (path.empty()) throw pa::Error(SCHEDLAB_ERR_USER, "script: " + why);
    seg.apply_schedule_script(path, p.string("args"));
  }
};

SCHEDLAB_PLUGIN(Script)
