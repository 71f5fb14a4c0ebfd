// The runtime header every generated kernel starts with (docs/kernel-ir.md):
// index and fixed-width types, Tensor<T, N, I>, the f16/bf16 storage types
// with round-to-nearest-even conversions, and math helpers whose NaN
// behaviour matches the reference (ir/op_semantics.h). It compiles under
// NVRTC with no include files, and on the host after the CPU backend's shim
// (which defines SCHEDLAB_CPU, __global__, __device__, threadIdx, ...).
#pragma once

#include <string_view>

namespace schedlab::codegen {

/// The header text, embedded in the library.
std::string_view runtime_header();

}  // namespace schedlab::codegen
