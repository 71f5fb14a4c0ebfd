#include "schedlab/codegen/mma_header.h"

namespace schedlab::embedded {
// core/codegen/mma.cuh, embedded at build time (codegen/sources.cmake).
extern const std::string_view kMmaHeaderText;
}  // namespace schedlab::embedded

namespace schedlab::codegen {

std::string_view mma_header() { return embedded::kMmaHeaderText; }

}  // namespace schedlab::codegen
