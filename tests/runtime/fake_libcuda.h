// A stand-in for libcuda.so.1 (tests only): enough of the driver API for the
// CUDA backend's plumbing to run on a machine without a GPU. Memory is host
// memory, kernels never execute, and every call checks what a real driver
// would (a current context, a valid image, launch limits). The test reaches
// this state with dlsym(dlopen("libcuda.so.1"), "fake_cuda_state").
#pragma once

#include <cstddef>

/// What the fake saw, and what it should do next.
struct FakeCudaState {
  int retained = 0;        ///< primary context references held
  int module_loads = 0;    ///< successful cuModuleLoadData calls
  int module_unloads = 0;  ///< cuModuleUnload calls
  int launches = 0;        ///< successful cuLaunchKernel calls
  int cooperative_launches = 0;  ///< successful cuLaunchCooperativeKernel calls
  int occupancy_queries = 0;     ///< cuOccupancyMaxActiveBlocksPerMultiprocessor calls
  int max_active_blocks = 2;     ///< what the occupancy query answers
  int smem_opt_ins = 0;    ///< cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) calls
  int memsets = 0;         ///< cuMemsetD8 calls
  size_t last_memset_bytes = 0;
  unsigned grid[3] = {};             ///< last launch
  unsigned block[3] = {};            ///< last launch
  unsigned shared = 0;               ///< last launch
  unsigned char params[2][16] = {};  ///< the first 16 bytes of parameters 0 and 1
  int next_sync_error = 0;           ///< a CUresult the next cuCtxSynchronize returns once
};

extern "C" FakeCudaState* fake_cuda_state();
