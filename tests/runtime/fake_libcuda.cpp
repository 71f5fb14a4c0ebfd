// The fake driver; see fake_libcuda.h. Compiled against cuda.h so that every
// entry point has the real prototype and the real (versioned) symbol name.
#include "fake_libcuda.h"

#include <cuda.h>
#include <elf.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

struct CUctx_st {};
struct CUmod_st {
  std::string image;
};
struct CUfunc_st {
  int max_dynamic_smem = 48 * 1024;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point at;
};

namespace {
FakeCudaState g_state;
CUctx_st g_ctx;
CUfunc_st g_func;
thread_local CUcontext t_current = nullptr;

CUresult need_context() {
  return t_current == &g_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
}  // namespace

extern "C" {

FakeCudaState* fake_cuda_state() {
  return &g_state;
}

// NVRTC dlopens libcuda.so.1 too, and asks it for a private export table; it
// crashes when the symbol is missing and does without when it fails.
CUresult cuGetExportTable(const void** table, const CUuuid*) {
  *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuInit(unsigned int flags) {
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char** p) {
  switch (error) {
    case CUDA_ERROR_INVALID_VALUE:
      *p = "CUDA_ERROR_INVALID_VALUE";
      break;
    case CUDA_ERROR_INVALID_CONTEXT:
      *p = "CUDA_ERROR_INVALID_CONTEXT";
      break;
    case CUDA_ERROR_INVALID_IMAGE:
      *p = "CUDA_ERROR_INVALID_IMAGE";
      break;
    case CUDA_ERROR_NOT_FOUND:
      *p = "CUDA_ERROR_NOT_FOUND";
      break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *p = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** p) {
  const char* name = nullptr;
  if (cuGetErrorName(error, &name) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  *p = "fake description";
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake H100", size_t(len));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *v = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *v = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      *v = 2048;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
      *v = 65536;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      *v = 65536;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *v = 48 * 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = 227 * 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *v = 228 * 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *v = 40 << 20;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *v = 2619000;
      break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *v = 5120;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  ++g_state.retained;
  *ctx = &g_ctx;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  if (g_state.retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --g_state.retained;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (ctx != nullptr && (ctx != &g_ctx || g_state.retained == 0)) return CUDA_ERROR_INVALID_CONTEXT;
  t_current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  auto r = static_cast<CUresult>(g_state.next_sync_error);
  g_state.next_sync_error = 0;
  return r;
}

// A CUBIN is an ELF file; its string table names the kernels.
CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  const char* p = static_cast<const char*>(image);
  if (std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  // The section headers come last in a CUBIN, so they bound its length.
  Elf64_Ehdr h;
  std::memcpy(&h, p, sizeof h);
  *module = new CUmod_st{std::string(p, h.e_shoff + size_t(h.e_shnum) * h.e_shentsize)};
  ++g_state.module_loads;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  delete module;
  ++g_state.module_unloads;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  if (module->image.find(std::string(name) + '\0') == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  *fn = &g_func;
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute a, int value) {
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value > 227 * 1024) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  fn->max_dynamic_smem = value;
  ++g_state.smem_opt_ins;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params,
                        void** extra) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  if (stream != nullptr || extra != nullptr || params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (size_t(bx) * by * bz > 1024 || int(shared) > fn->max_dynamic_smem) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  g_state.grid[0] = gx, g_state.grid[1] = gy, g_state.grid[2] = gz;
  g_state.block[0] = bx, g_state.block[1] = by, g_state.block[2] = bz;
  g_state.shared = shared;
  for (int i = 0; i < 2; ++i) std::memcpy(g_state.params[i], params[i], 16);
  ++g_state.launches;
  return CUDA_SUCCESS;
}

CUresult cuLaunchCooperativeKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                   CUstream stream, void** params) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  // As the driver: refused unless every block is resident at once.
  if (uint64_t(gx) * gy * gz > uint64_t(g_state.max_active_blocks) * 132)
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  const int before = g_state.launches;
  CUresult r = cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr);
  if (r == CUDA_SUCCESS) {
    g_state.launches = before;
    ++g_state.cooperative_launches;
  }
  return r;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction, int block_size,
                                                     size_t) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  if (block_size <= 0 || block_size > 1024) return CUDA_ERROR_INVALID_VALUE;
  ++g_state.occupancy_queries;
  *blocks = g_state.max_active_blocks;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t bytes) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  std::memset(reinterpret_cast<void*>(p), v, bytes);
  ++g_state.memsets;
  g_state.last_memset_bytes = bytes;
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* e, unsigned int) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  *e = new CUevent_st{};
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e) {
  delete e;
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream) {
  if (CUresult r = need_context(); r != CUDA_SUCCESS) return r;
  e->at = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent) {
  return need_context();
}

CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent stop) {
  // Never zero, as a real event pair around a launch never is.
  *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count() + 1e-3f;
  return CUDA_SUCCESS;
}

}  // extern "C"
