// Running one fuzz run and classifying how it ended (schedlab/fuzz/fuzz.h).
//
// A run is `schedlab exec` in a forked child: the same pipeline steps
// (sweep/pipeline.h), the same generated inputs (seed 1), the CPU backend.
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
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/runtime/sanitizer.h"
#include "schedlab/sweep/pipeline.h"

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

/// The one place --sanitize reaches: the kernel compiled with the access
/// trace and run once more under the emulation sanitizer
/// (runtime/sanitizer.h); its report, "" when clean. `stage` as in run_kernels.
std::string sanitize(runtime::Backend& backend, const runtime::PreparedKernel& p,
                     const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes,
                     std::string& stage) {
  stage = "compile";
  auto traced = backend.compile(runtime::traced_source(p));
  stage = "run";
  runtime::Sanitizer sanitizer;
  runtime::execute_traced(backend, *traced, p, inputs, sizes, sanitizer);
  return sanitizer.report();
}

runtime::KernelOptions kernel_options(const RunOptions& o) {
  return {o.dynamic_sizes, o.fast_math};
}

/// The outputs of the scheduled fusion (or of its segments) on the CPU
/// backend; with options.sanitize, the sanitizer's report of the scheduled
/// kernel, or of every segment's kernel, in *findings.
std::vector<ref::HostTensor> run_kernels(sweep::BoundFusion& bf,
                                         const std::optional<std::string>& schedule,
                                         const std::vector<ref::HostTensor>& inputs,
                                         const RunOptions& o, std::string& stage,
                                         std::string* findings) {
  auto backend = sweep::make_backend("cpu", o.cache_dir);
  if (schedule) {
    stage = "schedule";
    frontend::apply_schedule_text(*schedule, kSchedulePath, bf.def, {});
    stage = "lower";
    runtime::PreparedKernel p =
        runtime::prepare(*bf.def.fusion, bf.sizes, {}, kernel_options(o));
    stage = "compile";
    auto compiled = backend->compile(p.source);
    stage = "run";
    auto outputs = runtime::execute(*backend, *compiled, p, inputs, bf.sizes);
    if (o.sanitize) *findings = sanitize(*backend, p, inputs, bf.sizes, stage);
    return outputs;
  }
  stage = "segment";
  sweep::SegmentedFusion sf = sweep::segment_and_schedule(bf, o.plugins, std::nullopt);
  // Lowered once on its own first, so that a failure in compile_segments is
  // the compiler's.
  stage = "lower";
  for (const segment::Segment& seg : sf.segmentation.segments)
    runtime::prepare(*seg.fusion.fusion, bf.sizes, {}, kernel_options(o));
  stage = "compile";
  std::vector<sweep::SegmentKernel> kernels = sweep::compile_segments(
      *backend, sf.segmentation, bf.sizes, kernel_options(o));
  stage = "run";
  auto outputs = sweep::run_segments(*backend, sf.segmentation, kernels, inputs, bf.sizes);
  if (o.sanitize) {
    // Each segment's kernel again under the sanitizer, its traced outputs
    // feeding the next (sweep::run_segments with findings).
    std::vector<runtime::SanitizerFinding> found;
    sweep::run_segments(*backend, sf.segmentation, kernels, inputs, bf.sizes, &found,
                        o.cache_dir);
    for (const runtime::SanitizerFinding& f : found) *findings += f.message() + "\n";
  }
  return outputs;
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
    // The reference evaluates an unscheduled copy (sweep/pipeline.h).
    plain = frontend::parse_fusion_text(fusion_text, kFusionPath);
  } catch (const UserError& e) {
    return "invalid\n" + std::string(e.what());
  }
  auto inputs = ref::make_inputs(*plain.fusion, bf.sizes, o.input_seed, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, bf.sizes, {o.fast_math});
  std::string stage, findings;
  std::vector<ref::HostTensor> got;
  try {
    got = run_kernels(bf, schedule, inputs, o, stage, &findings);
  } catch (const UserError& e) {
    if (stage == "compile")
      throw InternalError("the generated kernel does not compile (a codegen bug): " +
                          std::string(e.what()));
    // segment_and_schedule both segments and schedules: only the segmenter's
    // own refusal says "no scheduler accepts"; the rest is a plugin's schedule.
    if (stage == "segment" && e.message().rfind("no scheduler accepts", 0) != 0)
      stage = "plugin schedule";
    throw UserError(e.loc(), stage + ": " + e.message());
  }
  sweep::Validation v = sweep::validate(*plain.fusion, bf.sizes, got, want);
  // A finding decides first: the sanitizer's run is deterministic, while a
  // race may or may not show in the outputs.
  if (!findings.empty())
    return "racy\n" + findings.substr(0, findings.find('\n')) +
           (v.ok ? "" : " (and validation failed: " + v.summary() + ")");
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
      sweep::judge_mutant(*o.mutation, sweep::validate(*plain.fusion, bf.sizes, got, want));
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
