// The built-in matmul plugin (plugins/matmul), loaded from its real .so: the
// standard matmul fusions (matmul and linear, bf16 and f16, batched, with an
// epilogue), scheduled by its own choice and by forced settings, validate on
// the CPU backend against the reference evaluator and compile with NVRTC for
// sm_90; the heuristic's choices at a few sizes; every refusal names its
// reason; settings it cannot honour are refused or user errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugin_check.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/host.h"
#include "schedlab/runtime/cpu_backend.h"
#include "test_support.h"

namespace schedlab::plugin {
namespace {

using test_support::user_error_of;
using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const Plugin> matmul_plugin() {
  static std::shared_ptr<const Plugin> p =
      load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/matmul.so");
  return p;
}

runtime::Backend& cpu() {
  static std::unique_ptr<runtime::Backend> backend =
      runtime::make_cpu_backend(model::model_device_properties(), KERNEL_CACHE_DIR);
  return *backend;
}

/// `inputs` (YAML lines), one body, `outputs`; sizes M=3, N=5, K=16, J=2,
/// those the inputs name (size names are the only capitals there).
std::string fusion_text(const std::string& name, const std::string& inputs, const std::string& body,
                        const std::string& outputs = "[c]") {
  std::string sizes;
  for (const auto& [sym, v] : std::map<std::string, int>{{"M", 3}, {"N", 5}, {"K", 16}, {"J", 2}})
    if (inputs.find(sym) != std::string::npos)
      sizes += (sizes.empty() ? "" : ", ") + sym + ": " + std::to_string(v);
  return "fusion: " + name + "\ninputs:\n" + inputs + "sizes: {" + sizes + "}\nbody: |\n" + body +
         "outputs: " + outputs + "\n";
}
/// a [M, K] and b [K, N] of `dtype`.
std::string ab(const std::string& dtype) {
  return "  a: {dtype: " + dtype + ", shape: [M, K]}\n  b: {dtype: " + dtype + ", shape: [K, N]}\n";
}
/// The matmul product of a and b, written by hand.
const std::string kProduct =
    "broadcast(a, [false, false, true]) * broadcast(b, [true, false, false])";
const std::string kSum = "  c = sum(" + kProduct + ", axis=1)\n";

/// Contractions written by hand (not through the matmul composite), each
/// one refusal or an accepted variant.
const std::map<std::string, std::string>& extra_fusions() {
  static const std::map<std::string, std::string> m = {
      {"matmul_f32", fusion_text("matmul_f32", ab("f32"), kSum)},
      {"matmul_f64", fusion_text("matmul_f64", ab("f64"), kSum)},
      {"matmul_i32", fusion_text("matmul_i32", ab("i32"), kSum)},
      {"mixed_dtypes",
       fusion_text("mixed_dtypes",
                   "  a: {dtype: bf16, shape: [M, K]}\n  b: {dtype: f16, shape: [K, N]}\n",
                   "  c = sum(cast(broadcast(a, [false, false, true]), f32) * "
                   "cast(broadcast(b, [true, false, false]), f32), axis=1)\n")},
      {"k_broadcast",
       fusion_text(
           "k_broadcast", "  a: {dtype: f32, shape: [M, K]}\n  v: {dtype: f32, shape: [N]}\n",
           "  c = sum(broadcast(a, [false, false, true]) * broadcast(v, [true, true, false]), "
           "axis=1)\n")},
      {"times_constant", fusion_text("times_constant", "  x: {dtype: f32, shape: [M, K]}\n",
                                     "  c = sum(x * 2.0, axis=1)\n")},
      {"exp_operand", fusion_text("exp_operand", ab("f32"),
                                  "  c = sum(broadcast(exp(a), [false, false, true]) * "
                                  "broadcast(b, [true, false, false]), axis=1)\n")},
      {"two_reduced_axes",
       fusion_text("two_reduced_axes",
                   "  a: {dtype: f32, shape: [M, K, J]}\n  b: {dtype: f32, shape: [K, J, N]}\n",
                   "  c = sum(broadcast(a, [false, false, false, true]) * "
                   "broadcast(b, [true, false, false, false]), axis=[1, 2])\n")},
      {"no_m_axis",
       fusion_text("no_m_axis",
                   "  x: {dtype: f32, shape: [N, K]}\n  w: {dtype: f32, shape: [N, K]}\n",
                   "  c = sum(x * w, axis=1)\n")},
      {"product_out", fusion_text("product_out", ab("f32"),
                                  "  p = " + kProduct + "\n  c = sum(p, axis=1)\n", "[c, p]")},
      {"operand_read_twice",
       fusion_text("operand_read_twice", ab("f32"), kSum + "  d = a * 2.0\n", "[c, d]")},
      {"side_output", fusion_text("side_output", ab("f32") + "  z: {dtype: f32, shape: [M, N]}\n",
                                  kSum + "  d = z * 2.0\n", "[c, d]")},
      {"broadcast_input",
       fusion_text("broadcast_input",
                   "  a: {dtype: f32, shape: [M, K]}\n  bb: {dtype: f32, shape: [1, K, N]}\n",
                   "  c = sum(broadcast(a, [false, false, true]) * bb, axis=1)\n")},
      {"broadcast_back",
       fusion_text("broadcast_back", ab("f32") + "  e: {dtype: f32, shape: [M, K, N]}\n",
                   "  s = sum(" + kProduct + ", axis=1, keepdim=true)\n  y = s + e\n", "[y]")},
  };
  return m;
}

frontend::FusionDefinition load_def(const std::string& name) {
  auto it = extra_fusions().find(name);
  if (it != extra_fusions().end()) return frontend::parse_fusion_text(it->second, name + ".yaml");
  return test_support::load_config_fusion(name);
}

struct Scheduled {
  frontend::FusionDefinition def;
  HostSegment seg;
};

Scheduled segment_of(const std::string& fusion, const ir::SizeBindings& sizes) {
  Scheduled s{load_def(fusion), {}};
  s.seg.fusion = s.def.fusion.get();
  s.seg.sizes = frontend::bind_sizes(s.def, sizes);
  return s;
}

struct Case {
  std::string fusion;
  ir::SizeBindings sizes;
  std::vector<std::string> settings;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fusion;
  for (const auto& [k, v] : c.sizes) *os << " " << k << "=" << v;
  for (const auto& s : c.settings) *os << " " << s;
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.fusion;
  for (const auto& [k, v] : info.param.sizes) n += "_" + k + std::to_string(v);
  for (const auto& s : info.param.settings) n += "_" + s;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

ir::SizeBindings mnk(int64_t m, int64_t n, int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}
ir::SizeBindings bmnk(int64_t m, int64_t n, int64_t k) {
  return {{"B", 2}, {"M", m}, {"N", n}, {"K", k}};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // The sizes, each standard fusion, the plugin's own choice.
  for (const char* f : {"matmul_bf16", "matmul_f16", "linear_bias_gelu_bf16"})
    for (const auto& s : {mnk(130, 70, 48), mnk(1, 1, 16), mnk(4096, 16, 64), mnk(2, 3, 5)})
      out.push_back({f, s, {}});
  for (const auto& s : {bmnk(130, 70, 48), bmnk(1, 1, 16), bmnk(4096, 16, 64)})
    out.push_back({"batched_matmul_bf16", s, {}});
  out.push_back({"matmul_f32", mnk(33, 17, 9), {}});
  // Forced settings: big tiles with 8 x 8 per thread over uneven edges, a
  // 1 x 1 thread tile, split-K with a short K step, tiles of unequal edges.
  const std::vector<std::vector<std::string>> forced = {
      {"instruction=fma", "tile_m=128", "tile_n=128", "thread_m=8", "thread_n=8", "split_k=1"},
      {"instruction=fma", "tile_m=8", "tile_n=8", "thread_m=1", "thread_n=1", "split_k=1",
       "tile_k=4"},
      {"instruction=fma", "tile_m=32", "tile_n=16", "thread_m=4", "thread_n=2", "split_k=2",
       "tile_k=8"},
      {"instruction=fma", "tile_m=16", "tile_n=64", "thread_m=2", "thread_n=8", "split_k=8",
       "tile_k=2"},
  };
  for (const auto& f : forced) {
    out.push_back({"matmul_bf16", mnk(130, 70, 48), f});
    out.push_back({"linear_bias_gelu_bf16", mnk(37, 70, 20), f});
  }
  out.push_back({"batched_matmul_bf16", bmnk(20, 9, 33), forced[2]});
  // Tensor cores, forced: one warp of one instruction tile (the reference
  // schedule of tests/matmul/mma_tile_test), 2 x 2 warps of 2 x 2 tiles
  // each, 4 x 1 warps of one tile, 1 x 4 warps of 4 x 1 tiles.
  const std::vector<std::vector<std::string>> mma = {
      {"instruction=mma", "tile_m=16", "tile_n=8", "warp_m=16", "warp_n=8"},
      {"instruction=mma", "tile_m=64", "tile_n=32", "warp_m=32", "warp_n=16"},
      {"instruction=mma", "tile_m=64", "tile_n=8", "warp_m=16", "warp_n=8"},
      {"instruction=mma", "tile_m=64", "tile_n=32", "warp_m=64", "warp_n=8"},
  };
  for (const auto& f : mma) {
    for (const auto& s : {mnk(130, 70, 48), mnk(1, 1, 16), mnk(2, 3, 5), mnk(33, 16, 64)})
      out.push_back({"matmul_bf16", s, f});
    out.push_back({"linear_bias_gelu_bf16", mnk(37, 70, 20), f});
    out.push_back({"batched_matmul_bf16", bmnk(20, 9, 33), f});
  }
  out.push_back({"matmul_f16", mnk(130, 70, 48), mma[1]});
  return out;
}

class MatmulPluginRuns : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulPluginRuns, MatchesTheReferenceOnTheCpuBackend) {
  const Case& c = GetParam();
  std::string used = test_support::schedule_and_validate(
      *matmul_plugin(), [&] { return load_def(c.fusion); }, c.sizes, c.settings, cpu(),
      KERNEL_CACHE_DIR);
  for (const std::string& s : c.settings) EXPECT_THAT(used, HasSubstr(s));
}

INSTANTIATE_TEST_SUITE_P(All, MatmulPluginRuns, ::testing::ValuesIn(cases()), case_name);

/// The plugin's tensor-core schedule of `fusion` at `sizes` (its own choice,
/// then `settings`), prepared for launch.
runtime::PreparedKernel tensor_core_kernel(const std::string& fusion, const ir::SizeBindings& sizes,
                                           const std::vector<std::string>& settings,
                                           frontend::FusionDefinition& def) {
  auto p = matmul_plugin();
  def = load_def(fusion);
  HostSegment seg;
  seg.fusion = def.fusion.get();
  seg.sizes = frontend::bind_sizes(def, sizes);
  plugin::ParamValues params = p->with_settings(p->compute_params(seg), settings);
  EXPECT_THAT(p->format(params), HasSubstr("instruction=mma"));
  p->schedule(seg, params);
  return runtime::prepare(*def.fusion, seg.sizes);
}

/// NVRTC takes `k` for sm_80 and sm_90; its sanitized CPU run finds nothing
/// and matches the reference of the unscheduled fusion.
void expect_compiles_and_runs_clean(const runtime::PreparedKernel& k, const std::string& fusion,
                                    const ir::SizeBindings& sizes) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string log;
    EXPECT_FALSE(runtime::nvrtc_compile(k.source, arch, &log, KERNEL_CACHE_DIR).empty())
        << arch << ": " << log;
  }
  frontend::FusionDefinition plain = load_def(fusion);
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 5, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  runtime::SanitizedRun run = runtime::execute_sanitized(cpu(), k, inputs, sizes, fusion);
  EXPECT_EQ(run.report, "");
  sweep::Validation check = sweep::validate(*plain.fusion, sizes, run.outputs, want);
  EXPECT_TRUE(check.ok) << check.summary();
}

// On tensor cores (the choice for bf16/f16): the CUDA has mma.sync, NVRTC
// takes it for sm_80 and sm_90, and the race sanitizer of the CPU backend
// finds nothing (the Shared operand tiles written by every warp, read by the
// lanes of others) while the result matches the reference.
TEST(MatmulPluginTensorCores, MmaSyncCompilesAndRunsSanitizedClean) {
  struct Run {
    std::string fusion;
    ir::SizeBindings sizes;
    std::vector<std::string> settings;
  };
  const std::vector<std::string> warps = {"tile_m=64", "tile_n=32", "warp_m=32", "warp_n=16"};
  const std::vector<Run> runs = {
      {"matmul_bf16", mnk(130, 70, 48), {}},
      {"matmul_bf16", mnk(130, 70, 48), warps},
      {"matmul_bf16", mnk(2, 3, 5), warps},
      {"matmul_f16", mnk(33, 16, 64), warps},
      {"linear_bias_gelu_bf16", mnk(33, 70, 48), {}},
      {"linear_bias_gelu_bf16", mnk(33, 70, 48), warps},
      {"batched_matmul_bf16", bmnk(20, 9, 33), warps},
  };
  for (const Run& r : runs) {
    SCOPED_TRACE(r.fusion + " at " + sweep::sizes_str(r.sizes));
    frontend::FusionDefinition def;
    runtime::PreparedKernel k = tensor_core_kernel(r.fusion, r.sizes, r.settings, def);
    EXPECT_THAT(k.source.source, HasSubstr("sl_mma_m16n8k16<"));
    expect_compiles_and_runs_clean(k, r.fusion, r.sizes);
  }
}

// Tensor cores with the operand tiles copied global -> Shared by cp.async
// (async=true; 16-byte copies along K at K % 8 == 0, 4-byte along N=70, a
// plain load at an odd contiguous extent) and circular-buffered over the K
// loop (stages 2, 3): the CUDA has the copies, one commit per prologue tile
// and per K step and a wait for all but the stages - 1 newest; NVRTC takes it
// for sm_80 and sm_90; the sanitized CPU run finds nothing and matches.
TEST(MatmulPluginTensorCores, AsyncCopiesAndStagesCompileAndRunSanitizedClean) {
  struct Run {
    std::string fusion;
    ir::SizeBindings sizes;
    std::vector<std::string> settings;
    const char* copy;  ///< a cp.async the kernel must have, or "" for plain loads only
  };
  const std::vector<std::string> warps = {"tile_m=64", "tile_n=32", "warp_m=32", "warp_n=16"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Run> runs = {
      {"matmul_bf16", mnk(130, 70, 48), {"async=true", "stages=1"}, "sl_cp_async<16, true>("},
      {"matmul_bf16", mnk(130, 70, 48), {"async=true", "stages=2"}, "sl_cp_async<4, false>("},
      {"matmul_bf16", mnk(130, 70, 48), {"async=true", "stages=3"}, "sl_cp_async<16, true>("},
      {"matmul_bf16", mnk(130, 70, 48), with(warps, {"async=true", "stages=3"}),
       "sl_cp_async<16, true>("},
      {"matmul_bf16", mnk(130, 70, 48), {"async=false", "stages=2"}, ""},
      {"matmul_bf16", mnk(33, 16, 64), {"async=true", "stages=3"}, "sl_cp_async<16, true>("},
      {"matmul_bf16", mnk(2, 3, 5), {"async=true", "stages=1"}, ""},
      {"matmul_bf16", mnk(1, 1, 16), {"async=true", "stages=1"}, "sl_cp_async<16, true>("},
      {"matmul_bf16", mnk(130, 71, 48), {"async=true", "stages=2"}, "sl_cp_async<16, true>("},
      {"linear_bias_gelu_bf16",
       mnk(33, 70, 48),
       {"async=true", "stages=3"},
       "sl_cp_async<16, true>("},
      {"linear_bias_gelu_bf16", mnk(33, 70, 48), with(warps, {"async=true", "stages=2"}),
       "sl_cp_async<16, true>("},
      {"batched_matmul_bf16",
       bmnk(20, 8, 40),
       {"async=true", "stages=3"},
       "sl_cp_async<16, true>("},
      {"batched_matmul_bf16", bmnk(20, 9, 33), with(warps, {"async=true", "stages=2"}), ""},
  };
  for (const Run& r : runs) {
    std::string label = r.fusion + " at " + sweep::sizes_str(r.sizes);
    for (const std::string& x : r.settings) label += " " + x;
    SCOPED_TRACE(label);
    frontend::FusionDefinition def;
    runtime::PreparedKernel k = tensor_core_kernel(r.fusion, r.sizes, r.settings, def);
    const std::string& cuda = k.source.source;
    const std::string kernel = cuda.substr(cuda.find("__global__"));
    EXPECT_THAT(kernel, HasSubstr("sl_mma_m16n8k16<"));
    int64_t stages = 1;
    for (const std::string& x : r.settings)
      if (x.rfind("stages=", 0) == 0) stages = std::stoll(x.substr(7));
    if (*r.copy != 0) {
      EXPECT_THAT(kernel, HasSubstr(r.copy));
      EXPECT_THAT(kernel, HasSubstr("sl_cp_async_wait<" + std::to_string(stages - 1) + ">()"));
    } else {
      EXPECT_THAT(kernel, Not(HasSubstr("sl_cp_async<")));
    }
    expect_compiles_and_runs_clean(k, r.fusion, r.sizes);
  }
}

// The planted bug of the issue: the plugin's 3-stage cp.async kernel with
// its wait_group blanked out (same line, so the sanitizer's sites still
// match) reads stages whose copies are pending: a pending-copy-read finding.
// The shared memory the plugin checks against the device (its refusal) is
// what lowering allocates: the MmaOp's operands ((tile_m * 8 + tile_n * 16)
// * 16 elements: each holds its broadcast piece of the instruction tile) and
// each stage of the staged copies, the last round of copies whole. Over the
// opt-in limit (h200: 232448 bytes) the settings are a user error; they were
// accepted before the stages counted, and the launch then failed.
TEST(MatmulPluginTensorCores, TheSharedMemoryCheckedIsWhatLoweringAllocates) {
  struct Expect {
    std::vector<std::string> settings;
    int64_t bytes;
  };
  const std::vector<std::string> big = {"tile_m=256", "tile_n=256", "warp_m=64", "warp_n=64"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  for (const Expect& e :
       {Expect{{}, 24576}, Expect{big, 196608}, Expect{{"async=true", "stages=2"}, 4096},
        Expect{{"tile_m=64", "tile_n=32", "warp_m=32", "warp_n=16", "async=true", "stages=3"},
               12288},
        Expect{with(big, {"async=true", "stages=2"}), 32768},
        Expect{with(big, {"async=true", "stages=3"}), 49152}}) {
    SCOPED_TRACE(::testing::PrintToString(e.settings));
    frontend::FusionDefinition def;
    const runtime::PreparedKernel k = tensor_core_kernel("matmul_bf16", mnk(512, 512, 512),
                                                         with({"instruction=mma"}, e.settings), def);
    EXPECT_EQ(k.kernel.shared_bytes, e.bytes);
  }
  // Staged, the mma tile reads the stages in place (no MmaOp operand
  // buffers), so no setting of h200 is over its limit; on a device of 99 KiB
  // per block the unstaged 256 x 256 tile is, and 8 stages of it.
  auto p = matmul_plugin();
  auto s = segment_of("matmul_bf16", mnk(512, 512, 512));
  s.seg.device.shared_bytes_per_block_optin = 101376;
  auto params = p->with_settings(p->compute_params(s.seg), with(big, {"instruction=mma"}));
  EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, params); }),
              HasSubstr("matmul: the operand tiles take 196608 bytes of shared memory (the MmaOp's "
                        "operands, (tile_m * 8 + tile_n * 16) * 16 elements, 2 bytes each), more "
                        "than the device's 101376 per block (dynamic shared memory with the "
                        "opt-in the CUDA backend sets)"));
  params = p->with_settings(p->compute_params(s.seg),
                            with(big, {"instruction=mma", "async=true", "stages=8"}));
  EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, params); }),
              HasSubstr("matmul: the operand tiles take 131072 bytes of shared memory (8 stage(s) "
                        "of the operand copies, (tile_m + tile_n) * 16 elements each, read in "
                        "place by the mma tile, 2 bytes each)"));
}

TEST(MatmulPluginTensorCores, AMissingWaitGroupIsASanitizerFinding) {
  const ir::SizeBindings sizes = mnk(130, 70, 48);
  frontend::FusionDefinition def;
  runtime::PreparedKernel k =
      tensor_core_kernel("matmul_bf16", sizes, {"async=true", "stages=3"}, def);
  const std::string wait = "sl_cp_async_wait<2>();";
  const size_t at = k.source.source.find(wait, k.source.source.find("__global__"));
  ASSERT_NE(at, std::string::npos);
  k.source.source.replace(at, wait.size(), std::string(wait.size(), ' '));
  frontend::FusionDefinition plain = load_def("matmul_bf16");
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 5, plain.input_ranges);
  runtime::SanitizedRun run = runtime::execute_sanitized(cpu(), k, inputs, sizes, "matmul_bf16");
  EXPECT_THAT(run.report, HasSubstr("read of a pending cp.async in kernel matmul_bf16: T10"));
}

TEST(MatmulPlugin, LoadsFromItsSoWithItsSchemaAndPriority) {
  auto p = matmul_plugin();
  EXPECT_EQ(p->name(), "matmul");
  // Above normalization (40) and reduction (30): offered contractions first.
  EXPECT_EQ(p->priority(), 50);
  std::vector<std::string> names;
  for (const ParamDesc& d : p->schema()) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_m", "tile_n", "tile_k", "thread_m", "thread_n",
                                             "warp_m", "warp_n", "split_k", "stages", "async",
                                             "grid_swizzle", "epilogue", "instruction"}));
}

std::string choice(const std::string& fusion, const ir::SizeBindings& sizes) {
  auto p = matmul_plugin();
  auto s = segment_of(fusion, sizes);
  return p->format(p->compute_params(s.seg));
}

constexpr const char* kRest =
    ", stages=1, async=false, grid_swizzle=1, epilogue=registers, "
    "instruction=fma";

TEST(MatmulPlugin, HeuristicChoicesOnCudaCores) {
  // f32 operands: CUDA cores.
  const std::string rest = kRest;
  // Big: 128 x 128 tiles alone fill the 132 SMs of the model device.
  EXPECT_EQ(
      choice("matmul_f32", mnk(4096, 4096, 4096)),
      "tile_m=128, tile_n=128, tile_k=16, thread_m=8, thread_n=8, warp_m=16, warp_n=8, split_k=1" +
          rest);
  // Medium: 128 x 128 tiles would give 64 blocks; 64 x 64 give 256 blocks
  // of 256 threads.
  EXPECT_EQ(
      choice("matmul_f32", mnk(1024, 1024, 256)),
      "tile_m=64, tile_n=64, tile_k=16, thread_m=4, thread_n=4, warp_m=16, warp_n=8, split_k=1" +
          rest);
  // Few blocks: the tile shrinks to 16 x 16 (81 blocks), the thread tile to
  // 2 x 2 (64 threads), and 4 threads split K = 48.
  EXPECT_EQ(
      choice("matmul_f32", mnk(130, 70, 48)),
      "tile_m=16, tile_n=16, tile_k=16, thread_m=2, thread_n=2, warp_m=16, warp_n=8, split_k=4" +
          rest);
  // A tall one: 16 x 16 tiles give 256 blocks, no split-K.
  EXPECT_EQ(
      choice("matmul_f32", mnk(4096, 16, 64)),
      "tile_m=16, tile_n=16, tile_k=16, thread_m=2, thread_n=2, warp_m=16, warp_n=8, split_k=1" +
          rest);
  // A dot product: one thread per split, K split in two.
  EXPECT_EQ(choice("matmul_f32", mnk(1, 1, 16)),
            "tile_m=1, tile_n=1, tile_k=8, thread_m=1, thread_n=1, warp_m=16, warp_n=8, split_k=2" +
                rest);
  // A small M x N with a long K: one output per thread (64 threads), split-K
  // of 16 (the most): 1024 threads.
  EXPECT_EQ(
      choice("matmul_f32", mnk(8, 8, 4096)),
      "tile_m=8, tile_n=8, tile_k=16, thread_m=1, thread_n=1, warp_m=16, warp_n=8, split_k=16" +
          rest);
}

TEST(MatmulPlugin, HeuristicChoicesOnTensorCores) {
  // bf16/f16 operands: mma.sync, K steps of 16, no split-K.
  const std::string rest =
      ", split_k=1, stages=1, async=false, grid_swizzle=1, epilogue=registers, instruction=mma";
  // Big: 2 x 2 warps of 64 x 64 (4 x 8 instruction tiles each): 1024
  // blocks, cp.async into 8 stages of 8 KiB (the K steps and half of h200's
  // 232448 bytes allow more; kMaxStages).
  EXPECT_EQ(choice("matmul_bf16", mnk(4096, 4096, 4096)),
            "tile_m=128, tile_n=128, tile_k=16, thread_m=4, thread_n=4, warp_m=64, warp_n=64, "
            "split_k=1, stages=8, async=true, grid_swizzle=1, epilogue=registers, "
            "instruction=mma");
  // As many stages as K steps: 4 at K=64.
  EXPECT_EQ(choice("matmul_bf16", mnk(4096, 4096, 64)),
            "tile_m=128, tile_n=128, tile_k=16, thread_m=4, thread_n=4, warp_m=64, warp_n=64, "
            "split_k=1, stages=4, async=true, grid_swizzle=1, epilogue=registers, "
            "instruction=mma");
  // An operand contiguous along an extent not a multiple of 8 (N=4100): no
  // 16-byte cp.async, the unstaged tiles.
  EXPECT_EQ(
      choice("matmul_bf16", mnk(4096, 4100, 4096)),
      "tile_m=128, tile_n=128, tile_k=16, thread_m=4, thread_n=4, warp_m=64, warp_n=32" + rest);
  // Medium: 128 x 128 and 128 x 64 tiles give 64 and 128 blocks, fewer than
  // the 132 SMs: 2 x 1 warps (256 blocks).
  EXPECT_EQ(
      choice("matmul_f16", mnk(1024, 1024, 256)),
      "tile_m=128, tile_n=32, tile_k=16, thread_m=4, thread_n=4, warp_m=64, warp_n=32" + rest);
  // Small: one warp, and its tile shrinks to one instruction tile (81 blocks).
  EXPECT_EQ(choice("matmul_bf16", mnk(130, 70, 48)),
            "tile_m=16, tile_n=8, tile_k=16, thread_m=4, thread_n=4, warp_m=16, warp_n=8" + rest);
  // Tall: one warp of 16 x 16 (two instruction tiles): 256 blocks.
  EXPECT_EQ(choice("linear_bias_gelu_bf16", mnk(4096, 16, 64)),
            "tile_m=16, tile_n=16, tile_k=16, thread_m=4, thread_n=4, warp_m=16, warp_n=16" + rest);
  // A dot product: one instruction tile, mostly zero-filled.
  EXPECT_EQ(choice("matmul_bf16", mnk(1, 1, 16)),
            "tile_m=16, tile_n=8, tile_k=16, thread_m=4, thread_n=4, warp_m=16, warp_n=8" + rest);
}

TEST(MatmulPlugin, RefusesWhatIsNotAContractionWithTheReason) {
  auto p = matmul_plugin();
  auto reason = [&](const std::string& fusion) {
    auto s = segment_of(fusion, {});
    Verdict v = p->can_schedule(s.seg, p->defaults());
    EXPECT_FALSE(v.accepted) << fusion;
    return v.reason;
  };
  EXPECT_THAT(reason("add"), HasSubstr("the segment has no reduction: not a contraction"));
  EXPECT_THAT(reason("row_sum"), HasSubstr("which is not a product: not a contraction"));
  EXPECT_THAT(reason("row_max"), HasSubstr("is a max reduction, not a sum"));
  EXPECT_THAT(reason("softmax"), HasSubstr("2 reductions ("));
  EXPECT_THAT(reason("softmax"), HasSubstr("the matmul plugin schedules one contraction"));
  EXPECT_THAT(reason("matmul_f64"),
              HasSubstr("(a) is f64; the matmul plugin takes bf16, f16 or f32 operands"));
  EXPECT_THAT(reason("matmul_i32"), HasSubstr("(a) is i32; the matmul plugin takes"));
  EXPECT_THAT(reason("mixed_dtypes"), HasSubstr("operands of different dtypes: T0 (a) is bf16"));
  EXPECT_THAT(reason("k_broadcast"),
              HasSubstr("is not the reduced axis of both operands: T1 (v) is broadcast along it"));
  EXPECT_THAT(reason("times_constant"), HasSubstr("multiplies by 2"));
  EXPECT_THAT(reason("exp_operand"),
              HasSubstr("is computed by exp; expected a broadcast or cast of a segment input"));
  EXPECT_THAT(reason("two_reduced_axes"), HasSubstr("reduces several axes"));
  EXPECT_THAT(reason("no_m_axis"), HasSubstr("has 0 M and 0 N axes"));
  EXPECT_THAT(reason("product_out"), HasSubstr("is also read outside the sum"));
  EXPECT_THAT(reason("operand_read_twice"), HasSubstr("T0 (a) is read by 2 tensors"));
  EXPECT_THAT(reason("side_output"), HasSubstr("does not depend on the contraction"));
  // A segment cut after an operand's broadcast (the segmenter's, around a
  // permute or a copy of the operand; fuzz seed 2026).
  EXPECT_THAT(
      reason("broadcast_input"),
      HasSubstr("operand input T1 (bb) has a broadcast axis (0): the segment starts after"));
  EXPECT_THAT(reason("broadcast_back"), HasSubstr("is broadcast back over the reduced axis"));
  // Called anyway, compute_params and schedule refuse with the same reason.
  auto s = segment_of("row_sum", {});
  EXPECT_THAT(user_error_of([&] { p->compute_params(s.seg); }),
              HasSubstr("matmul: T1 (y) sums T0 (x), which is not a product"));
  EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, p->defaults()); }),
              HasSubstr("which is not a product"));
}

TEST(MatmulPlugin, RefusesSettingsItCannotHonourYet) {
  auto p = matmul_plugin();
  auto reason = [&](const std::string& setting) {
    auto s = segment_of("matmul_bf16", {});
    Verdict v = p->can_schedule(s.seg, p->with_settings(p->defaults(), {setting}));
    EXPECT_FALSE(v.accepted) << setting;
    return v.reason;
  };
  // On CUDA cores (f32 operands, or instruction=fma): no stages, no cp.async.
  auto fma_reason = [&](const std::string& fusion, const std::vector<std::string>& settings) {
    auto s = segment_of(fusion, mnk(130, 70, 48));
    Verdict v = p->can_schedule(s.seg, p->with_settings(p->defaults(), settings));
    EXPECT_FALSE(v.accepted) << fusion;
    return v.reason;
  };
  EXPECT_THAT(fma_reason("matmul_f32", {"stages=2"}),
              HasSubstr("stages=2 with instruction=fma: circular buffering of the operand tiles "
                        "is implemented on tensor cores only"));
  EXPECT_THAT(fma_reason("matmul_f32", {"async=true"}),
              HasSubstr("async=true with instruction=fma: cp.async copies of 4 to 16 bytes"));
  // bf16 with async / stages is checked as the tensor-core schedule it gets.
  auto bf16 = segment_of("matmul_bf16", mnk(130, 70, 48));
  EXPECT_TRUE(p->can_schedule(bf16.seg, p->with_settings(p->defaults(), {"async=true", "stages=3"}))
                  .accepted);
  // Tensor-core stages the sizes cannot take (rule 15): more stages than K
  // steps, more than 2 without cp.async, or with a plain load (odd extent).
  auto staged = [&](const ir::SizeBindings& sizes, const std::vector<std::string>& settings) {
    auto s = segment_of("matmul_bf16", sizes);
    Verdict v = p->can_schedule(s.seg, p->with_settings(p->defaults(), settings));
    EXPECT_FALSE(v.accepted);
    return v.reason;
  };
  EXPECT_THAT(staged(mnk(130, 70, 16), {"async=true", "stages=2"}),
              HasSubstr("stages=2 with K=16: the K loop has 1 step(s) of 16, fewer than the "
                        "stages of its circular buffer (rule 15); use stages<=1"));
  EXPECT_THAT(staged(mnk(130, 70, 40), {"async=true", "stages=4"}),
              HasSubstr("stages=4 with K=40: the K loop has 3 step(s)"));
  EXPECT_THAT(staged(mnk(130, 70, 48), {"async=false", "stages=3"}),
              HasSubstr("stages=3 with async=false: more than 2 stages need cp.async loads"));
  EXPECT_THAT(staged(mnk(130, 71, 48), {"async=true", "stages=3"}),
              HasSubstr("stages=3: operand T1 (b) is contiguous along an odd extent (71), so its "
                        "tile is a plain load"));
  EXPECT_THAT(reason("grid_swizzle=4"), HasSubstr("merges them into one block axis"));
  EXPECT_THAT(reason("epilogue=shared"), HasSubstr("not implemented yet"));
  // Tensor cores: f32 operands, split-K, another K step, warp tiles that
  // are not whole instruction tiles or do not divide the CTA tile.
  auto mma_reason = [&](const std::string& fusion, std::vector<std::string> settings) {
    auto s = segment_of(fusion, mnk(130, 70, 48));
    settings.insert(settings.begin(), "instruction=mma");
    Verdict v = p->can_schedule(s.seg, p->with_settings(p->defaults(), settings));
    EXPECT_FALSE(v.accepted) << fusion;
    return v.reason;
  };
  EXPECT_THAT(mma_reason("matmul_f32", {}),
              HasSubstr("instruction=mma: mma.sync m16n8k16 multiplies bf16 or f16 operands, "
                        "these are f32"));
  auto s16 = segment_of("matmul_bf16", mnk(130, 70, 48));
  auto forced = [&](const std::vector<std::string>& settings) {
    auto params = p->with_settings(p->compute_params(s16.seg), settings);
    return user_error_of([&] { p->schedule(s16.seg, params); });
  };
  EXPECT_THAT(forced({"split_k=2"}), HasSubstr("instruction=mma with split_k=2: a split K"));
  EXPECT_THAT(forced({"tile_k=32"}), HasSubstr("instruction=mma with tile_k=32"));
  EXPECT_THAT(forced({"tile_m=48", "warp_m=24"}),
              HasSubstr("warp_m=24 is not a multiple of the instruction's m (16)"));
  EXPECT_THAT(forced({"tile_n=24", "warp_n=12"}),
              HasSubstr("warp_n=12 is not a multiple of the instruction's n (8)"));
  EXPECT_THAT(forced({"tile_m=48", "warp_m=32"}), HasSubstr("warp_m=32 does not divide tile_m=48"));
  EXPECT_THAT(forced({"tile_n=24", "warp_n=16"}), HasSubstr("warp_n=16 does not divide tile_n=24"));
  EXPECT_THAT(forced({"tile_m=256", "tile_n=256", "warp_m=16", "warp_n=8"}),
              HasSubstr("(tile_m / warp_m) * (tile_n / warp_n) * 32 = 16384 threads"));
  // The defaults are honoured.
  auto s = segment_of("matmul_bf16", {});
  EXPECT_TRUE(p->can_schedule(s.seg, p->defaults()).accepted);
}

TEST(MatmulPlugin, SettingsTheSizesOrDeviceCannotTakeAreUserErrors) {
  auto p = matmul_plugin();
  auto error = [&](const std::vector<std::string>& settings) {
    auto s = segment_of("matmul_bf16", mnk(130, 70, 48));
    std::vector<std::string> fma = {"instruction=fma"};
    fma.insert(fma.end(), settings.begin(), settings.end());
    auto params = p->with_settings(p->compute_params(s.seg), fma);
    return user_error_of([&] { p->schedule(s.seg, params); });
  };
  EXPECT_THAT(error({"tile_m=64", "thread_m=3"}),
              HasSubstr("matmul: thread_m=3 does not divide tile_m=64"));
  EXPECT_THAT(error({"tile_n=30", "thread_n=4"}),
              HasSubstr("thread_n=4 does not divide tile_n=30"));
  EXPECT_THAT(error({"tile_m=256", "tile_n=256", "thread_m=4", "thread_n=4", "split_k=1"}),
              HasSubstr("= 4096 threads, more than the device's 1024 per block"));
  EXPECT_THAT(
      error({"tile_m=256", "tile_n=256", "thread_m=16", "thread_n=16", "tile_k=256", "split_k=1"}),
      HasSubstr("the operand tiles take 262144 bytes of shared memory"));
}

}  // namespace
}  // namespace schedlab::plugin
