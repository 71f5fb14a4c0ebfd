// codegen_emit_tool <name>: builds one named scheduled fusion, lowers it and
// prints the whole CUDA unit (codegen::print_cuda) for FileCheck. The
// fusions come from configs/fusions, scheduled as nvFuser users would.
// codegen_emit_tool --nvrtc compiles every one of them with NVRTC instead.
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <string>

#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/lower/lower.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sched/sched.h"

namespace {

using namespace schedlab;
using ir::ParallelType;
using ir::TensorView;

frontend::FusionDefinition load(const std::string& name) {
  return frontend::load_fusion_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/" + name +
                                    ".yaml");
}

TensorView* named(const ir::Fusion& f, const std::string& name) {
  for (TensorView* tv : f.tensors())
    if (tv->user_name() == name) return tv;
  throw std::runtime_error("no tensor named " + name);
}

/// Flatten `out`, optionally split off an unrolled inner 4, split by 128,
/// bind BIDx/TIDx, propagate, inline most.
void tile_1d(ir::Fusion& f, TensorView* out, bool unroll) {
  for (int i = 1, n = out->nloop(); i < n; ++i) out->merge(0);
  if (unroll) out->split(0, 4);
  out->split(0, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  if (unroll) out->parallelize(2, ir::LoopTransform::Unroll);
  sched::propagate_transformation(out);
  sched::parallelize_all_like(out);
  sched::inline_most(f);
}

frontend::FusionDefinition build(const std::string& name) {
  if (name == "pointwise_1d") {
    auto def = load("bias_relu");
    tile_1d(*def.fusion, named(*def.fusion, "y"), false);
    return def;
  }
  if (name == "unroll") {
    auto def = load("gelu");
    tile_1d(*def.fusion, named(*def.fusion, "y"), true);
    return def;
  }
  if (name == "f16") {
    auto def = load("pointwise_f16");
    tile_1d(*def.fusion, named(*def.fusion, "z"), false);
    return def;
  }
  if (name == "reduction") {
    // Rows split by 4 over blocks and threads; the reduction stays serial.
    auto def = load("row_sum");
    TensorView* y = named(*def.fusion, "y");
    y->split(0, 4);
    y->parallelize(0, ParallelType::BIDx);
    y->parallelize(1, ParallelType::TIDx);
    return def;
  }
  if (name == "shared_cache") {
    // A transpose through shared memory: the cache is written along one
    // axis by threadIdx.x and read along the other.
    auto def = frontend::parse_fusion_text(R"(
fusion: smem_transpose
inputs:
  x: {dtype: f32, shape: [N, 32, 32]}
body: |
  y = permute(x, [0, 2, 1])
outputs: [y]
)",
                                           "smem_transpose.yaml");
    ir::Fusion& f = *def.fusion;
    TensorView* y = named(f, "y");
    TensorView* xs = sched::cache_after(named(f, "x"));
    sched::set_memory_type(xs, ir::MemoryType::Shared);
    for (TensorView* t : {y, xs}) {
      t->parallelize(0, ParallelType::BIDx);
      t->parallelize(2, ParallelType::TIDx);
    }
    sched::inline_at(xs, 1);
    return def;
  }
  if (name == "fast_math") {
    // Every op fast math changes, in f32, and the same in f64 (unchanged);
    // unscheduled (main compiles it with kir::Kernel::fast_math).
    return frontend::parse_fusion_text(R"(
fusion: fast_math_ops
inputs:
  x: {dtype: f32, shape: [N]}
  d: {dtype: f64, shape: [N]}
body: |
  y = exp(x) / log(x) + rsqrt(x) * sigmoid(x) + reciprocal(x) + tanh(x) + pow(x, x)
  z = exp(d) / d
outputs: [y, z]
)",
                                       "fast_math_ops.yaml");
  }
  if (name == "half_ops" || name == "half_native") {
    // f16 x * y and bf16 -a: half ops (ir::half_op_is_native), unrolled by
    // 4 (constant sizes: no predicate, so each loop's only statement is the
    // op); half_native is compiled with kir::Kernel::native_half_math.
    auto def = frontend::parse_fusion_text(R"(
fusion: half_ops
inputs:
  x: {dtype: f16, shape: [1024]}
  y: {dtype: f16, shape: [1024]}
  a: {dtype: bf16, shape: [1024]}
body: |
  z = x * y
  w = -a
outputs: [z, w]
)",
                                           "half_ops.yaml");
    tile_1d(*def.fusion, named(*def.fusion, "z"), true);
    tile_1d(*def.fusion, named(*def.fusion, "w"), true);
    return def;
  }
  throw std::runtime_error("unknown fusion '" + name +
                           "'; expected pointwise_1d, unroll, f16, reduction, shared_cache, "
                           "fast_math, half_ops or half_native");
}

/// The unit of a named fusion; fast_math is compiled with fast math.
std::string unit(const std::string& name) {
  kir::Kernel k = lower::lower(*build(name).fusion);
  k.fast_math = name == "fast_math";
  k.native_half_math = name == "half_native";
  return codegen::print_cuda(k);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: codegen_emit_tool <name> | --nvrtc\n");
    return 2;
  }
  try {
    if (std::string(argv[1]) == "--nvrtc") {
      // Every unit above must compile for sm_90 (NVRTC needs no GPU).
      for (const char* name :
           {"pointwise_1d", "unroll", "f16", "reduction", "shared_cache", "fast_math", "half_ops",
            "half_native"}) {
        runtime::KernelSource src;
        src.source = unit(name);
        runtime::nvrtc_compile(src, "sm_90", nullptr, SCHEDLAB_BINARY_DIR "/tests/codegen");
        std::printf("%s: ok\n", name);
      }
      return 0;
    }
    std::fputs(unit(argv[1]).c_str(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
