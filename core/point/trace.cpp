// The stage trace: see schedlab/point/trace.h.
#include "schedlab/point/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace schedlab::point {

namespace {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Pending: return "pending";
    case Verdict::Rejected: return "rejected";
    case Verdict::Scheduled: return "scheduled";
    case Verdict::Ok: return "ok";
    case Verdict::WrongResult: return "wrong_result";
    case Verdict::Racy: return "racy";
  }
  return "?";
}

}  // namespace

void trace_event(const Event& e, const Point& p) {
  const char* path = std::getenv("SCHEDLAB_POINT_TRACE");
  if (path == nullptr || *path == '\0' || e.kernel != Event::kWhole) return;
  const sweep::BoundFusion& bf = p.fusion();
  nlohmann::json j = {{"pid", static_cast<int64_t>(getpid())},
                      {"fusion", bf.def.fusion ? bf.def.fusion->name() : ""},
                      {"sizes", bf.def.fusion ? sweep::sizes_str(*bf.def.fusion, bf.sizes) : ""},
                      {"scheduler", describe(p.scheduler())},
                      {"stage", stage_name(e.stage)},
                      {"event", e.begin ? "begin" : "end"},
                      // wall-clock seconds, so that the events of a sweep's
                      // workers and of its host line up in one timeline
                      {"t", std::chrono::duration<double>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count()}};
  const Result& r = p.result();
  if (!e.begin && e.stage == Stage::Lower) {
    std::vector<std::string> hashes;
    for (const sweep::SegmentKernel& k : r.kernels) hashes.push_back(k.prepared.source.hash());
    j["kernels"] = hashes;
  }
  if (!e.begin && e.stage == Stage::Validate && r.validation) {
    j["verdict"] = verdict_name(r.verdict);
    j["max_abs_error"] = r.validation->max_abs_error;
    j["max_ratio"] = r.validation->max_ratio;
  }
  const std::string line = j.dump() + "\n";
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;  // a trace is an aid: an unwritable one is not the point's failure
  [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
  close(fd);
}

}  // namespace schedlab::point
