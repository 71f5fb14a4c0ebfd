// The pytest fixture's point (bench.h): a FusionDefinition at one scheduler,
// run, timed and recorded the way `schedlab run` runs, times and records a
// sweep point, through run's own functions:
//   - the run is one point::Point (core/point) to its Validate stage: a
//     plugin schedules an unscheduled copy from the Schedule stage
//     (PluginRef, the params as --set settings), or the hand schedule
//     starts at Lower (ManualRef; the definition lends its fusion). Under
//     the sanitizer, whose traced run is the validating run on the CPU
//     backend, as a sweep's points (SweepRun::point_options);
//   - the timing is run's phase 2: sweep::BoundKernel and
//     sweep::time_kernels (warm-up launches, then interleaved rounds from a
//     recorded seed, min_time), the point a group of its own;
//   - the record carries run's fields, made by run's functions
//     (describe_device, record_tolerance, record_key, io_bytes,
//     ordered_sizes), and is appended with report::append_record under a
//     report::ResultsLock, the lock `run` holds on its output.
// A point that fails validation (or scheduling, lowering, compiling) is
// recorded with its status too, then raised as the module's exception.
#include "bench.h"

#include <pybind11/stl.h>

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <variant>

#include "errors.h"
#include "execute.h"
#include "schedlab/ir/printer.h"
#include "schedlab/point/point.h"
#include "schedlab/report/results_lock.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/run/bound_kernel.h"
#include "schedlab/sweep/run/runner.h"

namespace schedlab::python {

namespace py = pybind11;

namespace {

constexpr const char* kWhat = "schedlab_bench";

/// The results file of a pytest session: one writer, as `run`'s output (its
/// lock is held until close()), each record appended whole.
class ResultsFile {
 public:
  /// `fresh`: the previous file is kept as PATH.prev first, as `run`
  /// without --resume keeps it; otherwise records are appended to it.
  ResultsFile(const std::string& path, bool fresh)
      : path_(path), lock_(std::make_unique<report::ResultsLock>(path)) {
    if (fresh && std::filesystem::exists(path)) report::keep_previous(path);
    report::drop_truncated_tail(path);  // a session killed mid-write
  }
  void append(const report::Record& r) {
    user_assert(lock_ != nullptr) << "results file " << path_ << " is closed";
    report::append_record(path_, r);
  }
  void close() { lock_.reset(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<report::ResultsLock> lock_;
};

/// What one bench_point call asks for.
struct BenchArgs {
  std::optional<py::sequence> inputs;  ///< none: generated at `sizes`
  ir::SizeBindings sizes;
  std::string scheduler;           ///< "manual" (the hand schedule) or a plugin's name
  std::optional<py::dict> params;  ///< manual: the record's config; a plugin: --set settings
  std::string label;               ///< the record's scheduler name; "": `scheduler`
  std::string fusion;  ///< the record's fusion name; "": the file's, else default_fusion
  std::string default_fusion;
  std::string sweep, host, baseline;
  sweep::MeasureSpec measure;
  bool sanitize = true;
  std::optional<double> rtol, atol;
  std::string device;
};

/// The params dict as the record's config (manual): name -> value text.
report::ConfigList config_of(const std::vector<std::string>& settings) {
  report::ConfigList c;
  for (const std::string& kv : settings) {
    const size_t eq = kv.find('=');
    c.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  return c;
}

std::string file_contents_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return report::hash_hex(ss.str());
}

/// Gives a lent fusion back to its definition however the run ends.
struct GiveBack {
  Definition* d;
  point::Point& p;
  ~GiveBack() {
    if (d) d->def = std::move(p.fusion().def);
  }
};

/// The point: validated, then timed when valid; the record says how it went.
void run_and_time(point::Point& p, const sweep::MeasureSpec& m, report::Record& r) {
  using point::Stage;
  try {
    p.run();
  } catch (const plugin::PluginFault& e) {
    r.status = report::Status::PluginError;
    r.error = e.what();
    return;
  } catch (const UserError& e) {
    // As the sweep classifies it (SweepRun::run_point).
    const Stage at = p.stage();
    r.status = at == Stage::Lower || at == Stage::Compile ? report::Status::CompileError
                                                          : report::Status::ScheduleError;
    r.error = e.what();
    return;
  }
  const point::Result& res = p.result();
  if (!res.runs.empty() && res.runs.back().accepted &&
      std::holds_alternative<point::PluginRef>(p.scheduler())) {
    const plugin::Plugin& plugin = *std::get<point::PluginRef>(p.scheduler()).plugin;
    r.config.clear();
    for (size_t k = 0; k < plugin.schema().size(); ++k)
      r.config.emplace_back(plugin.schema()[k].name,
                            plugin.format_value(k, res.runs.back().params[k]));
  }
  if (res.validation) {
    r.max_abs_error = res.validation->max_abs_error;
    if (!res.validation->outputs.empty())
      r.tolerance = sweep::record_tolerance(res.validation->outputs[0].tol);
  }
  switch (res.verdict) {
    case point::Verdict::Rejected:
      r.status = report::Status::Rejected, r.error = res.reject_reason;
      return;
    case point::Verdict::Racy:
      r.status = report::Status::Racy, r.error = res.validation->summary();
      return;
    case point::Verdict::WrongResult:
      r.status = report::Status::WrongResult, r.error = res.validation->summary();
      return;
    default:
      break;
  }
  r.kernel_hash = p.kernel().prepared.source.hash();
  sweep::BoundKernel bound(p.backend(), p.kernel(), p.reference()->inputs, p.fusion().sizes);
  r.launch = bound.launch();
  r.seed = m.seed.value_or(sweep::fresh_seed());
  r.group = fmt::format("{:016x}-0", sweep::fresh_seed());  // a group of its own
  const std::vector<std::vector<double>> times = sweep::time_kernels(
      {bound.timed()}, static_cast<size_t>(m.repetitions), m.warmup, m.min_time, r.seed, 0);
  for (double s : times.at(0)) r.times_us.push_back(s * 1e6);
}

report::Record bench_point(Definition& d, const BenchArgs& a) {
  d.freeze();
  std::optional<std::vector<ref::HostTensor>> inputs;
  ir::SizeBindings sizes = a.sizes;
  if (a.inputs) {
    HostInputs in = host_inputs(*d.plain, *a.inputs, kWhat);
    inputs = std::move(in.tensors);
    sizes = std::move(in.sizes);
  } else {
    guarded(ErrorKind::Error, {kWhat}, [&] { sizes = frontend::bind_sizes(d.def, a.sizes); });
  }
  const bool manual = a.scheduler == "manual";
  const std::vector<std::string> settings =
      a.params ? settings_of(*a.params) : std::vector<std::string>{};
  std::shared_ptr<const plugin::Plugin> plugin;
  if (!manual)
    plugin =
        guarded(ErrorKind::Error, {kWhat}, [&] { return process_registry().get(a.scheduler); });
  runtime::Backend& be = process_backend(a.device);

  // The record's identity, as SweepRun::identify makes it.
  report::Record r;
  r.sweep = a.sweep;
  r.sweep_hash = report::hash_hex(a.sweep);
  r.host = a.host;
  r.fusion = !a.fusion.empty()     ? a.fusion
             : !d.def.path.empty() ? std::filesystem::path(d.def.path).stem().string()
                                   : a.default_fusion;
  r.sizes = ir::ordered_sizes(sizes, d.plain->size_symbols());
  r.scheduler = a.label.empty() ? a.scheduler : a.label;
  r.plugin = manual ? "manual" : plugin->name();
  r.plugin_version = manual ? "" : plugin->version();
  r.plugin_hash = manual ? "" : file_contents_hash(plugin->path());
  r.config = config_of(settings);
  r.device = sweep::describe_device(be);
  r.baseline = a.baseline;
  r.bytes_moved = sweep::io_bytes(*d.plain, sizes);
  std::string requested = "scheduler=" + r.scheduler + ";";
  for (const std::string& kv : settings) requested += kv + ";";
  r.key = report::record_key(r.plugin_hash, report::hash_hex(requested),
                             r.fusion + "@" + report::hash_hex(ir::print_math(*d.plain)), r.sizes,
                             r.device.fingerprint);

  point::Options o;
  if (sweep::is_cuda(be)) o.device = runtime::cuda_device_properties();
  o.sanitize = a.sanitize;
  o.sanitized_run_validates = true;
  if (a.rtol || a.atol) o.tolerance = ref::Tolerance::user(a.rtol.value_or(0), a.atol.value_or(0));
  o.first = manual ? point::Stage::Lower : point::Stage::Schedule;
  o.last = point::Stage::Validate;
  // The reference's copy, before a hand schedule's fusion is lent away.
  frontend::FusionDefinition ref_def;
  ref_def.fusion = d.unscheduled_copy();
  ref_def.input_ranges = d.def.input_ranges;
  frontend::FusionDefinition copy;
  if (!manual) {
    copy.fusion = d.unscheduled_copy();
    copy.input_ranges = d.def.input_ranges;
  }
  sweep::BoundFusion bf{d.def.path, manual ? std::move(d.def) : std::move(copy), sizes};
  point::SchedulerRef ref = point::ManualRef{"python"};
  if (!manual) ref = point::PluginRef{plugin, settings, std::nullopt};
  point::Point p(std::move(bf), std::move(ref), &be, std::move(o));
  GiveBack give_back{manual ? &d : nullptr, p};
  p.set_reference(guarded(ErrorKind::Error, {kWhat}, [&] {
    return point::make_reference(std::move(ref_def), sizes, 1, false, inputs);
  }));
  {
    py::gil_scoped_release unlocked;
    run_and_time(p, a.measure, r);
  }
  r.config_hash = report::config_hash(r.config);
  r.timestamp = report::now_timestamp();
  return r;
}

/// The exception a failed point raises after its record is written.
ErrorKind kind_of(report::Status s) {
  switch (s) {
    case report::Status::WrongResult:
    case report::Status::Racy:
      return ErrorKind::Validation;
    case report::Status::ScheduleError:
    case report::Status::CompileError:
    case report::Status::Rejected:
      return ErrorKind::Schedule;
    default:
      return ErrorKind::Error;
  }
}

/// "manual on softmax N=4,K=64: wrong_result: output 0 (T7): ...": the point, its
/// status and its error (without the prefixes the error repeats).
std::string failure(const report::Record& r) {
  const std::string status(report::status_name(r.status));
  std::string_view error = r.error;
  for (const std::string& prefix : {status + ": ", std::string("error: ")})
    if (error.substr(0, prefix.size()) == prefix) error.remove_prefix(prefix.size());
  return fmt::format("{} on {} {}: {}: {}", r.scheduler, r.fusion, r.size_label(), status, error);
}

}  // namespace

void bind_bench(py::module_& m) {
  py::class_<ResultsFile>(m, "ResultsFile",
                          "A results file (JSONL sweep records) locked for writing, as "
                          "`schedlab run` locks its output")
      .def(py::init([](const std::string& path, bool fresh) {
             return guarded(ErrorKind::Error, {"ResultsFile"},
                            [&] { return std::make_unique<ResultsFile>(path, fresh); });
           }),
           py::arg("path"), py::arg("fresh") = false)
      .def_property_readonly("path", &ResultsFile::path)
      .def("close", &ResultsFile::close, "Releases the lock; appending after it is an error");
  m.def(
      "bench_point",
      [](const DefinitionPtr& fd, const std::optional<py::sequence>& inputs,
         const std::string& scheduler, const std::optional<py::dict>& params,
         const std::string& label, const std::string& fusion, ResultsFile* results,
         const std::optional<std::map<std::string, int64_t>>& sizes, int64_t repetitions,
         int64_t warmup, double min_time, std::optional<uint64_t> seed, bool sanitize,
         std::optional<double> rtol, std::optional<double> atol, const std::string& device,
         const std::string& sweep, const std::string& host, const std::string& baseline,
         const std::string& default_fusion) {
        BenchArgs a;
        a.inputs = inputs;
        if (sizes) a.sizes = ir::SizeBindings(sizes->begin(), sizes->end());
        a.scheduler = scheduler, a.params = params, a.label = label, a.fusion = fusion;
        a.default_fusion = default_fusion, a.sweep = sweep, a.host = host, a.baseline = baseline;
        if (repetitions < 1 || warmup < 0 || min_time < 0)
          raise(ErrorKind::Error,
                fmt::format("expected repetitions >= 1, warmup >= 0 and min_time >= 0, found "
                            "{}, {} and {}",
                            repetitions, warmup, min_time),
                {kWhat});
        a.measure.repetitions = repetitions, a.measure.warmup = warmup;
        a.measure.min_time = min_time, a.measure.seed = seed;
        a.sanitize = sanitize, a.rtol = rtol, a.atol = atol, a.device = device;
        const report::Record r = bench_point(*fd, a);
        if (results) guarded(ErrorKind::Error, {kWhat}, [&] { results->append(r); });
        if (r.status != report::Status::Ok) raise(kind_of(r.status), failure(r), {kWhat});
        return py::module_::import("json").attr("loads")(report::to_json(r));
      },
      py::arg("fusion_definition"), py::arg("inputs") = py::none(), py::arg("scheduler") = "manual",
      py::arg("params") = py::none(), py::arg("label") = "", py::arg("fusion") = "",
      py::arg("results") = nullptr, py::arg("sizes") = py::none(), py::arg("repetitions") = 10,
      py::arg("warmup") = 1, py::arg("min_time") = 0.0, py::arg("seed") = py::none(),
      py::arg("sanitize") = true, py::arg("rtol") = py::none(), py::arg("atol") = py::none(),
      py::arg("device") = "auto", py::arg("sweep") = "pytest", py::arg("host") = "",
      py::arg("baseline") = "", py::arg("default_fusion") = "fusion",
      "Validates the fusion at one scheduler ('manual': its hand schedule; else a plugin's "
      "name, `params` its settings), times it as `schedlab run` does, appends its record to "
      "`results`, and returns the record (a dict, schedlab.sweep.v1); a failed point is "
      "recorded, then raised (ValidationError, ScheduleError)");
}

}  // namespace schedlab::python
