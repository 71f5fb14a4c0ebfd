// The fake libnccl; see fake_libnccl.h. Declared through core/runtime's
// nccl_api.h, the declarations the communicator calls through (their values
// are checked against nccl.h by nccl_api_test where nccl.h is installed).
#include "fake_libnccl.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "nccl_api.h"

using namespace schedlab::runtime::nccl;  // NOLINT(google-build-using-namespace)

struct ncclComm {
  int rank = 0;
  int nranks = 0;
};

namespace {
FakeNcclState g_state;
int g_ids = 0;

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kInt32:
      return MPI_INT32_T;
    case kInt64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;  // f16 and bf16: the communicator never sends them
  }
}

MPI_Op mpi_op(RedOp op) {
  switch (op) {
    case kSum:
      return MPI_SUM;
    case kProd:
      return MPI_PROD;
    case kMax:
      return MPI_MAX;
    case kMin:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

/// The checks every collective makes first; kSuccess to go on.
Result enter(Comm comm, DataType t, size_t count) {
  g_state.last_dtype = t;
  g_state.last_count = count;
  if (g_state.next_error != 0) {
    const auto r = static_cast<Result>(g_state.next_error);
    g_state.next_error = 0;
    return r;
  }
  if (comm == nullptr || mpi_type(t) == MPI_DATATYPE_NULL || count > (size_t{1} << 30))
    return kInvalidArgument;
  return kSuccess;
}
}  // namespace

extern "C" {

FakeNcclState* fake_nccl_state() {
  return &g_state;
}

const char* ncclGetErrorString(Result r) {
  switch (r) {
    case kSuccess:
      return "no error";
    case kSystemError:
      return "fake: unhandled system error";
    case kInvalidArgument:
      return "fake: invalid argument";
    case kInvalidUsage:
      return "fake: invalid usage";
    default:
      return "fake: other error";
  }
}

Result ncclGetUniqueId(UniqueId* id) {
  ++g_state.unique_ids;
  std::memset(id->internal, 0, sizeof id->internal);
  std::snprintf(id->internal, sizeof id->internal, "fake-nccl-id pid %d #%d",
                static_cast<int>(::getpid()), ++g_ids);
  for (size_t i = 64; i < kUniqueIdBytes; ++i)
    id->internal[i] = static_cast<char>((i * 37 + g_ids) & 0xff);  // every byte travels
  return kSuccess;
}

Result ncclCommInitRank(Comm* comm, int nranks, UniqueId id, int rank) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0 || comm == nullptr) return kInvalidUsage;
  int world = 0, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (nranks != world || rank != me) return kInvalidArgument;
  // The bootstrap: every rank's id, which must be rank 0's.
  char all[kUniqueIdBytes * 64] = {};
  if (world > 64) return kInvalidArgument;
  MPI_Allgather(id.internal, static_cast<int>(kUniqueIdBytes), MPI_CHAR, all,
                static_cast<int>(kUniqueIdBytes), MPI_CHAR, MPI_COMM_WORLD);
  std::memcpy(g_state.last_id, id.internal, kUniqueIdBytes);
  for (int r = 0; r < world; ++r)
    if (std::memcmp(all + r * kUniqueIdBytes, all, kUniqueIdBytes) != 0) return kInvalidArgument;
  if (g_state.init_error != 0) {
    const auto r = static_cast<Result>(g_state.init_error);
    g_state.init_error = 0;
    return r;
  }
  *comm = new ncclComm{rank, nranks};
  ++g_state.inits;
  return kSuccess;
}

Result ncclCommDestroy(Comm comm) {
  if (comm == nullptr) return kInvalidArgument;
  delete comm;
  ++g_state.destroys;
  return kSuccess;
}

Result ncclCommAbort(Comm comm) {
  if (comm == nullptr) return kInvalidArgument;
  delete comm;
  ++g_state.aborts;
  return kSuccess;
}

Result ncclAllReduce(const void* send, void* recv, size_t count, DataType t, RedOp op, Comm comm,
                     Stream) {
  g_state.last_op = op;
  if (Result r = enter(comm, t, count); r != kSuccess) return r;
  MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(count), mpi_type(t),
                mpi_op(op), MPI_COMM_WORLD);
  ++g_state.allreduces;
  return kSuccess;
}

Result ncclAllGather(const void* send, void* recv, size_t count, DataType t, Comm comm, Stream) {
  if (Result r = enter(comm, t, count); r != kSuccess) return r;
  MPI_Allgather(send, static_cast<int>(count), mpi_type(t), recv, static_cast<int>(count),
                mpi_type(t), MPI_COMM_WORLD);
  ++g_state.allgathers;
  return kSuccess;
}

Result ncclReduceScatter(const void* send, void* recv, size_t count, DataType t, RedOp op,
                         Comm comm, Stream) {
  g_state.last_op = op;
  if (Result r = enter(comm, t, count); r != kSuccess) return r;
  MPI_Reduce_scatter_block(send, recv, static_cast<int>(count), mpi_type(t), mpi_op(op),
                           MPI_COMM_WORLD);
  ++g_state.reduce_scatters;
  return kSuccess;
}

}  // extern "C"
