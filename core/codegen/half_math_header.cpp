#include "schedlab/codegen/half_math_header.h"

namespace schedlab::embedded {
// core/codegen/half_math.cuh, embedded at build time (codegen/sources.cmake).
extern const std::string_view kHalfMathText;
}  // namespace schedlab::embedded

namespace schedlab::codegen {

std::string_view half_math_header() { return embedded::kHalfMathText; }

}  // namespace schedlab::codegen
