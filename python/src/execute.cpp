// Running a FusionDefinition: every run is one point::Point (core/point,
// docs/point.md), the pipeline `schedlab exec` runs, on NumPy arrays in and
// out.
//   - manual_execute / manual_validate: the user's schedule. The fusion
//     arrives scheduled, so the point starts at its Lower stage (as a
//     sweep's isolated worker's schedule replayed on the host does); the
//     definition lends its fusion to the point for the run.
//   - execute / validate: the segmenter and the built-in plugins schedule a
//     fresh unscheduled copy (point::SegmenterRef), as `schedlab exec`
//     without --plugin; the user's fusion is not touched.
//   - print_kernel: the Lower stage alone.
// The reference (Validate) evaluates the unscheduled copy in f64 with error
// bounds (docs/validation.md).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <fmt/core.h>

#include <map>
#include <memory>
#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "data_dirs.h"
#include "errors.h"
#include "execute.h"
#include "heuristic_params.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/point/point.h"
#include "schedlab/runtime/cuda_backend.h"

namespace schedlab::python {

namespace {

/// The sizes `inputs` give f's named sizes; a user error where two inputs
/// disagree or a constant extent does not match.
ir::SizeBindings bind_sizes(const ir::Fusion& f, const std::vector<ref::HostTensor>& inputs,
                            const char* what) {
  if (inputs.size() != f.inputs().size())
    raise(ErrorKind::Error,
          fmt::format("expected {} inputs, found {}", f.inputs().size(), inputs.size()), {what});
  ir::SizeBindings sizes;
  std::map<std::string, std::string> bound_by;  ///< size -> "input 0 (T0) axis 1"
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorView* in = f.inputs()[i];
    const std::vector<ir::IterDomain*> axes = in->logical_no_reductions();
    for (size_t k = 0; k < axes.size(); ++k) {
      const ir::SizeExpr& e = axes[k]->extent();
      const int64_t n = inputs[i].shape[k];
      if (e.is_symbol()) {
        auto [it, fresh] = sizes.emplace(e.symbol_name(), n);
        if (fresh)
          bound_by[e.symbol_name()] = fmt::format("input {} ({}) axis {}", i, in->describe(), k);
        if (fresh || it->second == n) continue;
        raise(ErrorKind::Error,
              fmt::format("input {} ({}) axis {}: expected extent {}, found {} (the axes share "
                          "size {}, which {} gives {})",
                          i, in->describe(), k, it->second, n, e.symbol_name(),
                          bound_by[e.symbol_name()], it->second),
              {what, in, static_cast<int>(k)});
      }
      if (e.is_const() && e.const_value() != n)
        raise(ErrorKind::Error,
              fmt::format("input {} ({}) axis {}: expected extent {}, found {}", i,
                          in->describe(), k, e.const_value(), n),
              {what, in, static_cast<int>(k)});
    }
  }
  return sizes;
}

}  // namespace

HostInputs host_inputs(const ir::Fusion& plain, const py::sequence& values, const char* what) {
  HostInputs in;
  for (size_t i = 0; i < values.size(); ++i)
    in.tensors.push_back(to_host(values[i],
                                 i < plain.inputs().size() ? plain.inputs()[i] : plain.inputs().back(),
                                 i, what));
  in.sizes = bind_sizes(plain, in.tensors, what);
  return in;
}

// ---- The process's backends --------------------------------------

/// The backend for `kind` (auto|cpu|cuda), made once per process. Kept for
/// the interpreter's life and never destroyed: a backend's worker threads
/// and compiled objects must not be torn down during interpreter exit.
runtime::Backend& process_backend(const std::string& kind) {
  static auto* backends = new std::map<std::string, std::unique_ptr<runtime::Backend>>();
  auto it = backends->find(kind);
  if (it == backends->end()) {
    std::unique_ptr<runtime::Backend> b = guarded(
        ErrorKind::Error, {"backend"}, [&] { return sweep::make_backend(kind); });
    it = backends->emplace(kind, std::move(b)).first;
  }
  return *it->second;
}

namespace {

// ---- Points ------------------------------------------------------------------

/// What one run is given.
struct RunSpec {
  const char* what;                          ///< the Python method, for errors
  point::SchedulerRef scheduler;             ///< ManualRef: the user's schedule
  bool user_schedule = false;                ///< lend the definition's scheduled fusion
  std::optional<py::sequence> inputs;        ///< NumPy inputs; none: generated
  ir::SizeBindings sizes;                    ///< for generated inputs
  point::Stage last = point::Stage::Run;
  std::optional<ref::Tolerance> tolerance;
  std::optional<py::sequence> reference_outputs;  ///< instead of the f64 reference
  std::string backend = "auto";
  runtime::KernelOptions kernel;
  /// Profile stage: after Lower, the kernels' profiles on this device model
  /// (Compile to Validate are skipped, as `show --stage profile` does).
  const model::DeviceModel* profile_device = nullptr;
};

/// Gives a lent fusion back to its definition however the run ends.
class Lend {
 public:
  Lend(Definition& d, point::Point& p) : d_(d), p_(p) {}
  Lend(const Lend&) = delete;
  Lend& operator=(const Lend&) = delete;
  ~Lend() { d_.def = std::move(p_.fusion().def); }

 private:
  Definition& d_;
  point::Point& p_;
};

point::Result run(Definition& d, RunSpec spec) {
  d.freeze();
  const ir::Fusion& plain = *d.plain;
  std::optional<std::vector<ref::HostTensor>> inputs;
  ir::SizeBindings sizes = spec.sizes;
  if (spec.inputs) {
    HostInputs in = host_inputs(plain, *spec.inputs, spec.what);
    inputs = std::move(in.tensors);
    sizes = std::move(in.sizes);
  } else {
    guarded(ErrorKind::Error, {spec.what},
            [&] { sizes = frontend::bind_sizes(d.def, spec.sizes); });
  }
  runtime::Backend& b = process_backend(spec.backend);
  point::Options options;
  if (sweep::is_cuda(b)) options.device = runtime::cuda_device_properties();
  options.kernel = spec.kernel;
  options.tolerance = spec.tolerance;
  options.first = spec.user_schedule ? point::Stage::Lower : point::Stage::Schedule;
  if (spec.profile_device) {
    options.device = model::device_properties(*spec.profile_device);
    options.profile_device = spec.profile_device;
    options.profile_backend = &process_backend("cpu");  // the CPU backend traces the kernels
  }
  options.last = spec.last;

  frontend::FusionDefinition fused;
  if (!spec.user_schedule) {
    fused.fusion = d.unscheduled_copy();
    fused.input_ranges = d.def.input_ranges;
  }
  sweep::BoundFusion bf{d.def.path, spec.user_schedule ? std::move(d.def) : std::move(fused), sizes};
  point::Point p(std::move(bf), std::move(spec.scheduler), &b, std::move(options));
  std::optional<Lend> lend;
  if (spec.user_schedule) lend.emplace(d, p);

  // The reference: the f64 evaluation of the unscheduled copy, or the
  // outputs the caller gave (compared with the caller's tolerance).
  frontend::FusionDefinition ref_def;
  ref_def.fusion = d.unscheduled_copy();
  ref_def.input_ranges = d.def.input_ranges;
  std::shared_ptr<const point::Reference> reference;
  if (spec.last >= point::Stage::Run) guarded(ErrorKind::Error, {spec.what}, [&] {
    if (spec.last >= point::Stage::Validate && !spec.reference_outputs) {
      reference = point::make_reference(std::move(ref_def), sizes, 0, spec.kernel.fast_math, inputs);
      return;
    }
    auto r = std::make_shared<point::Reference>();
    r->inputs = inputs ? *inputs : ref::make_inputs(*ref_def.fusion, sizes, 0, ref_def.input_ranges);
    r->plain = std::move(ref_def.fusion);
    if (spec.reference_outputs)
      for (size_t i = 0; i < spec.reference_outputs->size(); ++i) {
        const ir::TensorView* out = r->plain->outputs().at(std::min(i, r->plain->outputs().size() - 1));
        r->want.push_back(to_host((*spec.reference_outputs)[i], out, i, spec.what, false));
      }
    reference = std::move(r);
  });
  if (spec.last >= point::Stage::Run) p.set_reference(reference);
  try {
    py::gil_scoped_release unlocked;
    if (spec.profile_device) {
      p.run(p.options().first, point::Stage::Lower);
      p.run(point::Stage::Profile, point::Stage::Profile);
    } else {
      p.run();
    }
  } catch (const UserError& e) {
    const bool schedule = p.stage() <= point::Stage::Lower;
    raise(schedule ? ErrorKind::Schedule : ErrorKind::Error, e,
          {fmt::format("{} ({} stage)", spec.what, point::stage_name(p.stage()))});
  }
  if (p.result().verdict == point::Verdict::Rejected)
    raise(ErrorKind::Schedule, p.result().reject_reason, {spec.what});
  if (p.result().validation && p.result().verdict != point::Verdict::Ok)
    raise(ErrorKind::Validation, p.result().validation->summary(), {spec.what});
  return std::move(p.result());
}

ir::SizeBindings sizes_arg(const std::optional<std::map<std::string, int64_t>>& s) {
  return s ? ir::SizeBindings(s->begin(), s->end()) : ir::SizeBindings{};
}

/// The hand schedule's kernel, lowered by the Lower stage alone and printed
/// by `print`: sizes compiled in when given, else one kernel for every shape.
template <typename Print>
std::string lowered(Definition& d, const std::optional<std::map<std::string, int64_t>>& sizes,
                    Print print) {
  runtime::KernelOptions k;
  k.dynamic_sizes = !sizes;
  k.divisibility = !k.dynamic_sizes;
  ir::SizeBindings bound = sizes_arg(sizes);
  if (!sizes)
    for (const std::string& s : d.fusion().size_symbols()) bound[s] = 1;
  point::Result r = run(d, {"print_kernel", point::ManualRef{"python"}, true, std::nullopt, bound,
                            point::Stage::Lower, {}, {}, "cpu", k});
  std::string text;
  for (const sweep::SegmentKernel& kernel : r.kernels) text += print(kernel.prepared.kernel);
  return text;
}

py::list outputs(const point::Result& r) {
  py::list out;
  for (const ref::HostTensor& t : r.outputs) out.append(to_numpy(t));
  return out;
}

}  // namespace

void bind_execute(py::module_&, DefinitionClass& fd) {
  auto manual_execute = [](const DefinitionPtr& d, const py::sequence& inputs,
                           const std::string& device) {
    return outputs(run(*d, {"manual_execute",
                            point::ManualRef{"python"},
                            true,
                            inputs,
                            {},
                            point::Stage::Run,
                            {},
                            {},
                            device,
                            {}}));
  };
  fd.def("manual_execute", manual_execute, py::arg("inputs"), py::arg("device") = "auto",
         "Runs the fusion as scheduled by hand (one kernel); NumPy arrays in and out")
      .def(
          "manual_execute",
          [manual_execute](const DefinitionPtr& d, const py::sequence& inputs,
                           const HeuristicParams&, const std::string& device) {
            // nvFuser's manual_execute(inputs, heuristic_params): its
            // parameters carry the launch configuration; here the schedule
            // they made (schedule.schedule) is the fusion's and determines it.
            return manual_execute(d, inputs, device);
          },
          py::arg("inputs"), py::arg("params"), py::arg("device") = "auto",
          "nvFuser's spelling after schedule.schedule: the same run; the schedule the params "
          "made is the fusion's")
      .def(
          "manual_validate",
          [](const DefinitionPtr& d, const std::optional<py::sequence>& inputs,
             const std::optional<py::sequence>& reference_outputs, double rtol, double atol,
             const std::optional<std::map<std::string, int64_t>>& sizes,
             const std::string& device) {
            std::optional<ref::Tolerance> tol;
            if (reference_outputs) tol = ref::Tolerance::user(rtol, atol);
            return outputs(run(*d, {"manual_validate", point::ManualRef{"python"}, true, inputs,
                                    sizes_arg(sizes), point::Stage::Validate, tol,
                                    reference_outputs, device, {}}));
          },
          py::arg("inputs") = py::none(), py::arg("reference_outputs") = py::none(),
          py::arg("rtol") = 1e-5, py::arg("atol") = 1e-5, py::arg("sizes") = py::none(),
          py::arg("device") = "auto",
          "Runs the hand schedule and checks its outputs: against reference_outputs with "
          "|got - want| <= atol + rtol * |want|, or against the f64 reference with its error "
          "bounds; raises ValidationError. Without inputs: generated at `sizes` (else the "
          "file's default sizes)")
      .def(
          "execute",
          [](const DefinitionPtr& d, const py::sequence& inputs, const std::string& device) {
            return outputs(run(*d, {"execute", point::SegmenterRef{segmenter_plugins(), nullptr},
                                    false, inputs, {}, point::Stage::Run, {}, {}, device, {}}));
          },
          py::arg("inputs"), py::arg("device") = "auto",
          "Schedules a copy of the fusion with the segmenter and the plugins, runs it")
      .def(
          "validate",
          [](const DefinitionPtr& d, const std::optional<py::sequence>& inputs,
             const std::optional<std::map<std::string, int64_t>>& sizes,
             const std::string& device) {
            return outputs(run(*d, {"validate", point::SegmenterRef{segmenter_plugins(), nullptr},
                                    false, inputs, sizes_arg(sizes), point::Stage::Validate, {},
                                    {}, device, {}}));
          },
          py::arg("inputs") = py::none(), py::arg("sizes") = py::none(), py::arg("device") = "auto",
          "execute(), checked against the f64 reference with its error bounds; inputs "
          "generated at `sizes` (else the file's default sizes) when none are given")
      .def(
          "profile",
          [](const DefinitionPtr& d, const std::optional<std::map<std::string, int64_t>>& sizes,
             const std::string& device) {
            // The hand schedule's kernels on a device model (docs/model.md),
            // as `schedlab show --stage profile --format json`.
            const model::DeviceModel dm = guarded(ErrorKind::Error, {"profile"}, [&] {
              return model::load_device(device, device_dirs());
            });
            point::Result r = run(*d, {"profile", point::ManualRef{"python"}, true, std::nullopt,
                                       sizes_arg(sizes), point::Stage::Profile, {}, {}, "cpu",
                                       {}, &dm});
            return py::module_::import("json").attr("loads")(model::profiles_json(r.profiles));
          },
          py::arg("sizes") = py::none(), py::arg("device") = "h200",
          "The hand schedule's kernels profiled on a device model (configs/devices): "
          "occupancy, traffic, the roofline's predicted time and its limiter, as parsed JSON; "
          "at `sizes` (else the file's default sizes)")
      .def(
          "print_kernel",
          [](const DefinitionPtr& d, const std::optional<std::map<std::string, int64_t>>& sizes) {
            return lowered(*d, sizes, [](const kir::Kernel& k) { return codegen::print_kernel(k); });
          },
          py::arg("sizes") = py::none(),
          "The CUDA kernel of the hand schedule (the __global__ function, without the "
          "runtime header), lowered by the point's Lower stage; sizes compiled in when given "
          "(as `schedlab show --stage kernel`), else one kernel for every shape")
      .def(
          "print_kernel_ir",
          [](const DefinitionPtr& d, const std::optional<std::map<std::string, int64_t>>& sizes) {
            return lowered(*d, sizes, [](const kir::Kernel& k) { return kir::print_kir(k); });
          },
          py::arg("sizes") = py::none(), "The kernel IR of the hand schedule (docs/kernel-ir.md)");
}

}  // namespace schedlab::python
