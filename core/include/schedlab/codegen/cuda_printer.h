// schedlab/codegen: kernel IR to one CUDA C++ translation unit.
//
// Owns: the printer and the runtime header. May depend on: schedlab/lower
// (kernel IR) and below. Invariants: the output is a pure function of the
// kernel IR (deterministic, so its hash is the cache key); the same text runs
// under NVRTC and, after the CPU backend's shim, on the host: nothing here
// branches on the backend except the CPU entry point under SCHEDLAB_CPU.
#pragma once

#include <string>
#include <vector>

#include "schedlab/lower/kir.h"

namespace schedlab::codegen {

/// One buffer access, Local declaration or barrier of a generated kernel,
/// numbered in print order: the id the printed SL_LD/SL_ST/SL_VLD/SL_VST/
/// SL_LOCAL/SL_SYNC/SL_SITE macro carries. The CPU backend's access trace
/// (runtime/access_trace.h) reports accesses by this id.
struct AccessSite {
  enum class Kind { Read, Write, Declare, Barrier };
  Kind kind = Kind::Read;
  const kir::Buffer* buffer = nullptr;  ///< null for a barrier
  int64_t elements = 1;                 ///< per access (vector copies), or a Local array's size
  int line = 0;                         ///< 1-based line of the text it was printed in
};

/// A printed unit and its access sites.
struct PrintedUnit {
  std::string text;
  std::vector<AccessSite> sites;
};

/// The whole unit: runtime header, the kernel, and the CPU entry point.
std::string print_cuda(const kir::Kernel& kernel);
/// print_cuda's text with its access sites (lines count in that text).
PrintedUnit print_unit(const kir::Kernel& kernel);
/// Just the kernel function (for `schedlab show --stage cuda` and tests).
std::string print_kernel(const kir::Kernel& kernel);
/// The C type of a dtype in generated code ("float", "sl_half", ...).
std::string c_type(ir::DataType t);

}  // namespace schedlab::codegen
