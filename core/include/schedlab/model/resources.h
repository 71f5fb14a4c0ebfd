// schedlab/model: what the compiler says about one kernel: registers, spills,
// stack frame, static shared memory and instruction counts, for a device's
// architecture, without a GPU (NVRTC needs none).
//
// Owns: reading ptxas' verbose report (NVRTC's log with --ptxas-options=-v)
// and counting the kernel's PTX instructions.
// May depend on: schedlab/base, schedlab/runtime (nvrtc_compile_all).
// Invariants: every figure comes from the compiler for the requested arch;
// nothing is guessed. A log without the kernel's report is an internal
// error (the format changed), never a zero.
//
// Why ptxas -v and not the cubin's .nv.info attributes: ptxas' report is the
// documented, human-readable form of the same numbers (nvcc -Xptxas -v prints
// it; its lines have kept their shape since CUDA 4), and it is the only one
// that carries spill stores and loads. The ELF attributes (EIATTR_REGCOUNT,
// EIATTR_FRAME_SIZE, ...) are undocumented and their encoding has changed
// between toolkits. Why PTX and not SASS for instructions: NVRTC returns PTX
// from the same compile, while SASS needs nvdisasm or cuobjdump, which a
// machine with only the NVRTC runtime does not have. PTX counts are close to,
// but not equal to, SASS counts (docs/model.md).
#pragma once

#include <cstdint>
#include <string>

#include "schedlab/runtime/kernel.h"

namespace schedlab::model {

/// Static PTX instruction counts of one entry function.
struct PtxCounts {
  int64_t instructions = 0;         ///< every instruction of the body (labels, directives excluded)
  int64_t memory_instructions = 0;  ///< ld/st/atom/red on .global or .shared
  int64_t local_instructions = 0;   ///< ld/st on .local (stack traffic)
  /// Floating-point operations of one pass through the body (the arithmetic
  /// of fp_arithmetic_ops below): 2 per fma/mad lane, 1 per other lane.
  int64_t flops = 0;
  /// CUDA-core floating-point arithmetic, in lanes of one thread: add, sub,
  /// mul, fma, mad, div, rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh, min,
  /// max on .f16/.bf16/.f32/.f64 (a packed .f16x2/.bf16x2 one counts 2).
  /// Each takes a lane of the FP pipes for one issue, an FMA as much as an add.
  int64_t fp_arithmetic_ops = 0;
  /// Tensor-core FLOPs of one warp's pass: 2 M N K per mma.sync .mMnNkK
  /// (4096 for m16n8k16, the shape the matmul lowering uses).
  int64_t mma_flops = 0;
};

/// What one PTX statement (its opcode, e.g. "fma.rn.f32") adds to the
/// arithmetic counts of PtxCounts: flops, fp_arithmetic_ops, mma_flops.
struct PtxArithmetic {
  int64_t flops = 0;
  int64_t fp_ops = 0;
  int64_t mma_flops = 0;
};
PtxArithmetic ptx_arithmetic(const std::string& opcode);

/// The compiler's report on one kernel for one architecture.
struct KernelResources {
  std::string arch;                 ///< e.g. "sm_90"
  int registers = 0;                ///< 32-bit registers per thread
  int64_t stack_bytes = 0;          ///< stack frame per thread (local arrays, spills)
  int64_t spill_store_bytes = 0;    ///< bytes stored to local memory by register spills
  int64_t spill_load_bytes = 0;     ///< bytes loaded back from spills
  int64_t static_shared_bytes = 0;  ///< __shared__ arrays (dynamic shared memory not included)
  int barriers = 0;                 ///< named barriers used
  PtxCounts ptx;                    ///< static instruction counts
};

/// Parses ptxas' verbose report in `log` for entry function `kernel`.
/// internal_error if the report of that entry is missing.
KernelResources parse_ptxas_report(const std::string& log, const std::string& kernel);

/// Counts the instructions of entry `kernel` in `ptx`. internal_error if
/// there is no such entry.
PtxCounts count_ptx(const std::string& ptx, const std::string& kernel);

/// Compiles `src` with NVRTC for `arch` (e.g. "sm_90") with ptxas' verbose
/// report, and reads registers, spills, stack, shared memory and PTX counts.
/// user_error (from NVRTC) if the kernel does not compile. Cached on disk
/// by source hash and arch under runtime::cache_dir(cache_dir_flag).
KernelResources kernel_resources(const runtime::KernelSource& src, const std::string& arch,
                                 const std::string& cache_dir_flag = "");

}  // namespace schedlab::model
