// HostTensor layout and the concrete shapes of tensors under size bindings.
#include <fmt/format.h>
#include <unistd.h>

#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::ref {

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

namespace {

std::string bindings_str(const ir::SizeBindings& sizes) {
  std::ostringstream os;
  os << "{";
  const char* sep = "";
  for (const auto& [name, v] : sizes) {
    os << sep << name << "=" << v;
    sep = ", ";
  }
  os << "}";
  return os.str();
}

}  // namespace

std::vector<int64_t> concrete_shape(const ir::TensorView* t, const ir::SizeBindings& sizes) {
  std::vector<int64_t> shape;
  int axis = 0;
  for (const ir::IterDomain* id : t->logical_no_reductions()) {
    std::vector<std::string> syms;
    id->extent().collect_symbols(syms);
    for (const std::string& s : syms)
      user_assert(sizes.count(s)) << "size " << s << " is unbound (" << t->describe() << " axis "
                                  << axis << ", extent " << id->extent().str()
                                  << "); bound sizes: " << bindings_str(sizes);
    int64_t v = *id->extent().evaluate(sizes);
    user_assert(v >= 0) << t->describe() << " axis " << axis << " has extent " << id->extent().str()
                        << " = " << v
                        << "; expected a non-negative size (bound sizes: " << bindings_str(sizes)
                        << ")";
    shape.push_back(v);
    ++axis;
  }
  return shape;
}

std::vector<int64_t> allocatable_shape(const ir::TensorView* t, const ir::SizeBindings& sizes,
                                       int bytes_per_element) {
  std::vector<int64_t> shape = concrete_shape(t, sizes);
  // In floating point: the product may overflow int64.
  double elements = 1;
  for (int64_t e : shape) elements *= static_cast<double>(e);
  const double bytes = elements * bytes_per_element;
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<double>(sysconf(_SC_PAGESIZE));
  user_assert(memory <= 0 || bytes <= memory)
      << t->describe() << " has " << fmt::format("{:.4g}", elements) << " elements for "
      << bindings_str(sizes) << ": " << fmt::format("{:.4g}", bytes) << " bytes on the host ("
      << bytes_per_element << " per element); expected at most "
      << fmt::format("{:.4g}", memory) << " bytes, this machine's memory";
  return shape;
}

}  // namespace schedlab::ref
