#include "schedlab/codegen/runtime_header.h"

namespace schedlab::embedded {
// core/codegen/runtime.cuh, embedded at build time (runtime/embed_text.cmake).
extern const std::string_view kRuntimeHeaderText;
extern const std::string_view kCacheLoadText;  // core/codegen/cache_load.cuh
}  // namespace schedlab::embedded

namespace schedlab::codegen {

// The device runtime every kernel is printed after (the Tensor type, block
// and grid reductions, the grid semaphore) is real device code in
// core/codegen/runtime.cuh: free of #include under NVRTC, which has no
// standard headers; the CPU shim supplies them on the host, and offline nvcc
// gets <cstdint>.
std::string_view runtime_header() { return embedded::kRuntimeHeaderText; }
std::string_view cache_load_header() { return embedded::kCacheLoadText; }

}  // namespace schedlab::codegen
