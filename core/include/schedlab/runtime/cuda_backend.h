// schedlab/runtime: the CUDA backend (docs/architecture.md: runtime).
//
// Owns: NVRTC compilation of generated kernels, the CUDA driver API loaded
// with dlopen("libcuda.so.1") at run time, device queries, and the Backend
// that compiles, launches and times kernels on device 0.
// May depend on: schedlab/base and the Backend interface in kernel.h. Nothing
// here includes cuda.h: a binary links and runs on a machine without a driver.
// Invariants: nvrtc_compile works without a driver or device, so CPU-only
// tests still prove the CUDA text is valid. Every CUDA failure surfaces as a
// user_error naming the call or the kernel and CUDA's error name.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/runtime/device.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime {

/// True when libcuda.so.1 loads, cuInit succeeds and a device exists.
/// Otherwise false, with the reason ("libcuda.so.1 not found: ...",
/// "cuInit failed: CUDA_ERROR_NO_DEVICE", ...) in *why.
bool cuda_available(std::string* why = nullptr);

/// Properties of device 0; nullopt when !cuda_available().
std::optional<DeviceProperties> cuda_device_properties();

/// Compiles `src` with NVRTC for `arch` and returns the image: a CUBIN for
/// "sm_XX", PTX text for "compute_XX". Needs no driver or device. The
/// compiler log (warnings included) goes to *log. A failed compile saves the
/// source as <cache dir>/<hash>.cu and raises a user_error carrying NVRTC's
/// log and that path.
std::string nvrtc_compile(const KernelSource& src, const std::string& arch = "sm_90",
                          std::string* log = nullptr, const std::string& cache_dir_flag = "");

/// Everything one NVRTC compile gives back.
struct NvrtcOutput {
  std::string image;  ///< CUBIN for "sm_XX", PTX text for "compute_XX"
  std::string ptx;    ///< the PTX the image was built from
};

/// nvrtc_compile with `extra_options` appended to schedlab's own (e.g.
/// "--ptxas-options=-v" for the resource report the performance model reads)
/// and the PTX kept next to the image. The log (ptxas' too) goes to *log,
/// also when the compile fails. Same errors as nvrtc_compile.
NvrtcOutput nvrtc_compile_all(const KernelSource& src, const std::string& arch,
                              const std::vector<std::string>& extra_options,
                              std::string* log = nullptr, const std::string& cache_dir_flag = "");

/// schedlab's own NVRTC options for `arch` (the one list every compile uses,
/// before any extra options).
std::vector<std::string> nvrtc_options(const std::string& arch);

/// NVRTC's version as "major.minor" ("unknown" if it cannot say).
std::string nvrtc_version();

/// The name of a compiled image in the disk cache: the source's hash, the
/// architecture, and a hash of everything else that changes the image (the
/// NVRTC version and the full option list, extra options included), e.g.
/// "3f2a....sm_90.5b1c0d2e.cubin". A changed option or compiler is a miss.
std::string nvrtc_cache_name(const KernelSource& src, const std::string& arch,
                             const std::vector<std::string>& extra_options = {});

/// Device buffers on one device for code beside the backend that hands device
/// pointers to another library (the NCCL communicator, docs/multi-device.md).
/// Every call first makes the device's primary context current on the
/// calling thread; failures are user_errors naming the driver call.
class DeviceBuffers {
 public:
  virtual ~DeviceBuffers() = default;
  /// The device's ordinal.
  virtual int device() const = 0;
  /// Makes the device's primary context current on this thread.
  virtual void make_current() = 0;
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  /// Waits for everything queued on the device (cuCtxSynchronize).
  virtual void synchronize() = 0;
};

/// The number of devices the driver shows; 0 when !cuda_available().
int cuda_device_count();
/// Buffers on device `ordinal` (its primary context retained while they
/// live); user_error when !cuda_available() or the ordinal is out of range.
std::unique_ptr<DeviceBuffers> make_cuda_device_buffers(int ordinal);

/// The CUDA backend on device 0, caching CUBINs in memory and under
/// cache_dir(cache_dir_flag) (named by nvrtc_cache_name). `extra_nvrtc_options`
/// are appended to every compile. user_error "no CUDA device: <reason>" when
/// !cuda_available(). Timings use clock "cuda-events".
std::unique_ptr<Backend> make_cuda_backend(const std::string& cache_dir_flag = "",
                                           std::vector<std::string> extra_nvrtc_options = {});

}  // namespace schedlab::runtime
