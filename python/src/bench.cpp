// The pytest fixture's points (bench.h): a FusionDefinition at one
// scheduler, run, timed and recorded the way `schedlab run` runs, times and
// records a sweep point, through run's own functions:
//   - the run is one point::Point (core/point) to its Validate stage: a
//     plugin schedules an unscheduled copy from the Schedule stage
//     (PluginRef, the params as --set settings), or the hand schedule
//     starts at Lower (ManualRef; the definition lends its fusion). Under
//     the sanitizer, whose traced run is the validating run on the CPU
//     backend, as a sweep's points (SweepRun::point_options);
//   - the timing is run's phase 2, sweep::time_group: a valid point's
//     kernel is bound to its inputs at once (while its fusion is at hand)
//     and held by the ResultsFile until flush(), which times the held
//     points of each (fusion, sizes) group together in interleaved rounds,
//     as `run` times a sweep's (the pytest plugin flushes at the end of
//     each test module: a module is a sweep); or, without interleaving, at
//     the call, a group of its own;
//   - the record carries run's fields, made by run's functions
//     (describe_device, record_tolerance, record_key, io_bytes,
//     ordered_sizes), and is appended with report::append_record under a
//     report::ResultsLock, the lock `run` holds on its output.
// A point that fails validation (or scheduling, lowering, compiling) is
// recorded at once with its status, then raised as the module's exception.
#include "bench.h"

#include <pybind11/stl.h>

#include <fmt/core.h>

#include <algorithm>
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
#include "heuristic_params.h"
#include "schedlab/ir/printer.h"
#include "schedlab/point/point.h"
#include "schedlab/report/results_lock.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/run/timed_group.h"

namespace schedlab::python {

namespace py = pybind11;

namespace {

constexpr const char* kWhat = "schedlab_bench";

/// A valid point waiting for its group's rounds: its kernel, bound to its
/// inputs while its fusion was at hand, and its record.
struct HeldPoint {
  report::Record rec;
  std::unique_ptr<sweep::SegmentKernel> kernel;  ///< `bound` refers to it
  std::unique_ptr<sweep::BoundKernel> bound;
};

/// Times `points` as one group (time_group) and gives each its samples.
void time_together(std::vector<HeldPoint*> points, const sweep::MeasureSpec& m, uint64_t seed,
                   uint64_t group, const std::string& group_name) {
  std::vector<sweep::GroupMember> members;
  for (HeldPoint* h : points) members.push_back({[h] { return std::move(h->bound); }, &h->rec});
  py::gil_scoped_release unlocked;
  sweep::time_group(members, static_cast<size_t>(m.repetitions), m.warmup, m.min_time, seed, group,
                    group_name);
  for (HeldPoint* h : points) h->rec.timestamp = report::now_timestamp();
}

/// The results file of a pytest session: one writer, as `run`'s output (its
/// lock is held until close()), each record appended whole; the valid
/// points held until flush() times them by (fusion, sizes) group.
class ResultsFile {
 public:
  /// `fresh`: the previous file is kept as PATH.prev first, as `run`
  /// without --resume keeps it; otherwise records are appended to it.
  /// `interleave`: hold valid points for flush(); else time each at once.
  ResultsFile(const std::string& path, bool fresh, sweep::MeasureSpec measure, bool interleave)
      : path_(path),
        lock_(std::make_unique<report::ResultsLock>(path)),
        measure_(measure),
        interleave_(interleave),
        seed_(measure.seed.value_or(sweep::fresh_seed())),
        nonce_(fmt::format("{:016x}", sweep::fresh_seed())) {
    if (fresh && std::filesystem::exists(path)) report::keep_previous(path);
    report::drop_truncated_tail(path);  // a session killed mid-write
  }

  void append(const report::Record& r) {
    user_assert(lock_ != nullptr) << "results file " << path_ << " is closed";
    report::append_record(path_, r);
  }
  /// Takes a valid point: held for flush(), or timed and appended now.
  /// Returns its record as it stands.
  report::Record take(HeldPoint h) {
    user_assert(lock_ != nullptr) << "results file " << path_ << " is closed";
    held_.push_back(std::move(h));
    if (interleave_) return held_.back().rec;
    return flush().at(0);
  }
  /// Times the held points, each (fusion, sizes, device) group together in
  /// interleaved rounds, and appends their records; returns them.
  std::vector<report::Record> flush() {
    // In the order of their first points, as `run` writes its groups.
    std::vector<std::pair<std::string, std::vector<HeldPoint*>>> groups;
    for (HeldPoint& h : held_) {
      const std::string key =
          h.rec.fusion + "|" + h.rec.size_key() + "|" + h.rec.device.fingerprint;
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == key; });
      if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
      it->second.push_back(&h);
    }
    std::vector<report::Record> out;
    for (auto& [key, points] : groups) {
      const uint64_t group = groups_++;
      time_together(points, measure_, seed_, group, nonce_ + "-" + std::to_string(group));
      for (HeldPoint* h : points) {
        append(h->rec);
        out.push_back(h->rec);
      }
    }
    held_.clear();
    return out;
  }
  /// Flushes, then releases the lock.
  void close() {
    if (lock_) flush();
    lock_.reset();
  }
  const std::string& path() const { return path_; }
  size_t held() const { return held_.size(); }

 private:
  std::string path_;
  std::unique_ptr<report::ResultsLock> lock_;
  sweep::MeasureSpec measure_;
  bool interleave_;
  uint64_t seed_;
  std::string nonce_;
  uint64_t groups_ = 0;
  std::vector<HeldPoint> held_;
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

/// Runs the point to its Validate stage; the record says how it went.
/// True when it is valid (its kernel then to be timed).
bool validate(point::Point& p, report::Record& r) {
  using point::Stage;
  try {
    p.run();
  } catch (const plugin::PluginFault& e) {
    r.status = report::Status::PluginError;
    r.error = e.what();
    return false;
  } catch (const UserError& e) {
    // As the sweep classifies it (SweepRun::run_point).
    const Stage at = p.stage();
    r.status = at == Stage::Lower || at == Stage::Compile ? report::Status::CompileError
                                                          : report::Status::ScheduleError;
    r.error = e.what();
    return false;
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
      return false;
    case point::Verdict::Racy:
      r.status = report::Status::Racy, r.error = res.validation->summary();
      return false;
    case point::Verdict::WrongResult:
      r.status = report::Status::WrongResult, r.error = res.validation->summary();
      return false;
    default:
      break;
  }
  r.kernel_hash = p.kernel().prepared.source.hash();
  return true;
}

/// A valid point's kernel, taken from it and bound to its inputs (the
/// launch checks may refuse it: a compile_error, as in a sweep's phase 2).
std::optional<HeldPoint> hold(point::Point& p, report::Record& r) {
  HeldPoint h;
  h.kernel = std::make_unique<sweep::SegmentKernel>(std::move(p.result().kernels.at(0)));
  try {
    h.bound = std::make_unique<sweep::BoundKernel>(p.backend(), *h.kernel, p.reference()->inputs,
                                                   p.fusion().sizes);
  } catch (const UserError& e) {
    r.status = report::Status::CompileError;
    r.error = e.what();
    return std::nullopt;
  }
  return h;
}

/// A bench_point call's outcome: the record, and the valid point's kernel.
struct Benched {
  report::Record rec;
  std::optional<HeldPoint> held;
};

Benched bench_point(Definition& d, const BenchArgs& a) {
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
  std::optional<HeldPoint> held;
  {
    py::gil_scoped_release unlocked;
    if (validate(p, r)) held = hold(p, r);
  }
  r.config_hash = report::config_hash(r.config);
  r.timestamp = report::now_timestamp();
  if (held) held->rec = r;
  return {std::move(r), std::move(held)};
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

/// The measurement settings, checked (a sweep's `measure:`).
sweep::MeasureSpec measure_spec(int64_t repetitions, int64_t warmup, double min_time,
                                std::optional<uint64_t> seed) {
  if (repetitions < 1 || warmup < 0 || min_time < 0)
    raise(ErrorKind::Error,
          fmt::format("expected repetitions >= 1, warmup >= 0 and min_time >= 0, found {}, {} "
                      "and {}",
                      repetitions, warmup, min_time),
          {kWhat});
  sweep::MeasureSpec m;
  m.repetitions = repetitions, m.warmup = warmup, m.min_time = min_time, m.seed = seed;
  return m;
}

py::object record_dict(const report::Record& r) {
  return py::module_::import("json").attr("loads")(report::to_json(r));
}

}  // namespace

void bind_bench(py::module_& m) {
  py::class_<ResultsFile>(m, "ResultsFile",
                          "A results file (JSONL sweep records) locked for writing, as "
                          "`schedlab run` locks its output, and the measurement of the valid "
                          "points bench_point gives it")
      .def(py::init([](const std::string& path, bool fresh, int64_t repetitions, int64_t warmup,
                       double min_time, std::optional<uint64_t> seed, bool interleave) {
             const sweep::MeasureSpec m = measure_spec(repetitions, warmup, min_time, seed);
             return guarded(ErrorKind::Error, {"ResultsFile"}, [&] {
               return std::make_unique<ResultsFile>(path, fresh, m, interleave);
             });
           }),
           py::arg("path"), py::arg("fresh") = false, py::arg("repetitions") = 10,
           py::arg("warmup") = 1, py::arg("min_time") = 0.0, py::arg("seed") = py::none(),
           py::arg("interleave") = true,
           "Locks PATH (fresh: its earlier records kept as PATH.prev first). The valid points "
           "are held (interleave) until flush(), which times each (fusion, sizes) group "
           "together in interleaved rounds as `schedlab run` does; without interleave, each "
           "is timed at its call")
      .def_property_readonly("path", &ResultsFile::path)
      .def_property_readonly("held", &ResultsFile::held, "Valid points waiting for flush()")
      .def(
          "flush",
          [](ResultsFile& f) {
            py::list out;
            for (const report::Record& r :
                 guarded(ErrorKind::Error, {"flush"}, [&] { return f.flush(); }))
              out.append(record_dict(r));
            return out;
          },
          "Times the held points group by group, appends their records and returns them")
      .def(
          "close", [](ResultsFile& f) { guarded(ErrorKind::Error, {"close"}, [&] { f.close(); }); },
          "Flushes, then releases the lock; appending after it is an error");
  m.def(
      "bench_point",
      [](const DefinitionPtr& fd, const std::optional<py::sequence>& inputs,
         const std::string& scheduler, const py::object& params,
         const std::string& label, const std::string& fusion, ResultsFile* results,
         const std::optional<std::map<std::string, int64_t>>& sizes, int64_t repetitions,
         int64_t warmup, double min_time, std::optional<uint64_t> seed, bool sanitize,
         std::optional<double> rtol, std::optional<double> atol, const std::string& device,
         const std::string& sweep, const std::string& host, const std::string& baseline,
         const std::string& default_fusion) {
        BenchArgs a;
        a.inputs = inputs;
        if (sizes) a.sizes = ir::SizeBindings(sizes->begin(), sizes->end());
        a.scheduler = scheduler, a.params = params_values(params, scheduler, kWhat), a.label = label;
        a.fusion = fusion;
        a.default_fusion = default_fusion, a.sweep = sweep, a.host = host, a.baseline = baseline;
        a.measure = measure_spec(repetitions, warmup, min_time, seed);
        a.sanitize = sanitize, a.rtol = rtol, a.atol = atol, a.device = device;
        Benched b = bench_point(*fd, a);
        if (b.held) {
          if (results)
            return record_dict(guarded(ErrorKind::Error, {kWhat},
                                       [&] { return results->take(std::move(*b.held)); }));
          time_together({&*b.held}, a.measure, a.measure.seed.value_or(sweep::fresh_seed()), 0,
                        fmt::format("{:016x}-0", sweep::fresh_seed()));
          return record_dict(b.held->rec);
        }
        if (results) guarded(ErrorKind::Error, {kWhat}, [&] { results->append(b.rec); });
        raise(kind_of(b.rec.status), failure(b.rec), {kWhat});
      },
      py::arg("fusion_definition"), py::arg("inputs") = py::none(), py::arg("scheduler") = "manual",
      py::arg("params") = py::none(), py::arg("label") = "", py::arg("fusion") = "",
      py::arg("results") = nullptr, py::arg("sizes") = py::none(), py::arg("repetitions") = 10,
      py::arg("warmup") = 1, py::arg("min_time") = 0.0, py::arg("seed") = py::none(),
      py::arg("sanitize") = true, py::arg("rtol") = py::none(), py::arg("atol") = py::none(),
      py::arg("device") = "auto", py::arg("sweep") = "pytest", py::arg("host") = "",
      py::arg("baseline") = "", py::arg("default_fusion") = "fusion",
      "Validates the fusion at one scheduler ('manual': its hand schedule; else a plugin's "
      "name, `params` its settings) and returns its record (a dict, schedlab.sweep.v1). A "
      "valid point goes to `results` (timed at its flush(), or at once without interleave) "
      "or, without results, is timed now with repetitions, warmup, min_time and seed; a "
      "failed point is appended to `results`, then raised (ValidationError, ScheduleError)");
}

}  // namespace schedlab::python
