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

/// core/codegen/cache_load.cuh, embedded in the library: the loads with a
/// cache policy (sl_ldca/cg/cs, sl_vec_copy_ca/cg/cs), on CUDA through
/// __ldca/__ldcg/__ldcs and on the CPU as plain loads. Only a unit with such
/// a load appends it after runtime_header(), so no other kernel's CUDA
/// changes.
std::string_view cache_load_header();

}  // namespace schedlab::codegen
