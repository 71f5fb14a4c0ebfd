// The host API table: each C entry checks its arguments, calls the ir/sched
// function it names, and turns any error into a status plus last_error.
//
// Over 600 lines, for a reason: it is one flat table of small C entries (the
// ABI of plugin-api/include/schedlab/plugin.h), which reads best whole; the
// shared checks it uses are at the top.
#include "host_api.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using ir::TensorView;

/// The message of the last failed host call on this thread.
thread_local std::string tls_last_error;
/// The plugin this thread is calling into (CallScope).
thread_local const std::string* tls_current_plugin = nullptr;
/// The call into it ("schedule"), beside tls_current_plugin.
thread_local const char* tls_current_call = nullptr;

/// An argument the ABI itself rejects (SCHEDLAB_ERR_INVALID_ARGUMENT).
struct AbiError {
  std::string message;
};

[[noreturn]] void abi_error(const char* fn, const std::string& what) {
  throw AbiError{std::string(fn) + ": " + what};
}

/// Runs f; 0 on success, otherwise a status and tls_last_error.
template <typename F>
int32_t guard(F&& f) noexcept {
  try {
    f();
    return SCHEDLAB_OK;
  } catch (const AbiError& e) {
    tls_last_error = e.message;
    return SCHEDLAB_ERR_INVALID_ARGUMENT;
  } catch (const UserError& e) {
    // The message as the primitive wrote it: the plugin's caller reports it
    // unchanged. A location, if any, goes in front as in what().
    tls_last_error = e.loc().valid() ? e.loc().str() + ": " + e.message() : e.message();
    return SCHEDLAB_ERR_USER;
  } catch (const InternalError& e) {
    tls_last_error = e.what();
    return SCHEDLAB_ERR_INTERNAL;
  } catch (const std::exception& e) {
    tls_last_error =
        std::string("internal error (a bug in schedlab, please report it): ") + e.what();
    return SCHEDLAB_ERR_INTERNAL;
  } catch (...) {
    tls_last_error = "internal error (a bug in schedlab, please report it): unknown exception";
    return SCHEDLAB_ERR_INTERNAL;
  }
}

Segment& segment(SchedlabSegment* s, const char* fn) {
  if (s == nullptr || s->segment == nullptr || s->segment->fusion == nullptr)
    abi_error(fn, "segment handle is null");
  return *s->segment;
}

/// The tensor behind a handle, which must belong to the segment. Checked
/// against the fusion's tensors without dereferencing the handle.
TensorView* tensor(SchedlabSegment* s, SchedlabTensor* t, const char* fn,
                   const char* arg = "tensor") {
  Segment& seg = segment(s, fn);
  if (t == nullptr) abi_error(fn, std::string(arg) + " handle is null");
  if (!s->tensors.count(t)) {
    s->tensors.clear();
    int64_t index = 0;
    for (TensorView* tv : seg.fusion->tensors()) s->tensors.emplace(tv, index++);
    if (!s->tensors.count(t)) {
      std::ostringstream os;
      os << arg << " handle " << static_cast<const void*>(t) << " is not a tensor of segment '"
         << seg.fusion->name() << "'";
      abi_error(fn, os.str());
    }
  }
  return reinterpret_cast<TensorView*>(t);
}

SchedlabTensor* handle(TensorView* tv) {
  return reinterpret_cast<SchedlabTensor*>(tv);
}

std::vector<TensorView*> tensors(SchedlabSegment* s, SchedlabTensor* const* list, int32_t n,
                                 const char* fn, const char* arg) {
  if (n < 0) abi_error(fn, std::string(arg) + " count is negative (" + std::to_string(n) + ")");
  if (n > 0 && list == nullptr)
    abi_error(fn, std::string(arg) + " is null with a count of " + std::to_string(n));
  std::vector<TensorView*> r;
  for (int32_t i = 0; i < n; ++i) r.push_back(tensor(s, list[i], fn, arg));
  return r;
}

/// The two-call list idiom: write min(capacity, n), always store n.
void fill(const std::vector<TensorView*>& v, SchedlabTensor** items, int32_t capacity,
          int32_t* count, const char* fn) {
  if (count == nullptr) abi_error(fn, "count is null");
  if (capacity < 0) abi_error(fn, "capacity is negative (" + std::to_string(capacity) + ")");
  if (capacity > 0 && items == nullptr)
    abi_error(fn, "items is null with a capacity of " + std::to_string(capacity));
  size_t n = std::min(v.size(), static_cast<size_t>(capacity));
  for (size_t i = 0; i < n; ++i) items[i] = handle(v[i]);
  *count = static_cast<int32_t>(v.size());
}

/// Writes an out-struct: min(both sizes) bytes, that count in struct_size.
template <typename T>
void write_out(T* out, T full, const char* fn) {
  if (out == nullptr) abi_error(fn, "out is null");
  if (out->struct_size < sizeof(uint32_t)) abi_error(fn, "out->struct_size is not set");
  uint32_t n = std::min<uint32_t>(out->struct_size, sizeof full);
  full.struct_size = n;
  std::memcpy(out, &full, n);
}

template <typename T>
void check_out(T* out, const char* fn, const char* arg = "out") {
  if (out == nullptr) abi_error(fn, std::string(arg) + " is null");
}

const char* keep(SchedlabSegment* s, std::string str) {
  s->strings.push_back(std::move(str));
  return s->strings.back().c_str();
}

/// C enum value -> IR enum, checked against the C enum's range.
template <typename E>
E enum_arg(int32_t v, int32_t last, const char* fn, const char* type) {
  if (v < 0 || v > last) abi_error(fn, "unknown " + std::string(type) + " " + std::to_string(v));
  return static_cast<E>(v);
}
ir::ParallelType parallel_arg(int32_t v, const char* fn) {
  return enum_arg<ir::ParallelType>(v, SCHEDLAB_PARALLEL_TIDZ, fn, "SchedlabParallelType");
}
ir::LoopTransform transform_arg(int32_t v, const char* fn) {
  return enum_arg<ir::LoopTransform>(v, SCHEDLAB_LOOP_BULK, fn, "SchedlabLoopTransform");
}
ir::CacheOp cache_op_arg(int32_t v, const char* fn) {
  return enum_arg<ir::CacheOp>(v, SCHEDLAB_CACHE_GLOBAL, fn, "SchedlabCacheOp");
}

// The C enums and the IR enums share their numbering; keep it that way.
static_assert(static_cast<int>(ir::ParallelType::TIDz) == SCHEDLAB_PARALLEL_TIDZ);
static_assert(static_cast<int>(ir::ParallelType::BIDx) == SCHEDLAB_PARALLEL_BIDX);
static_assert(static_cast<int>(ir::LoopTransform::Bulk) == SCHEDLAB_LOOP_BULK);
static_assert(static_cast<int>(ir::MemoryType::Global) == SCHEDLAB_MEMORY_GLOBAL);
static_assert(sched::kMaxSharedPad == SCHEDLAB_MAX_SHARED_PAD);
static_assert(sched::kMaxSwizzleWidth == SCHEDLAB_MAX_SWIZZLE_WIDTH);
static_assert(static_cast<int>(ir::CacheOp::Global) == SCHEDLAB_CACHE_GLOBAL);
static_assert(static_cast<int>(ir::LoadStoreOpType::Tma) == SCHEDLAB_LOAD_TMA);
static_assert(static_cast<int>(ir::IterType::Broadcast) == SCHEDLAB_ITER_BROADCAST);
static_assert(static_cast<int>(ir::DataType::F64) == SCHEDLAB_DTYPE_F64);
static_assert(static_cast<int>(ir::Expr::Kind::Permute) + 1 == SCHEDLAB_OP_PERMUTE);

std::string op_name(const ir::Expr* e) {
  if (e == nullptr) return "";
  if (const auto* u = e->as<ir::UnaryOp>()) return std::string(ir::unary_op_name(u->op()));
  if (const auto* b = e->as<ir::BinaryOp>()) return std::string(ir::binary_op_name(b->op()));
  if (const auto* r = e->as<ir::ReductionOp>()) return std::string(ir::reduction_op_name(r->op()));
  return e->op_name();
}

// ---- errors and logging

const char* api_last_error() {
  return tls_last_error.c_str();
}

void api_log(int32_t level, const char* message) {
  try {
    log_line(level, tls_current_plugin != nullptr ? *tls_current_plugin : std::string("?"),
             message != nullptr ? message : "(null)");
  } catch (...) {
    // Logging never fails a plugin.
  }
}

// ---- segment queries

int32_t api_segment_name(SchedlabSegment* s, const char** name) {
  return guard([&] {
    check_out(name, "segment_name", "name");
    *name = keep(s, segment(s, "segment_name").fusion->name());
  });
}

int32_t api_segment_tensors(SchedlabSegment* s, int32_t which, SchedlabTensor** items,
                            int32_t capacity, int32_t* count) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "segment_tensors").fusion;
    switch (which) {
      case SCHEDLAB_TENSORS_ALL:
        return fill(f.tensors(), items, capacity, count, "segment_tensors");
      case SCHEDLAB_TENSORS_INPUTS:
        return fill(f.inputs(), items, capacity, count, "segment_tensors");
      case SCHEDLAB_TENSORS_OUTPUTS:
        return fill(f.outputs(), items, capacity, count, "segment_tensors");
      default:
        abi_error("segment_tensors", "unknown SchedlabTensorSet " + std::to_string(which));
    }
  });
}

int32_t api_segment_size(SchedlabSegment* s, const char* name, int64_t* value) {
  return guard([&] {
    const Segment& seg = segment(s, "segment_size");
    if (name == nullptr) abi_error("segment_size", "name is null");
    check_out(value, "segment_size", "value");
    auto it = seg.sizes.find(name);
    if (it == seg.sizes.end()) {
      std::string known;
      for (const auto& [k, v] : seg.sizes) known += (known.empty() ? "" : ", ") + k;
      user_error << "segment '" << seg.fusion->name() << "' has no size named '" << name
                 << "' (its sizes: " << (known.empty() ? "none" : known) << ")";
    }
    *value = it->second;
  });
}

int32_t api_offered_by_segmenter(SchedlabSegment* s, int32_t* out) {
  return guard([&] {
    check_out(out, "offered_by_segmenter", "out");
    *out = segment(s, "offered_by_segmenter").from_segmenter ? 1 : 0;
  });
}

int32_t api_device_properties(SchedlabSegment* s, SchedlabDeviceProperties* out) {
  return guard([&] {
    const Segment& seg = segment(s, "device_properties");
    const runtime::DeviceProperties& d = seg.device;
    SchedlabDeviceProperties p{};
    p.is_model = seg.device_is_model ? 1 : 0;
    p.name = keep(s, d.name);
    p.arch = keep(s, d.arch);
    p.cc_major = d.cc_major;
    p.cc_minor = d.cc_minor;
    p.sm_count = d.sm_count;
    p.warp_size = d.warp_size;
    p.max_threads_per_block = d.max_threads_per_block;
    p.max_threads_per_sm = d.max_threads_per_sm;
    p.registers_per_block = d.registers_per_block;
    p.registers_per_sm = d.registers_per_sm;
    p.shared_bytes_per_block = d.shared_bytes_per_block;
    p.shared_bytes_per_block_optin = d.shared_bytes_per_block_optin;
    p.shared_bytes_per_sm = d.shared_bytes_per_sm;
    p.l2_bytes = d.l2_bytes;
    p.global_memory_bytes = d.global_memory_bytes;
    p.peak_bandwidth_bytes_per_s = d.peak_bandwidth_bytes_per_s;
    write_out(out, p, "device_properties");
  });
}

int32_t api_tensor_info(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensorInfo* out) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_info");
    const ir::Fusion& f = *s->segment->fusion;
    SchedlabTensorInfo i{};
    i.number = tv->number();
    i.name = keep(s, tv->user_name());
    i.dtype = static_cast<int32_t>(tv->dtype());
    i.op_kind = tv->definition() == nullptr ? SCHEDLAB_OP_NONE
                                            : static_cast<int32_t>(tv->definition()->kind()) + 1;
    i.op_name = keep(s, op_name(tv->definition()));
    i.memory_type = static_cast<int32_t>(tv->memory_type());
    i.is_input = f.is_input(tv) ? 1 : 0;
    i.is_output = f.is_output(tv) ? 1 : 0;
    i.nlogical = tv->nlogical();
    i.nloop = tv->nloop();
    i.nroot = static_cast<int32_t>(tv->root().size());
    i.compute_at_pos = tv->compute_at_pos();
    i.has_reduction = tv->has_reduction() ? 1 : 0;
    write_out(out, i, "tensor_info");
  });
}

int32_t api_tensor_axis(SchedlabSegment* s, SchedlabTensor* t, int32_t domain, int32_t index,
                        SchedlabAxisInfo* out) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_axis");
    const std::vector<ir::IterDomain*>* ids = nullptr;
    switch (domain) {
      case SCHEDLAB_DOMAIN_LOGICAL:
        ids = &tv->logical();
        break;
      case SCHEDLAB_DOMAIN_LOOP:
        ids = &tv->loop();
        break;
      case SCHEDLAB_DOMAIN_ROOT:
        ids = &tv->root();
        break;
      default:
        abi_error("tensor_axis", "unknown SchedlabDomain " + std::to_string(domain));
    }
    int32_t n = static_cast<int32_t>(ids->size());
    int32_t at = index < 0 ? index + n : index;
    user_assert(at >= 0 && at < n) << "tensor_axis: axis " << index << " is out of range for "
                                   << tv->describe() << ", which has " << n << " axes";
    const ir::IterDomain* id = (*ids)[static_cast<size_t>(at)];
    SchedlabAxisInfo a{};
    a.id = id->id();
    a.iter_type = static_cast<int32_t>(id->iter_type());
    a.parallel_type = static_cast<int32_t>(id->parallel_type());
    a.loop_transform = static_cast<int32_t>(id->loop_transform());
    a.extent = id->extent().evaluate(s->segment->sizes).value_or(-1);
    a.extent_expr = keep(s, id->extent().str());
    write_out(out, a, "tensor_axis");
  });
}

int32_t api_tensor_producers(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** items,
                             int32_t capacity, int32_t* count) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_producers");
    std::vector<TensorView*> r;
    if (tv->definition() != nullptr)
      for (ir::Val* v : tv->definition()->inputs())
        if (auto* p = v->as<TensorView>();
            p != nullptr && std::find(r.begin(), r.end(), p) == r.end())
          r.push_back(p);
    fill(r, items, capacity, count, "tensor_producers");
  });
}

int32_t api_tensor_consumers(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** items,
                             int32_t capacity, int32_t* count) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_consumers");
    std::vector<TensorView*> r;
    for (ir::Expr* e : tv->uses())
      if (std::find(r.begin(), r.end(), e->out()) == r.end()) r.push_back(e->out());
    fill(r, items, capacity, count, "tensor_consumers");
  });
}

// ---- scheduling primitives
//
// Each entry checks its arguments, then builds the Transform it names and
// hands it to step(), which applies it (transform_log.h, the same code a
// replay runs) and logs it for the host when the segment keeps a log.

using Op = Transform::Op;

/// Applies t to the segment's fusion and logs it; the tensor it creates.
TensorView* step(SchedlabSegment* s, Transform t, const char* fn,
                 std::vector<std::string>* script_log = nullptr) {
  Segment& seg = segment(s, fn);
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
    Transform x{Op::ParallelizeAllLike, with_reference(s, ref, sel),
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

// ---- queries

int32_t api_max_inline_position(SchedlabSegment* s, SchedlabTensor* t, int32_t* pos) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "max_inline_position");
    check_out(pos, "max_inline_position", "pos");
    *pos = sched::max_inline_position(tv);
  });
}

int32_t api_get_reduction_tvs(SchedlabSegment* s, SchedlabTensor** items, int32_t capacity,
                              int32_t* count) {
  return guard([&] {
    fill(sched::get_reduction_tvs(*segment(s, "get_reduction_tvs").fusion), items, capacity, count,
         "get_reduction_tvs");
  });
}

int32_t api_find_reference(SchedlabSegment* s, SchedlabTensor** out) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "find_reference").fusion;
    check_out(out, "find_reference");
    *out = handle(sched::find_reference_for(f));
  });
}

int32_t api_group_inputs_outputs_by_inner_dim(SchedlabSegment* s, SchedlabTensor** items,
                                              int32_t* groups, int32_t capacity, int32_t* count) {
  constexpr const char* fn = "group_inputs_outputs_by_inner_dim";
  return guard([&] {
    auto gs = sched::group_inputs_outputs_by_inner_dim(*segment(s, fn).fusion);
    std::vector<TensorView*> flat;
    std::vector<int32_t> ids;
    for (size_t g = 0; g < gs.size(); ++g)
      for (TensorView* tv : gs[g]) {
        flat.push_back(tv);
        ids.push_back(static_cast<int32_t>(g));
      }
    if (capacity > 0 && groups == nullptr) abi_error(fn, "groups is null with a positive capacity");
    fill(flat, items, capacity, count, fn);
    for (size_t i = 0; i < std::min(ids.size(), static_cast<size_t>(std::max(capacity, 0))); ++i)
      groups[i] = ids[i];
  });
}

int32_t api_is_dependency_of(SchedlabSegment* s, SchedlabTensor* v, SchedlabTensor* of,
                             int32_t* result) {
  return guard([&] {
    TensorView* a = tensor(s, v, "is_dependency_of", "v");
    TensorView* b = tensor(s, of, "is_dependency_of", "of");
    check_out(result, "is_dependency_of", "result");
    *result = sched::is_dependency_of(a, b) ? 1 : 0;
  });
}

int32_t api_vals_between(SchedlabSegment* s, SchedlabTensor* const* from, int32_t n_from,
                         SchedlabTensor* const* to, int32_t n_to, SchedlabTensor** items,
                         int32_t capacity, int32_t* count) {
  return guard([&] {
    auto f = tensors(s, from, n_from, "vals_between", "from");
    auto t = tensors(s, to, n_to, "vals_between", "to");
    fill(sched::vals_between(f, t), items, capacity, count, "vals_between");
  });
}

int32_t api_axes_mapped(SchedlabSegment* s, SchedlabTensor* a, int32_t a_axis, SchedlabTensor* b,
                        int32_t b_axis, int32_t exact, int32_t* result) {
  return guard([&] {
    TensorView* ta = tensor(s, a, "_axes_mapped", "a");
    TensorView* tb = tensor(s, b, "_axes_mapped", "b");
    check_out(result, "_axes_mapped", "result");
    const ir::Fusion& f = *s->segment->fusion;
    const size_t m = exact != 0 ? 0 : 1;
    if (!s->loop_maps[m] || s->loop_maps_ids[m] != f.iter_domains().size()) {
      s->loop_maps[m] = std::make_unique<sched::LoopMap>(
          f, exact != 0 ? sched::LoopMap::Mode::Exact : sched::LoopMap::Mode::Permissive);
      s->loop_maps_ids[m] = f.iter_domains().size();
    }
    *result = s->loop_maps[m]->mapped(ta->axis(a_axis), tb->axis(b_axis)) ? 1 : 0;
  });
}

// ---- debug printing

int32_t api_print_tensor(SchedlabSegment* s, SchedlabTensor* t, const char** text) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "print_tensor");
    check_out(text, "print_tensor", "text");
    *text = keep(s, sched::print_tensor(tv));
  });
}

int32_t api_print_scheduled_fusion(SchedlabSegment* s, const char** text) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "print_scheduled_fusion").fusion;
    check_out(text, "print_scheduled_fusion", "text");
    *text = keep(s, sched::print_scheduled_fusion(f));
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

SchedlabHostApi make_table() {
  SchedlabHostApi t{};
  t.struct_size = sizeof t;
  t.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  t.last_error = &api_last_error;
  t.log = &api_log;
  t.segment_name = &api_segment_name;
  t.segment_tensors = &api_segment_tensors;
  t.segment_size = &api_segment_size;
  t.device_properties = &api_device_properties;
  t.tensor_info = &api_tensor_info;
  t.tensor_axis = &api_tensor_axis;
  t.tensor_producers = &api_tensor_producers;
  t.tensor_consumers = &api_tensor_consumers;
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
  t.max_inline_position = &api_max_inline_position;
  t.get_reduction_tvs = &api_get_reduction_tvs;
  t.find_reference = &api_find_reference;
  t.group_inputs_outputs_by_inner_dim = &api_group_inputs_outputs_by_inner_dim;
  t.is_dependency_of = &api_is_dependency_of;
  t.vals_between = &api_vals_between;
  t.print_tensor = &api_print_tensor;
  t.print_scheduled_fusion = &api_print_scheduled_fusion;
  t._cache_after_op = &api_cache_after_op;
  t._axes_mapped = &api_axes_mapped;
  t.apply_schedule_script = &api_apply_schedule_script;
  t._schedule_placeholders = &api_schedule_placeholders;
  t.pad_shared = &api_pad_shared;
  t.swizzle = &api_swizzle;
  t.offered_by_segmenter = &api_offered_by_segmenter;
  t.recompute = &api_recompute;
  return t;
}

std::mutex log_mutex;
LogSink log_sink;

// isolate::run_isolated forks while other threads may be logging: a child
// that inherited log_mutex locked would block on its first plugin log line
// forever. Holding the lock across fork() hands both sides an unlocked one.
const bool log_mutex_fork_safe = [] {
  pthread_atfork([] { log_mutex.lock(); }, [] { log_mutex.unlock(); }, [] { log_mutex.unlock(); });
  return true;
}();

}  // namespace

const SchedlabHostApi* host_api() {
  static const SchedlabHostApi table = make_table();
  return &table;
}

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(log_mutex);
  log_sink = std::move(sink);
}

void log_line(int level, const std::string& plugin, const std::string& message) {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    sink = log_sink;
  }
  if (sink) return sink(level, plugin, message);
  static constexpr const char* kLevels[] = {"debug", "info", "warning", "error"};
  const char* l = level >= 0 && level <= 3 ? kLevels[level] : "log";
  std::lock_guard<std::mutex> lock(log_mutex);
  std::cerr << "plugin '" << plugin << "': " << l << ": " << message << "\n";
}

namespace {

/// exit() called from inside a plugin's call. Without this the host would end
/// with the plugin's status (exit(0): a false success, with no output and no
/// word of why); instead the plugin is blamed and the process fails (1).
/// _exit() runs no handler: the schedlab program interposes it instead
/// (bench/exit_hook.cpp, with current_plugin_call()).
void exit_during_plugin_call() {
  if (tls_current_plugin == nullptr) return;
  std::fflush(stdout);
  std::fprintf(stderr,
               "error: plugin '%s' called exit() inside its %s call; a plugin must return "
               "a status and never end the process (the plugin's failure, not schedlab's)\n",
               tls_current_plugin->c_str(), tls_current_call != nullptr ? tls_current_call : "");
  // Out of the call: an interposed _Exit must not blame the plugin twice.
  tls_current_plugin = nullptr;
  std::_Exit(1);
}

/// A forked child is no longer inside its parent's plugin call: a plugin
/// that forks and ends the child with _exit(0) must get exactly that, and
/// nothing of the parent's call may leak into an --isolate child either.
void forget_call_in_child() {
  tls_current_plugin = nullptr;
  tls_current_call = nullptr;
}

}  // namespace

PluginCall current_plugin_call() noexcept {
  if (tls_current_plugin == nullptr) return {};
  return {tls_current_plugin->c_str(), tls_current_call != nullptr ? tls_current_call : ""};
}

CallScope::CallScope(const std::string& plugin, const char* call)
    : previous_(tls_current_plugin),
      previous_call_(tls_current_call),
      doing_("plugin '" + plugin + "' " + call + "()") {
  static const bool registered = std::atexit(exit_during_plugin_call) == 0 &&
                                 pthread_atfork(nullptr, nullptr, forget_call_in_child) == 0;
  (void)registered;
  tls_current_plugin = &plugin;
  tls_current_call = call;
}
CallScope::~CallScope() {
  tls_current_plugin = previous_;
  tls_current_call = previous_call_;
}

}  // namespace schedlab::plugin
