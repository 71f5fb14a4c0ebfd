#include "schedlab/codegen/runtime_header.h"

#include "schedlab/codegen/half_math_header.h"
#include "schedlab/codegen/mma_header.h"

// Every part of the device runtime is a .cuh file embedded at build time
// (codegen/sources.cmake, runtime/embed_text.cmake); its accessor is here.
namespace schedlab::embedded {
extern const std::string_view kRuntimeHeaderText;  // core/codegen/runtime.cuh
extern const std::string_view kCacheLoadText;      // core/codegen/cache_load.cuh
extern const std::string_view kMmaHeaderText;      // core/codegen/mma.cuh
extern const std::string_view kHalfMathText;       // core/codegen/half_math.cuh
}  // namespace schedlab::embedded

namespace schedlab::codegen {

// The device runtime every kernel is printed after (the Tensor type, block
// and grid reductions, the grid semaphore) is real device code in
// core/codegen/runtime.cuh: free of #include under NVRTC, which has no
// standard headers; the CPU shim supplies them on the host, and offline nvcc
// gets <cstdint>.
std::string_view runtime_header() { return embedded::kRuntimeHeaderText; }
std::string_view cache_load_header() { return embedded::kCacheLoadText; }
std::string_view mma_header() { return embedded::kMmaHeaderText; }
std::string_view half_math_header() { return embedded::kHalfMathText; }

}  // namespace schedlab::codegen
