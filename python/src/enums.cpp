// The enumerations with both spellings (enums.h). pybind11 lets two names
// share a value; the first one given is the one repr() and .name print, here
// nvFuser's, the spelling of the Python API.
#include "enums.h"

namespace schedlab::python {

namespace py = pybind11;

std::variant<ir::ParallelType, ir::LoopTransform> binding(PyParallelType t) {
  switch (t) {
    case PyParallelType::Serial: return ir::ParallelType::Serial;
    case PyParallelType::DIDx: return ir::ParallelType::DIDx;
    case PyParallelType::BIDx: return ir::ParallelType::BIDx;
    case PyParallelType::BIDy: return ir::ParallelType::BIDy;
    case PyParallelType::BIDz: return ir::ParallelType::BIDz;
    case PyParallelType::TIDx: return ir::ParallelType::TIDx;
    case PyParallelType::TIDy: return ir::ParallelType::TIDy;
    case PyParallelType::TIDz: return ir::ParallelType::TIDz;
    case PyParallelType::Vectorize: return ir::LoopTransform::Vectorize;
    case PyParallelType::Unroll: return ir::LoopTransform::Unroll;
    case PyParallelType::Unswitch: return ir::LoopTransform::Unswitch;
    case PyParallelType::Bulk: return ir::LoopTransform::Bulk;
  }
  return ir::ParallelType::Serial;
}

PyParallelType py_parallel_type(ir::ParallelType t) {
  switch (t) {
    case ir::ParallelType::Serial: return PyParallelType::Serial;
    case ir::ParallelType::DIDx: return PyParallelType::DIDx;
    case ir::ParallelType::BIDx: return PyParallelType::BIDx;
    case ir::ParallelType::BIDy: return PyParallelType::BIDy;
    case ir::ParallelType::BIDz: return PyParallelType::BIDz;
    case ir::ParallelType::TIDx: return PyParallelType::TIDx;
    case ir::ParallelType::TIDy: return PyParallelType::TIDy;
    case ir::ParallelType::TIDz: return PyParallelType::TIDz;
  }
  return PyParallelType::Serial;
}

namespace {

/// One value under each of its names.
template <typename E>
void values(py::enum_<E>& e, E v, std::initializer_list<const char*> names) {
  for (const char* n : names) e.value(n, v);
}

}  // namespace

void bind_enums(py::module_& m) {
  using ir::DataType;
  py::enum_<DataType> dt(m, "DataType", "Element types: nvFuser's names and schedlab's (f32, ...)");
  values(dt, DataType::Bool, {"Bool", "bool"});
  values(dt, DataType::I32, {"Int32", "i32"});
  values(dt, DataType::I64, {"Int", "i64"});
  values(dt, DataType::F16, {"Half", "f16"});
  values(dt, DataType::BF16, {"BFloat16", "bf16"});
  values(dt, DataType::F32, {"Float", "f32"});
  values(dt, DataType::F64, {"Double", "f64"});

  py::enum_<PyParallelType> pt(m, "ParallelType",
                               "Hardware bindings and loop transforms, as nvFuser's ParallelType "
                               "(grid_x, block_x, vectorize, ...) and schedlab's (BIDx, TIDx, "
                               "Vectorize, ...)");
  values(pt, PyParallelType::Serial, {"serial", "Serial"});
  values(pt, PyParallelType::DIDx, {"mesh_x", "DIDx"});
  values(pt, PyParallelType::BIDx, {"grid_x", "BIDx"});
  values(pt, PyParallelType::BIDy, {"grid_y", "BIDy"});
  values(pt, PyParallelType::BIDz, {"grid_z", "BIDz"});
  values(pt, PyParallelType::TIDx, {"block_x", "TIDx"});
  values(pt, PyParallelType::TIDy, {"block_y", "TIDy"});
  values(pt, PyParallelType::TIDz, {"block_z", "TIDz"});
  values(pt, PyParallelType::Vectorize, {"vectorize", "Vectorize"});
  values(pt, PyParallelType::Unroll, {"unroll", "Unroll"});
  values(pt, PyParallelType::Unswitch, {"unswitch", "Unswitch"});
  values(pt, PyParallelType::Bulk, {"tma", "Bulk"});

  using ir::LoopTransform;
  py::enum_<LoopTransform> lt(m, "LoopTransform",
                              "How a loop is emitted (schedlab keeps it apart from the binding)");
  values(lt, LoopTransform::Serial, {"serial", "Serial"});
  values(lt, LoopTransform::Vectorize, {"vectorize", "Vectorize"});
  values(lt, LoopTransform::Unroll, {"unroll", "Unroll"});
  values(lt, LoopTransform::Unswitch, {"unswitch", "Unswitch"});
  values(lt, LoopTransform::Bulk, {"tma", "Bulk"});

  using ir::MemoryType;
  py::enum_<MemoryType> mt(m, "MemoryType", "Where a tensor lives");
  values(mt, MemoryType::Local, {"local", "Local"});
  values(mt, MemoryType::Shared, {"shared", "Shared"});
  values(mt, MemoryType::Global, {"global", "Global"});

  using ir::LoadStoreOpType;
  py::enum_<LoadStoreOpType> ls(m, "LoadStoreOpType", "How cache_after's copy moves data");
  values(ls, LoadStoreOpType::Set, {"set", "Set"});
  values(ls, LoadStoreOpType::CpAsync, {"cp_async", "CpAsync"});
  values(ls, LoadStoreOpType::LdMatrix, {"load_matrix", "LdMatrix"});
  values(ls, LoadStoreOpType::Tma, {"tma", "Tma"});

  using ir::CacheOp;
  py::enum_<CacheOp> co(m, "CacheOp", "The cache policy of cache_after's load");
  values(co, CacheOp::Unspecified, {"unspecified", "Unspecified"});
  values(co, CacheOp::AllLevels, {"all_levels", "AllLevels"});
  values(co, CacheOp::Streaming, {"streaming", "Streaming"});
  values(co, CacheOp::Global, {"global", "Global"});
}

}  // namespace schedlab::python
