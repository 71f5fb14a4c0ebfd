// The variables a kernel reads its sizes by; see size_variable.h.
#include "schedlab/lower/size_variable.h"

namespace schedlab::lower {

kir::ExprP size_variable(const kir::Kernel& kernel, const std::string& size) {
  const auto& [buffer, axis] = kernel.size_sources.at(size);
  auto d = kernel.divisible.find(size);
  return kir::Expr::tensor_size(buffer, axis, d == kernel.divisible.end() ? 1 : d->second);
}

}  // namespace schedlab::lower
