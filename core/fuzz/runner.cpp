// Running one fuzz run and classifying how it ended (schedlab/fuzz/fuzz.h).
//
// A run is `schedlab exec` in a forked child: the same point (core/point:
// a schedule script or the segmenter), the same generated inputs (seed 1),
// the CPU backend.
// The child reports through isolate's frame: a payload line for the runs
// that finished ("validated", "wrong", "racy", or "invalid" for a text that
// does not parse, which only the minimiser's candidates can be), a thrown
// UserError (refused; its message prefixed with the stage that raised it:
// schedule, lower, run; segment or plugin schedule on the segmenter path),
// or an InternalError. A host-compiler failure on generated code is
// schedlab's bug, never the user's, so it is rethrown as internal.
#include <fmt/core.h>

#include <cstdlib>
#include <optional>

#include "schedlab/base/error.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/point/point.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::fuzz {

std::string_view class_name(RunClass c) {
  switch (c) {
    case RunClass::Validated: return "validated";
    case RunClass::Refused: return "refused";
    case RunClass::Unscheduled: return "unscheduled";
    case RunClass::Wrong: return "wrong";
    case RunClass::Racy: return "racy";
    case RunClass::Crashed: return "crashed";
    case RunClass::Internal: return "internal";
    case RunClass::Timeout: return "timeout";
  }
  return "?";
}

bool is_failure(RunClass c) {
  return c == RunClass::Wrong || c == RunClass::Racy || c == RunClass::Crashed ||
         c == RunClass::Internal || c == RunClass::Timeout;
}

bool is_reported(RunClass c) { return is_failure(c) || c == RunClass::Unscheduled; }

namespace {

// The names the texts carry in diagnostics (and in kept files' READMEs).
constexpr const char* kFusionPath = "fuzz.yaml";
constexpr const char* kSchedulePath = "fuzz.sched";

runtime::KernelOptions kernel_options(const RunOptions& o) {
  return {o.dynamic_sizes, o.fast_math, true, o.native_half_math};
}

/// The fuzzer's name of the stage a point failed in: the stage's, except
/// that the segmenter both segments and schedules (only its own refusal,
/// "no scheduler accepts", is the segmenter's; the rest is a plugin's
/// schedule), and a sanitized run is a run.
std::string stage_of(const point::Point& p, const UserError& e) {
  switch (p.stage()) {
    case point::Stage::Schedule:
      if (!std::holds_alternative<point::SegmenterRef>(p.scheduler())) return "schedule";
      return e.message().rfind("no scheduler accepts", 0) == 0 ? "segment" : "plugin schedule";
    case point::Stage::Sanitize:
      return "run";
    default:
      return std::string(point::stage_name(p.stage()));
  }
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// A validated run, and its mutant when the payload names one
/// ("<killed|survived|unchanged>\n<line>").
RunOutcome validated(std::string rest) {
  RunOutcome r;
  if (rest.rfind("ratio ", 0) == 0) {  // "ratio R\tWHERE\n"
    const std::string line = first_line(rest);
    const size_t tab = line.find('\t');
    r.max_ratio = std::strtod(line.c_str() + 6, nullptr);
    r.max_ratio_at = tab == std::string::npos ? "" : line.substr(tab + 1);
    rest = rest.size() > line.size() ? rest.substr(line.size() + 1) : "";
  }
  const std::string what = first_line(rest);
  if (what.empty()) return r;
  r.mutant = what == "killed"     ? Mutant::Killed
             : what == "survived" ? Mutant::Survived
                                  : Mutant::Unchanged;
  r.mutant_line = rest.size() > what.size() ? first_line(rest.substr(what.size() + 1)) : "";
  return r;
}

}  // namespace

std::string run_here(const std::string& fusion_text, const std::optional<std::string>& schedule,
                     const RunOptions& o) {
  sweep::BoundFusion bf;
  frontend::FusionDefinition plain;
  try {
    bf.path = kFusionPath;
    bf.def = frontend::parse_fusion_text(fusion_text, kFusionPath);
    bf.sizes = frontend::bind_sizes(bf.def, {});
    ir::verify(*bf.def.fusion);
    // The reference evaluates an unscheduled copy (sweep/pipeline/pipeline.h).
    plain = frontend::parse_fusion_text(fusion_text, kFusionPath);
  } catch (const UserError& e) {
    return "invalid\n" + std::string(e.what());
  }
  std::shared_ptr<const point::Reference> reference =
      point::make_reference(std::move(plain), bf.sizes, o.input_seed, o.fast_math);
  auto backend = sweep::make_backend("cpu", o.cache_dir);
  // The same point as `exec` (core/point): a script, or the segmenter.
  point::SchedulerRef ref = point::SegmenterRef{o.plugins, nullptr};
  if (schedule) ref = point::ScriptRef{kSchedulePath, *schedule, {}};
  point::Options po;
  po.kernel = kernel_options(o);
  po.sanitize = o.sanitize;
  po.sanitize_name = "";  // the kernel's own name in findings
  po.cache_dir = o.cache_dir;
  const ir::SizeBindings sizes = bf.sizes;
  point::Point p(std::move(bf), std::move(ref), backend.get(), std::move(po));
  p.set_reference(reference);
  try {
    p.run(point::Stage::Schedule, point::Stage::Validate);
  } catch (const UserError& e) {
    // A host-compiler failure on generated code is schedlab's bug.
    if (p.stage() == point::Stage::Compile)
      throw InternalError("the generated kernel does not compile (a codegen bug): " +
                          std::string(e.what()));
    throw UserError(e.loc(), stage_of(p, e) + ": " + e.message());
  }
  std::vector<ref::HostTensor> got = p.result().outputs;
  const std::vector<ref::HostTensor>& want = reference->want;
  const ir::Fusion& plain_fusion = *reference->plain;
  // A finding decides first: the sanitizer's run is deterministic, while a
  // race may or may not show in the outputs.
  if (!p.result().findings.empty()) {
    const sweep::Validation v = sweep::validate(plain_fusion, sizes, got, want);
    return "racy\n" + p.result().findings.front().message() +
           (v.ok ? "" : " (and validation failed: " + v.summary() + ")");
  }
  const sweep::Validation& v = *p.result().validation;
  if (!v.ok) return "wrong\n" + v.summary();
  const std::string ok = fmt::format("validated\nratio {}\t{}\n", v.max_ratio, v.max_ratio_at);
  if (!o.mutation) return ok;
  // The same steps as `exec --mutate`: mutate the validated outputs, validate again.
  const sweep::MutationEffect e = sweep::mutate(*o.mutation, got, want);
  if (e.noop()) {
    std::string why;
    for (size_t i = 0; i < e.outputs.size(); ++i)
      why += fmt::format("{}output {}: {}", i ? "; " : "", i, e.outputs[i]);
    return ok + "unchanged\nmutation " + o.mutation->str() + " changes nothing: " + why;
  }
  const sweep::MutantVerdict m =
      sweep::judge_mutant(*o.mutation, sweep::validate(plain_fusion, sizes, got, want));
  return ok + (m.killed ? "killed\n" : "survived\n") + m.line;
}

RunOutcome classify(const isolate::Outcome& o, Path path) {
  using S = isolate::Outcome::Status;
  using E = isolate::Outcome::Error;
  switch (o.status) {
    case S::Ok: {
      const size_t nl = o.payload.find('\n');
      const std::string head = o.payload.substr(0, nl);
      const std::string rest = nl == std::string::npos ? "" : o.payload.substr(nl + 1);
      if (head == "validated") return validated(rest);
      if (head == "wrong") return {RunClass::Wrong, first_line(rest)};
      if (head == "racy") return {RunClass::Racy, first_line(rest)};
      if (head == "invalid") return {RunClass::Refused, "invalid fusion text: " + first_line(rest)};
      return {RunClass::Internal, "the fuzz child returned '" + first_line(o.payload) + "'"};
    }
    case S::Crashed:
    case S::Timeout:
      return {o.status == S::Crashed ? RunClass::Crashed : RunClass::Timeout,
              isolate::describe(o)};
    case S::Failed:
      break;
  }
  switch (o.error) {
    case E::User:
      return {path == Path::Segmenter ? RunClass::Unscheduled : RunClass::Refused,
              first_line(isolate::describe(o))};
    case E::Exit:
      if (o.exit_code != 3) return {RunClass::Crashed, isolate::describe(o)};
      [[fallthrough]];
    case E::Internal:
    case E::None:
      break;
  }
  return {RunClass::Internal, first_line(isolate::describe(o))};
}

RunOutcome run_isolated(const std::string& fusion_text, const std::optional<std::string>& schedule,
                        const RunOptions& options) {
  isolate::Options io;
  io.timeout = options.timeout;
  io.forward_stderr = false;  // plugin logs and compiler chatter stay in the tail
  isolate::Outcome out =
      isolate::run_isolated([&] { return run_here(fusion_text, schedule, options); }, io);
  return classify(out, schedule ? Path::Schedule : Path::Segmenter);
}

}  // namespace schedlab::fuzz
