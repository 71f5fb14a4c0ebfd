// The tensor-core part of the device runtime (docs/tensor-cores.md):
// ldmatrix, mma.sync.m16n8k16 (bf16, f16) and cp.async with commit_group /
// wait_group, as inline PTX for NVRTC and as their exact CPU emulation under
// the same names (warp-collective semantics, the PTX ISA's fragment layouts,
// copies that land at their wait_group). A unit that uses them appends this
// text after runtime_header(); no other unit includes it, so the CUDA of
// every kernel without tensor-core instructions is unchanged by it.
#pragma once

#include <string_view>

namespace schedlab::codegen {

/// core/codegen/mma.cuh, embedded in the library.
std::string_view mma_header();

}  // namespace schedlab::codegen
