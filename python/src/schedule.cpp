// The scheduling primitives and queries as TensorView/IterDomain methods
// and `schedlab.schedule` functions, in nvFuser's Python spelling. Each
// calls the same C++ function the schedule-script primitive of the same
// name calls (core/frontend/schedule_primitives.cpp; the table in
// docs/schedule-scripts.md, "Primitives"), with the same checks: a user
// error is a ScheduleError with the primitive's message, the tensor and
// axis of the call and the Python line; ir::verify holds after each, as
// after each script line. The first primitive freezes the math (the
// unscheduled copy the reference and execute() use).
#include <pybind11/stl.h>

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "bindings.h"
#include "enums.h"
#include "errors.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/ir/reshape.h"
#include "schedlab/sched/sched.h"

namespace schedlab::python {

namespace {

/// Applies one primitive of `d`'s fusion: freezes the math first, verifies
/// the fusion after, and turns a user error into a ScheduleError about `call`.
template <typename F>
decltype(auto) apply(Definition& d, const Call& call, F&& f) {
  return guarded(ErrorKind::Schedule, call, [&]() -> decltype(auto) {
    d.freeze();
    auto verified = [&] { ir::verify(d.fusion()); };
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      verified();
    } else {
      auto r = f();
      verified();
      return r;
    }
  });
}

std::vector<ir::TensorView*> tvs(const std::vector<Tensor>& ts) {
  std::vector<ir::TensorView*> out;
  for (const Tensor& t : ts) out.push_back(t.tv);
  return out;
}

std::vector<Tensor> handles(const DefinitionPtr& d, const std::vector<ir::TensorView*>& ts) {
  std::vector<Tensor> out;
  for (ir::TensorView* t : ts) out.push_back({d, t});
  return out;
}

/// `tensors` plus `reference`, all of one definition: that definition.
DefinitionPtr definition_with(const Tensor& reference, std::vector<Tensor> tensors,
                              const char* what) {
  tensors.insert(tensors.begin(), reference);
  return definition_of(tensors, what);
}

/// The definition a query or a fusion-wide primitive acts on: `fd`, else
/// the open `with` block's.
DefinitionPtr target(const std::optional<DefinitionPtr>& fd, const char* what) {
  return fd && *fd ? *fd : definition_of({}, what);
}

/// parallelize on one loop axis: a Python ParallelType (a binding or a
/// loop transform, as nvFuser's) or a LoopTransform.
void parallelize(Tensor& t, int axis, std::variant<ir::ParallelType, ir::LoopTransform> type) {
  apply(*t.owner, {"parallelize", t.tv, axis},
        [&] { std::visit([&](auto b) { t.tv->parallelize(axis, b); }, type); });
}

void bind_tensor_methods(TensorClass& tv) {
  tv.def(
        "split",
        [](Tensor& t, int axis, int64_t factor, bool inner_split) {
          apply(*t.owner, {"split", t.tv, axis}, [&] { t.tv->split(axis, factor, inner_split); });
          return t;
        },
        py::arg("axis"), py::arg("factor"), py::arg("inner_split") = true,
        "Splits loop axis `axis` by `factor` (on the inner axis, or the outer one when "
        "inner_split=False)")
      .def(
          "merge",
          [](Tensor& t, int axis_o, std::optional<int> axis_i) {
            apply(*t.owner, {"merge", t.tv, axis_o},
                  [&] { t.tv->merge(axis_o, axis_i.value_or(axis_o + 1)); });
            return t;
          },
          py::arg("axis_o"), py::arg("axis_i") = py::none(),
          "Merges loop axes axis_o and axis_i (default axis_o + 1)")
      .def(
          "reorder",
          [](Tensor& t, const std::map<int, int>& old2new) {
            std::vector<std::pair<int, int>> pairs(old2new.begin(), old2new.end());
            apply(*t.owner, {"reorder", t.tv}, [&] { t.tv->reorder(pairs); });
            return t;
          },
          py::arg("old2new"), "Moves loop axis old to position new for each {old: new}")
      .def(
          "axis",
          [](Tensor& t, int i) {
            return guarded(ErrorKind::Schedule, {"axis", t.tv, i},
                           [&] { return Axis{t, t.tv->axis(i)}; });
          },
          py::arg("i"), "Loop axis i (negative: from the end)")
      .def(
          "parallelize",
          [](Tensor& t, int axis, PyParallelType type) { parallelize(t, axis, binding(type)); },
          py::arg("axis"), py::arg("type"),
          "The script's parallelize(tv, axis, type): tv.axis(axis).parallelize(type)")
      .def(
          "parallelize",
          [](Tensor& t, int axis, ir::LoopTransform type) { parallelize(t, axis, type); },
          py::arg("axis"), py::arg("type"))
      .def(
          "set_memory_type",
          [](Tensor& t, ir::MemoryType m) {
            apply(*t.owner, {"set_memory_type", t.tv}, [&] { sched::set_memory_type(t.tv, m); });
          },
          py::arg("memory_type"))
      .def(
          "pad_shared",
          [](Tensor& t, int64_t elements) {
            apply(*t.owner, {"pad_shared", t.tv}, [&] { sched::pad_shared(t.tv, elements); });
          },
          py::arg("elements"))
      .def(
          "swizzle",
          [](Tensor& t, int64_t width) {
            apply(*t.owner, {"swizzle", t.tv}, [&] { sched::swizzle(t.tv, width); });
          },
          py::arg("width") = sched::kMaxSwizzleWidth)
      .def(
          "grid_persistent",
          [](Tensor& t) {
            apply(*t.owner, {"grid_persistent", t.tv}, [&] { sched::grid_persistent(t.tv); });
          },
          "The script's grid_persistent(tv): this reduction's grid reduction (over "
          "BIDx/BIDy) is an allreduce through a grid-wide barrier, so the kernel may read "
          "it (every block resident at once; lowering rule 8)")
      .def(
          "circular_buffer",
          [](Tensor& t, int64_t stages, std::optional<int64_t> prefetch) {
            apply(*t.owner, {"circular_buffer", t.tv}, [&] {
              sched::circular_buffer(t.tv, stages, prefetch.value_or(stages - 1));
            });
          },
          "The script's circular_buffer(tv, stages, prefetch): this cache holds `stages` "
          "tiles of its loop, each loaded `prefetch` (default stages - 1) iterations ahead",
          py::arg("stages"), py::arg("prefetch") = py::none())
      .def(
          "cache_after",
          [](Tensor& t, ir::LoadStoreOpType op, ir::CacheOp cache_op) {
            return Tensor{t.owner, apply(*t.owner, {"cache_after", t.tv},
                                         [&] { return sched::cache_after(t.tv, op, cache_op); })};
          },
          py::arg("op_type") = ir::LoadStoreOpType::Set,
          py::arg("cache_op") = ir::CacheOp::Unspecified)
      .def(
          "cache_before",
          [](Tensor& t) {
            return Tensor{t.owner, apply(*t.owner, {"cache_before", t.tv},
                                         [&] { return sched::cache_before(t.tv); })};
          })
      .def(
          "cache_fork",
          [](Tensor& t) {
            return Tensor{t.owner, apply(*t.owner, {"cache_fork", t.tv},
                                         [&] { return sched::cache_fork(t.tv); })};
          })
      .def(
          "recompute",
          [](Tensor& t, const std::vector<Tensor>& consumers) {
            return Tensor{t.owner, apply(*t.owner, {"recompute", t.tv}, [&] {
                            return sched::recompute(t.tv, tvs(consumers));
                          })};
          },
          py::arg("consumers") = std::vector<Tensor>{})
      .def(
          "fuse_mma",
          [](Tensor& t) {
            apply(*t.owner, {"fuse_mma", t.tv}, [&] { sched::fuse_mma(t.tv); });
            return t;
          },
          "The script's fuse_mma(tv): this matmul sum (sum over K of a product of two "
          "tensors, bf16/f16 through f32 casts) becomes one MmaOp reading the operands as "
          "they are; returns the tensor")
      .def(
          "rfactor",
          [](Tensor& t, const std::vector<int>& axes) {
            return Tensor{t.owner, apply(*t.owner, {"rfactor", t.tv},
                                         [&] { return sched::rfactor(t.tv, axes); })};
          },
          py::arg("axes"))
      .def(
          "inline_at",
          [](Tensor& t, int pos, bool best_effort) {
            apply(*t.owner, {"inline_at", t.tv, pos},
                  [&] { sched::inline_at(t.tv, pos, best_effort); });
          },
          py::arg("pos"), py::arg("best_effort") = false,
          "The script's inline_at(tv, pos, best_effort): this tensor at pos");
}

void bind_schedule_functions(py::module_& s) {
  s.def(
      "transform_like",
      [](Tensor& reference, const std::vector<Tensor>& selected) {
        DefinitionPtr d = definition_with(reference, selected, "transform_like");
        apply(*d, {"transform_like", reference.tv},
              [&] { sched::propagate_transformation(reference.tv, tvs(selected)); });
      },
      py::arg("reference_tv"), py::arg("selected_tensors") = std::vector<Tensor>{},
      "propagate_transformation: replays the reference's splits and merges on the selected "
      "tensors (every other one when empty)");
  s.def(
      "parallelize_like",
      [](Tensor& reference, int pos, const std::vector<Tensor>& selected,
         const std::set<PyParallelType>& selected_parallel_types) {
        DefinitionPtr d = definition_with(reference, selected, "parallelize_like");
        // nvFuser's set holds bindings and loop transforms alike; empty: every
        // binding, and the script's default transforms (Unroll, Unswitch).
        std::set<ir::ParallelType> types;
        std::set<ir::LoopTransform> transforms = {ir::LoopTransform::Unroll,
                                                  ir::LoopTransform::Unswitch};
        if (!selected_parallel_types.empty()) transforms.clear();
        for (PyParallelType p : selected_parallel_types)
          std::visit([&](auto b) {
            if constexpr (std::is_same_v<decltype(b), ir::ParallelType>)
              types.insert(b);
            else
              transforms.insert(b);
          }, binding(p));
        apply(*d, {"parallelize_like", reference.tv, pos}, [&] {
          sched::parallelize_all_like(reference.tv, pos, tvs(selected), types, transforms);
        });
      },
      py::arg("reference_tv"), py::arg("pos") = -1,
      py::arg("selected_tensors") = std::vector<Tensor>{},
      py::arg("selected_parallel_types") = std::set<PyParallelType>{},
      "parallelize_all_like: copies the reference's bindings of its first pos loop axes");
  s.def(
      "inline_most",
      [](const std::vector<Tensor>& selected) {
        DefinitionPtr d = definition_of(selected, "inline_most");
        apply(*d, {"inline_most"}, [&] { sched::inline_most(d->fusion(), tvs(selected)); });
      },
      py::arg("selected_tensors") = std::vector<Tensor>{},
      "Inlines the selected tensors (all when empty) as far as legal");
  s.def(
      "inline_at",
      [](Tensor& reference, int pos, bool, const std::vector<Tensor>& selected) {
        DefinitionPtr d = definition_with(reference, selected, "inline_at");
        apply(*d, {"inline_at", reference.tv, pos}, [&] {
          std::vector<ir::TensorView*> chosen = tvs(selected);
          if (chosen.empty()) chosen = sched::all_tvs_except(d->fusion(), d->fusion().inputs());
          sched::inline_selected_at(chosen, reference.tv, pos);
        });
      },
      py::arg("reference_tv"), py::arg("pos") = -1, py::arg("best_effort") = false,
      py::arg("selected_tensors") = std::vector<Tensor>{},
      "nvFuser's inline_at: the selected tensors (all when empty) at the position covering "
      "the reference's first pos loop axes (inline_selected_at; always clamped to the legal "
      "position, so best_effort changes nothing)");
  s.def(
      "inline_selected_at",
      [](const std::vector<Tensor>& selected, Tensor& reference, int pos) {
        DefinitionPtr d = definition_with(reference, selected, "inline_selected_at");
        apply(*d, {"inline_selected_at", reference.tv, pos},
              [&] { sched::inline_selected_at(tvs(selected), reference.tv, pos); });
      },
      py::arg("selected_tensors"), py::arg("reference_tv"), py::arg("pos"));

  s.def(
      "propagate_reshape",
      [](std::optional<DefinitionPtr> fd) {
        DefinitionPtr d = target(fd, "propagate_reshape");
        apply(*d, {"propagate_reshape"}, [&] { sched::propagate_reshape(d->fusion()); });
      },
      py::arg("fusion") = py::none(),
      "The script's propagate_reshape(): each reshape's splits and merges replayed on the "
      "tensors it depends on (nvFuser's propagateReshapeTransforms)");

  // Queries (sched/queries.h): they change nothing.
  s.def(
      "get_reduction_tvs",
      [](std::optional<DefinitionPtr> fd) {
        DefinitionPtr d = target(fd, "get_reduction_tvs");
        return handles(d, sched::get_reduction_tvs(d->fusion()));
      },
      py::arg("fusion") = py::none());
  s.def(
      "all_tvs_except",
      [](const std::vector<Tensor>& except, std::optional<DefinitionPtr> fd) {
        DefinitionPtr d = except.empty() ? target(fd, "all_tvs_except")
                                         : definition_of(except, "all_tvs_except");
        return handles(d, sched::all_tvs_except(d->fusion(), tvs(except)));
      },
      py::arg("except_tensors"), py::arg("fusion") = py::none());
  s.def(
      "get_view_ops",
      [](std::optional<DefinitionPtr> fd) {
        DefinitionPtr d = target(fd, "get_view_ops");
        std::vector<ir::TensorView*> outs;
        for (const ir::ViewOp* v : ir::view_ops(d->fusion())) outs.push_back(v->out());
        return handles(d, outs);
      },
      py::arg("fusion") = py::none(), "The outputs of the fusion's reshapes, in statement order");
  s.def(
      "find_reference_for",
      [](std::optional<DefinitionPtr> fd) -> std::optional<Tensor> {
        DefinitionPtr d = target(fd, "find_reference_for");
        ir::TensorView* t = sched::find_reference_for(d->fusion());
        return t ? std::optional<Tensor>(Tensor{d, t}) : std::nullopt;
      },
      py::arg("fusion") = py::none());
  s.def(
      "group_inputs_outputs_by_inner_dim",
      [](std::optional<DefinitionPtr> fd) {
        DefinitionPtr d = target(fd, "group_inputs_outputs_by_inner_dim");
        std::vector<std::vector<Tensor>> groups;
        for (const auto& g : sched::group_inputs_outputs_by_inner_dim(d->fusion()))
          groups.push_back(handles(d, g));
        return groups;
      },
      py::arg("fusion") = py::none());
}

}  // namespace

void bind_schedule(py::module_& m, TensorClass& tv, AxisClass& axis) {
  bind_tensor_methods(tv);
  // The axis' current position in its tensor's loop domain.
  auto position = [](const Axis& a) {
    const std::vector<ir::IterDomain*>& loop = a.tensor.tv->loop();
    auto it = std::find(loop.begin(), loop.end(), a.id);
    if (it == loop.end())
      raise(ErrorKind::Schedule,
            fmt::format("parallelize: {} is no longer a loop axis of {}; take tv.axis(i) "
                        "again after splitting, merging or reordering",
                        a.id->str(), a.tensor.tv->describe()),
            {"parallelize", a.tensor.tv});
    return static_cast<int>(it - loop.begin());
  };
  axis.def(
          "parallelize",
          [position](Axis& a, PyParallelType type) {
            parallelize(a.tensor, position(a), binding(type));
          },
          py::arg("type"), "Binds this loop axis (or sets its loop transform)")
      .def(
          "parallelize",
          [position](Axis& a, ir::LoopTransform type) {
            parallelize(a.tensor, position(a), type);
          },
          py::arg("type"));
  py::module_ s = m.def_submodule("schedule", "Scheduling functions over a whole fusion, and queries");
  bind_schedule_functions(s);
}

}  // namespace schedlab::python
