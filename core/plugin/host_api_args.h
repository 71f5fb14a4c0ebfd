// The argument checks every entry of the host API table shares (internal to
// core/plugin): the guard that turns any error into a status and the
// thread's last_error, handle and list checks, out-structs, and the C enums
// mapped onto the IR's. host_api.cpp, host_api_queries.cpp and
// host_api_primitives.cpp use them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "host_api.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/fusion.h"
#include "schedlab/plugin.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin::host_args {

using ir::TensorView;

/// The message of the last failed host call on this thread.
inline std::string& last_error() {
  thread_local std::string message;
  return message;
}

/// An argument the ABI itself rejects (SCHEDLAB_ERR_INVALID_ARGUMENT).
struct AbiError {
  std::string message;
};

[[noreturn]] inline void abi_error(const char* fn, const std::string& what) {
  throw AbiError{std::string(fn) + ": " + what};
}

/// Runs f; 0 on success, otherwise a status and last_error().
template <typename F>
int32_t guard(F&& f) noexcept {
  try {
    f();
    return SCHEDLAB_OK;
  } catch (const AbiError& e) {
    last_error() = e.message;
    return SCHEDLAB_ERR_INVALID_ARGUMENT;
  } catch (const UserError& e) {
    // The message as the primitive wrote it: the plugin's caller reports it
    // unchanged. A location, if any, goes in front as in what().
    last_error() = e.loc().valid() ? e.loc().str() + ": " + e.message() : e.message();
    return SCHEDLAB_ERR_USER;
  } catch (const InternalError& e) {
    last_error() = e.what();
    return SCHEDLAB_ERR_INTERNAL;
  } catch (const std::exception& e) {
    last_error() = std::string("internal error (a bug in schedlab, please report it): ") + e.what();
    return SCHEDLAB_ERR_INTERNAL;
  } catch (...) {
    last_error() = "internal error (a bug in schedlab, please report it): unknown exception";
    return SCHEDLAB_ERR_INTERNAL;
  }
}

inline HostSegment& segment(SchedlabSegment* s, const char* fn) {
  if (s == nullptr || s->segment == nullptr || s->segment->fusion == nullptr)
    abi_error(fn, "segment handle is null");
  return *s->segment;
}

/// The tensor behind a handle, which must belong to the segment. Checked
/// against the fusion's tensors without dereferencing the handle.
inline TensorView* tensor(SchedlabSegment* s, SchedlabTensor* t, const char* fn,
                          const char* arg = "tensor") {
  HostSegment& seg = segment(s, fn);
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

inline SchedlabTensor* handle(TensorView* tv) {
  return reinterpret_cast<SchedlabTensor*>(tv);
}

inline std::vector<TensorView*> tensors(SchedlabSegment* s, SchedlabTensor* const* list, int32_t n,
                                        const char* fn, const char* arg) {
  if (n < 0) abi_error(fn, std::string(arg) + " count is negative (" + std::to_string(n) + ")");
  if (n > 0 && list == nullptr)
    abi_error(fn, std::string(arg) + " is null with a count of " + std::to_string(n));
  std::vector<TensorView*> r;
  for (int32_t i = 0; i < n; ++i) r.push_back(tensor(s, list[i], fn, arg));
  return r;
}

/// The two-call list idiom: write min(capacity, n), always store n.
inline void fill(const std::vector<TensorView*>& v, SchedlabTensor** items, int32_t capacity,
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

inline const char* keep(SchedlabSegment* s, std::string str) {
  s->strings.push_back(std::move(str));
  return s->strings.back().c_str();
}

/// C enum value -> IR enum, checked against the C enum's range.
template <typename E>
E enum_arg(int32_t v, int32_t last, const char* fn, const char* type) {
  if (v < 0 || v > last) abi_error(fn, "unknown " + std::string(type) + " " + std::to_string(v));
  return static_cast<E>(v);
}
inline ir::ParallelType parallel_arg(int32_t v, const char* fn) {
  return enum_arg<ir::ParallelType>(v, SCHEDLAB_PARALLEL_TIDZ, fn, "SchedlabParallelType");
}
inline ir::LoopTransform transform_arg(int32_t v, const char* fn) {
  return enum_arg<ir::LoopTransform>(v, SCHEDLAB_LOOP_BULK, fn, "SchedlabLoopTransform");
}
inline ir::CacheOp cache_op_arg(int32_t v, const char* fn) {
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
static_assert(static_cast<int>(ir::Expr::Kind::Mma) + 1 == SCHEDLAB_OP_MMA);
static_assert(static_cast<int>(ir::Expr::Kind::View) + 1 == SCHEDLAB_OP_VIEW);

}  // namespace schedlab::plugin::host_args
