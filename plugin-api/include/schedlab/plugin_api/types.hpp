// schedlab/plugin_api/types.hpp: the C++ names of the ABI's enums
// (schedlab/plugin.h), dtype_bytes, and Error, the exception a failed call
// throws inside the plugin. Part of the C++ wrapper (schedlab/plugin.hpp
// includes every part).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "schedlab/plugin.h"

/// How the wrapper's out-of-line members (the *_impl.hpp headers) are
/// defined: `inline` in a header-only build; nothing where the
/// schedlab::plugin_api_impl library compiles them once (registration.hpp).
#ifndef SCHEDLAB_PLUGIN_API_INLINE
#define SCHEDLAB_PLUGIN_API_INLINE inline
#endif

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
  Mma = SCHEDLAB_OP_MMA,
  View = SCHEDLAB_OP_VIEW,  ///< ABI 1.10: a reshape or expand (ir::ViewOp)
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

}  // namespace schedlab::plugin_api
