// Running a scheduled fusion: lower for the sizes at hand, generate the
// source, compile on a backend, launch on host-provided inputs, read back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/lower/kir.h"
#include "schedlab/lower/kir_equality.h"
#include "schedlab/lower/lower.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/access_trace.h"
#include "schedlab/runtime/kernel.h"
#include "schedlab/runtime/sanitizer.h"

namespace schedlab::runtime {

/// A lowered kernel and its source.
struct PreparedKernel {
  kir::Kernel kernel;
  KernelSource source;
  std::vector<codegen::AccessSite> sites;  ///< the source's access sites (access_trace.h)
};

/// How a kernel is compiled.
struct KernelOptions {
  /// One kernel for every shape: the sizes are read from the parameters at
  /// run time. By default they are compiled in as constants (the kernel runs
  /// at `sizes` only, and its index math folds).
  bool dynamic_sizes = false;
  /// f32 exp, log, division, reciprocal, rsqrt and sigmoid through the
  /// hardware approximations (__expf, __logf, __fdividef, rsqrtf; kir::Kernel::
  /// fast_math). Validate its results with ref::EvalOptions{fast_math = true}.
  bool fast_math = false;
  /// A dynamic kernel assumes the sizes that are multiples of
  /// kDivisibility at the sizes it is prepared for stay multiples of it
  /// (Triton's divisibility specialization; kir::Kernel::divisible): one
  /// kernel serves every such shape, and its index math folds. Off: one
  /// kernel for every shape (`--no-divisibility`).
  bool divisibility = true;
  /// Half ops through __hadd/__hmul/... and their half2 forms (kir::Kernel::
  /// native_half_math; `--math native`). The results are the same bits, so
  /// validation does not change.
  bool native_half_math = false;
};

/// The divisor of divisibility specialization (Triton's, 16).
inline constexpr int64_t kDivisibility = 16;

/// Lowers and prints f. The index type is int32 when every tensor of the
/// fusion has fewer than 2^31 elements under `sizes`, int64 otherwise.
/// `after_pass` sees the kernel IR after each lowering pass (lower.h).
PreparedKernel prepare(const ir::Fusion& f, const ir::SizeBindings& sizes,
                       const lower::PassObserver& after_pass = {},
                       const KernelOptions& options = {});
/// user_error unless `sizes` agree with the sizes k was specialized for:
/// equal to those compiled in, multiples of those it assumes divisible.
void check_specialization(const kir::Kernel& k, const ir::SizeBindings& sizes);
/// Grid and block from the extents of the bound loops (the largest per
/// parallel type), and the dynamic shared memory (the Shared buffers, then
/// the block-reduction workspace, sized by the block).
LaunchDims launch_dims(const kir::Kernel& k, const ir::SizeBindings& sizes);
/// The launch's built-ins as values: each launch extent (kir::Builtin of
/// Of::Extent: blockDim, gridDim) bound to its integer, for kir::substitute.
kir::ExprMap<kir::ExprP> launch_bindings(const LaunchDims& dims);
/// The value of a kernel's launch-term expression (kir::Kernel::
/// launch_shared_bytes, Buffer::dynamic_elements) at this launch.
int64_t launch_value(const kir::ExprP& e, const LaunchDims& dims, const ir::SizeBindings& sizes);
/// user_error naming every Shared buffer (and the block-reduction workspace)
/// with its bytes at these sizes when dims.shared_bytes exceeds `limit`
/// (Backend::max_shared_bytes; `device` names it in the message).
void check_shared_memory(const kir::Kernel& k, const LaunchDims& dims,
                         const ir::SizeBindings& sizes, size_t limit, const std::string& device);
/// The sizes a parameter is allocated with at this launch: the tensor's shape,
/// or for a grid reduction's workspace (kir::Param::Source::GridWorkspace) one
/// extent, its element count times (for the partials) the grid's blocks along
/// the reduced blockIdx dimensions. Its dtype is the parameter buffer's.
std::vector<int64_t> param_shape(const kir::Param& p, const LaunchDims& dims,
                                 const ir::SizeBindings& sizes);
/// Every parameter's TensorArg with only its sizes (param_shape) filled in:
/// what the work estimate (work_estimate.h) needs, before anything is allocated.
std::vector<TensorArg> param_shapes(const kir::Kernel& k, const LaunchDims& dims,
                                    const ir::SizeBindings& sizes);
/// Whether a traced (sanitized) launch of `prepared` at `sizes` stays within
/// the CPU emulation's traced budget (work_estimate.h): sweeps validate a
/// kernel beyond it without the sanitizer rather than refuse it.
bool traced_run_fits(const PreparedKernel& prepared, const ir::SizeBindings& sizes);
/// A kernel's parameters allocated on a backend, inputs uploaded, the rest
/// zeroed, the vector accesses (check_vector_accesses) and the shared memory
/// (check_shared_memory) checked: launch it
/// as often as needed (a benchmark launches it many times; grid-reduction
/// semaphores reset themselves), then read the outputs back. Frees every
/// buffer on destruction.
///
/// `launched`, when given, is what launch() and launch_traced() run instead
/// of the whole grid: its first blocks (model/profile.h's sampling). The
/// arguments are sized for the whole grid, which the blocks index; the CPU
/// emulation's work budget (work_estimate.h) is checked for the blocks
/// launched, so a profile of a grid too large to emulate whole still runs
/// its sample, and a whole launch stays refused.
class BoundArgs {
 public:
  BoundArgs(Backend& backend, const PreparedKernel& prepared,
            const std::vector<ref::HostTensor>& inputs, const ir::SizeBindings& sizes,
            const std::optional<LaunchDims>& launched = std::nullopt);
  ~BoundArgs();
  BoundArgs(const BoundArgs&) = delete;
  BoundArgs& operator=(const BoundArgs&) = delete;

  /// The whole grid's launch.
  const LaunchDims& dims() const { return dims_; }
  /// The launch run: dims(), or the `launched` blocks of it.
  const LaunchDims& launched() const { return launched_; }
  const std::vector<TensorArg>& args() const { return args_; }
  /// One launch; waits for it.
  void launch(CompiledKernel& compiled);
  /// One traced launch (Backend::launch_traced) of a kernel compiled from
  /// traced_source(); `trace` from trace_kernel() for these arguments.
  void launch_traced(CompiledKernel& compiled, const TraceKernel& trace, AccessObserver& observer);
  /// The fusion outputs, in fusion order.
  std::vector<ref::HostTensor> read_outputs() const;

 private:
  void release();
  Backend& backend_;
  const kir::Kernel* kernel_;  ///< the prepared kernel's (it outlives this)
  LaunchDims dims_;
  LaunchDims launched_;
  std::vector<TensorArg> args_;
  std::vector<void*> owned_;
  std::vector<std::pair<size_t, size_t>> outputs_;  ///< (arg index, output index)
};

/// Runs a compiled kernel on host inputs (one per fusion input, values held
/// in double and converted to each dtype) and returns the fusion outputs.
/// Workspaces are allocated and zeroed per launch.
std::vector<ref::HostTensor> execute(Backend& backend, CompiledKernel& compiled,
                                     const PreparedKernel& prepared,
                                     const std::vector<ref::HostTensor>& inputs,
                                     const ir::SizeBindings& sizes);

/// The source of `prepared` compiled with the access trace (KernelSource::trace).
KernelSource traced_source(const PreparedKernel& prepared);
/// The description of a traced launch of `prepared` with `args` (buffers with
/// their sizes at this launch, sites with their lines); `name` names the
/// kernel in reports (empty: the KernelSource's name).
TraceKernel trace_kernel(const PreparedKernel& prepared, const BoundArgs& args,
                         const ir::SizeBindings& sizes, const std::string& name = "");

/// execute() with every access reported to `observer`: `compiled` must come
/// from traced_source(prepared) on a backend that traces (the CPU backend).
std::vector<ref::HostTensor> execute_traced(Backend& backend, CompiledKernel& compiled,
                                            const PreparedKernel& prepared,
                                            const std::vector<ref::HostTensor>& inputs,
                                            const ir::SizeBindings& sizes,
                                            AccessObserver& observer,
                                            const std::string& name = "");

/// A run under the sanitizer: the outputs of the traced launch, and what the
/// sanitizer found (empty: clean).
struct SanitizedRun {
  std::vector<ref::HostTensor> outputs;
  std::vector<SanitizerFinding> findings;
  /// Every finding's message, one per line.
  std::string report;
};
/// Compiles `prepared` traced on `backend` (which must trace: the CPU
/// backend), runs it once under a Sanitizer (sanitizer.h) and returns the
/// outputs and findings. `name` names the kernel in reports.
SanitizedRun execute_sanitized(Backend& backend, const PreparedKernel& prepared,
                               const std::vector<ref::HostTensor>& inputs,
                               const ir::SizeBindings& sizes, const std::string& name = "");

/// The launch-time half of vectorization (lower/vectorize.h): innermost
/// stride 1, innermost extent and other strides multiples of the width, and
/// aligned pointers, for every vector-accessed parameter. user_error otherwise.
void check_vector_accesses(const kir::Kernel& k, const std::vector<TensorArg>& args);

/// Encodes `v` (already representable) in dtype t's storage; decodes back.
void encode(double v, ir::DataType t, void* dst);
double decode(const void* src, ir::DataType t);

}  // namespace schedlab::runtime
