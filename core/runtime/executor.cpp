// Host side of a launch: buffers, parameters, dimensions.
#include "schedlab/runtime/executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/runtime/work_estimate.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/lower/lower.h"

namespace schedlab::runtime {

namespace {

int64_t eval(const ir::SizeExpr& e, const ir::SizeBindings& sizes) {
  auto v = e.evaluate(sizes);
  user_assert(v.has_value()) << "size expression " << e.str() << " has an unbound size";
  return *v;
}

uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // values are already bf16-representable
}

uint16_t f64_to_f16_bits(double v) {
  // v is representable in f16 (inputs are rounded when generated).
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(a)) return sign | 0x7c00;
  if (a == 0.0) return sign;
  int e;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;               // a = (2m) * 2^exp
  if (exp < -14) return sign | static_cast<uint16_t>(std::lround(a / std::ldexp(1.0, -24)));
  auto mant = static_cast<uint16_t>(std::lround((2 * m - 1) * 1024));
  return sign | static_cast<uint16_t>((exp + 15) << 10) | mant;
}

/// CUDA's limit on local memory per thread (compute capability 2.0 and
/// later, sm_90 included: the CUDA C++ Programming Guide's table of
/// technical specifications).
constexpr size_t kMaxLocalBytesPerThread = 512 * 1024;

/// The bytes of the kernel's Local arrays per thread. Past CUDA's limit it
/// is a user error naming the largest arrays: no device could launch it,
/// and the CPU backend's fibers would need stacks that large for every
/// thread of a block.
size_t local_bytes(const kir::Kernel& k) {
  size_t total = 0;
  std::vector<std::pair<size_t, const kir::Buffer*>> arrays;
  for (const auto& b : k.buffers) {
    if (b->is_param || b->memory != ir::MemoryType::Local || b->size <= 0) continue;
    const size_t bytes = static_cast<size_t>(b->size) * static_cast<size_t>(ir::dtype_size(b->dtype));
    total += bytes;
    arrays.push_back({bytes, b.get()});
  }
  if (total > kMaxLocalBytesPerThread) {
    std::sort(arrays.begin(), arrays.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string largest;
    for (size_t i = 0; i < std::min<size_t>(3, arrays.size()); ++i)
      largest += (i ? ", " : "") +
                 (arrays[i].second->tv ? arrays[i].second->tv->describe() : arrays[i].second->name) +
                 " (" + std::to_string(arrays[i].first) + " bytes)";
    user_error << "the kernel needs " << total
               << " bytes of Local arrays per thread (largest: " << largest
               << "); expected at most " << kMaxLocalBytesPerThread
               << " (CUDA's local memory per thread): bind or inline the axes those tensors keep "
                  "serial";
  }
  return total;
}

double f16_bits_to_f64(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

}  // namespace

void check_vector_accesses(const kir::Kernel& k, const std::vector<TensorArg>& args) {
  for (const auto& v : k.vector_accesses) {
    size_t i = 0;
    while (i < k.params.size() && k.params[i].buffer != v.buffer) ++i;
    internal_assert(i < args.size()) << "vector access to a non-parameter " << v.buffer->name;
    const TensorArg& a = args[i];
    std::string who = k.params[i].tv->describe();
    if (a.sizes.empty()) continue;
    user_assert(a.strides.back() == 1)
        << "launch: " << who << " is accessed with " << v.width
        << "-wide vector loads/stores but its innermost stride is " << a.strides.back()
        << "; expected 1 (a contiguous innermost axis), or remove Vectorize";
    user_assert(a.sizes.back() % v.width == 0)
        << "launch: " << who << " is accessed with " << v.width
        << "-wide vector loads/stores but its innermost extent " << a.sizes.back()
        << " is not a multiple of " << v.width << "; expected a multiple, or a smaller width";
    for (size_t d = 0; d + 1 < a.strides.size(); ++d)
      user_assert(a.strides[d] % v.width == 0)
          << "launch: " << who << " is accessed with " << v.width << "-wide vectors but stride "
          << a.strides[d] << " of axis " << d << " is not a multiple of " << v.width;
    auto bytes = static_cast<uintptr_t>(v.width * ir::dtype_size(a.dtype));
    user_assert(reinterpret_cast<uintptr_t>(a.data) % bytes == 0)
        << "launch: " << who << " is accessed with " << bytes << "-byte vectors but its data "
        << "pointer is not " << bytes << "-byte aligned";
  }
}

void encode(double v, ir::DataType t, void* dst) {
  switch (t) {
    case ir::DataType::Bool: *static_cast<uint8_t*>(dst) = v != 0.0; break;
    case ir::DataType::I32: *static_cast<int32_t*>(dst) = static_cast<int32_t>(v); break;
    case ir::DataType::I64: *static_cast<int64_t*>(dst) = static_cast<int64_t>(v); break;
    case ir::DataType::F16: *static_cast<uint16_t*>(dst) = f64_to_f16_bits(v); break;
    case ir::DataType::BF16: *static_cast<uint16_t*>(dst) = f32_to_bf16_bits(static_cast<float>(v)); break;
    case ir::DataType::F32: *static_cast<float*>(dst) = static_cast<float>(v); break;
    case ir::DataType::F64: *static_cast<double*>(dst) = v; break;
  }
}

double decode(const void* src, ir::DataType t) {
  switch (t) {
    case ir::DataType::Bool: return *static_cast<const uint8_t*>(src) ? 1.0 : 0.0;
    case ir::DataType::I32: return *static_cast<const int32_t*>(src);
    case ir::DataType::I64: return static_cast<double>(*static_cast<const int64_t*>(src));
    case ir::DataType::F16: return f16_bits_to_f64(*static_cast<const uint16_t*>(src));
    case ir::DataType::BF16: {
      uint32_t u = uint32_t(*static_cast<const uint16_t*>(src)) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case ir::DataType::F32: return *static_cast<const float*>(src);
    case ir::DataType::F64: return *static_cast<const double*>(src);
  }
  return 0.0;
}

std::vector<int64_t> param_shape(const kir::Param& p, const LaunchDims& dims,
                                 const ir::SizeBindings& sizes) {
  std::vector<int64_t> shape = ref::allocatable_shape(p.tv, sizes, ir::dtype_size(p.tv->dtype()));
  if (p.source != kir::Param::Source::GridWorkspace) return shape;
  if (p.barrier) return {2};  // the grid barrier: arrivals, generation
  // A grid reduction's workspace: a slot (partials: one per block along the
  // reduced blockIdx dimensions) per element of the reduced tensor.
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (!p.semaphore)
    for (size_t d = 0; d < 3; ++d)
      if (p.grid_dims[d]) n *= dims.grid[d];
  return {n};
}

void check_specialization(const kir::Kernel& k, const ir::SizeBindings& sizes) {
  for (const auto& [name, v] : k.specialized) {
    auto it = sizes.find(name);
    user_assert(it != sizes.end() && it->second == v)
        << "launch: the kernel was compiled for " << name << "=" << v << " (its sizes are "
        << "constants in the code) but is launched with "
        << (it == sizes.end() ? name + " unbound" : name + "=" + std::to_string(it->second))
        << "; expected the same sizes, or a kernel compiled with dynamic sizes "
           "(--dynamic-sizes, `dynamic_sizes: true` in a sweep)";
  }
  for (const auto& [name, d] : k.divisible) {
    auto it = sizes.find(name);
    user_assert(it != sizes.end() && it->second % d == 0)
        << "launch: the kernel was compiled assuming " << name << " is a multiple of " << d
        << " (divisibility specialization of a dynamic kernel) but is launched with "
        << (it == sizes.end() ? name + " unbound" : name + "=" + std::to_string(it->second))
        << "; expected a multiple of " << d
        << ", or a kernel prepared at these sizes (or with --no-divisibility)";
  }
}

PreparedKernel prepare(const ir::Fusion& f, const ir::SizeBindings& sizes,
                       const lower::PassObserver& after_pass, const KernelOptions& options) {
  int bits = 32;
  for (const ir::TensorView* t : f.tensors()) {
    int64_t n = 1;
    for (const ir::IterDomain* id : t->logical()) n *= eval(id->extent(), sizes);
    if (n >= (int64_t{1} << 31)) bits = 64;
  }
  PreparedKernel p;
  ir::SizeBindings divisible;
  if (options.dynamic_sizes && options.divisibility)
    for (const auto& [name, v] : sizes)
      if (v > 0 && v % kDivisibility == 0) divisible[name] = kDivisibility;
  p.kernel = lower::lower(f, bits, after_pass, options.dynamic_sizes ? ir::SizeBindings{} : sizes,
                          divisible);
  p.kernel.fast_math = options.fast_math;
  p.kernel.native_half_math = options.native_half_math;
  codegen::PrintedUnit unit = codegen::print_unit(p.kernel);
  p.source.source = std::move(unit.text);
  p.sites = std::move(unit.sites);
  p.source.index_bits = bits;
  p.source.has_barrier = p.kernel.has_barrier;
  p.source.grid_sync = p.kernel.grid_sync;
  p.source.local_bytes = local_bytes(p.kernel);
  return p;
}

LaunchDims launch_dims(const kir::Kernel& k, const ir::SizeBindings& sizes) {
  check_specialization(k, sizes);
  LaunchDims d;
  auto extent = [&](ir::ParallelType p) -> int64_t {
    auto it = k.launch_extents.find(p);
    if (it == k.launch_extents.end()) return 1;
    int64_t m = 1;
    for (const auto& e : it->second) m = std::max(m, eval(e, sizes));
    return m;
  };
  d.grid = {extent(ir::ParallelType::BIDx), extent(ir::ParallelType::BIDy),
            extent(ir::ParallelType::BIDz)};
  d.block = {extent(ir::ParallelType::TIDx), extent(ir::ParallelType::TIDy),
             extent(ir::ParallelType::TIDz)};
  int64_t threads = d.block[0] * d.block[1] * d.block[2];
  user_assert(threads <= 1024) << "launch: " << threads << " threads per block (" << d.block[0]
                               << " x " << d.block[1] << " x " << d.block[2]
                               << "); expected at most 1024 (split the TID axes smaller)";
  d.shared_bytes = static_cast<size_t>(k.shared_bytes);
  // Block reductions: one workspace slot per thread of the block.
  if (k.reduce_workspace_bytes > 0)
    d.shared_bytes =
        static_cast<size_t>(k.reduce_workspace_offset + threads * k.reduce_workspace_bytes);
  // Shared buffers sized at launch: the formula that placed them in the kernel.
  if (k.launch_shared_bytes)
    d.shared_bytes = static_cast<size_t>(launch_value(k.launch_shared_bytes, d, sizes));
  return d;
}

kir::ExprMap<kir::ExprP> launch_bindings(const LaunchDims& dims) {
  using P = ir::ParallelType;
  static constexpr P kThreads[] = {P::TIDx, P::TIDy, P::TIDz};
  static constexpr P kBlocks[] = {P::BIDx, P::BIDy, P::BIDz};
  kir::ExprMap<kir::ExprP> values;
  for (size_t d = 0; d < 3; ++d) {
    values[kir::Expr::launch_extent(kThreads[d])] = kir::Expr::integer(dims.block[d]);
    values[kir::Expr::launch_extent(kBlocks[d])] = kir::Expr::integer(dims.grid[d]);
  }
  return values;
}

int64_t launch_value(const kir::ExprP& e, const LaunchDims& dims, const ir::SizeBindings& sizes) {
  // Launch terms: the size symbols are Vars of their own names.
  std::map<std::string, kir::ExprP> values;
  for (const auto& [name, v] : sizes) values[name] = kir::Expr::integer(v);
  kir::ExprP r = kir::substitute(kir::substitute(e, values), launch_bindings(dims));
  const auto* n = r->as<kir::IntImm>();
  internal_assert(n) << "a launch expression has an unbound name: " << kir::print_expr(r);
  return n->value;
}

void check_shared_memory(const kir::Kernel& k, const LaunchDims& dims,
                         const ir::SizeBindings& sizes, size_t limit, const std::string& device) {
  if (dims.shared_bytes <= limit) return;
  std::ostringstream what;
  for (const auto& b : k.buffers) {
    if (b->memory != ir::MemoryType::Shared || b->is_param) continue;
    int64_t n = b->dynamic_elements ? launch_value(b->dynamic_elements, dims, sizes) : b->size;
    what << (what.tellp() > 0 ? ", " : "") << b->tv->describe() << ": " << n << " x "
         << ir::dtype_name(b->dtype) << " = " << n * ir::dtype_size(b->dtype) << " B"
         << (b->dynamic_elements ? " (sized by the sizes)" : "");
  }
  if (k.reduce_workspace_bytes > 0)
    what << (what.tellp() > 0 ? ", " : "") << "block-reduction workspace: "
         << dims.block[0] * dims.block[1] * dims.block[2] << " threads x "
         << k.reduce_workspace_bytes << " B";
  std::ostringstream at;
  for (const auto& [name, v] : sizes) at << (at.tellp() > 0 ? ", " : "") << name << "=" << v;
  user_error << "launch: the kernel needs " << dims.shared_bytes
             << " bytes of shared memory per block at " << at.str() << " (" << what.str()
             << ") but the " << device << " allows at most " << limit
             << "; expected less Shared memory at these sizes (bind more of the Shared tensors' "
                "axes to blocks, split them smaller, or keep them Local or Global)";
}

std::vector<TensorArg> param_shapes(const kir::Kernel& k, const LaunchDims& dims,
                                    const ir::SizeBindings& sizes) {
  std::vector<TensorArg> args;
  for (const kir::Param& p : k.params) {
    TensorArg a;
    a.dtype = p.buffer->dtype;
    a.sizes = param_shape(p, dims, sizes);
    args.push_back(std::move(a));
  }
  return args;
}

bool traced_run_fits(const PreparedKernel& prepared, const ir::SizeBindings& sizes) {
  const double limit = cpu_work_limit(/*traced=*/true);
  if (limit <= 0) return true;
  const LaunchDims dims = launch_dims(prepared.kernel, sizes);
  return emulated_work(prepared.kernel, dims, param_shapes(prepared.kernel, dims, sizes)).total() <=
         limit;
}

BoundArgs::BoundArgs(Backend& backend, const PreparedKernel& prepared,
                     const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes,
                     const std::optional<LaunchDims>& launched)
    : backend_(backend),
      kernel_(&prepared.kernel),
      dims_(launch_dims(prepared.kernel, sizes)),
      launched_(launched.value_or(dims_)) {
  const kir::Kernel& k = prepared.kernel;
  // Part of the grid: the same block shape and shared memory, no more blocks
  // in any dimension (the arguments are the whole grid's).
  internal_assert(launched_.block == dims_.block && launched_.shared_bytes == dims_.shared_bytes &&
                  launched_.grid[0] <= dims_.grid[0] && launched_.grid[1] <= dims_.grid[1] &&
                  launched_.grid[2] <= dims_.grid[2])
      << "BoundArgs: the blocks launched are not a part of the grid (" << launched_.grid[0]
      << ", " << launched_.grid[1] << ", " << launched_.grid[2] << ") of (" << dims_.grid[0]
      << ", " << dims_.grid[1] << ", " << dims_.grid[2] << ")";
  try {
    std::vector<TensorArg> shapes = param_shapes(k, dims_, sizes);
    for (size_t pi = 0; pi < k.params.size(); ++pi) {
      const kir::Param& p = k.params[pi];
      TensorArg a = std::move(shapes[pi]);
      int64_t n = 1;
      for (int64_t s : a.sizes) n *= s;
      a.strides.assign(a.sizes.size(), 1);
      for (size_t i = a.sizes.size(); i-- > 1;) a.strides[i - 1] = a.strides[i] * a.sizes[i];
      size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 1)) *
                     static_cast<size_t>(ir::dtype_size(a.dtype));
      a.data = backend.alloc(bytes);
      owned_.push_back(a.data);
      if (p.source == kir::Param::Source::Input) {
        const ref::HostTensor& h = inputs.at(static_cast<size_t>(p.index));
        user_assert(h.shape == a.sizes) << "execute: input " << p.index << " (" << p.tv->describe()
                                        << ") has the wrong shape";
        std::vector<std::byte> host(bytes);
        for (int64_t i = 0; i < n; ++i)
          encode(h.data[static_cast<size_t>(i)], a.dtype, host.data() + i * ir::dtype_size(a.dtype));
        backend.copy_to_device(a.data, host.data(), bytes);
      } else {
        backend.memset_zero(a.data, bytes);
      }
      if (p.source == kir::Param::Source::Output)
        outputs_.emplace_back(args_.size(), static_cast<size_t>(p.index));
      args_.push_back(std::move(a));
    }
    check_vector_accesses(k, args_);
    check_shared_memory(k, dims_, sizes, backend.max_shared_bytes(), backend.name() + " backend");
    check_emulated_work(k, launched_, args_, backend.max_emulated_work(/*traced=*/false));
  } catch (...) {
    release();
    throw;
  }
}

BoundArgs::~BoundArgs() { release(); }

void BoundArgs::release() {
  for (void* p : owned_) backend_.free(p);
  owned_.clear();
}

void BoundArgs::launch(CompiledKernel& compiled) { backend_.launch(compiled, launched_, args_); }

void BoundArgs::launch_traced(CompiledKernel& compiled, const TraceKernel& trace,
                              AccessObserver& observer) {
  check_emulated_work(*kernel_, launched_, args_, backend_.max_emulated_work(/*traced=*/true),
                      /*traced=*/true);
  backend_.launch_traced(compiled, launched_, args_, trace, observer);
}

std::vector<ref::HostTensor> BoundArgs::read_outputs() const {
  std::vector<ref::HostTensor> outputs(outputs_.size());
  for (auto [ai, oi] : outputs_) {
    const TensorArg& a = args_[ai];
    ref::HostTensor h{a.dtype, a.sizes, {}};
    h.data.resize(static_cast<size_t>(h.numel()));
    std::vector<std::byte> host(static_cast<size_t>(std::max<int64_t>(h.numel(), 1)) *
                                static_cast<size_t>(ir::dtype_size(a.dtype)));
    backend_.copy_to_host(host.data(), a.data, host.size());
    for (size_t i = 0; i < h.data.size(); ++i)
      h.data[i] = decode(host.data() + i * static_cast<size_t>(ir::dtype_size(a.dtype)), a.dtype);
    outputs[oi] = std::move(h);
  }
  return outputs;
}

std::vector<ref::HostTensor> execute(Backend& backend, CompiledKernel& compiled,
                                     const PreparedKernel& prepared,
                                     const std::vector<ref::HostTensor>& inputs,
                                     const ir::SizeBindings& sizes) {
  BoundArgs bound(backend, prepared, inputs, sizes);
  bound.launch(compiled);
  return bound.read_outputs();
}

}  // namespace schedlab::runtime

namespace schedlab::runtime {

KernelSource traced_source(const PreparedKernel& prepared) {
  KernelSource src = prepared.source;
  src.trace = true;
  return src;
}

TraceKernel trace_kernel(const PreparedKernel& prepared, const BoundArgs& args,
                         const ir::SizeBindings& sizes, const std::string& name) {
  const kir::Kernel& k = prepared.kernel;
  TraceKernel t;
  t.name = name.empty() ? prepared.source.name : name;
  t.source = prepared.source.source;
  t.dims = args.launched();
  std::map<const kir::Buffer*, int> id;
  for (const auto& b : k.buffers) {
    id[b.get()] = static_cast<int>(t.buffers.size());
    TraceBuffer tb;
    tb.name = b->name;
    tb.label = b->tv != nullptr ? b->tv->describe() : b->name;
    tb.elem_bytes = static_cast<int>(ir::dtype_size(b->dtype));
    if (b->is_param) {
      size_t i = 0;
      while (i < k.params.size() && k.params[i].buffer != b.get()) ++i;
      internal_assert(i < k.params.size()) << "parameter buffer " << b->name << " has no Param";
      const TensorArg& a = args.args()[i];
      tb.space = MemorySpace::Global;
      tb.elements = 1;
      for (int64_t s : a.sizes) tb.elements *= s;
      tb.base = a.data;
      tb.initialized = k.params[i].source == kir::Param::Source::Input;
    } else if (b->memory == ir::MemoryType::Shared) {
      tb.space = MemorySpace::Shared;
      tb.elements = b->dynamic_elements ? launch_value(b->dynamic_elements, t.dims, sizes) : b->size;
      tb.shared_offset = b->dynamic_offset ? -1 : b->shared_offset;
    } else {
      tb.space = MemorySpace::Local;
      tb.elements = b->size;
    }
    t.buffers.push_back(std::move(tb));
  }
  for (const codegen::AccessSite& s : prepared.sites) {
    TraceSite ts;
    using K = codegen::AccessSite::Kind;
    ts.kind = s.kind == K::Read    ? TraceSite::Kind::Read
              : s.kind == K::Write ? TraceSite::Kind::Write
              : s.kind == K::Declare ? TraceSite::Kind::Declare
                                     : TraceSite::Kind::Barrier;
    ts.buffer = s.buffer != nullptr ? id.at(s.buffer) : -1;
    ts.elements = static_cast<int>(s.elements);
    ts.line = s.line;
    t.sites.push_back(ts);
  }
  return t;
}

std::vector<ref::HostTensor> execute_traced(Backend& backend, CompiledKernel& compiled,
                                            const PreparedKernel& prepared,
                                            const std::vector<ref::HostTensor>& inputs,
                                            const ir::SizeBindings& sizes,
                                            AccessObserver& observer, const std::string& name) {
  BoundArgs bound(backend, prepared, inputs, sizes);
  const TraceKernel trace = trace_kernel(prepared, bound, sizes, name);
  bound.launch_traced(compiled, trace, observer);
  return bound.read_outputs();
}

SanitizedRun execute_sanitized(Backend& backend, const PreparedKernel& prepared,
                               const std::vector<ref::HostTensor>& inputs,
                               const ir::SizeBindings& sizes, const std::string& name) {
  auto compiled = backend.compile(traced_source(prepared));
  Sanitizer sanitizer;
  SanitizedRun r;
  r.outputs = execute_traced(backend, *compiled, prepared, inputs, sizes, sanitizer, name);
  r.findings = sanitizer.findings();
  r.report = sanitizer.report();
  return r;
}

}  // namespace schedlab::runtime
