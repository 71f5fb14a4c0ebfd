// schedlab/plugin.hpp: the C++ face of the plugin ABI, header-only
// (DESIGN.md section 9).
//
// Owns: a TensorView-style API over the host's C table (schedlab/plugin.h),
// the parameter schema builders, and SCHEDLAB_PLUGIN(Class), which defines the
// one exported entry point. May use: plugin.h and the C++17 standard library;
// never a schedlab host header (a plugin links nothing from schedlab).
// Invariants: exceptions live only inside the plugin. A host call that fails
// throws plugin_api::Error carrying the host's status and last_error message;
// SCHEDLAB_PLUGIN catches every exception at the boundary and turns it into a
// status plus the plugin's last_error, so a user error raised by a primitive
// reaches the host with its message intact. Handles (Segment, TensorView) are
// valid only during the call that received them.
//
// A plugin:
//   class MyPlugin : public schedlab::plugin_api::Plugin { ... };
//   SCHEDLAB_PLUGIN(MyPlugin)
// built with schedlab_add_plugin(my_plugin my_plugin.cpp) (hidden visibility).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "schedlab/plugin.h"

namespace schedlab::plugin_api {

enum class DataType : int32_t {
  Bool = SCHEDLAB_DTYPE_BOOL,
  I32 = SCHEDLAB_DTYPE_I32,
  I64 = SCHEDLAB_DTYPE_I64,
  F16 = SCHEDLAB_DTYPE_F16,
  BF16 = SCHEDLAB_DTYPE_BF16,
  F32 = SCHEDLAB_DTYPE_F32,
  F64 = SCHEDLAB_DTYPE_F64,
};
/// Bytes of one element of `t` in memory.
inline int64_t dtype_bytes(DataType t) {
  switch (t) {
    case DataType::Bool:
      return 1;
    case DataType::F16:
    case DataType::BF16:
      return 2;
    case DataType::I32:
    case DataType::F32:
      return 4;
    case DataType::I64:
    case DataType::F64:
      return 8;
  }
  return 8;
}

/// Integer helpers every heuristic needs (a >= 0, b > 0, x >= 1).
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
/// The smallest power of two >= x.
inline int64_t next_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}
/// The largest power of two <= x (1 for x < 2).
inline int64_t largest_pow2_at_most(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

enum class IterType : int32_t {
  Iteration = SCHEDLAB_ITER_ITERATION,
  Reduction = SCHEDLAB_ITER_REDUCTION,
  Broadcast = SCHEDLAB_ITER_BROADCAST,
};
enum class ParallelType : int32_t {
  Serial = SCHEDLAB_PARALLEL_SERIAL,
  DIDx = SCHEDLAB_PARALLEL_DIDX,
  BIDx = SCHEDLAB_PARALLEL_BIDX,
  BIDy = SCHEDLAB_PARALLEL_BIDY,
  BIDz = SCHEDLAB_PARALLEL_BIDZ,
  TIDx = SCHEDLAB_PARALLEL_TIDX,
  TIDy = SCHEDLAB_PARALLEL_TIDY,
  TIDz = SCHEDLAB_PARALLEL_TIDZ,
};
enum class LoopTransform : int32_t {
  Serial = SCHEDLAB_LOOP_SERIAL,
  Vectorize = SCHEDLAB_LOOP_VECTORIZE,
  Unroll = SCHEDLAB_LOOP_UNROLL,
  Unswitch = SCHEDLAB_LOOP_UNSWITCH,
  Bulk = SCHEDLAB_LOOP_BULK,
};
enum class MemoryType : int32_t {
  Local = SCHEDLAB_MEMORY_LOCAL,
  Shared = SCHEDLAB_MEMORY_SHARED,
  Global = SCHEDLAB_MEMORY_GLOBAL,
};
enum class CacheOp : int32_t {
  Unspecified = SCHEDLAB_CACHE_UNSPECIFIED,
  AllLevels = SCHEDLAB_CACHE_ALL_LEVELS,
  Streaming = SCHEDLAB_CACHE_STREAMING,
  Global = SCHEDLAB_CACHE_GLOBAL,
};
enum class LoadStoreOp : int32_t {
  Set = SCHEDLAB_LOAD_SET,
  CpAsync = SCHEDLAB_LOAD_CP_ASYNC,
  LdMatrix = SCHEDLAB_LOAD_LDMATRIX,
  Tma = SCHEDLAB_LOAD_TMA,
};
enum class OpKind : int32_t {
  None = SCHEDLAB_OP_NONE,
  Unary = SCHEDLAB_OP_UNARY,
  Binary = SCHEDLAB_OP_BINARY,
  Where = SCHEDLAB_OP_WHERE,
  Cast = SCHEDLAB_OP_CAST,
  Reduction = SCHEDLAB_OP_REDUCTION,
  Broadcast = SCHEDLAB_OP_BROADCAST,
  LoadStore = SCHEDLAB_OP_LOAD_STORE,
  Permute = SCHEDLAB_OP_PERMUTE,
};
enum class LogLevel : int32_t {
  Debug = SCHEDLAB_LOG_DEBUG,
  Info = SCHEDLAB_LOG_INFO,
  Warning = SCHEDLAB_LOG_WARNING,
  Error = SCHEDLAB_LOG_ERROR,
};

/// A failed call: the status (SCHEDLAB_ERR_*) and the message. Thrown by the
/// wrappers below when the host refuses a call; plugin code may throw it too
/// (with SCHEDLAB_ERR_USER for a mistake in the user's request).
class Error : public std::runtime_error {
 public:
  Error(int32_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int32_t status() const { return status_; }

 private:
  int32_t status_;
};

namespace detail {

/// The host's table as this plugin knows it: zero-filled, then the bytes
/// both sides know copied in, so entries an older host lacks read as null.
inline SchedlabHostApi& host_table() {
  static SchedlabHostApi table;
  return table;
}

inline void bind_host(const SchedlabHostApi* host) {
  SchedlabHostApi& t = host_table();
  std::memset(&t, 0, sizeof t);
  size_t n = std::min<size_t>(host->struct_size, sizeof t);
  std::memcpy(&t, host, n);
  t.struct_size = static_cast<uint32_t>(n);
}

/// Throws Error for a negative status, with the host's message.
inline void check(int32_t status) {
  if (status >= 0) return;
  const SchedlabHostApi& t = host_table();
  throw Error(status, t.last_error != nullptr ? t.last_error() : "host call failed");
}

/// The host entry `member`, or Error(UNSUPPORTED) when the host is too old for it.
template <typename F>
F entry(F SchedlabHostApi::*member, const char* name) {
  F fn = host_table().*member;
  if (fn == nullptr) {
    uint32_t v = host_table().abi_version;
    throw Error(
        SCHEDLAB_ERR_UNSUPPORTED,
        std::string("the host (ABI ") + std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v)) + "." +
            std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v)) + ") has no '" + name + "' entry");
  }
  return fn;
}

template <typename F, typename... Args>
void call(F SchedlabHostApi::*member, const char* name, Args... args) {
  check(entry(member, name)(args...));
}

/// Runs a list entry with the two-call idiom: count, then fill.
template <typename F, typename... Args>
std::vector<SchedlabTensor*> list(F SchedlabHostApi::*member, const char* name, Args... args) {
  int32_t n = 0;
  check(entry(member, name)(args..., nullptr, 0, &n));
  std::vector<SchedlabTensor*> items(static_cast<size_t>(n));
  if (n > 0) check(entry(member, name)(args..., items.data(), n, &n));
  items.resize(static_cast<size_t>(n));
  return items;
}

}  // namespace detail

/// Writes one line to the host's log.
inline void log(LogLevel level, const std::string& message) {
  if (detail::host_table().log != nullptr)
    detail::host_table().log(static_cast<int32_t>(level), message.c_str());
}

/// One axis of a tensor, as the host describes it.
struct AxisInfo {
  int id = 0;                                            ///< fusion-unique IterDomain number
  IterType iter_type = IterType::Iteration;              ///< iteration, reduction or broadcast
  ParallelType parallel_type = ParallelType::Serial;     ///< hardware binding
  LoopTransform loop_transform = LoopTransform::Serial;  ///< how the loop is emitted
  int64_t extent = -1;                                   ///< at the segment's sizes; -1 unknown
  std::string extent_expr;                               ///< symbolic: "ceilDiv(N, 128)"
  bool is_reduction() const { return iter_type == IterType::Reduction; }
  bool is_broadcast() const { return iter_type == IterType::Broadcast; }
};

/// The target device (SchedlabDeviceProperties; a model device on the CPU backend).
struct DeviceProperties {
  bool is_model = false;
  std::string name;
  std::string arch;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  uint64_t shared_bytes_per_block = 0;
  uint64_t shared_bytes_per_block_optin = 0;
  uint64_t shared_bytes_per_sm = 0;
  uint64_t l2_bytes = 0;
  uint64_t global_memory_bytes = 0;
  double peak_bandwidth_bytes_per_s = 0;
};

/// The threads the device holds resident at once (all SMs full).
inline int64_t resident_capacity(const DeviceProperties& d) {
  return int64_t{d.sm_count > 0 ? d.sm_count : 1} *
         (d.max_threads_per_sm > 0 ? d.max_threads_per_sm : 2048);
}

/// True when a kernel whose blocks hold `threads` threads in all keeps at
/// most an eighth of the device's resident threads busy: too few loads in
/// flight to cover DRAM latency, whatever each thread does (the model's
/// latency term, docs/model.md: 1/8 of an H200's threads with 16-byte
/// loads move about 4 TB/s at best). The built-in heuristics refuse a
/// segment that would run so, when cutting it apart lets a reduction split
/// its rows over blocks instead, and only in the segmenter's offers
/// (Segment::offered_by_segmenter), which then cut it; asked to schedule it
/// whole (a sweep point, --plugin), they do.
inline bool starves_device(int64_t threads, const DeviceProperties& d) {
  return threads * 8 <= resident_capacity(d);
}

/// A tensor of the segment being scheduled. Transforms return *this so that
/// calls chain; primitives that create a tensor return it.
class TensorView {
 public:
  TensorView() = default;
  TensorView(SchedlabSegment* seg, SchedlabTensor* t) : seg_(seg), t_(t) {}
  SchedlabTensor* handle() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }
  bool operator==(const TensorView& o) const { return t_ == o.t_; }
  bool operator!=(const TensorView& o) const { return t_ != o.t_; }

  // ---- queries
  int number() const { return info().number; }
  /// "T3", as the host prints it.
  std::string str() const { return "T" + std::to_string(number()); }
  /// The user's name ("x"), or "".
  std::string name() const { return info().name; }
  DataType dtype() const { return static_cast<DataType>(info().dtype); }
  OpKind op_kind() const { return static_cast<OpKind>(info().op_kind); }
  std::string op_name() const { return info().op_name; }
  MemoryType memory_type() const { return static_cast<MemoryType>(info().memory_type); }
  bool is_input() const { return info().is_input != 0; }
  bool is_output() const { return info().is_output != 0; }
  bool has_reduction() const { return info().has_reduction != 0; }
  int nlogical() const { return info().nlogical; }
  int nloop() const { return info().nloop; }
  int compute_at_pos() const { return info().compute_at_pos; }
  /// Loop axis i (negative counts from the end).
  AxisInfo axis(int i) const { return axis_in(SCHEDLAB_DOMAIN_LOOP, i); }
  AxisInfo logical_axis(int i) const { return axis_in(SCHEDLAB_DOMAIN_LOGICAL, i); }
  std::vector<AxisInfo> loop() const { return domain(SCHEDLAB_DOMAIN_LOOP, nloop()); }
  std::vector<AxisInfo> logical() const { return domain(SCHEDLAB_DOMAIN_LOGICAL, nlogical()); }
  std::vector<TensorView> producers() const {
    return wrap(detail::list(&SchedlabHostApi::tensor_producers, "tensor_producers", seg_, t_));
  }
  std::vector<TensorView> consumers() const {
    return wrap(detail::list(&SchedlabHostApi::tensor_consumers, "tensor_consumers", seg_, t_));
  }
  int max_inline_position() const {
    int32_t pos = 0;
    detail::call(&SchedlabHostApi::max_inline_position, "max_inline_position", seg_, t_, &pos);
    return pos;
  }
  /// The host's debug print of this tensor (domains, transforms, memory).
  std::string print() const {
    const char* text = nullptr;
    detail::call(&SchedlabHostApi::print_tensor, "print_tensor", seg_, t_, &text);
    return text;
  }

  // ---- loop transforms
  TensorView& split(int axis, int64_t factor, bool inner_split = true) {
    detail::call(&SchedlabHostApi::split, "split", seg_, t_, axis, factor,
                 static_cast<int32_t>(inner_split));
    return *this;
  }
  TensorView& merge(int axis_o, int axis_i) {
    detail::call(&SchedlabHostApi::merge, "merge", seg_, t_, axis_o, axis_i);
    return *this;
  }
  TensorView& merge(int axis_o) { return merge(axis_o, axis_o + 1); }
  /// Each (old, new) pair moves loop axis old to position new.
  TensorView& reorder(const std::vector<std::pair<int, int>>& old2new) {
    std::vector<int32_t> from, to;
    for (const auto& [o, n] : old2new) {
      from.push_back(o);
      to.push_back(n);
    }
    detail::call(&SchedlabHostApi::reorder, "reorder", seg_, t_, from.data(), to.data(),
                 static_cast<int32_t>(from.size()));
    return *this;
  }
  TensorView& parallelize(int axis, ParallelType p) {
    detail::call(&SchedlabHostApi::parallelize, "parallelize", seg_, t_, axis,
                 static_cast<int32_t>(p));
    return *this;
  }
  TensorView& parallelize(int axis, LoopTransform t) {
    detail::call(&SchedlabHostApi::set_loop_transform, "set_loop_transform", seg_, t_, axis,
                 static_cast<int32_t>(t));
    return *this;
  }

  // ---- memory
  TensorView& set_memory_type(MemoryType m) {
    detail::call(&SchedlabHostApi::set_memory_type, "set_memory_type", seg_, t_,
                 static_cast<int32_t>(m));
    return *this;
  }
  /// ABI 1.2: pads each row of this Shared tensor's buffer by `elements`
  /// (0 to SCHEDLAB_MAX_SHARED_PAD): the innermost allocation axis's pitch
  /// becomes extent + elements. Call after set_memory_type(Shared).
  TensorView& pad_shared(int64_t elements) {
    detail::call(&SchedlabHostApi::pad_shared, "pad_shared", seg_, t_, elements);
    return *this;
  }
  /// ABI 1.3: XOR-swizzles the rows of this Shared tensor's buffer, `width`
  /// a power of two from 1 (none) to SCHEDLAB_MAX_SWIZZLE_WIDTH (see
  /// SchedlabHostApi::swizzle). Call after set_memory_type(Shared).
  TensorView& swizzle(int64_t width) {
    detail::call(&SchedlabHostApi::swizzle, "swizzle", seg_, t_, width);
    return *this;
  }
  TensorView cache_after(CacheOp op = CacheOp::Unspecified) {
    SchedlabTensor* out = nullptr;
    detail::call(&SchedlabHostApi::cache_after, "cache_after", seg_, t_, static_cast<int32_t>(op),
                 &out);
    return TensorView(seg_, out);
  }
  /// Experimental (outside the ABI promise): a cache copy through another data path.
  TensorView cache_after(LoadStoreOp path, CacheOp op) {
    SchedlabTensor* out = nullptr;
    detail::call(&SchedlabHostApi::_cache_after_op, "_cache_after_op", seg_, t_,
                 static_cast<int32_t>(path), static_cast<int32_t>(op), &out);
    return TensorView(seg_, out);
  }
  TensorView cache_before() {
    SchedlabTensor* out = nullptr;
    detail::call(&SchedlabHostApi::cache_before, "cache_before", seg_, t_, &out);
    return TensorView(seg_, out);
  }
  TensorView cache_fork() {
    SchedlabTensor* out = nullptr;
    detail::call(&SchedlabHostApi::cache_fork, "cache_fork", seg_, t_, &out);
    return TensorView(seg_, out);
  }
  /// ABI 1.5, nvFuser's recomputeTv: a copy of this tensor's definition that
  /// `consumers` read instead (none: every reader); see SchedlabHostApi::recompute.
  TensorView recompute(const std::vector<TensorView>& consumers = {});
  /// The new producer that reduces over `axes` first.
  TensorView rfactor(const std::vector<int>& axes) {
    std::vector<int32_t> a(axes.begin(), axes.end());
    SchedlabTensor* out = nullptr;
    detail::call(&SchedlabHostApi::rfactor, "rfactor", seg_, t_, a.data(),
                 static_cast<int32_t>(a.size()), &out);
    return TensorView(seg_, out);
  }

  // ---- inlining
  TensorView& inline_at(int pos, bool best_effort = false) {
    detail::call(&SchedlabHostApi::inline_at, "inline_at", seg_, t_, pos,
                 static_cast<int32_t>(best_effort));
    return *this;
  }

 private:
  SchedlabTensorInfo info() const {
    SchedlabTensorInfo i{};
    i.struct_size = sizeof i;
    detail::call(&SchedlabHostApi::tensor_info, "tensor_info", seg_, t_, &i);
    if (i.name == nullptr) i.name = "";
    if (i.op_name == nullptr) i.op_name = "";
    return i;
  }
  AxisInfo axis_in(int32_t domain, int i) const {
    SchedlabAxisInfo a{};
    a.struct_size = sizeof a;
    detail::call(&SchedlabHostApi::tensor_axis, "tensor_axis", seg_, t_, domain, i, &a);
    AxisInfo r;
    r.id = a.id;
    r.iter_type = static_cast<IterType>(a.iter_type);
    r.parallel_type = static_cast<ParallelType>(a.parallel_type);
    r.loop_transform = static_cast<LoopTransform>(a.loop_transform);
    r.extent = a.extent;
    r.extent_expr = a.extent_expr != nullptr ? a.extent_expr : "";
    return r;
  }
  std::vector<AxisInfo> domain(int32_t which, int n) const {
    std::vector<AxisInfo> r;
    for (int i = 0; i < n; ++i) r.push_back(axis_in(which, i));
    return r;
  }
  std::vector<TensorView> wrap(const std::vector<SchedlabTensor*>& ts) const {
    std::vector<TensorView> r;
    for (SchedlabTensor* t : ts) r.emplace_back(seg_, t);
    return r;
  }

  SchedlabSegment* seg_ = nullptr;
  SchedlabTensor* t_ = nullptr;
};

inline std::vector<SchedlabTensor*> handles(const std::vector<TensorView>& tvs);

inline TensorView TensorView::recompute(const std::vector<TensorView>& consumers) {
  std::vector<SchedlabTensor*> hs = handles(consumers);
  SchedlabTensor* out = nullptr;
  detail::call(&SchedlabHostApi::recompute, "recompute", seg_, t_, hs.data(),
               static_cast<int32_t>(hs.size()), &out);
  return TensorView(seg_, out);
}

inline std::vector<SchedlabTensor*> handles(const std::vector<TensorView>& tvs) {
  std::vector<SchedlabTensor*> r;
  for (const TensorView& tv : tvs) r.push_back(tv.handle());
  return r;
}

/// The segment being scheduled: its tensors, sizes and target device, and
/// the primitives that relate several tensors.
class Segment {
 public:
  explicit Segment(SchedlabSegment* seg) : seg_(seg) {}
  SchedlabSegment* handle() const { return seg_; }

  std::string name() const {
    const char* n = nullptr;
    detail::call(&SchedlabHostApi::segment_name, "segment_name", seg_, &n);
    return n;
  }
  std::vector<TensorView> tensors() const { return set(SCHEDLAB_TENSORS_ALL); }
  std::vector<TensorView> inputs() const { return set(SCHEDLAB_TENSORS_INPUTS); }
  std::vector<TensorView> outputs() const { return set(SCHEDLAB_TENSORS_OUTPUTS); }
  /// The concrete value of a named size.
  int64_t size(const std::string& name) const {
    int64_t v = 0;
    detail::call(&SchedlabHostApi::segment_size, "segment_size", seg_, name.c_str(), &v);
    return v;
  }
  /// ABI 1.5: whether the segmenter makes this offer (a refusal then cuts
  /// the segment apart instead of failing it; SchedlabHostApi::
  /// offered_by_segmenter). False on an older host.
  bool offered_by_segmenter() const {
    if (detail::host_table().offered_by_segmenter == nullptr) return false;
    int32_t out = 0;
    detail::call(&SchedlabHostApi::offered_by_segmenter, "offered_by_segmenter", seg_, &out);
    return out != 0;
  }
  DeviceProperties device() const {
    SchedlabDeviceProperties p{};
    p.struct_size = sizeof p;
    detail::call(&SchedlabHostApi::device_properties, "device_properties", seg_, &p);
    DeviceProperties d;
    d.is_model = p.is_model != 0;
    d.name = p.name != nullptr ? p.name : "";
    d.arch = p.arch != nullptr ? p.arch : "";
    d.cc_major = p.cc_major;
    d.cc_minor = p.cc_minor;
    d.sm_count = p.sm_count;
    d.warp_size = p.warp_size;
    d.max_threads_per_block = p.max_threads_per_block;
    d.max_threads_per_sm = p.max_threads_per_sm;
    d.registers_per_block = p.registers_per_block;
    d.registers_per_sm = p.registers_per_sm;
    d.shared_bytes_per_block = p.shared_bytes_per_block;
    d.shared_bytes_per_block_optin = p.shared_bytes_per_block_optin;
    d.shared_bytes_per_sm = p.shared_bytes_per_sm;
    d.l2_bytes = p.l2_bytes;
    d.global_memory_bytes = p.global_memory_bytes;
    d.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s;
    return d;
  }

  // ---- queries
  std::vector<TensorView> reduction_tvs() const {
    return wrap(detail::list(&SchedlabHostApi::get_reduction_tvs, "get_reduction_tvs", seg_));
  }
  /// find_reference_for; a null TensorView when there is none.
  TensorView find_reference() const {
    SchedlabTensor* t = nullptr;
    detail::call(&SchedlabHostApi::find_reference, "find_reference", seg_, &t);
    return TensorView(seg_, t);
  }
  std::vector<std::vector<TensorView>> group_inputs_outputs_by_inner_dim() const {
    auto fn = detail::entry(&SchedlabHostApi::group_inputs_outputs_by_inner_dim,
                            "group_inputs_outputs_by_inner_dim");
    int32_t n = 0;
    detail::check(fn(seg_, nullptr, nullptr, 0, &n));
    std::vector<SchedlabTensor*> items(static_cast<size_t>(n));
    std::vector<int32_t> groups(static_cast<size_t>(n));
    if (n > 0) detail::check(fn(seg_, items.data(), groups.data(), n, &n));
    std::vector<std::vector<TensorView>> r;
    for (int32_t k = 0; k < n; ++k) {
      size_t g = static_cast<size_t>(groups[static_cast<size_t>(k)]);
      if (r.size() <= g) r.resize(g + 1);
      r[g].emplace_back(seg_, items[static_cast<size_t>(k)]);
    }
    return r;
  }
  bool is_dependency_of(const TensorView& v, const TensorView& of) const {
    int32_t r = 0;
    detail::call(&SchedlabHostApi::is_dependency_of, "is_dependency_of", seg_, v.handle(),
                 of.handle(), &r);
    return r != 0;
  }
  std::vector<TensorView> vals_between(const std::vector<TensorView>& from,
                                       const std::vector<TensorView>& to) const {
    auto f = handles(from), t = handles(to);
    return wrap(detail::list(
        &SchedlabHostApi::vals_between, "vals_between", seg_,
        static_cast<SchedlabTensor* const*>(f.data()), static_cast<int32_t>(f.size()),
        static_cast<SchedlabTensor* const*>(t.data()), static_cast<int32_t>(t.size())));
  }
  /// Experimental (outside the ABI promise): LoopMap between two loop axes.
  bool axes_mapped(const TensorView& a, int a_axis, const TensorView& b, int b_axis,
                   bool exact = false) const {
    int32_t r = 0;
    detail::call(&SchedlabHostApi::_axes_mapped, "_axes_mapped", seg_, a.handle(), a_axis,
                 b.handle(), b_axis, static_cast<int32_t>(exact), &r);
    return r != 0;
  }

  // ---- propagation and inlining (empty `selected`: every tensor)
  void propagate_transformation(const TensorView& reference,
                                const std::vector<TensorView>& selected = {}) {
    auto s = handles(selected);
    detail::call(&SchedlabHostApi::propagate_transformation, "propagate_transformation", seg_,
                 reference.handle(), static_cast<SchedlabTensor* const*>(s.data()),
                 static_cast<int32_t>(s.size()));
  }
  /// `transforms` nullopt: the host's default (Unroll, Unswitch).
  void parallelize_all_like(const TensorView& reference, int pos = -1,
                            const std::vector<TensorView>& selected = {},
                            const std::vector<ParallelType>& types = {},
                            const std::optional<std::vector<LoopTransform>>& transforms = {}) {
    auto s = handles(selected);
    std::vector<int32_t> ty, tr;
    for (ParallelType p : types) ty.push_back(static_cast<int32_t>(p));
    if (transforms)
      for (LoopTransform t : *transforms) tr.push_back(static_cast<int32_t>(t));
    // A non-null pointer tells an explicit (maybe empty) list from "default".
    static const int32_t kNone = 0;
    const int32_t* tr_ptr = transforms ? (tr.empty() ? &kNone : tr.data()) : nullptr;
    detail::call(&SchedlabHostApi::parallelize_all_like, "parallelize_all_like", seg_,
                 reference.handle(), pos, static_cast<SchedlabTensor* const*>(s.data()),
                 static_cast<int32_t>(s.size()), static_cast<const int32_t*>(ty.data()),
                 static_cast<int32_t>(ty.size()), tr_ptr, static_cast<int32_t>(tr.size()));
  }
  void inline_selected_at(const std::vector<TensorView>& selected, const TensorView& reference,
                          int pos) {
    auto s = handles(selected);
    detail::call(&SchedlabHostApi::inline_selected_at, "inline_selected_at", seg_,
                 static_cast<SchedlabTensor* const*>(s.data()), static_cast<int32_t>(s.size()),
                 reference.handle(), pos);
  }
  void inline_most(const std::vector<TensorView>& selected = {}) {
    auto s = handles(selected);
    detail::call(&SchedlabHostApi::inline_most, "inline_most", seg_,
                 static_cast<SchedlabTensor* const*>(s.data()), static_cast<int32_t>(s.size()));
  }
  /// The host's debug print of the whole scheduled segment.
  std::string print() const {
    const char* text = nullptr;
    detail::call(&SchedlabHostApi::print_scheduled_fusion, "print_scheduled_fusion", seg_, &text);
    return text;
  }

  // ---- schedule scripts (ABI 1.1)
  /// Parses and applies the schedule script at `path` with {placeholder}
  /// values `args` ("k=v,k=v"). Returns the applied calls, one per line. A
  /// script error throws Error(SCHEDLAB_ERR_USER) with "file:line:col: ...".
  std::string apply_schedule_script(const std::string& path, const std::string& args = "") {
    const char* log = nullptr;
    detail::call(&SchedlabHostApi::apply_schedule_script, "apply_schedule_script", seg_,
                 path.c_str(), args.c_str(), &log);
    return log != nullptr ? log : "";
  }
  /// One name apply_schedule_script accepts in `args` for a script.
  struct Placeholder {
    std::string name;                      ///< as in {name} or params(name=...)
    std::optional<int64_t> default_value;  ///< from params(...), if declared there
  };
  /// Experimental (outside the ABI promise): the script's placeholders, in
  /// order of first appearance.
  std::vector<Placeholder> schedule_placeholders(const std::string& path) const {
    const char* names = nullptr;
    detail::call(&SchedlabHostApi::_schedule_placeholders, "_schedule_placeholders", seg_,
                 path.c_str(), &names);
    std::vector<Placeholder> r;
    std::string all = names != nullptr ? names : "";
    for (size_t at = 0; at < all.size();) {
      size_t comma = std::min(all.find(',', at), all.size());
      std::string item = all.substr(at, comma - at);
      size_t eq = item.find('=');
      Placeholder p;
      p.name = item.substr(0, eq);
      if (eq != std::string::npos) p.default_value = std::stoll(item.substr(eq + 1));
      r.push_back(std::move(p));
      at = comma + 1;
    }
    return r;
  }

 private:
  std::vector<TensorView> set(int32_t which) const {
    return wrap(detail::list(&SchedlabHostApi::segment_tensors, "segment_tensors", seg_, which));
  }
  std::vector<TensorView> wrap(const std::vector<SchedlabTensor*>& ts) const {
    std::vector<TensorView> r;
    for (SchedlabTensor* t : ts) r.emplace_back(seg_, t);
    return r;
  }
  SchedlabSegment* seg_;
};

// ---- Heuristic helpers: how a segment's tensors line up with a reference.
// A heuristic that transforms a reference and propagates the transforms
// relies on every tensor iterating (a part of) the reference's space in the
// reference's order; these say, before any scheduling, whether a tensor does.

/// "T3 (m)": a tensor by number and its fusion name, for messages.
inline std::string describe(const TensorView& tv) {
  return tv.name().empty() ? tv.str() : tv.str() + " (" + tv.name() + ")";
}

/// The logical axis of `ref` that logical axis `axis` of `tv` iterates: the
/// one axis exactly mapped to it (the same data; a Broadcast axis ties to
/// nothing); -1 when none is, or more than one. Both tensors must be
/// unscheduled, so that their loop axes are their logical axes.
inline int ref_axis_of(Segment& seg, const TensorView& tv, int axis, const TensorView& ref) {
  if (tv == ref) return axis;
  if (tv.logical_axis(axis).is_broadcast()) return -1;
  int found = -1;
  for (int i = 0; i < ref.nlogical(); ++i) {
    if (ref.logical_axis(i).is_broadcast() ||
        !seg.axes_mapped(ref, i, tv, axis, /*exact=*/true))
      continue;
    if (found >= 0) return -1;
    found = i;
  }
  return found;
}

/// Why `tv` does not iterate a sub-space of `ref` in ref's order, or "" when
/// it does: each non-broadcast logical axis of tv must iterate (ref_axis_of)
/// its own axis of ref, in increasing order. A tensor that fails (an outer
/// product of a reduction with itself, an axis unrelated to the reference,
/// a permuted intermediate) cannot take the reference's loop structure.
inline std::string misaligned(Segment& seg, const TensorView& tv, const TensorView& ref) {
  int last = -1;
  std::vector<AxisInfo> dom = tv.logical();
  for (int j = 0; j < static_cast<int>(dom.size()); ++j) {
    if (dom[static_cast<size_t>(j)].is_broadcast()) continue;
    int i = ref_axis_of(seg, tv, j, ref);
    if (i < 0)
      return describe(tv) + " axis " + std::to_string(j) + " (extent " +
             dom[static_cast<size_t>(j)].extent_expr + ") iterates no single axis of the reference " +
             describe(ref);
    if (i <= last)
      return describe(tv) + " axis " + std::to_string(j) + " iterates axis " + std::to_string(i) +
             " of the reference " + describe(ref) + ", not after its axis " +
             std::to_string(last) + " (a permuted or repeated axis)";
    last = i;
  }
  return "";
}

/// The rank-1 inputs of `seg` that something reads and whose one axis has
/// `row_extent` elements: a normalization's row operands (layernorm's weight
/// and bias), which a heuristic reads with the row's vectors through caches
/// of their own (read element by element, a warp's loads would span
/// `vector` times the sectors they use).
inline std::vector<TensorView> row_operands(Segment& seg, int64_t row_extent) {
  std::vector<TensorView> r;
  for (const TensorView& in : seg.inputs()) {
    const std::vector<AxisInfo> d = in.logical();
    if (!in.consumers().empty() && d.size() == 1 && d[0].extent == row_extent) r.push_back(in);
  }
  return r;
}

/// The first tensor of `seg` computed in it (not an input) that is
/// misaligned with `ref`, and why; "" when there is none.
inline std::string first_misaligned(Segment& seg, const TensorView& ref) {
  for (const TensorView& tv : seg.tensors()) {
    if (tv.is_input()) continue;
    std::string why = misaligned(seg, tv, ref);
    if (!why.empty()) return why;
  }
  return "";
}

/// Why serialize_own_broadcast_axes cannot be used on this segment, or "":
/// a reduction that is a segment output and is also read inside the segment
/// keeps its Broadcast axes serial, so every thread would reset and
/// accumulate the same Global elements (a race). Such a segment must be split
/// (the segmenter does, when the plugin refuses it with this reason).
inline std::string global_accumulator_with_own_broadcast(Segment& seg) {
  for (const TensorView& r : seg.reduction_tvs()) {
    if (!r.is_output() || r.consumers().empty()) continue;
    for (const AxisInfo& a : r.loop())
      if (a.is_broadcast())
        return describe(r) + " is a reduction result the segment outputs and also reads, with a "
               "Broadcast axis of extent 1: every thread would accumulate into the same Global "
               "elements (segment the readers apart)";
  }
  return "";
}

/// After inline_most: every broadcast loop axis that a tensor computed in
/// `seg` keeps outside its inline position is made Serial, unless the tensor
/// is an output nothing in the segment reads. Bound, such an axis (a keepdim
/// statistic split and bound like the row it is broadcast to) would be
/// computed by the threads inside its extent of one element only, while each
/// consumer thread reads it ("reads elements of Local ... computed by other
/// threads"); serial, every thread computes its own copy of the one element
/// (an output read inside is then written by each, with the same value, as
/// lowering does for an output inlined into its reader). An output nothing
/// reads keeps its bindings: one thread writes each element, reading
/// producers that every thread computed. A producer inlined past an axis
/// made Serial shares that loop, so its axis there is made Serial too
/// (inlined axes must agree on their bindings).
/// The same holds for a bound axis whose extent differs from that of a
/// consumer's axis of the same binding: merge(b{1}, K) bound to BIDx beside
/// a consumer's merge(N, K) (the broadcast widened to N) gives block b the
/// element b of the tensor but element b of N * K to the consumer.
inline void serialize_own_broadcast_axes(Segment& seg) {
  std::vector<TensorView> tensors = seg.tensors();
  for (TensorView tv : tensors) {
    if (tv.is_input() || (tv.is_output() && tv.consumers().empty())) continue;
    std::vector<AxisInfo> loop = tv.loop();
    std::vector<std::vector<AxisInfo>> readers;
    for (const TensorView& c : tv.consumers()) readers.push_back(c.loop());
    // Whether some reader binds `a`'s parallel type to an iteration axis of
    // another extent (a's iteration axis widened by a broadcast).
    auto widened = [&](const AxisInfo& a) {
      if (a.iter_type != IterType::Iteration) return false;
      for (const auto& rl : readers)
        for (const AxisInfo& r : rl)
          if (r.iter_type == IterType::Iteration && r.parallel_type == a.parallel_type &&
              r.extent_expr != a.extent_expr)
            return true;
      return false;
    };
    for (int k = tv.compute_at_pos(); k < static_cast<int>(loop.size()); ++k) {
      const AxisInfo& a = loop[static_cast<size_t>(k)];
      if (a.parallel_type != ParallelType::Serial && (a.is_broadcast() || widened(a)))
        tv.parallelize(k, ParallelType::Serial);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const TensorView& c : tensors) {
      if (c.is_input()) continue;
      std::vector<AxisInfo> cloop = c.loop();
      for (TensorView p : c.producers()) {
        if (p.is_input()) continue;
        std::vector<AxisInfo> ploop = p.loop();
        const int shared = std::min(p.compute_at_pos(), static_cast<int>(cloop.size()));
        for (int k = 0; k < shared; ++k)
          if (cloop[static_cast<size_t>(k)].parallel_type == ParallelType::Serial &&
              ploop[static_cast<size_t>(k)].parallel_type != ParallelType::Serial) {
            p.parallelize(k, ParallelType::Serial);
            changed = true;
          }
      }
    }
  }
}

/// One parameter of a plugin's schema.
struct Param {
  int32_t kind = SCHEDLAB_PARAM_INT;  ///< SchedlabParamKind
  std::string name;                   ///< identifier, unique in the schema
  std::string doc;                    ///< one line
  int64_t int_default = 0, int_min = 0, int_max = 0;
  double float_default = 0, float_min = 0, float_max = 0;
  std::vector<std::string> choices;
  std::string string_default;  ///< STRING (ABI 1.1)

  static Param integer(std::string name, int64_t def, int64_t min, int64_t max, std::string doc) {
    Param p;
    p.kind = SCHEDLAB_PARAM_INT;
    p.name = std::move(name);
    p.doc = std::move(doc);
    p.int_default = def;
    p.int_min = min;
    p.int_max = max;
    return p;
  }
  static Param real(std::string name, double def, double min, double max, std::string doc) {
    Param p;
    p.kind = SCHEDLAB_PARAM_FLOAT;
    p.name = std::move(name);
    p.doc = std::move(doc);
    p.float_default = def;
    p.float_min = min;
    p.float_max = max;
    return p;
  }
  static Param boolean(std::string name, bool def, std::string doc) {
    Param p;
    p.kind = SCHEDLAB_PARAM_BOOL;
    p.name = std::move(name);
    p.doc = std::move(doc);
    p.int_default = def ? 1 : 0;
    p.int_max = 1;
    return p;
  }
  static Param choice(std::string name, std::vector<std::string> choices, const std::string& def,
                      std::string doc) {
    Param p;
    p.kind = SCHEDLAB_PARAM_CHOICE;
    p.name = std::move(name);
    p.doc = std::move(doc);
    p.choices = std::move(choices);
    auto it = std::find(p.choices.begin(), p.choices.end(), def);
    p.int_default =
        static_cast<int64_t>(it - p.choices.begin());  // past the end: the host rejects it
    return p;
  }
  /// Free text (ABI 1.1: a host of ABI 1.0 refuses to load the plugin).
  static Param string(std::string name, std::string def, std::string doc) {
    Param p;
    p.kind = SCHEDLAB_PARAM_STRING;
    p.name = std::move(name);
    p.doc = std::move(doc);
    p.string_default = std::move(def);
    return p;
  }
};

/// The values of one call, looked up by name. compute_params writes them.
class Params {
 public:
  /// `strings`: the STRING values, one per schema entry ("" for the others).
  Params(const std::vector<Param>* schema, std::vector<SchedlabParamValue> values,
         std::vector<std::string> strings = {})
      : schema_(schema), values_(std::move(values)), strings_(std::move(strings)) {
    strings_.resize(values_.size());
  }
  int64_t integer(const std::string& name) const { return at(name, SCHEDLAB_PARAM_INT).int_value; }
  double real(const std::string& name) const { return at(name, SCHEDLAB_PARAM_FLOAT).float_value; }
  bool boolean(const std::string& name) const {
    return at(name, SCHEDLAB_PARAM_BOOL).int_value != 0;
  }
  std::string choice(const std::string& name) const {
    size_t i = index(name, SCHEDLAB_PARAM_CHOICE);
    return (*schema_)[i].choices.at(static_cast<size_t>(values_[i].int_value));
  }
  std::string string(const std::string& name) const {
    return strings_[index(name, SCHEDLAB_PARAM_STRING)];
  }
  void set_integer(const std::string& name, int64_t v) {
    values_[index(name, SCHEDLAB_PARAM_INT)].int_value = v;
  }
  void set_real(const std::string& name, double v) {
    values_[index(name, SCHEDLAB_PARAM_FLOAT)].float_value = v;
  }
  void set_boolean(const std::string& name, bool v) {
    values_[index(name, SCHEDLAB_PARAM_BOOL)].int_value = v ? 1 : 0;
  }
  void set_choice(const std::string& name, const std::string& v) {
    size_t i = index(name, SCHEDLAB_PARAM_CHOICE);
    const auto& cs = (*schema_)[i].choices;
    auto it = std::find(cs.begin(), cs.end(), v);
    if (it == cs.end())
      throw Error(SCHEDLAB_ERR_PLUGIN, "parameter '" + name + "' has no choice '" + v + "'");
    values_[i].int_value = static_cast<int64_t>(it - cs.begin());
  }
  void set_string(const std::string& name, const std::string& v) {
    strings_[index(name, SCHEDLAB_PARAM_STRING)] = v;
  }
  /// The C values; a STRING entry's string_value is not set here (see strings()).
  const std::vector<SchedlabParamValue>& values() const { return values_; }
  const std::vector<std::string>& strings() const { return strings_; }

  /// ABI 1.4, in compute_params: whether the host offers a tuned
  /// configuration for this segment (`run --tuned`, docs/tuning.md).
  bool has_tuned() const { return !tuned_.empty(); }
  /// Where it comes from ("tuned.yaml:12: softmax N=any K=[4096, 8191]"), or "".
  const std::string& tuned_source() const { return tuned_source_; }
  /// Takes the tuned configuration, every value, and returns true; returns
  /// false and changes nothing when there is none. A heuristic that serves
  /// tuned configurations starts compute_params with
  /// `if (p.use_tuned()) return;`.
  bool use_tuned() {
    if (tuned_.empty()) return false;
    values_ = tuned_;
    strings_ = tuned_strings_;
    return true;
  }
  /// Sets the offer (detail::read_params does, from the host's values).
  void offer_tuned(std::vector<SchedlabParamValue> values, std::vector<std::string> strings,
                   std::string source) {
    tuned_ = std::move(values);
    tuned_strings_ = std::move(strings);
    tuned_strings_.resize(tuned_.size());
    tuned_source_ = std::move(source);
  }

 private:
  size_t index(const std::string& name, int32_t kind) const {
    for (size_t i = 0; i < schema_->size(); ++i) {
      if ((*schema_)[i].name != name) continue;
      if ((*schema_)[i].kind != kind)
        throw Error(SCHEDLAB_ERR_PLUGIN, "parameter '" + name + "' is read as the wrong kind");
      return i;
    }
    throw Error(SCHEDLAB_ERR_PLUGIN, "no parameter named '" + name + "' in the schema");
  }
  const SchedlabParamValue& at(const std::string& name, int32_t kind) const {
    return values_[index(name, kind)];
  }
  const std::vector<Param>* schema_;
  std::vector<SchedlabParamValue> values_;
  std::vector<std::string> strings_;
  std::vector<SchedlabParamValue> tuned_;  ///< empty: no offer
  std::vector<std::string> tuned_strings_;
  std::string tuned_source_;
};

/// can_schedule's answer.
struct Verdict {
  bool accepted = true;
  std::string reason;  ///< why not, when !accepted
  static Verdict yes() { return {}; }
  static Verdict no(std::string why) { return {false, std::move(why)}; }
};

/// Base class of a C++ plugin. One instance lives from the entry call until
/// the library is unloaded; the host may call it from several threads.
class Plugin {
 public:
  virtual ~Plugin() = default;
  /// Registry key: an identifier unique among loaded plugins.
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<Param> params() const { return {}; }
  virtual Verdict can_schedule(Segment&, const Params&) { return Verdict::yes(); }
  /// The heuristic's own choice; `params` arrives with the defaults.
  virtual void compute_params(Segment&, Params&) {}
  virtual void schedule(Segment& seg, const Params& params) = 0;
};

namespace detail {

/// Everything the plugin hands the host, kept alive until unload.
struct State {
  std::unique_ptr<Plugin> plugin;
  std::string name, version, description;
  std::vector<Param> schema;
  std::vector<std::vector<const char*>> choice_ptrs;
  std::vector<SchedlabParamDesc> descs;
};
inline State& state() {
  static State s;
  return s;
}

/// The plugin's last_error. A plain char array: a thread_local with a
/// destructor would pin the library in memory (glibc refuses to dlclose a
/// library with live TLS destructors), and hot reload must unload it.
inline char* error_buffer() {
  thread_local char buffer[4096];
  return buffer;
}
inline const char* last_error() {
  return error_buffer();
}
inline int32_t fail(int32_t status, const char* message) {
  std::strncpy(error_buffer(), message, 4095);
  error_buffer()[4095] = '\0';
  return status;
}

/// Runs f, turning every exception into a status and the plugin's last_error.
template <typename F>
int32_t guard(F&& f) noexcept {
  try {
    f();
    return SCHEDLAB_OK;
  } catch (const Error& e) {
    return fail(e.status() < 0 ? e.status() : SCHEDLAB_ERR_PLUGIN, e.what());
  } catch (const std::exception& e) {
    return fail(SCHEDLAB_ERR_PLUGIN, e.what());
  } catch (...) {
    return fail(SCHEDLAB_ERR_PLUGIN, "unknown exception");
  }
}

/// Copies `count` host values (stride first->struct_size) into our layout;
/// STRING values into `strings`, since the host's pointers die with the call.
inline void copy_values(const SchedlabParamValue* first, size_t count,
                        std::vector<SchedlabParamValue>& values,
                        std::vector<std::string>& strings) {
  const State& s = state();
  values.assign(count, SchedlabParamValue{});
  strings.assign(count, std::string());
  if (count == 0) return;
  size_t stride = first->struct_size;
  const char* base = reinterpret_cast<const char*>(first);
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(&values[i], base + i * stride, std::min(stride, sizeof values[i]));
    values[i].struct_size = sizeof values[i];
    if (s.schema[i].kind == SCHEDLAB_PARAM_STRING && values[i].string_value != nullptr)
      strings[i] = values[i].string_value;
    values[i].string_value = nullptr;
  }
}

/// Reads the host's values (stride values[0].struct_size) into our layout,
/// and the tuned configuration it offers (ABI 1.4) when its struct has one.
inline Params read_params(const SchedlabParamSet* set) {
  const State& s = state();
  if (set == nullptr || set->count != s.schema.size())
    throw Error(SCHEDLAB_ERR_INVALID_ARGUMENT,
                "expected " + std::to_string(s.schema.size()) + " parameter values, got " +
                    std::to_string(set == nullptr ? 0u : set->count));
  std::vector<SchedlabParamValue> values;
  std::vector<std::string> strings;
  copy_values(set->values, set->count, values, strings);
  Params p(&s.schema, std::move(values), std::move(strings));
  if (set->struct_size >= offsetof(SchedlabParamSet, tuned_source) + sizeof(const char*) &&
      set->tuned != nullptr) {
    std::vector<SchedlabParamValue> tuned;
    std::vector<std::string> tuned_strings;
    copy_values(set->tuned, set->count, tuned, tuned_strings);
    p.offer_tuned(std::move(tuned), std::move(tuned_strings),
                  set->tuned_source != nullptr ? set->tuned_source : "");
  }
  return p;
}

/// A copy of v that lives until the plugin is unloaded: every STRING value
/// compute_params hands the host, which the ABI wants valid past the call. A
/// thread_local would pin the library (see error_buffer), and a plugin
/// chooses few distinct strings.
inline const char* intern(const std::string& v) {
  static std::mutex mutex;
  static std::set<std::string> interned;
  std::lock_guard<std::mutex> lock(mutex);
  return interned.insert(v).first->c_str();
}

inline void write_params(const Params& p, SchedlabParamSet* set) {
  if (set->count == 0) return;
  size_t stride = set->values[0].struct_size;
  char* base = reinterpret_cast<char*>(set->values);
  for (size_t i = 0; i < set->count; ++i) {
    SchedlabParamValue v = p.values()[i];
    v.struct_size = static_cast<uint32_t>(stride);
    if (state().schema[i].kind == SCHEDLAB_PARAM_STRING) v.string_value = intern(p.strings()[i]);
    std::memcpy(base + i * stride, &v, std::min(stride, sizeof v));
  }
}

inline int32_t can_schedule(SchedlabSegment* seg, const SchedlabParamSet* params, int32_t* accepted,
                            char* reason, uint32_t reason_size) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    Verdict v = state().plugin->can_schedule(s, p);
    *accepted = v.accepted ? 1 : 0;
    if (reason != nullptr && reason_size > 0) {
      size_t n = std::min<size_t>(v.reason.size(), reason_size - 1);
      std::memcpy(reason, v.reason.data(), n);
      reason[n] = '\0';
    }
  });
}

inline int32_t compute_params(SchedlabSegment* seg, SchedlabParamSet* params) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    state().plugin->compute_params(s, p);
    write_params(p, params);
  });
}

inline int32_t schedule(SchedlabSegment* seg, const SchedlabParamSet* params) {
  return guard([&] {
    Segment s(seg);
    Params p = read_params(params);
    state().plugin->schedule(s, p);
  });
}

/// The body of schedlab_plugin_entry for plugin class C.
template <typename C>
int32_t entry(const SchedlabHostApi* host, SchedlabPluginInfo* info) noexcept {
  if (host == nullptr || info == nullptr) return SCHEDLAB_ERR_INVALID_ARGUMENT;
  if (info->struct_size < offsetof(SchedlabPluginInfo, can_schedule)) return SCHEDLAB_ERR_VERSION;
  // These two go first, so that the host can name both versions, or read
  // why the entry failed, whatever happens next.
  info->abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
  info->last_error = &detail::last_error;
  return guard([&] {
    bind_host(host);
    State& s = state();
    s = State{};
    s.plugin = std::make_unique<C>();
    s.name = s.plugin->name();
    s.version = s.plugin->version();
    s.description = s.plugin->description();
    s.schema = s.plugin->params();
    s.choice_ptrs.resize(s.schema.size());
    for (size_t i = 0; i < s.schema.size(); ++i) {
      const Param& p = s.schema[i];
      for (const std::string& c : p.choices) s.choice_ptrs[i].push_back(c.c_str());
      SchedlabParamDesc d{};
      d.struct_size = sizeof d;
      d.kind = p.kind;
      d.name = p.name.c_str();
      d.doc = p.doc.c_str();
      d.int_default = p.int_default;
      d.int_min = p.int_min;
      d.int_max = p.int_max;
      d.float_default = p.float_default;
      d.float_min = p.float_min;
      d.float_max = p.float_max;
      d.choices = s.choice_ptrs[i].empty() ? nullptr : s.choice_ptrs[i].data();
      d.choice_count = static_cast<uint32_t>(p.choices.size());
      d.string_default = p.string_default.c_str();
      s.descs.push_back(d);
    }
    SchedlabPluginInfo mine{};
    mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
    mine.name = s.name.c_str();
    mine.version = s.version.c_str();
    mine.description = s.description.c_str();
    mine.params = s.descs.empty() ? nullptr : s.descs.data();
    mine.param_count = static_cast<uint32_t>(s.descs.size());
    mine.last_error = &detail::last_error;
    mine.can_schedule = &detail::can_schedule;
    mine.compute_params = &detail::compute_params;
    mine.schedule = &detail::schedule;
    // The host zero-filled *info; write only what both of us know.
    uint32_t n = std::min<uint32_t>(info->struct_size, sizeof mine);
    mine.struct_size = n;
    std::memcpy(info, &mine, n);
  });
}

}  // namespace detail
}  // namespace schedlab::plugin_api

/// Defines the plugin's one exported symbol for plugin class Class (a
/// default-constructible schedlab::plugin_api::Plugin). Use once per library.
#define SCHEDLAB_PLUGIN(Class)                                                                 \
  extern "C" SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi* host, \
                                                                  SchedlabPluginInfo* info) {  \
    return ::schedlab::plugin_api::detail::entry<Class>(host, info);                           \
  }
