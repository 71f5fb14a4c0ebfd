// HostTensor layout and the concrete shapes of tensors under size bindings.
#include <fmt/format.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/ir/printer.h"
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

/// `shape` as [outer, shape[axis], inner]: a row-major tensor is `outer`
/// blocks, each `shape[axis]` runs of `inner` contiguous elements.
struct AxisView {
  int64_t outer = 1, extent = 1, inner = 1;
};

AxisView axis_view(const std::vector<int64_t>& shape, int axis) {
  AxisView v;
  for (int i = 0; i < axis; ++i) v.outer *= shape[i];
  v.extent = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) v.inner *= shape[i];
  return v;
}

}  // namespace

HostTensor slice_axis(const HostTensor& t, int axis, int part, int parts) {
  internal_assert(axis >= 0 && axis < static_cast<int>(t.shape.size()))
      << "slice_axis: axis " << axis << " of a tensor of shape " << ir::shape_str(t.shape);
  internal_assert(parts > 0 && part >= 0 && part < parts && t.shape[axis] % parts == 0)
      << "slice_axis: part " << part << " of " << parts << " of axis " << axis << " (extent "
      << t.shape[axis] << ", shape " << ir::shape_str(t.shape) << ")";
  const AxisView v = axis_view(t.shape, axis);
  const int64_t chunk = v.extent / parts;
  HostTensor out{t.dtype, t.shape, {}};
  out.shape[axis] = chunk;
  const bool has_error = !t.error.empty();
  out.data.reserve(out.numel());
  if (has_error) out.error.reserve(out.numel());
  for (int64_t o = 0; o < v.outer; ++o) {
    const int64_t begin = (o * v.extent + part * chunk) * v.inner;
    const int64_t end = begin + chunk * v.inner;
    out.data.insert(out.data.end(), t.data.begin() + begin, t.data.begin() + end);
    if (has_error)
      out.error.insert(out.error.end(), t.error.begin() + begin, t.error.begin() + end);
  }
  return out;
}

HostTensor concat_axis(const std::vector<HostTensor>& pieces, int axis) {
  internal_assert(!pieces.empty()) << "concat_axis: no pieces";
  const HostTensor& first = pieces.front();
  internal_assert(axis >= 0 && axis < static_cast<int>(first.shape.size()))
      << "concat_axis: axis " << axis << " of pieces of shape " << ir::shape_str(first.shape);
  HostTensor out{first.dtype, first.shape, {}};
  out.shape[axis] = 0;
  bool has_error = false;
  for (size_t p = 0; p < pieces.size(); ++p) {
    const HostTensor& q = pieces[p];
    std::vector<int64_t> expected = q.shape;
    if (expected.size() == first.shape.size()) expected[axis] = first.shape[axis];
    internal_assert(q.dtype == first.dtype && expected == first.shape)
        << "concat_axis along axis " << axis << ": piece " << p << " has shape "
        << ir::shape_str(q.shape) << ", piece 0 " << ir::shape_str(first.shape)
        << "; expected the same dtype and the same extents but on axis " << axis;
    out.shape[axis] += q.shape[axis];
    has_error = has_error || !q.error.empty();
  }
  const int64_t outer = axis_view(first.shape, axis).outer;
  out.data.reserve(out.numel());
  if (has_error) out.error.reserve(out.numel());
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor& q : pieces) {
      const int64_t run = q.shape[axis] * axis_view(q.shape, axis).inner;
      out.data.insert(out.data.end(), q.data.begin() + o * run, q.data.begin() + (o + 1) * run);
      if (!has_error) continue;
      if (q.error.empty())
        out.error.insert(out.error.end(), run, 0.0);
      else
        out.error.insert(out.error.end(), q.error.begin() + o * run,
                         q.error.begin() + (o + 1) * run);
    }
  }
  return out;
}

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
