// A stand-in for libnccl.so.2 (tests only): NCCL's entry points over host
// memory with MPI underneath (the fake libcuda's "device" memory is host
// memory), so that the NCCL communicator runs end to end on a machine
// without a GPU. ncclCommInitRank checks that every rank got the same unique
// id (the broadcast) and that nranks and rank are MPI's. The test reaches
// this state with dlsym(dlopen(<the fake>, RTLD_NOLOAD), "fake_nccl_state").
#pragma once

#include <cstddef>

/// What the fake saw, and what it should do next (each process its own).
struct FakeNcclState {
  int unique_ids = 0;       ///< ncclGetUniqueId calls
  int inits = 0;            ///< successful ncclCommInitRank calls
  int destroys = 0;         ///< ncclCommDestroy calls
  int aborts = 0;           ///< ncclCommAbort calls
  int allreduces = 0;       ///< successful ncclAllReduce calls
  int allgathers = 0;       ///< successful ncclAllGather calls
  int reduce_scatters = 0;  ///< successful ncclReduceScatter calls
  int last_dtype = -1;      ///< ncclDataType_t of the last collective
  int last_op = -1;         ///< ncclRedOp_t of the last reduction
  size_t last_count = 0;    ///< count (sendcount, recvcount) of the last collective
  char last_id[128] = {};   ///< the unique id the last ncclCommInitRank got
  int next_error = 0;       ///< an ncclResult_t the next collective returns once
  int init_error = 0;       ///< an ncclResult_t ncclCommInitRank returns once (after
                            ///< the id check, so that the other ranks do not hang)
};

extern "C" FakeNcclState* fake_nccl_state();
