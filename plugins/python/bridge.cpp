// The bridge (bridge.h). Handles are the C ABI's pointers as Python ints; a
// function that makes or lists tensors returns their handles, and
// schedlab_heuristic wraps them. Every body runs inside `host`, which turns
// the plugin API's Error into the Python exception ScheduleError.
#include "bridge.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "embed.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::python_plugin {

namespace pa = schedlab::plugin_api;
namespace py = pybind11;

namespace {

using Handle = uintptr_t;
using Handles = std::vector<Handle>;

pa::Segment seg_of(Handle s) {
  return pa::Segment(reinterpret_cast<SchedlabSegment*>(s));
}
pa::TensorView tv_of(Handle s, Handle t) {
  return pa::TensorView(reinterpret_cast<SchedlabSegment*>(s),
                        reinterpret_cast<SchedlabTensor*>(t));
}
Handle handle_of(const pa::TensorView& tv) {
  return reinterpret_cast<Handle>(tv.handle());
}
Handles handles_of(const std::vector<pa::TensorView>& tvs) {
  Handles out;
  for (const pa::TensorView& tv : tvs) out.push_back(handle_of(tv));
  return out;
}
std::vector<pa::TensorView> tvs_of(Handle s, const Handles& hs) {
  std::vector<pa::TensorView> out;
  for (Handle h : hs) out.push_back(tv_of(s, h));
  return out;
}

/// Runs one host call; the host's refusal becomes ScheduleError(message, status).
template <typename F>
auto host(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const pa::Error& e) {
    py::object error = heuristic_module().attr("ScheduleError")(e.what(), e.status());
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
  }
}

py::tuple axis_tuple(const pa::AxisInfo& a) {
  return py::make_tuple(a.id, static_cast<int>(a.iter_type), static_cast<int>(a.parallel_type),
                        static_cast<int>(a.loop_transform), a.extent, a.extent_expr);
}

py::dict tensor_info(Handle s, Handle t) {
  pa::TensorView tv = tv_of(s, t);
  py::dict d;
  d["number"] = tv.number();
  d["name"] = tv.name();
  d["dtype"] = static_cast<int>(tv.dtype());
  d["op_kind"] = static_cast<int>(tv.op_kind());
  d["op_name"] = tv.op_name();
  d["memory_type"] = static_cast<int>(tv.memory_type());
  d["is_input"] = tv.is_input();
  d["is_output"] = tv.is_output();
  d["has_reduction"] = tv.has_reduction();
  d["nlogical"] = tv.nlogical();
  d["nloop"] = tv.nloop();
  d["compute_at_pos"] = tv.compute_at_pos();
  return d;
}

py::dict device(Handle s) {
  pa::DeviceProperties p = seg_of(s).device();
  py::dict d;
  d["is_model"] = p.is_model;
  d["name"] = p.name;
  d["arch"] = p.arch;
  d["cc_major"] = p.cc_major;
  d["cc_minor"] = p.cc_minor;
  d["sm_count"] = p.sm_count;
  d["warp_size"] = p.warp_size;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["max_threads_per_sm"] = p.max_threads_per_sm;
  d["registers_per_block"] = p.registers_per_block;
  d["registers_per_sm"] = p.registers_per_sm;
  d["shared_bytes_per_block"] = p.shared_bytes_per_block;
  d["shared_bytes_per_block_optin"] = p.shared_bytes_per_block_optin;
  d["shared_bytes_per_sm"] = p.shared_bytes_per_sm;
  d["l2_bytes"] = p.l2_bytes;
  d["global_memory_bytes"] = p.global_memory_bytes;
  d["peak_bandwidth_bytes_per_s"] = p.peak_bandwidth_bytes_per_s;
  return d;
}

/// ABI 1.7: the operands of t's definition in order, each (kind, tensor
/// handle or 0, value, text, dtype), kind a SchedlabOperandKind.
py::list operands(Handle s, Handle t) {
  py::list r;
  for (const pa::Operand& o : tv_of(s, t).operands())
    r.append(py::make_tuple(static_cast<int>(o.kind), handle_of(o.tensor), o.value, o.text,
                            static_cast<int>(o.dtype)));
  return r;
}

/// ABI 1.7: (load_store_op, cache_op, axes) of t's definition (pa::Definition).
py::tuple definition(Handle s, Handle t) {
  pa::Definition d = tv_of(s, t).definition();
  return py::make_tuple(static_cast<int>(d.load_store_op), static_cast<int>(d.cache_op),
                        py::tuple(py::cast(d.axes)));
}

/// The segment's queries and the multi-tensor primitives.
void add_segment_calls(py::dict& b) {
  b["segment_name"] =
      py::cpp_function([](Handle s) { return host([&] { return seg_of(s).name(); }); });
  b["segment_tensors"] = py::cpp_function([](Handle s, int which) {
    return host([&] {
      pa::Segment seg = seg_of(s);
      return handles_of(which == SCHEDLAB_TENSORS_INPUTS    ? seg.inputs()
                        : which == SCHEDLAB_TENSORS_OUTPUTS ? seg.outputs()
                                                            : seg.tensors());
    });
  });
  b["segment_size"] = py::cpp_function(
      [](Handle s, const std::string& name) { return host([&] { return seg_of(s).size(name); }); });
  b["offered_by_segmenter"] = py::cpp_function(
      [](Handle s) { return host([&] { return seg_of(s).offered_by_segmenter(); }); });
  b["device"] = py::cpp_function([](Handle s) { return host([&] { return device(s); }); });
  b["reduction_tvs"] = py::cpp_function(
      [](Handle s) { return host([&] { return handles_of(seg_of(s).reduction_tvs()); }); });
  b["find_reference"] = py::cpp_function(
      [](Handle s) { return host([&] { return handle_of(seg_of(s).find_reference()); }); });
  b["group_inputs_outputs_by_inner_dim"] = py::cpp_function([](Handle s) {
    return host([&] {
      std::vector<Handles> groups;
      for (const auto& g : seg_of(s).group_inputs_outputs_by_inner_dim())
        groups.push_back(handles_of(g));
      return groups;
    });
  });
  b["is_dependency_of"] = py::cpp_function([](Handle s, Handle v, Handle of) {
    return host([&] { return seg_of(s).is_dependency_of(tv_of(s, v), tv_of(s, of)); });
  });
  b["vals_between"] = py::cpp_function([](Handle s, const Handles& from, const Handles& to) {
    return host([&] { return handles_of(seg_of(s).vals_between(tvs_of(s, from), tvs_of(s, to))); });
  });
  b["propagate_transformation"] = py::cpp_function([](Handle s, Handle ref, const Handles& sel) {
    host([&] { seg_of(s).propagate_transformation(tv_of(s, ref), tvs_of(s, sel)); });
  });
  b["parallelize_all_like"] =
      py::cpp_function([](Handle s, Handle ref, int pos, const Handles& sel,
                          const std::vector<int>& types, std::optional<std::vector<int>> loops) {
        host([&] {
          std::vector<pa::ParallelType> pts;
          for (int t : types) pts.push_back(static_cast<pa::ParallelType>(t));
          std::optional<std::vector<pa::LoopTransform>> lts;
          if (loops) {
            lts.emplace();
            for (int t : *loops) lts->push_back(static_cast<pa::LoopTransform>(t));
          }
          seg_of(s).parallelize_all_like(tv_of(s, ref), pos, tvs_of(s, sel), pts, lts);
        });
      });
  b["inline_most"] = py::cpp_function(
      [](Handle s, const Handles& sel) { host([&] { seg_of(s).inline_most(tvs_of(s, sel)); }); });
  b["inline_selected_at"] = py::cpp_function([](Handle s, const Handles& sel, Handle ref, int pos) {
    host([&] { seg_of(s).inline_selected_at(tvs_of(s, sel), tv_of(s, ref), pos); });
  });
  b["apply_schedule_script"] =
      py::cpp_function([](Handle s, const std::string& path, const std::string& args) {
        return host([&] { return seg_of(s).apply_schedule_script(path, args); });
      });
  b["print_segment"] =
      py::cpp_function([](Handle s) { return host([&] { return seg_of(s).print(); }); });
  b["log"] = py::cpp_function([](int level, const std::string& message) {
    pa::log(static_cast<pa::LogLevel>(level), message);
  });
}

/// One tensor's queries and primitives.
void add_tensor_calls(py::dict& b) {
  b["tensor_info"] =
      py::cpp_function([](Handle s, Handle t) { return host([&] { return tensor_info(s, t); }); });
  b["tensor_axis"] = py::cpp_function([](Handle s, Handle t, int domain, int i) {
    return host([&] {
      pa::TensorView tv = tv_of(s, t);
      return axis_tuple(domain == SCHEDLAB_DOMAIN_LOOP ? tv.axis(i) : tv.logical_axis(i));
    });
  });
  b["producers"] = py::cpp_function(
      [](Handle s, Handle t) { return host([&] { return handles_of(tv_of(s, t).producers()); }); });
  b["operands"] =
      py::cpp_function([](Handle s, Handle t) { return host([&] { return operands(s, t); }); });
  b["definition"] =
      py::cpp_function([](Handle s, Handle t) { return host([&] { return definition(s, t); }); });
  b["consumers"] = py::cpp_function(
      [](Handle s, Handle t) { return host([&] { return handles_of(tv_of(s, t).consumers()); }); });
  b["max_inline_position"] = py::cpp_function(
      [](Handle s, Handle t) { return host([&] { return tv_of(s, t).max_inline_position(); }); });
  b["print_tensor"] = py::cpp_function(
      [](Handle s, Handle t) { return host([&] { return tv_of(s, t).print(); }); });
  b["split"] = py::cpp_function([](Handle s, Handle t, int axis, int64_t factor, bool inner) {
    host([&] { tv_of(s, t).split(axis, factor, inner); });
  });
  b["merge"] = py::cpp_function(
      [](Handle s, Handle t, int o, int i) { host([&] { tv_of(s, t).merge(o, i); }); });
  b["reorder"] =
      py::cpp_function([](Handle s, Handle t, const std::vector<std::pair<int, int>>& old2new) {
        host([&] { tv_of(s, t).reorder(old2new); });
      });
  b["parallelize"] = py::cpp_function([](Handle s, Handle t, int axis, int p) {
    host([&] { tv_of(s, t).parallelize(axis, static_cast<pa::ParallelType>(p)); });
  });
  b["set_loop_transform"] = py::cpp_function([](Handle s, Handle t, int axis, int lt) {
    host([&] { tv_of(s, t).parallelize(axis, static_cast<pa::LoopTransform>(lt)); });
  });
  b["set_memory_type"] = py::cpp_function([](Handle s, Handle t, int m) {
    host([&] { tv_of(s, t).set_memory_type(static_cast<pa::MemoryType>(m)); });
  });
  b["pad_shared"] = py::cpp_function(
      [](Handle s, Handle t, int64_t n) { host([&] { tv_of(s, t).pad_shared(n); }); });
  b["swizzle"] = py::cpp_function(
      [](Handle s, Handle t, int64_t w) { host([&] { tv_of(s, t).swizzle(w); }); });
  b["cache_after"] = py::cpp_function([](Handle s, Handle t, int op) {
    return host([&] { return handle_of(tv_of(s, t).cache_after(static_cast<pa::CacheOp>(op))); });
  });
  b["cache_after_path"] = py::cpp_function([](Handle s, Handle t, int path, int op) {
    return host([&] {
      return handle_of(tv_of(s, t).cache_after(static_cast<pa::LoadStoreOp>(path),
                                               static_cast<pa::CacheOp>(op)));
    });
  });
  b["cache_before"] = py::cpp_function([](Handle s, Handle t) {
    return host([&] { return handle_of(tv_of(s, t).cache_before()); });
  });
  b["cache_fork"] = py::cpp_function(
      [](Handle s, Handle t) { return host([&] { return handle_of(tv_of(s, t).cache_fork()); }); });
  b["recompute"] = py::cpp_function([](Handle s, Handle t, const Handles& consumers) {
    return host([&] { return handle_of(tv_of(s, t).recompute(tvs_of(s, consumers))); });
  });
  b["rfactor"] = py::cpp_function([](Handle s, Handle t, const std::vector<int>& axes) {
    return host([&] { return handle_of(tv_of(s, t).rfactor(axes)); });
  });
  b["inline_at"] = py::cpp_function([](Handle s, Handle t, int pos, bool best_effort) {
    host([&] { tv_of(s, t).inline_at(pos, best_effort); });
  });
}

}  // namespace

py::object make_bridge() {
  py::dict b;
  add_segment_calls(b);
  add_tensor_calls(b);
  return py::module_::import("types").attr("SimpleNamespace")(**b);
}

}  // namespace schedlab::python_plugin
