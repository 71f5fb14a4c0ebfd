// schedlab/codegen: kernel IR to one CUDA C++ translation unit.
//
// Owns: the printer and the runtime header. May depend on: schedlab/lower
// (kernel IR) and below. Invariants: the output is a pure function of the
// kernel IR (deterministic, so its hash is the cache key); the same text runs
// under NVRTC and, after the CPU backend's shim, on the host: nothing here
// branches on the backend except the CPU entry point under SCHEDLAB_CPU.
#pragma once

#include <string>

#include "schedlab/lower/kir.h"

namespace schedlab::codegen {

/// The whole unit: runtime header, the kernel, and the CPU entry point.
std::string print_cuda(const kir::Kernel& kernel);
/// Just the kernel function (for `schedlab show --stage cuda` and tests).
std::string print_kernel(const kir::Kernel& kernel);
/// The C type of a dtype in generated code ("float", "sl_half", ...).
std::string c_type(ir::DataType t);

}  // namespace schedlab::codegen
