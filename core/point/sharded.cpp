// One point on a device mesh, as one rank: see schedlab/point/sharded.h.
#include "schedlab/point/sharded.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "schedlab/base/error.h"
#include "schedlab/model/collective.h"
#include "schedlab/ref/inputs.h"

namespace schedlab::point {

namespace {

/// Index of `t` in `list`, or -1.
int index_of(const std::vector<ir::TensorView*>& list, const ir::TensorView* t) {
  auto it = std::find(list.begin(), list.end(), t);
  return it == list.end() ? -1 : static_cast<int>(it - list.begin());
}

/// The median of `v` (not empty): the middle element, or the mean of the two.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// A plugin's formatted parameters ("block=128, name=\"a, b\"") as pairs;
/// a quoted value may hold ", " and "=".
report::ConfigList parse_params(const std::string& text) {
  report::ConfigList out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t eq = text.find('=', i);
    if (eq == std::string::npos) break;
    std::string value;
    size_t j = eq + 1;
    bool quoted = false;
    for (; j < text.size(); ++j) {
      const char c = text[j];
      if (quoted && c == '\\' && j + 1 < text.size()) {
        value += c;
        value += text[++j];
        continue;
      }
      if (c == '"') quoted = !quoted;
      if (!quoted && c == ',' && j + 1 < text.size() && text[j + 1] == ' ') break;
      value += c;
    }
    out.emplace_back(text.substr(i, eq - i), value);
    i = j + 2;
  }
  return out;
}

/// What communication `c` makes of this rank's `in`: through the
/// communicator, or (a Slice) this rank's chunk, locally.
ref::HostTensor run_communication(runtime::Communicator& comm, const lower::Communication& c,
                                  const ref::HostTensor& in) {
  switch (c.kind) {
    case lower::CollectiveKind::Allreduce: {
      ref::HostTensor t = in;
      comm.allreduce(t, c.op);
      return t;
    }
    case lower::CollectiveKind::ReduceScatter:
      return comm.reduce_scatter(in, c.axis, c.op);
    case lower::CollectiveKind::Allgather:
      return comm.allgather(in, c.axis);
    case lower::CollectiveKind::Slice:
      return ref::slice_axis(in, c.axis, comm.rank(), comm.size());
  }
  internal_error << "sharded: communication kind " << static_cast<int>(c.kind);
}

}  // namespace

report::ConfigList sharded_config(const lower::ShardedPlan& plan,
                                  const std::vector<StepRun>& steps) {
  (void)plan;
  // Each kernel's parameters, with its plan step and segment.
  struct Part {
    size_t step, segment, segments;
    report::ConfigList params;
  };
  std::vector<Part> parts;
  size_t kernels = 0;
  for (const StepRun& s : steps) {
    const Result& r = s.point->result();
    kernels += std::max<size_t>(r.kernels.size(), 1);
    for (size_t k = 0; k < r.runs.size(); ++k)
      if (r.runs[k].accepted)
        parts.push_back({s.step, k, r.runs.size(), parse_params(r.runs[k].params_str)});
  }
  report::ConfigList out;
  for (const Part& p : parts)
    for (const auto& [k, v] : p.params) {
      if (kernels == 1) {
        out.emplace_back(k, v);
        continue;
      }
      const std::string prefix = p.segments > 1 ? fmt::format("s{}.{}.", p.step, p.segment)
                                                : fmt::format("s{}.", p.step);
      out.emplace_back(prefix + k, v);
    }
  return out;
}

report::Prediction sharded_prediction(const std::vector<std::vector<model::KernelProfile>>& profiles,
                                      double comm_us, int64_t bytes_moved,
                                      const model::DeviceModel& device) {
  report::Prediction p;
  p.device = device.name;
  p.predicted_us = comm_us;
  p.limiter = "interconnect";
  double biggest = comm_us, compute_weighted = 0;
  std::vector<model::KernelProfile> all;
  for (const std::vector<model::KernelProfile>& step : profiles)
    for (const model::KernelProfile& k : step) {
      const report::Prediction kp = model::record_prediction(k);
      p.predicted_us += kp.predicted_us;
      p.flops += kp.flops;
      p.tensor_us += kp.tensor_us;
      compute_weighted += kp.compute_fraction * kp.predicted_us;
      if (kp.predicted_us > biggest) {
        biggest = kp.predicted_us;
        p.limiter = kp.limiter;
      }
      all.push_back(k);
    }
  if (p.predicted_us > 0) {
    p.compute_fraction = compute_weighted / p.predicted_us;
    if (device.dram_bandwidth_gbs > 0)
      p.bandwidth_fraction = static_cast<double>(bytes_moved) / (p.predicted_us * 1e-6) /
                             (device.dram_bandwidth_gbs * 1e9);
  }
  p.profile = model::profiles_json(all, -1);
  return p;
}

// The communicator moves tensors only: the text travels as one f64 per
// byte, each rank's padded to the longest (-1 past its end), one allgather.
std::vector<std::vector<std::string>> all_lines(runtime::Communicator& comm,
                                                const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + '\n';
  const auto width =
      static_cast<int64_t>(comm.max_over_ranks(static_cast<double>(text.size()))) + 1;
  ref::HostTensor mine{ir::DataType::F64, {width}, {}};
  mine.data.assign(static_cast<size_t>(width), -1.0);
  for (size_t i = 0; i < text.size(); ++i)
    mine.data[i] = static_cast<double>(static_cast<unsigned char>(text[i]));
  const ref::HostTensor all = comm.allgather(mine, 0);
  std::vector<std::vector<std::string>> out(static_cast<size_t>(comm.size()));
  for (size_t r = 0; r < out.size(); ++r) {
    std::string line;
    for (int64_t i = 0; i < width; ++i) {
      const double c = all.data[r * static_cast<size_t>(width) + static_cast<size_t>(i)];
      if (c < 0) break;
      if (c == '\n') {
        out[r].push_back(std::move(line));
        line.clear();
      } else {
        line += static_cast<char>(static_cast<unsigned char>(c));
      }
    }
  }
  return out;
}

StepRun make_step_point(const lower::ShardedPlan& plan, size_t step, const SchedulerRef& ref,
                        runtime::Backend* backend, Options options, const std::string& path) {
  const auto& local = std::get<lower::LocalStep>(plan.steps.at(step));
  const ir::Fusion& f = *local.fusion.fusion;
  // The Point schedules its fusion in place: a copy, so that the plan keeps
  // the unscheduled step (show prints it; a later point may reuse the plan).
  const std::vector<ir::Expr*> live = f.exprs_for_outputs();
  ir::Extraction copy =
      ir::extract(f, std::vector<const ir::Expr*>(live.begin(), live.end()), f.name());
  StepRun run;
  run.step = step;
  for (const ir::TensorView* t : copy.original_inputs()) {
    const int i = index_of(f.inputs(), t);
    internal_assert(i >= 0) << "sharded: step " << step << ": input " << t->describe()
                            << " of the copy is no input of " << f.name();
    run.inputs.push_back(local.inputs.at(static_cast<size_t>(i)));
  }
  for (const ir::TensorView* t : copy.original_outputs()) {
    const int i = index_of(f.outputs(), t);
    internal_assert(i >= 0) << "sharded: step " << step << ": output " << t->describe()
                            << " of the copy is no output of " << f.name();
    run.outputs.push_back(local.outputs.at(static_cast<size_t>(i)));
  }
  frontend::FusionDefinition def;
  def.fusion = std::move(copy.fusion);
  def.path = path;
  options.sanitize_name = f.name();
  run.point = std::make_unique<Point>(sweep::BoundFusion{path, std::move(def), local.sizes}, ref,
                                      backend, std::move(options));
  return run;
}

ShardedResult run_sharded(sweep::BoundFusion bf, const SchedulerRef& ref,
                          const ir::DeviceMesh& mesh, runtime::Backend* backend,
                          runtime::Communicator& comm, const ShardedOptions& options) {
  internal_assert(comm.size() == mesh.size())
      << "sharded: " << comm.size() << " ranks for a mesh of " << mesh.size();
  ShardedResult r;
  r.rank = comm.rank();
  r.ranks = comm.size();
  r.fusion = std::move(bf);
  const ir::Fusion& f = *r.fusion.def.fusion;
  const ir::SizeBindings& sizes = r.fusion.sizes;
  r.plan = lower::plan_communication(f, sizes, mesh);
  const lower::ShardedPlan& plan = r.plan;
  user_assert(!options.fault || options.fault->step < plan.steps.size())
      << "a fault at plan step " << options.fault->step << ": the plan of " << f.name() << " on "
      << mesh.size() << " ranks has steps 0 to " << plan.steps.size() - 1;

  // The global inputs, the same on every rank (the same seed); only rank 0
  // evaluates the reference, from an unscheduled copy of the fusion.
  std::vector<ref::HostTensor> inputs;
  if (r.rank == 0) {
    r.reference = make_reference(frontend::load_fusion_file(r.fusion.path), sizes, options.seed,
                                 options.fast_math);
    inputs = r.reference->inputs;
  } else {
    inputs = ref::make_inputs(f, sizes, options.seed, r.fusion.def.input_ranges);
  }
  std::vector<std::optional<ref::HostTensor>> values(plan.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const lower::PlanValue& v = plan.values[i];
    internal_assert(v.tensor == f.inputs()[i])
        << "sharded: plan value " << i << " is " << v.str() << ", expected the input "
        << f.inputs()[i]->describe();
    values[i] = v.layout == lower::PlanValue::Layout::Sharded
                    ? ref::slice_axis(inputs[i], v.axis, r.rank, r.ranks)
                    : std::move(inputs[i]);
  }
  auto value = [&](int i) -> ref::HostTensor& {
    internal_assert(values.at(static_cast<size_t>(i)).has_value())
        << "sharded: " << plan.values[static_cast<size_t>(i)].str() << " is read before it is made";
    return *values[static_cast<size_t>(i)];
  };

  // This rank's time: each local step's Run stage and each communication
  // (not the scheduling, lowering and compiling around them).
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  Clock::time_point run_start;
  bool validating_pass = true;  // the repetitions time themselves
  Options po = options.point;
  po.first = Stage::Schedule;
  po.last = po.sanitize ? Stage::Sanitize : Stage::Run;
  po.observer = [&, user = options.point.observer](const Event& e, const Point& p) {
    if (validating_pass && e.stage == Stage::Run && e.kernel == Event::kWhole) {
      if (e.begin)
        run_start = Clock::now();
      else
        r.seconds += seconds_since(run_start);
    }
    return !user || user(e, p);
  };
  std::vector<std::string> findings;
  // A local step as a Point; the values it made (none when its scheduler
  // declined it: then the point is Rejected).
  auto run_local = [&](size_t s) -> std::vector<int> {
    StepRun run = make_step_point(plan, s, ref, backend, po, r.fusion.path);
    Point& p = *run.point;
    p.run(Stage::Schedule, Stage::Schedule);
    if (p.result().verdict == Verdict::Rejected) {
      r.verdict = Verdict::Rejected;
      r.reject_reason = fmt::format("step {} ({}): {}", s, p.fusion().def.fusion->name(),
                                    p.result().reject_reason);
      r.steps.push_back(std::move(run));
      return {};
    }
    auto step_ref = std::make_shared<Reference>();
    for (int i : run.inputs) step_ref->inputs.push_back(value(i));
    p.set_reference(std::move(step_ref));
    p.run(Stage::Lower, po.last);
    const std::vector<ref::HostTensor>& out = p.result().outputs;
    internal_assert(out.size() == run.outputs.size())
        << "sharded: step " << s << " gave " << out.size() << " outputs, expected "
        << run.outputs.size();
    for (size_t o = 0; o < out.size(); ++o) values[run.outputs[o]] = out[o];
    for (const runtime::SanitizerFinding& x : p.result().findings) findings.push_back(x.message());
    std::vector<int> made = run.outputs;
    r.steps.push_back(std::move(run));
    return made;
  };
  // A communication through the communicator (a Slice is local).
  auto communicate = [&](const lower::Communication& c) -> std::vector<int> {
    const ref::HostTensor& in = value(c.input);
    const Clock::time_point start = Clock::now();
    values[c.output] = run_communication(comm, c, in);
    r.seconds += seconds_since(start);
    return {c.output};
  };
  // The steady state (ShardedOptions::repetitions): the plan again on the
  // values of the validating run, which keeps them (a repetition's outputs
  // are the same bits, or a fault's are not: they are dropped).
  auto time_repetitions = [&] {
    std::vector<const StepRun*> by_step(plan.steps.size(), nullptr);
    for (const StepRun& s : r.steps) by_step[s.step] = &s;
    const int reps = options.repetitions;
    std::vector<double> mine(static_cast<size_t>(2 * reps), 0.0);
    for (int k = -options.warmup; k < reps; ++k) {
      comm.all(true);  // a barrier: every rank starts the repetition together
      double comm_s = 0;
      const Clock::time_point start = Clock::now();
      for (size_t s = 0; s < plan.steps.size(); ++s) {
        const auto* c = std::get_if<lower::Communication>(&plan.steps[s]);
        if (!c) {
          by_step[s]->point->run(Stage::Run, Stage::Run);
          continue;
        }
        const Clock::time_point cs = Clock::now();
        (void)run_communication(comm, *c, value(c->input));
        comm_s += seconds_since(cs);
      }
      const double t = seconds_since(start);
      if (k < 0) continue;  // warmup
      mine[static_cast<size_t>(k)] = t;
      mine[static_cast<size_t>(reps + k)] = comm_s;
    }
    // Every rank's times: [rank][2 reps] (its totals, then its communications).
    ref::HostTensor t{ir::DataType::F64, {static_cast<int64_t>(mine.size())}, mine};
    const std::vector<double> all = comm.allgather(t, 0).data;
    const size_t width = mine.size();
    r.times.assign(static_cast<size_t>(reps), 0.0);
    r.comm_times.assign(static_cast<size_t>(reps), 0.0);
    for (int rank = 0; rank < r.ranks; ++rank) {
      const double* row = all.data() + static_cast<size_t>(rank) * width;
      std::vector<double> own(row, row + reps);
      for (size_t k = 0; k < own.size(); ++k) {
        r.times[k] = std::max(r.times[k], own[k]);
        r.comm_times[k] = std::max(r.comm_times[k], row[static_cast<size_t>(reps) + k]);
      }
      r.rank_seconds[static_cast<size_t>(rank)] = median(std::move(own));
    }
    r.max_seconds = median(r.times);
    r.slowest_rank = static_cast<int>(
        std::max_element(r.rank_seconds.begin(), r.rank_seconds.end()) - r.rank_seconds.begin());
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const auto* c = std::get_if<lower::Communication>(&plan.steps[s]);
    const std::vector<int> made = c ? communicate(*c) : run_local(s);
    if (r.verdict == Verdict::Rejected) return r;  // every rank declines alike
    if (options.fault && options.fault->step == s && options.fault->rank == r.rank) {
      std::vector<ref::HostTensor> got;
      for (int i : made) got.push_back(value(i));
      const std::vector<ref::HostTensor> want = got;
      sweep::mutate(options.fault->mutation, got, want);
      for (size_t i = 0; i < made.size(); ++i) values[made[i]] = std::move(got[i]);
    }
  }
  validating_pass = false;
  {
    ref::HostTensor mine{ir::DataType::F64, {1}, {r.seconds}};
    r.rank_seconds = comm.allgather(mine, 0).data;
    const auto slowest = std::max_element(r.rank_seconds.begin(), r.rank_seconds.end());
    r.max_seconds = *slowest;
    r.slowest_rank = static_cast<int>(slowest - r.rank_seconds.begin());
    r.times = {r.max_seconds};
  }
  if (options.repetitions > 0) time_repetitions();

  // Every output to rank 0: a sharded one gathered along its axis; of a
  // replicated one every rank's copy (flattened, gathered, cut), since a
  // wrong collective may leave the ranks' copies different.
  std::vector<std::vector<ref::HostTensor>> copies(static_cast<size_t>(r.ranks));
  for (int o : plan.outputs) {
    const lower::PlanValue& v = plan.values[static_cast<size_t>(o)];
    internal_assert(v.layout != lower::PlanValue::Layout::Partial)
        << "sharded: output " << v.str() << " is partial";
    if (v.layout == lower::PlanValue::Layout::Sharded) {
      ref::HostTensor all = comm.gather_to_root(value(o), v.axis);
      if (r.rank == 0)
        for (auto& c : copies) c.push_back(all);
      continue;
    }
    ref::HostTensor flat = value(o);
    flat.shape = {flat.numel()};
    const ref::HostTensor all = comm.gather_to_root(flat, 0);
    if (r.rank != 0) continue;
    for (int k = 0; k < r.ranks; ++k) {
      ref::HostTensor c = ref::slice_axis(all, 0, k, r.ranks);
      c.shape = value(o).shape;
      copies[static_cast<size_t>(k)].push_back(std::move(c));
    }
  }
  const std::vector<std::vector<std::string>> every = all_lines(comm, findings);
  for (size_t k = 0; k < every.size(); ++k)
    for (const std::string& l : every[k]) r.findings.push_back(fmt::format("rank {}: {}", k, l));

  bool ok = true;
  if (r.rank == 0) {
    auto validate = [&](const std::vector<ref::HostTensor>& got) {
      return sweep::validate(*r.reference->plain, sizes, got, r.reference->want,
                             options.point.tolerance);
    };
    r.outputs = copies[0];
    sweep::Validation v = validate(r.outputs);
    // Another rank's copies, where they differ from rank 0's: the first
    // that fails validation is the verdict, its outputs named with the rank.
    for (size_t k = 1; k < copies.size() && v.ok; ++k) {
      bool same = true;
      for (size_t i = 0; i < copies[k].size(); ++i)
        same = same && copies[k][i].data == r.outputs[i].data;
      if (same) continue;
      sweep::Validation vk = validate(copies[k]);
      if (vk.ok) continue;
      for (sweep::OutputCheck& c : vk.outputs)
        if (!c.cmp.ok) c.name += fmt::format(", rank {}'s copy", k);
      v = std::move(vk);
    }
    for (const StepRun& s : r.steps) v.add_findings(s.point->result().findings);
    ok = v.ok;
    r.validation = std::move(v);
  }
  r.config = sharded_config(plan, r.steps);
  for (const lower::PlanStep& step : plan.steps)
    if (const auto* l = std::get_if<lower::LocalStep>(&step))
      r.bytes_moved += sweep::io_bytes(*l->fusion.fusion, l->sizes);
  if (r.rank == 0 && options.profile_device) {
    // The model's view of the steady state: every step's kernels, profiled
    // as a one-device point's are, and the communications.
    std::vector<std::vector<model::KernelProfile>> profiles;
    for (StepRun& s : r.steps) {
      Point& p = *s.point;
      p.options().observer = nullptr;  // it refers to this function's locals
      p.options().profile_device = options.profile_device;
      p.run(Stage::Profile, Stage::Profile);
      profiles.push_back(p.result().profiles);
    }
    r.prediction =
        sharded_prediction(profiles, model::communication_us(*options.profile_device, plan),
                           r.bytes_moved, *options.profile_device);
  }
  // Rank 0's verdict, on every rank (the others vote true).
  ok = comm.all(ok);
  r.verdict = !r.findings.empty() ? Verdict::Racy : ok ? Verdict::Ok : Verdict::WrongResult;
  return r;
}

}  // namespace schedlab::point
