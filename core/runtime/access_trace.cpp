// Helpers of the access trace's description (access_trace.h).
#include "schedlab/runtime/access_trace.h"

namespace schedlab::runtime {

const char* memory_space_name(MemorySpace s) {
  switch (s) {
    case MemorySpace::Global: return "global";
    case MemorySpace::Shared: return "shared";
    case MemorySpace::Local: return "local";
  }
  return "?";
}

std::string TraceKernel::line_text(int line) const {
  if (line < 1) return "";
  size_t at = 0;
  for (int l = 1; l < line; ++l) {
    at = source.find('\n', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  size_t end = source.find('\n', at);
  std::string text = source.substr(at, end == std::string::npos ? std::string::npos : end - at);
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first);
}

}  // namespace schedlab::runtime
