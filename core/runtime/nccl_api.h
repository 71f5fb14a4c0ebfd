// The part of NCCL's C API (nccl.h, NCCL 2.x) that the NCCL communicator
// calls, declared here so that schedlab builds without nccl.h and links no
// NCCL symbol: libnccl.so.2 is dlopen'd at run time, as libcuda.so.1 is.
// The values are nccl.h's (checked against it by runtime_nccl_api_test
// where nccl.h is installed); the enums are C enums, passed as int.
// Private to core/runtime and the fake libnccl of tests/runtime.
#pragma once

#include <cstddef>

struct ncclComm;  // opaque, as in nccl.h

namespace schedlab::runtime::nccl {

/// ncclResult_t
enum Result : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

/// ncclDataType_t (the ones schedlab sends)
enum DataType : int {
  kInt32 = 2,
  kInt64 = 4,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};

/// ncclRedOp_t (the built-in ones)
enum RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3 };

/// ncclUniqueId: NCCL_UNIQUE_ID_BYTES opaque bytes, passed by value.
constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {
  char internal[kUniqueIdBytes];
};

using Comm = ::ncclComm*;  ///< ncclComm_t
using Stream = void*;      ///< cudaStream_t (CUstream_st*); nullptr: the default stream

// The entry points, as nccl.h declares them.
using GetErrorStringFn = const char* (*)(Result);
using GetUniqueIdFn = Result (*)(UniqueId*);
using CommInitRankFn = Result (*)(Comm*, int nranks, UniqueId, int rank);
using CommDestroyFn = Result (*)(Comm);
using AllReduceFn = Result (*)(const void* send, void* recv, size_t count, DataType, RedOp, Comm,
                               Stream);
using AllGatherFn = Result (*)(const void* send, void* recv, size_t sendcount, DataType, Comm,
                               Stream);
using ReduceScatterFn = Result (*)(const void* send, void* recv, size_t recvcount, DataType, RedOp,
                                   Comm, Stream);

}  // namespace schedlab::runtime::nccl
