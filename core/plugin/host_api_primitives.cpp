// The host API table's scheduling primitives (host_api.h): loop
// transforms, memory, propagation and inlining, and schedule scripts. Each
// entry checks its arguments (host_api_args.h), then builds the Transform it
// names and applies it as a replay would (transform_log.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "host_api_args.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/plugin/transform_log.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using namespace host_args;

// ---- scheduling primitives
//
// Each entry checks its arguments, then builds the Transform it names and
// hands it to step(), which applies it (transform_log.h, the same code a
// replay runs) and logs it for the host when the segment keeps a log.

using Op = Transform::Op;

/// Applies t to the segment's fusion and logs it; the tensor it creates.
TensorView* step(SchedlabSegment* s, Transform t, const char* fn,
                 std::vector<std::string>* script_log = nullptr) {
  HostSegment& seg = segment(s, fn);
  TensorView* made = apply(*seg.fusion, t, script_log);
  if (seg.log != nullptr) seg.log->push_back(std::move(t));
  return made;
}

/// The step's tensors, each checked by tensor() already, as their indices.
std::vector<int64_t> indices(SchedlabSegment* s, const std::vector<TensorView*>& tvs) {
  std::vector<int64_t> r;
  for (TensorView* tv : tvs) r.push_back(s->tensors.at(tv));
  return r;
}
std::vector<int64_t> index1(SchedlabSegment* s, SchedlabTensor* t, const char* fn,
                            const char* arg = "tensor") {
  return indices(s, {tensor(s, t, fn, arg)});
}

int32_t api_split(SchedlabSegment* s, SchedlabTensor* t, int32_t axis, int64_t factor,
                  int32_t inner_split) {
  return guard([&] {
    step(s, {Op::Split, index1(s, t, "split"), {axis, factor, inner_split != 0}}, "split");
  });
}

int32_t api_merge(SchedlabSegment* s, SchedlabTensor* t, int32_t axis_o, int32_t axis_i) {
  return guard([&] { step(s, {Op::Merge, index1(s, t, "merge"), {axis_o, axis_i}}, "merge"); });
}

int32_t api_reorder(SchedlabSegment* s, SchedlabTensor* t, const int32_t* old_axes,
                    const int32_t* new_axes, int32_t n) {
  return guard([&] {
    Transform x{Op::Reorder, index1(s, t, "reorder"), {}};
    if (n < 0) abi_error("reorder", "count is negative (" + std::to_string(n) + ")");
    if (n > 0 && (old_axes == nullptr || new_axes == nullptr))
      abi_error("reorder", "old_axes or new_axes is null with a count of " + std::to_string(n));
    for (int32_t i = 0; i < n; ++i) {
      x.ints.push_back(old_axes[i]);
      x.ints.push_back(new_axes[i]);
    }
    step(s, std::move(x), "reorder");
  });
}

int32_t api_parallelize(SchedlabSegment* s, SchedlabTensor* t, int32_t axis, int32_t type) {
  return guard([&] {
    auto tv = index1(s, t, "parallelize");
    const auto p = parallel_arg(type, "parallelize");
    step(s, {Op::Parallelize, tv, {axis, static_cast<int64_t>(p)}}, "parallelize");
  });
}

int32_t api_set_loop_transform(SchedlabSegment* s, SchedlabTensor* t, int32_t axis,
                               int32_t transform) {
  return guard([&] {
    auto tv = index1(s, t, "set_loop_transform");
    const auto x = transform_arg(transform, "set_loop_transform");
    step(s, {Op::SetLoopTransform, tv, {axis, static_cast<int64_t>(x)}}, "set_loop_transform");
  });
}

// ---- memory

int32_t api_set_memory_type(SchedlabSegment* s, SchedlabTensor* t, int32_t memory) {
  return guard([&] {
    auto tv = index1(s, t, "set_memory_type");
    const auto m = enum_arg<ir::MemoryType>(memory, SCHEDLAB_MEMORY_GLOBAL, "set_memory_type",
                                            "SchedlabMemoryType");
    step(s, {Op::SetMemoryType, tv, {static_cast<int64_t>(m)}}, "set_memory_type");
  });
}

int32_t api_pad_shared(SchedlabSegment* s, SchedlabTensor* t, int64_t elements) {
  return guard([&] {
    step(s, {Op::PadShared, index1(s, t, "pad_shared"), {elements}}, "pad_shared");
  });
}

int32_t api_swizzle(SchedlabSegment* s, SchedlabTensor* t, int64_t width) {
  return guard([&] { step(s, {Op::Swizzle, index1(s, t, "swizzle"), {width}}, "swizzle"); });
}

int32_t api_swizzle_bytes(SchedlabSegment* s, SchedlabTensor* t, int64_t width, int64_t bytes) {
  return guard([&] {
    step(s, {Op::Swizzle, index1(s, t, "swizzle_bytes"), {width, bytes}}, "swizzle_bytes");
  });
}

int32_t api_circular_buffer(SchedlabSegment* s, SchedlabTensor* t, int64_t stages,
                            int64_t prefetch) {
  return guard([&] {
    step(s, {Op::CircularBuffer, index1(s, t, "circular_buffer"), {stages, prefetch}},
         "circular_buffer");
  });
}

int32_t api_grid_persistent(SchedlabSegment* s, SchedlabTensor* t) {
  return guard([&] {
    step(s, {Op::GridPersistent, index1(s, t, "grid_persistent")}, "grid_persistent");
  });
}

int32_t api_propagate_reshape(SchedlabSegment* s) {
  return guard([&] { step(s, {Op::PropagateReshape, {}}, "propagate_reshape"); });
}

int32_t api_fuse_mma(SchedlabSegment* s, SchedlabTensor* t) {
  return guard([&] { step(s, {Op::FuseMma, index1(s, t, "fuse_mma")}, "fuse_mma"); });
}

int32_t api_mma_tile(SchedlabSegment* s, SchedlabTensor* t) {
  return guard([&] { step(s, {Op::MmaTile, index1(s, t, "mma_tile")}, "mma_tile"); });
}

int32_t cache_after_impl(SchedlabSegment* s, SchedlabTensor* t, int32_t op, int32_t cache_op,
                         SchedlabTensor** out, const char* fn) {
  return guard([&] {
    auto tv = index1(s, t, fn);
    check_out(out, fn);
    const auto o = enum_arg<ir::LoadStoreOpType>(op, SCHEDLAB_LOAD_TMA, fn, "SchedlabLoadStoreOp");
    const auto c = cache_op_arg(cache_op, fn);
    *out = handle(
        step(s, {Op::CacheAfter, tv, {static_cast<int64_t>(o), static_cast<int64_t>(c)}}, fn));
  });
}

int32_t api_cache_after(SchedlabSegment* s, SchedlabTensor* t, int32_t cache_op,
                        SchedlabTensor** out) {
  return cache_after_impl(s, t, SCHEDLAB_LOAD_SET, cache_op, out, "cache_after");
}

int32_t api_cache_after_op(SchedlabSegment* s, SchedlabTensor* t, int32_t op, int32_t cache_op,
                           SchedlabTensor** out) {
  return cache_after_impl(s, t, op, cache_op, out, "_cache_after_op");
}

/// cache_before and cache_fork: one tensor in, the new one out.
int32_t cache_one(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** out, Op op,
                  const char* fn) {
  return guard([&] {
    auto tv = index1(s, t, fn);
    check_out(out, fn);
    *out = handle(step(s, {op, tv, {}}, fn));
  });
}

int32_t api_cache_before(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** out) {
  return cache_one(s, t, out, Op::CacheBefore, "cache_before");
}

int32_t api_cache_fork(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** out) {
  return cache_one(s, t, out, Op::CacheFork, "cache_fork");
}

int32_t api_rfactor(SchedlabSegment* s, SchedlabTensor* t, const int32_t* axes, int32_t n,
                    SchedlabTensor** out) {
  return guard([&] {
    auto tv = index1(s, t, "rfactor");
    check_out(out, "rfactor");
    if (n < 0 || (n > 0 && axes == nullptr))
      abi_error("rfactor", "axes is null or its count negative (" + std::to_string(n) + ")");
    *out = handle(step(s, {Op::Rfactor, tv, std::vector<int64_t>(axes, axes + n)}, "rfactor"));
  });
}

// ---- propagation and inlining

/// {first, rest...} as indices.
std::vector<int64_t> with_reference(SchedlabSegment* s, TensorView* first,
                                    const std::vector<TensorView*>& rest) {
  std::vector<TensorView*> all{first};
  all.insert(all.end(), rest.begin(), rest.end());
  return indices(s, all);
}

int32_t api_propagate_transformation(SchedlabSegment* s, SchedlabTensor* reference,
                                     SchedlabTensor* const* selected, int32_t n) {
  constexpr const char* fn = "propagate_transformation";
  return guard([&] {
    TensorView* ref = tensor(s, reference, fn, "reference");
    auto sel = tensors(s, selected, n, fn, "selected");
    step(s, {Op::PropagateTransformation, with_reference(s, ref, sel), {}}, fn);
  });
}

int32_t api_parallelize_all_like(SchedlabSegment* s, SchedlabTensor* reference, int32_t pos,
                                 SchedlabTensor* const* selected, int32_t n_selected,
                                 const int32_t* types, int32_t n_types, const int32_t* transforms,
                                 int32_t n_transforms) {
  constexpr const char* fn = "parallelize_all_like";
  return guard([&] {
    TensorView* ref = tensor(s, reference, fn, "reference");
    auto sel = tensors(s, selected, n_selected, fn, "selected");
    if (n_types < 0 || (n_types > 0 && types == nullptr))
      abi_error(fn, "types is null or its count negative");
    std::set<ir::ParallelType> ts;
    for (int32_t i = 0; i < n_types; ++i) ts.insert(parallel_arg(types[i], fn));
    std::set<ir::LoopTransform> xs = {ir::LoopTransform::Unroll, ir::LoopTransform::Unswitch};
    if (transforms != nullptr) {
      if (n_transforms < 0) abi_error(fn, "transforms count is negative");
      xs.clear();
      for (int32_t i = 0; i < n_transforms; ++i) xs.insert(transform_arg(transforms[i], fn));
    }
    Transform x{Op::ParallelizeAllLike,
                with_reference(s, ref, sel),
                {pos, static_cast<int64_t>(ts.size())}};
    for (ir::ParallelType p : ts) x.ints.push_back(static_cast<int64_t>(p));
    for (ir::LoopTransform l : xs) x.ints.push_back(static_cast<int64_t>(l));
    step(s, std::move(x), fn);
  });
}

int32_t api_inline_at(SchedlabSegment* s, SchedlabTensor* t, int32_t pos, int32_t best_effort) {
  return guard([&] {
    step(s, {Op::InlineAt, index1(s, t, "inline_at"), {pos, best_effort != 0}}, "inline_at");
  });
}

int32_t api_inline_selected_at(SchedlabSegment* s, SchedlabTensor* const* selected, int32_t n,
                               SchedlabTensor* reference, int32_t pos) {
  constexpr const char* fn = "inline_selected_at";
  return guard([&] {
    auto sel = tensors(s, selected, n, fn, "selected");
    TensorView* ref = tensor(s, reference, fn, "reference");
    step(s, {Op::InlineSelectedAt, with_reference(s, ref, sel), {pos}}, fn);
  });
}

int32_t api_recompute(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor* const* consumers,
                      int32_t n, SchedlabTensor** out) {
  constexpr const char* fn = "recompute";
  return guard([&] {
    auto sel = tensors(s, consumers, n, fn, "consumers");
    TensorView* tv = tensor(s, t, fn, "t");
    check_out(out, fn);
    *out = handle(step(s, {Op::Recompute, with_reference(s, tv, sel), {}}, fn));
  });
}

int32_t api_inline_most(SchedlabSegment* s, SchedlabTensor* const* selected, int32_t n) {
  return guard([&] {
    auto sel = tensors(s, selected, n, "inline_most", "selected");
    step(s, {Op::InlineMost, indices(s, sel), {}}, "inline_most");
  });
}

// ---- schedule scripts (ABI 1.1)

int32_t api_apply_schedule_script(SchedlabSegment* s, const char* path, const char* args,
                                  const char** log) {
  constexpr const char* fn = "apply_schedule_script";
  return guard([&] {
    segment(s, fn);
    if (path == nullptr) abi_error(fn, "path is null");
    // Logged with the script's text: a replay never reads the file again.
    Transform x{Op::ApplyScript, {}, {}};
    x.text = frontend::read_schedule_file(path);
    x.text2 = args != nullptr ? args : "";
    x.path = path;
    std::vector<std::string> lines;
    step(s, std::move(x), fn, &lines);
    if (log != nullptr) {
      std::string text;
      for (const std::string& l : lines) text += (text.empty() ? "" : "\n") + l;
      *log = keep(s, std::move(text));
    }
  });
}

int32_t api_schedule_placeholders(SchedlabSegment* s, const char* path, const char** names) {
  constexpr const char* fn = "_schedule_placeholders";
  return guard([&] {
    segment(s, fn);
    if (path == nullptr) abi_error(fn, "path is null");
    check_out(names, fn, "names");
    std::string text;
    for (const auto& p : frontend::schedule_placeholders(std::string(path))) {
      text += (text.empty() ? "" : ",") + p.name;
      if (p.default_value) text += "=" + std::to_string(*p.default_value);
    }
    *names = keep(s, std::move(text));
  });
}

}  // namespace

void add_primitive_entries(SchedlabHostApi& t) {
  t.split = &api_split;
  t.merge = &api_merge;
  t.reorder = &api_reorder;
  t.parallelize = &api_parallelize;
  t.set_loop_transform = &api_set_loop_transform;
  t.set_memory_type = &api_set_memory_type;
  t.cache_after = &api_cache_after;
  t.cache_before = &api_cache_before;
  t.cache_fork = &api_cache_fork;
  t.rfactor = &api_rfactor;
  t.propagate_transformation = &api_propagate_transformation;
  t.parallelize_all_like = &api_parallelize_all_like;
  t.inline_at = &api_inline_at;
  t.inline_selected_at = &api_inline_selected_at;
  t.inline_most = &api_inline_most;
  t._cache_after_op = &api_cache_after_op;
  t.apply_schedule_script = &api_apply_schedule_script;
  t._schedule_placeholders = &api_schedule_placeholders;
  t.pad_shared = &api_pad_shared;
  t.swizzle = &api_swizzle;
  t.recompute = &api_recompute;
  t.grid_persistent = &api_grid_persistent;
  t.circular_buffer = &api_circular_buffer;
  t.fuse_mma = &api_fuse_mma;
  t.mma_tile = &api_mma_tile;
  t.swizzle_bytes = &api_swizzle_bytes;
  t.propagate_reshape = &api_propagate_reshape;
}

}  // namespace schedlab::plugin
