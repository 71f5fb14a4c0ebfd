// The native half math of the device runtime (docs/fusion-text.md, "Data
// types"): the CUDA Math API's __hadd/__hsub/__hmul/__hfma/__hneg/__habs and
// their half2 forms over sl_half / sl_bfloat16, as inline PTX for NVRTC and
// as their exact CPU emulation under the same names. A unit that computes
// half ops natively (kir::Kernel::native_half_math) appends this text after
// runtime_header(); no other unit includes it.
#pragma once

#include <string_view>

namespace schedlab::codegen {

/// core/codegen/half_math.cuh, embedded in the library.
std::string_view half_math_header();

}  // namespace schedlab::codegen
