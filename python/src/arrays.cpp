// Arrays in and out of a run (arrays.h): NumPy, DLPack, bf16 and f16.
#include "arrays.h"

#include <dlpack/dlpack.h>
#include <pybind11/eval.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "schedlab/ir/op_semantics.h"

namespace schedlab::python {

namespace py = pybind11;

namespace {

/// The NumPy dtype an array of `t` has (bf16, which NumPy lacks: its
/// values, as float32).
const char* numpy_name(ir::DataType t) {
  switch (t) {
    case ir::DataType::Bool: return "bool";
    case ir::DataType::I32: return "int32";
    case ir::DataType::I64: return "int64";
    case ir::DataType::F16: return "float16";
    case ir::DataType::BF16: return "float32";
    case ir::DataType::F32: return "float32";
    case ir::DataType::F64: return "float64";
  }
  return "float64";
}

// ---- DLPack -----------------------------------------------------------------

// A "dltensor" capsule points to a DLManagedTensor (dlpack.h). NumPy reads
// every dtype it has; bf16, which it lacks, is read here.

/// The name of a DLPack device that is not host memory.
std::string device_name(int type, int id) {
  switch (type) {
    case kDLCUDA: return fmt::format("cuda:{}", id);
    case kDLROCM: return fmt::format("rocm:{}", id);
    case kDLCUDAManaged: return fmt::format("cuda:{} (managed)", id);
    default: return fmt::format("DLPack device type {} (id {})", type, id);
  }
}

/// Refuses a DLPack tensor outside host memory (kDLCPU, kDLCUDAHost,
/// kDLROCMHost), naming input `i`.
void require_host(int type, int id, const ir::TensorView* in, size_t i, const char* what) {
  if (type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost) return;
  const std::string device = device_name(type, id);
  raise(ErrorKind::Error,
        fmt::format("input {} ({}): a DLPack tensor on {}; expected host memory (DLPack kDLCPU): "
                    "copy it to the CPU first (tensor.cpu())",
                    i, in->describe(), device),
        {what, in});
}

/// The bits of a bf16 DLPack tensor as a uint16 array (row-major, strides
/// followed).
py::array bf16_bits(const DLTensor& t) {
  std::vector<py::ssize_t> shape(t.shape, t.shape + t.ndim);
  py::array_t<uint16_t> out(shape);
  const auto* base = reinterpret_cast<const uint16_t*>(static_cast<const char*>(t.data) + t.byte_offset);
  std::vector<int64_t> index(shape.size(), 0);
  for (py::ssize_t k = 0; k < out.size(); ++k) {
    int64_t offset = 0, compact = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += index[d] * (t.strides ? t.strides[d] : compact);
      compact *= shape[d];
    }
    out.mutable_data()[k] = base[offset];
    for (size_t d = shape.size(); d-- > 0 && ++index[d] == shape[d];) index[d] = 0;
  }
  return out;
}

/// A DLPack producer's tensor as an array: exported once (__dlpack__), bf16
/// read here as its bits, any other dtype by np.from_dlpack (through a
/// holder that lends it the capsule already taken).
py::array from_dlpack(const py::handle& value, const ir::TensorView* in, size_t i,
                      const char* what) {
  if (py::hasattr(value, "__dlpack_device__")) {
    const auto [type, id] = value.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    require_host(type, id, in, i, what);
  }
  py::object capsule = value.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) throw py::error_already_set();
  const DLTensor& t = managed->dl_tensor;
  require_host(t.device.device_type, t.device.device_id, in, i, what);
  if (t.dtype.code == kDLBfloat && t.dtype.bits == 16 && t.dtype.lanes == 1) {
    py::array bits = bf16_bits(t);
    // Consumed: the capsule no longer owns the tensor (DLPack's protocol).
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");
    if (managed->deleter) managed->deleter(managed);
    return bits;
  }
  static py::object* holder = [] {
    py::dict scope;
    py::exec(R"(
class Lent:
    """A capsule already exported, lent to np.from_dlpack."""
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device
    def __dlpack__(self, stream=None):
        return self.capsule
    def __dlpack_device__(self):
        return self.device
)",
             scope);
    return new py::object(scope["Lent"]);
  }();
  const py::tuple device =
      py::make_tuple(static_cast<int>(t.device.device_type), t.device.device_id);
  return py::module_::import("numpy").attr("from_dlpack")((*holder)(capsule, device));
}

/// `value` as an array: a NumPy array as it is, a DLPack producer (a CPU
/// torch.Tensor, ...) through from_dlpack, anything else through np.asarray.
py::array as_array(const py::handle& value, const ir::TensorView* in, size_t i,
                   const char* what) {
  if (py::isinstance<py::array>(value)) return py::reinterpret_borrow<py::array>(value);
  if (py::hasattr(value, "__dlpack__")) return from_dlpack(value, in, i, what);
  return py::module_::import("numpy").attr("asarray")(value);
}

// ---- NumPy ------------------------------------------------------------------

/// The values of `a` for a tensor of dtype `want`, as f64: each the value
/// the dtype holds. A bf16 tensor takes raw bf16 bits (uint16, or the void
/// dtype V2) or float32/float64 values rounded to bf16 (nearest even, as
/// the CLI's inputs are); an f16 tensor takes float16, or float32/float64
/// rounded to f16; every other dtype its own NumPy dtype. Empty when `a`
/// holds none of these.
std::optional<std::vector<double>> values_for(const py::array& a, ir::DataType want) {
  const std::string got = py::str(a.dtype()).cast<std::string>();
  const bool half = want == ir::DataType::BF16 || want == ir::DataType::F16;
  std::vector<double> out;
  if (want == ir::DataType::BF16 && a.itemsize() == 2 && (got == "uint16" || got == "|V2")) {
    auto bits = py::array_t<uint16_t, py::array::c_style | py::array::forcecast>::ensure(
        a.attr("view")("uint16"));
    for (py::ssize_t k = 0; k < bits.size(); ++k) {
      const uint32_t b32 = static_cast<uint32_t>(bits.data()[k]) << 16;
      float f;
      std::memcpy(&f, &b32, sizeof f);
      out.push_back(f);
    }
    return out;
  }
  const bool wider = half && (got == "float32" || got == "float64");
  if (got != numpy_name(want) && !wider) return std::nullopt;
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  out.assign(d.data(), d.data() + d.size());
  if (half)
    for (double& v : out) v = ir::round_to_dtype(v, want);
  return out;
}

}  // namespace

ref::HostTensor to_host(const py::handle& value, const ir::TensorView* in, size_t i,
                        const char* what, bool exact_dtype) {
  py::array a = as_array(value, in, i, what);
  const size_t rank = in->logical_no_reductions().size();
  if (static_cast<size_t>(a.ndim()) != rank)
    raise(ErrorKind::Error,
          fmt::format("input {} ({}): expected {} dimensions, found {}", i, in->describe(), rank,
                      a.ndim()),
          {what, in});
  ref::HostTensor t;
  t.dtype = in->dtype();
  t.shape.assign(a.shape(), a.shape() + a.ndim());
  std::optional<std::vector<double>> values = values_for(a, in->dtype());
  if (!values && exact_dtype) {
    const ir::DataType d = in->dtype();
    raise(ErrorKind::Error,
          fmt::format("input {} ({}): expected a {} array for {}, found {}", i, in->describe(),
                      d == ir::DataType::BF16   ? "uint16 (raw bf16 bits), float32 or float64"
                      : d == ir::DataType::F16 ? "float16, float32 or float64"
                                               : numpy_name(d),
                      ir::dtype_name(d), py::str(a.dtype()).cast<std::string>()),
          {what, in});
  }
  if (!values) {
    auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    values.emplace(d.data(), d.data() + d.size());
  }
  t.data = std::move(*values);
  return t;
}

py::array to_numpy(const ref::HostTensor& t) {
  py::array_t<double> a(t.shape);
  std::copy(t.data.begin(), t.data.end(), a.mutable_data());
  return a.attr("astype")(numpy_name(t.dtype));
}

}  // namespace schedlab::python
