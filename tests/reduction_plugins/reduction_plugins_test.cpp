// The built-in reduction and normalization plugins (plugins/reduction,
// plugins/normalization): each standard fusion they accept, and a few
// variants written here (keepdim, an epilogue, f16, bf16, 3-D, two reduced axes),
// scheduled by the plugin's own choice and by forced settings (each
// strategy, rfactor off, unroll, vector widths, rows per block), validates on
// the CPU backend against the reference evaluator and compiles with NVRTC for
// sm_90; what each plugin cannot schedule is refused with the reason, and
// settings the sizes or device cannot take are user errors naming them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugin_check.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/host.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "test_support.h"

namespace schedlab::plugin {
namespace {

using test_support::user_error_of;
using ::testing::HasSubstr;

std::shared_ptr<const Plugin> builtin(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const Plugin>> loaded;
  auto& p = loaded[name];
  if (!p) p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/" + name + ".so");
  return p;
}

runtime::Backend& cpu() {
  static std::unique_ptr<runtime::Backend> backend =
      runtime::make_cpu_backend(model::model_device_properties(), KERNEL_CACHE_DIR);
  return *backend;
}

/// Variants of the standard fusions, defined here.
const std::map<std::string, std::string>& extra_fusions() {
  static const std::map<std::string, std::string> m = {
      {"row_sum_keepdim", R"(
fusion: row_sum_keepdim
inputs:
  x: {dtype: f32, shape: [N, K]}
sizes: {N: 3, K: 5}
body: |
  y = sum(x, axis=1, keepdim=true)
outputs: [y]
)"},
      {"row_mean", R"(
fusion: row_mean
inputs:
  x: {dtype: f32, shape: [N, K]}
sizes: {N: 3, K: 5}
body: |
  y = sum(x, axis=1) / K * 2 + 1
outputs: [y]
)"},
      {"row_sum_f16", R"(
fusion: row_sum_f16
inputs:
  x: {dtype: f16, shape: [N, K]}
sizes: {N: 3, K: 5}
body: |
  y = sum(x, axis=1)
outputs: [y]
)"},
      {"row_max_bf16", R"(
fusion: row_max_bf16
inputs:
  x: {dtype: bf16, shape: [N, K]}
sizes: {N: 3, K: 5}
body: |
  y = cast(max(cast(x, f32), axis=1), bf16)
outputs: [y]
)"},
      {"middle_sum", R"(
fusion: middle_sum
inputs:
  x: {dtype: f32, shape: [B, N, K]}
sizes: {B: 2, N: 3, K: 5}
body: |
  y = sum(x, axis=1)
outputs: [y]
)"},
      {"inner2_max", R"(
fusion: inner2_max
inputs:
  x: {dtype: f32, shape: [B, N, K]}
sizes: {B: 2, N: 3, K: 5}
body: |
  y = max(x, axis=[1, 2])
outputs: [y]
)"},
      {"outer_inner_sum", R"(
fusion: outer_inner_sum
inputs:
  x: {dtype: f32, shape: [B, N, K]}
sizes: {B: 2, N: 3, K: 5}
body: |
  y = sum(x, axis=[0, 2])
outputs: [y]
)"},
      {"layernorm_stats", R"(
fusion: layernorm_stats
inputs:
  x: {dtype: f32, shape: [N, K], range: [-2, 2]}
sizes: {N: 3, K: 5}
body: |
  mu = mean(x, axis=1, keepdim=true)
  d = x - mu
  var = sum(d * d, axis=1, keepdim=true) / K
  y = d * rsqrt(var + 1e-5)
outputs: [y, mu]
)"},
      {"col_softmax", R"(
fusion: col_softmax
inputs:
  x: {dtype: f32, shape: [N, K], range: [-4, 4]}
sizes: {N: 3, K: 5}
body: |
  m = max(x, axis=0, keepdim=true)
  e = exp(x - m)
  y = e / sum(e, axis=0, keepdim=true)
outputs: [y]
)"},
      {"softmax_f16", R"(
fusion: softmax_f16
inputs:
  x: {dtype: f16, shape: [N, K], range: [-4, 4]}
sizes: {N: 3, K: 5}
body: |
  m = max(x, axis=1, keepdim=true)
  e = exp(x - m)
  y = cast(e / sum(e, axis=1, keepdim=true), f16)
outputs: [y]
)"},
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

std::string sizes_str(const ir::SizeBindings& sizes) {
  std::string r;
  for (const auto& [k, v] : sizes) r += (r.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return r;
}

/// test_support::schedule_and_validate on the CPU backend.
std::string schedule_and_validate(const std::string& plugin, const std::string& fusion,
                                  const ir::SizeBindings& sizes,
                                  const std::vector<std::string>& settings = {}) {
  return test_support::schedule_and_validate(
      *builtin(plugin), [&] { return load_def(fusion); }, sizes, settings, cpu(), KERNEL_CACHE_DIR);
}

struct Case {
  std::string plugin, fusion;
  ir::SizeBindings sizes;
  std::vector<std::string> settings;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.plugin << " " << c.fusion << " " << sizes_str(c.sizes);
  for (const auto& s : c.settings) *os << " " << s;
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.plugin + "_" + info.param.fusion;
  for (const auto& [k, v] : info.param.sizes) n += "_" + k + std::to_string(v);
  for (const auto& s : info.param.settings) n += "_" + s;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

/// Reduced extents around a warp, many more than threads, and long rows.
const std::vector<int64_t> kReduced = {1, 31, 32, 33, 1000, 4096, 100000};

std::vector<Case> own_choice_cases() {
  std::vector<Case> r;
  // Inner reductions: K is reduced.
  for (const char* f : {"row_sum", "row_max", "masked_row_sum", "row_sum_keepdim", "row_mean"})
    for (int64_t k : kReduced) r.push_back({"reduction", f, {{"N", 3}, {"K", k}}, {}});
  r.push_back({"reduction", "row_sum", {{"N", 4096}, {"K", 33}}, {}});
  r.push_back({"reduction", "row_sum", {{"N", 1000}, {"K", 1000}}, {}});
  r.push_back({"reduction", "row_sum_f16", {{"N", 5}, {"K", 4096}}, {}});
  r.push_back({"reduction", "row_max_bf16", {{"N", 5}, {"K", 4096}}, {}});
  r.push_back({"reduction", "row_max_bf16", {{"N", 1000}, {"K", 1000}}, {}});
  r.push_back({"reduction", "row_sum", {{"N", 300}, {"K", 2}}, {}});
  // Outer reductions: N is reduced.
  for (const char* f : {"col_sum", "int_affine"})
    for (int64_t n : kReduced) r.push_back({"reduction", f, {{"N", n}, {"K", 5}}, {}});
  r.push_back({"reduction", "col_sum", {{"N", 1000}, {"K", 64}}, {}});
  r.push_back({"reduction", "col_sum", {{"N", 33}, {"K", 20000}}, {}});
  r.push_back({"reduction", "middle_sum", {{"B", 3}, {"N", 1000}, {"K", 8}}, {}});
  r.push_back({"reduction", "middle_sum", {{"B", 2}, {"N", 31}, {"K", 33}}, {}});
  // Full reductions.
  for (int64_t k : kReduced) r.push_back({"reduction", "sum_all", {{"N", 3}, {"K", k}}, {}});
  r.push_back({"reduction", "sum_all", {{"N", 1000}, {"K", 1000}}, {}});
  r.push_back({"reduction", "inner2_max", {{"B", 3}, {"N", 33}, {"K", 100}}, {}});
  r.push_back({"reduction", "outer_inner_sum", {{"B", 7}, {"N", 33}, {"K", 100}}, {}});
  // Normalizations: rows up to what fits in registers.
  for (const char* f : {"softmax", "log_softmax", "layernorm", "rmsnorm", "softmax_bf16",
                        "layernorm_bf16", "rmsnorm_bf16"})
    for (int64_t k : {1, 31, 32, 33, 1000, 4096})
      r.push_back({"normalization", f, {{"N", 3}, {"K", k}}, {}});
  // Long rows: 8 vectors per thread (softmax), at the register budget (layernorm).
  r.push_back({"normalization", "softmax", {{"N", 2}, {"K", 16384}}, {}});
  r.push_back({"normalization", "layernorm", {{"N", 2}, {"K", 20000}}, {}});
  r.push_back({"normalization", "softmax", {{"N", 1000}, {"K", 33}}, {}});
  r.push_back({"normalization", "layernorm", {{"N", 300}, {"K", 7}}, {}});
  r.push_back({"normalization", "softmax_f16", {{"N", 5}, {"K", 1000}}, {}});
  r.push_back({"normalization", "softmax_bf16", {{"N", 2}, {"K", 16384}}, {}});
  r.push_back({"normalization", "layernorm_bf16", {{"N", 2}, {"K", 20000}}, {}});
  r.push_back({"normalization", "layernorm_stats", {{"N", 70}, {"K", 3000}}, {}});
  // Rows past the registers (the paths SplitFollowsRowLengthAndRegisters
  // names): the input's cache in shared memory (K=32768), everything in it
  // (softmax_bf16), and multi-pass (K=65536, K=262144), one or two rows so
  // the emulation stays quick. Asked for one kernel, as here, the plugin
  // takes such few rows (the segmenter's offer of them it refuses).
  for (const char* f : {"softmax", "layernorm", "rmsnorm", "softmax_bf16", "layernorm_bf16"})
    for (int64_t k : {32768, 65536}) r.push_back({"normalization", f, {{"N", 2}, {"K", k}}, {}});
  r.push_back({"normalization", "log_softmax", {{"N", 2}, {"K", 40000}}, {}});
  r.push_back({"normalization", "softmax", {{"N", 1}, {"K", 262144}}, {}});
  r.push_back({"normalization", "rmsnorm_bf16", {{"N", 1}, {"K", 262144}}, {}});
  return r;
}

std::vector<Case> forced_cases() {
  std::vector<Case> r;
  for (const char* s : {"serial", "block", "grid"}) {
    std::string st = std::string("strategy=") + s;
    r.push_back({"reduction", "row_sum", {{"N", 5}, {"K", 1000}}, {st}});
    r.push_back({"reduction", "row_max", {{"N", 3}, {"K", 33}}, {st}});
    r.push_back({"reduction", "col_sum", {{"N", 1000}, {"K", 33}}, {st}});
    r.push_back({"reduction", "sum_all", {{"N", 31}, {"K", 100}}, {st}});
    r.push_back({"reduction", "masked_row_sum", {{"N", 3}, {"K", 4096}}, {st}});
    r.push_back({"reduction", "int_affine", {{"N", 100}, {"K", 5}}, {st}});
    r.push_back({"reduction", "middle_sum", {{"B", 2}, {"N", 100}, {"K", 6}}, {st}});
    r.push_back({"reduction", "outer_inner_sum", {{"B", 7}, {"N", 33}, {"K", 100}}, {st}});
  }
  r.push_back({"reduction", "row_sum", {{"N", 5}, {"K", 1000}}, {"rfactor=false"}});
  r.push_back({"reduction", "row_sum", {{"N", 3}, {"K", 100000}}, {"rfactor=false"}});
  r.push_back({"reduction",
               "col_sum",
               {{"N", 1000}, {"K", 8}},
               {"strategy=grid", "rfactor=false", "vector=2"}});
  r.push_back({"reduction",
               "row_sum",
               {{"N", 7}, {"K", 999}},
               {"strategy=block", "unroll=3", "threads=256", "reduce_threads=64"}});
  r.push_back({"reduction",
               "row_sum",
               {{"N", 7}, {"K", 1000}},
               {"strategy=grid", "vector=2", "grid=5", "threads=32", "reduce_threads=32"}});
  r.push_back({"reduction",
               "col_sum",
               {{"N", 77}, {"K", 64}},
               {"strategy=block", "vector=4", "threads=64", "reduce_threads=8", "unroll=2"}});
  r.push_back({"reduction",
               "sum_all",
               {{"N", 64}, {"K", 64}},
               {"strategy=serial", "vector=4", "unroll=4"}});
  r.push_back({"reduction", "row_mean", {{"N", 9}, {"K", 100}}, {"strategy=block"}});
  r.push_back(
      {"normalization", "softmax", {{"N", 9}, {"K", 1000}}, {"vector=1", "persist=3", "rows=2"}});
  r.push_back({"normalization", "layernorm", {{"N", 40}, {"K", 33}}, {"persist=2", "rows=8"}});
  r.push_back(
      {"normalization", "rmsnorm", {{"N", 5}, {"K", 1000}}, {"cache_inputs=false", "vector=1"}});
  r.push_back(
      {"normalization", "log_softmax", {{"N", 3}, {"K", 4096}}, {"vector=2", "persist=16"}});
  // Each path forced on rows the heuristic keeps in registers, at odd
  // lengths and several rows per block too.
  for (const char* path : {"persistence=shared", "persistence=none"}) {
    for (const char* f : {"softmax", "layernorm", "rmsnorm", "softmax_bf16", "layernorm_bf16"}) {
      r.push_back({"normalization", f, {{"N", 2}, {"K", 8192}}, {path}});
      r.push_back({"normalization", f, {{"N", 2}, {"K", 16384}}, {path}});
    }
    r.push_back({"normalization", "log_softmax", {{"N", 3}, {"K", 1000}}, {path, "vector=1"}});
    r.push_back({"normalization", "layernorm", {{"N", 40}, {"K", 33}}, {path, "rows=8"}});
    r.push_back({"normalization", "layernorm_stats", {{"N", 5}, {"K", 3000}}, {path}});
  }
  r.push_back({"normalization",
               "rmsnorm",
               {{"N", 5}, {"K", 1000}},
               {"persistence=shared", "cache_inputs=false", "vector=1"}});
  r.push_back({"normalization",
               "softmax",
               {{"N", 2}, {"K", 5000}},
               {"persistence=none", "cache_inputs=false", "vector=1", "persist=7"}});
  return r;
}

class OwnChoice : public ::testing::TestWithParam<Case> {};
TEST_P(OwnChoice, ValidatesOnCpuAndCompilesWithNvrtc) {
  const Case& c = GetParam();
  schedule_and_validate(c.plugin, c.fusion, c.sizes, c.settings);
}
INSTANTIATE_TEST_SUITE_P(Plugins, OwnChoice, ::testing::ValuesIn(own_choice_cases()), case_name);

class Forced : public ::testing::TestWithParam<Case> {};
TEST_P(Forced, ValidatesOnCpuAndCompilesWithNvrtc) {
  const Case& c = GetParam();
  schedule_and_validate(c.plugin, c.fusion, c.sizes, c.settings);
}
INSTANTIATE_TEST_SUITE_P(Plugins, Forced, ::testing::ValuesIn(forced_cases()), case_name);

/// compute_params at `sizes` on the model device, adjusted by `device`.
std::string choice(const std::string& plugin, const std::string& fusion,
                   const ir::SizeBindings& sizes,
                   const std::function<void(runtime::DeviceProperties&)>& device = {}) {
  auto p = builtin(plugin);
  auto s = segment_of(fusion, sizes);
  if (device) device(s.seg.device);
  return p->format(p->compute_params(s.seg));
}

TEST(ReductionPlugin, StrategyFollowsSizesAndDevice) {
  // Short rows: a thread per row.
  EXPECT_THAT(choice("reduction", "row_sum", {{"N", 300}, {"K", 2}}), HasSubstr("strategy=serial"));
  // Many long rows: a block per row (several when rows are short).
  EXPECT_THAT(choice("reduction", "row_sum", {{"N", 1000}, {"K", 1000}}),
              HasSubstr("strategy=block, vector=4, threads=128, reduce_threads=64"));
  // Few long rows leave SMs idle: the row is split over blocks.
  EXPECT_THAT(choice("reduction", "row_sum", {{"N", 3}, {"K", 100000}}),
              HasSubstr("strategy=grid, vector=4, threads=512, reduce_threads=512"));
  // ... but not when the result is read inside the kernel.
  EXPECT_THAT(choice("reduction", "row_mean", {{"N", 3}, {"K", 100000}}),
              HasSubstr("strategy=block"));
  // ... nor on a device with few SMs, which the rows already fill.
  EXPECT_THAT(choice("reduction", "row_sum", {{"N", 3}, {"K", 100000}},
                     [](runtime::DeviceProperties& d) { d.sm_count = 2; }),
              HasSubstr("strategy=block"));
  // f16: eight elements per 16-byte access; an odd row length allows none.
  EXPECT_THAT(choice("reduction", "row_sum_f16", {{"N", 1000}, {"K", 4096}}),
              HasSubstr("vector=8"));
  EXPECT_THAT(choice("reduction", "row_sum", {{"N", 1000}, {"K", 999}}), HasSubstr("vector=1"));
  // Outer: enough columns to fill the device take no cross-thread step.
  EXPECT_THAT(choice("reduction", "col_sum", {{"N", 1000}, {"K", 131072}}),
              HasSubstr("strategy=serial, vector=4, threads=128, reduce_threads=1"));
  EXPECT_THAT(choice("reduction", "col_sum", {{"N", 100000}, {"K", 5}}),
              HasSubstr("strategy=grid"));
  EXPECT_THAT(choice("reduction", "col_sum", {{"N", 100000}, {"K", 5}},
                     [](runtime::DeviceProperties& d) { d.max_threads_per_block = 64; }),
              HasSubstr("threads=64"));
}

TEST(ReductionPlugin, VectorFollowsTheStorageType) {
  // A bf16 row: 16 bytes hold 8 elements, though the reduction is f32.
  EXPECT_THAT(choice("reduction", "row_max_bf16", {{"N", 5}, {"K", 4096}}), HasSubstr("vector=8"));
}

TEST(NormalizationPlugin, RegistersLeaveHeadroomWhenSharedMemoryKeepsEveryBuffer) {
  // Estimated 112 of rmsnorm's 128 registers a thread at K=40960 (ptxas
  // spills 232 B there): the shared path, which keeps x whole, instead.
  EXPECT_THAT(choice("normalization", "rmsnorm", {{"N", 16384}, {"K", 40960}}),
              testing::HasSubstr("persistence=shared"));
  EXPECT_THAT(choice("normalization", "rmsnorm", {{"N", 16384}, {"K", 32768}}),
              testing::HasSubstr("persistence=registers"));
  // The bf16 fusions' shared path recomputes their f32 buffers (softmax_bf16:
  // a second exp an element): the registers path stays while it fits.
  EXPECT_THAT(choice("normalization", "softmax_bf16", {{"N", 16384}, {"K", 24576}}),
              testing::HasSubstr("persistence=registers"));
}

TEST(NormalizationPlugin, SplitFollowsRowLengthAndRegisters) {
  // 250 vectors of 4: two per thread (at least two loads in flight while a
  // row still spans a warp).
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 1000}}),
            "vector=4, persist=2, rows=1, cache_inputs=true, persistence=registers");
  // 4096 vectors: 8 per thread keep the row at 512 threads.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 16384}}),
            "vector=4, persist=8, rows=1, cache_inputs=true, persistence=registers");
  // Short rows: several per block, while every SM still gets a block.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 100000}, {"K", 32}}),
            "vector=4, persist=1, rows=16, cache_inputs=true, persistence=registers");
  // bf16 storage: 16 bytes hold 8 elements, so 512 vectors, four per thread
  // (2-byte storage takes twice kMinPersist: f32 math on half the bytes).
  EXPECT_EQ(choice("normalization", "softmax_bf16", {{"N", 33}, {"K", 4096}}),
            "vector=8, persist=4, rows=1, cache_inputs=true, persistence=registers");
  // (125 vectors: 5 a thread divide them, where 4 would leave the last
  // thread short; the model gives 16.15 us against 17.29.)
  EXPECT_EQ(choice("normalization", "layernorm_bf16", {{"N", 16384}, {"K", 1000}}),
            "vector=8, persist=5, rows=4, cache_inputs=true, persistence=registers");
  EXPECT_EQ(choice("normalization", "layernorm_bf16", {{"N", 16384}, {"K", 26624}}),
            "vector=8, persist=13, rows=1, cache_inputs=true, persistence=registers");
  // ... unless so few rows starve the device with them (33 rows of a warp):
  // then a row spreads over up to 128 threads, one vector each here.
  EXPECT_EQ(choice("normalization", "layernorm_bf16", {{"N", 33}, {"K", 1000}}),
            "vector=8, persist=1, rows=1, cache_inputs=true, persistence=registers");
  EXPECT_EQ(choice("normalization", "softmax_bf16", {{"N", 256}, {"K", 2048}}),
            "vector=8, persist=2, rows=1, cache_inputs=true, persistence=registers");
  // f32 keeps two per thread.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 4096}}),
            "vector=4, persist=2, rows=1, cache_inputs=true, persistence=registers");
  // A smaller block limit: more vectors per thread.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 4096}}),
            "vector=4, persist=2, rows=1, cache_inputs=true, persistence=registers");
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 4096}},
                   [](runtime::DeviceProperties& d) { d.max_threads_per_block = 256; }),
            "vector=4, persist=4, rows=1, cache_inputs=true, persistence=registers");
  // Past the registers (two f32 buffers: 160 registers at 512 threads), the
  // input's cache goes to shared memory (128 KiB) and e stays in registers.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 32768}}),
            "vector=4, persist=16, rows=1, cache_inputs=true, persistence=shared");
  EXPECT_EQ(choice("normalization", "layernorm", {{"N", 33}, {"K", 32768}}),
            "vector=4, persist=16, rows=1, cache_inputs=true, persistence=shared");
  // One f32 buffer: 96 registers at 512 threads still fit.
  EXPECT_EQ(choice("normalization", "rmsnorm", {{"N", 33}, {"K", 32768}}),
            "vector=4, persist=16, rows=1, cache_inputs=true, persistence=registers");
  // Two f32 buffers (the cast of x, and e): the cast in shared memory.
  EXPECT_EQ(choice("normalization", "softmax_bf16", {{"N", 33}, {"K", 32768}}),
            "vector=8, persist=8, rows=1, cache_inputs=true, persistence=shared");
  // A 256 KiB buffer fits neither. 33 rows on the multi-pass path would
  // starve the device: grid persistence, each row over 132 / 33 = 4 blocks
  // of 512 threads with 8 vectors of 4 each (one kernel, grid allreduces).
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 65536}}),
            "vector=4, persist=8, rows=1, cache_inputs=true, persistence=grid");
  EXPECT_EQ(choice("normalization", "rmsnorm", {{"N", 33}, {"K", 65536}}),
            "vector=4, persist=8, rows=1, cache_inputs=true, persistence=grid");
  // 100 rows keep the device busy on the multi-pass path: 512 threads per
  // row, no vectors (nothing read twice has a cache).
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 100}, {"K", 65536}}),
            "vector=1, persist=128, rows=1, cache_inputs=true, persistence=none");
  EXPECT_EQ(choice("normalization", "layernorm", {{"N", 33}, {"K", 262144}}),
            "vector=1, persist=512, rows=1, cache_inputs=true, persistence=none");
  // Past shared memory with both buffers, e is recomputed by each pass and
  // only the input persists (with_recompute): a bf16 row keeps its 2-byte
  // cache in shared memory (128 KiB at K=65536, 192 KiB at K=98304)...
  EXPECT_EQ(choice("normalization", "softmax_bf16", {{"N", 33}, {"K", 65536}}),
            "vector=8, persist=16, rows=1, cache_inputs=true, persistence=shared");
  EXPECT_EQ(choice("normalization", "layernorm_bf16", {{"N", 33}, {"K", 98304}}),
            "vector=8, persist=24, rows=1, cache_inputs=true, persistence=shared");
  // ... up to its 227 KiB: 2 x 131072 bytes do not fit, multi-pass.
  EXPECT_EQ(choice("normalization", "softmax_bf16", {{"N", 33}, {"K", 131072}}),
            "vector=1, persist=256, rows=1, cache_inputs=true, persistence=none");
  // Without the opt-in (48 KiB per block) softmax's x no longer fits Shared
  // memory at K=32768; recomputing e, x alone fits the registers (96 at 512
  // threads), which the shared path's placement falls back to.
  EXPECT_EQ(choice("normalization", "softmax", {{"N", 33}, {"K", 32768}},
                   [](runtime::DeviceProperties& d) { d.shared_bytes_per_block_optin = 0; }),
            "vector=4, persist=16, rows=1, cache_inputs=true, persistence=shared");
}

TEST(ReductionPlugin, RejectsWhatItCannotScheduleWithTheReason) {
  auto p = builtin("reduction");
  auto verdict = [&](const std::string& fusion, const std::vector<std::string>& settings = {}) {
    auto s = segment_of(fusion, {});
    return p->can_schedule(s.seg, p->with_settings(p->defaults(), settings));
  };
  for (const char* f : {"softmax", "log_softmax", "layernorm", "rmsnorm"}) {
    Verdict v = verdict(f);
    EXPECT_FALSE(v.accepted) << f;
    EXPECT_THAT(v.reason, HasSubstr("is broadcast back over the reduced axes")) << f;
    EXPECT_THAT(v.reason, HasSubstr("a normalization, which the normalization plugin schedules"));
  }
  EXPECT_THAT(verdict("broadcast_reduce").reason,
              HasSubstr("reductions over different axes: T6 (s0) reduces logical axes {0}, T7 "
                        "(s1) reduces {1}"));
  EXPECT_THAT(verdict("add").reason, HasSubstr("the segment has no reduction"));
  EXPECT_THAT(verdict("batched_transpose").reason, HasSubstr("the segment has no reduction"));
  // A grid reduction's result can only be a fusion output.
  Verdict keepdim = verdict("row_sum_keepdim", {"strategy=grid"});
  EXPECT_FALSE(keepdim.accepted);
  EXPECT_THAT(keepdim.reason,
              HasSubstr("strategy=grid: T1 is read by T2 (y) inside the kernel, but lowering "
                        "combines a grid reduction only into a fusion output"));
  EXPECT_TRUE(verdict("row_sum_keepdim", {"strategy=block"}).accepted);
  EXPECT_TRUE(verdict("row_sum", {"strategy=grid"}).accepted);
  // Few long rows whose result is read in the kernel: strategy=auto refuses
  // them (one block a row would starve the device, and no grid split is
  // possible), so that the segmenter cuts after the reduction; a forced
  // strategy=block takes them. Many rows, or short ones, are accepted.
  auto sized = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                   const std::vector<std::string>& settings, bool from_segmenter = true) {
    auto s = segment_of(fusion, sizes);
    s.seg.from_segmenter = from_segmenter;
    return p->can_schedule(s.seg, p->with_settings(p->defaults(), settings));
  };
  EXPECT_EQ(sized("row_mean", {{"N", 3}, {"K", 100000}}, {}).reason,
            "few long rows: 3 blocks of 512 threads (the block strategy) keep 1536 of the "
            "device's 270336 resident threads busy, and T1 is read by T2 inside the kernel, "
            "so no grid split (segment after the reduction to split it; strategy=block schedules "
            "it as it is)");
  EXPECT_TRUE(sized("row_mean", {{"N", 3}, {"K", 100000}}, {"strategy=block"}).accepted);
  // Asked for one kernel (a sweep point, --plugin; ABI 1.5), it takes them.
  EXPECT_TRUE(sized("row_mean", {{"N", 3}, {"K", 100000}}, {}, false).accepted);
  EXPECT_TRUE(sized("row_mean", {{"N", 1000}, {"K", 100000}}, {}).accepted);
  EXPECT_TRUE(sized("row_mean", {{"N", 3}, {"K", 1000}}, {}).accepted);
  EXPECT_TRUE(sized("row_sum", {{"N", 3}, {"K", 100000}}, {}).accepted);
  // Called anyway, schedule and compute_params refuse with the same reason.
  auto s = segment_of("softmax", {});
  EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, p->defaults()); }),
              HasSubstr("reduction: the result of T1 is broadcast back over the reduced axes"));
  EXPECT_THAT(user_error_of([&] { p->compute_params(s.seg); }),
              HasSubstr("reduction: the result of T1 is broadcast back over the reduced axes"));
}

TEST(ReductionPlugin, SettingsTheSizesOrDeviceCannotTakeAreUserErrors) {
  auto p = builtin("reduction");
  auto error = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                   const std::vector<std::string>& settings) {
    auto s = segment_of(fusion, sizes);
    auto params = p->with_settings(p->compute_params(s.seg), settings);
    return user_error_of([&] { p->schedule(s.seg, params); });
  };
  EXPECT_THAT(error("row_sum", {{"N", 3}, {"K", 6}}, {"vector=4"}),
              HasSubstr("reduction: vector=4 does not divide the innermost extent 6 of T0 (x)"));
  EXPECT_THAT(error("row_sum", {{"N", 3}, {"K", 64}}, {"threads=1024", "reduce_threads=1000"}),
              HasSubstr("reduction: reduce_threads=1000 does not divide threads=1024"));
  {
    auto s = segment_of("row_sum", {{"N", 3}, {"K", 64}});
    s.seg.device.max_threads_per_block = 256;
    auto params = p->with_settings(p->compute_params(s.seg), {"threads=512"});
    EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, params); }),
                HasSubstr("reduction: threads=512 exceeds the device's 256 threads per block"));
  }
  EXPECT_THAT(error("row_sum", {{"N", 100000}, {"K", 64}},
                    {"strategy=grid", "threads=1", "reduce_threads=1"}),
              HasSubstr("reduction: strategy=grid puts the 100000 row blocks on BIDy, more than "
                        "its limit of 65535"));
  EXPECT_THAT(error("row_mean", {{"N", 3}, {"K", 64}}, {"strategy=grid"}),
              HasSubstr("reduction: strategy=grid: T1 is read by T"));
}

TEST(NormalizationPlugin, RejectsWhatItCannotScheduleWithTheReason) {
  auto p = builtin("normalization");
  auto verdict = [&](const std::string& fusion, const ir::SizeBindings& sizes = {}) {
    auto s = segment_of(fusion, sizes);
    return p->can_schedule(s.seg, p->defaults());
  };
  for (const char* f : {"row_sum", "col_sum", "sum_all", "masked_row_sum", "row_sum_keepdim"})
    EXPECT_THAT(verdict(f).reason,
                HasSubstr("no reduction result is broadcast back over the reduced axes; the "
                          "reduction plugin schedules plain reductions"))
        << f;
  EXPECT_THAT(verdict("add").reason, HasSubstr("the segment has no reduction"));
  {
    auto s = segment_of("row_sum", {});
    EXPECT_THAT(user_error_of([&] { p->schedule(s.seg, p->defaults()); }),
                HasSubstr("normalization: no reduction result is broadcast back"));
  }
  EXPECT_THAT(verdict("col_softmax").reason,
              HasSubstr("normalization schedules inner reductions (the innermost axes reduced); "
                        "T1 reduces an outer axis"));
  // Long rows are scheduled (shared memory, then multi-pass); a forced path
  // the row does not fit is refused with the sizes and the device's limit.
  auto forced = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                    const std::string& path) {
    auto s = segment_of(fusion, sizes);
    return p->can_schedule(s.seg, p->with_settings(p->defaults(), {"persistence=" + path}));
  };
  EXPECT_TRUE(verdict("softmax", {{"N", 2}, {"K", 100000}}).accepted);
  EXPECT_TRUE(forced("softmax", {{"N", 2}, {"K", 100000}}, "none").accepted);
  // Few rows on the multi-pass path starve the device (one 512-thread block
  // a row; an eighth of the model device's 270336 threads is 66 such rows):
  // refused when the segmenter offers them (ABI 1.5), which then splits each
  // reduction over blocks; asked for one kernel (above), the plugin takes
  // them, as it does a forced path. The registers and shared paths, which
  // read a row once, are never refused for it.
  auto offered = [&](const std::string& fusion, const ir::SizeBindings& sizes) {
    auto s = segment_of(fusion, sizes);
    s.seg.from_segmenter = true;
    return p->can_schedule(s.seg, p->defaults());
  };
  // Few long rows that split over blocks are grid-persistent (one kernel);
  // refused only when the grid path does not fit either (66 rows: 2 blocks
  // of a row would need 16 vectors of 4 per thread in each of 2 buffers).
  EXPECT_TRUE(offered("softmax", {{"N", 2}, {"K", 100000}}).accepted);
  EXPECT_EQ(offered("softmax", {{"N", 64}, {"K", 1048576}}).reason,
            "few long rows: the multi-pass path (rows of 1048576 elements) keeps 32768 of the "
            "device's 270336 resident threads busy, too few to cover DRAM latency; segmented, "
            "each reduction can split its rows over blocks (persistence=none schedules it as it "
            "is)");
  EXPECT_FALSE(offered("softmax", {{"N", 66}, {"K", 65536}}).accepted);
  EXPECT_TRUE(offered("softmax", {{"N", 67}, {"K", 65536}}).accepted);
  EXPECT_TRUE(offered("softmax", {{"N", 1}, {"K", 32768}}).accepted);  // shared
  EXPECT_TRUE(offered("softmax", {{"N", 1}, {"K", 16384}}).accepted);  // registers
  EXPECT_TRUE(forced("softmax", {{"N", 2}, {"K", 65536}}, "none").accepted);
  Verdict v = forced("softmax", {{"N", 2}, {"K", 100000}}, "registers");
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.reason,
            "a row of 100000 elements does not fit in registers: its 2 persistent buffers (T0 "
            "(x), T4 (e)) need 800000 bytes per row, and a block of schedlab-model-sm90 holds "
            "at most 228352 (256 threads x (255 - 32 registers) x 4 bytes; 65536 registers per "
            "block, 255 per thread)");
  EXPECT_THAT(forced("layernorm", {{"N", 2}, {"K", 30000}}, "registers").reason,
              HasSubstr("a row of 30000 elements does not fit in registers: its 2 persistent "
                        "buffers (T0 (x), T6 (d)) need 240000 bytes per row"));
  EXPECT_TRUE(forced("rmsnorm", {{"N", 2}, {"K", 30000}}, "registers").accepted);  // one buffer
  EXPECT_EQ(forced("softmax", {{"N", 2}, {"K", 65536}}, "shared").reason,
            "a row of 65536 elements does not fit in shared memory and registers together "
            "(persistence=shared): its 2 persistent buffers (T0 (x), T4 (e)) need 524288 bytes "
            "per row, and a block of schedlab-model-sm90 has 232448 bytes of shared memory (less "
            "8 per thread for the block reductions) and 65536 registers for the rest");
  EXPECT_TRUE(forced("softmax", {{"N", 2}, {"K", 32768}}, "shared").accepted);
  // Fewer registers per block: 16384 elements no longer fit in them, and go
  // to shared memory.
  auto s = segment_of("softmax", {{"N", 2}, {"K", 16384}});
  auto registers = p->with_settings(p->defaults(), {"persistence=registers"});
  EXPECT_TRUE(p->can_schedule(s.seg, registers).accepted);
  s.seg.device.registers_per_block = 32768;
  EXPECT_THAT(p->can_schedule(s.seg, registers).reason,
              HasSubstr("a row of 16384 elements does not fit in registers"));
  EXPECT_TRUE(p->can_schedule(s.seg, p->defaults()).accepted);
  EXPECT_THAT(p->format(p->compute_params(s.seg)), HasSubstr("persistence=shared"));
  // Only a row longer than 65536 elements per thread at 1024 threads is
  // refused outright (and compute_params refuses it the same way).
  const ir::SizeBindings huge = {{"N", 1}, {"K", int64_t{1} << 32}};
  EXPECT_EQ(verdict("softmax", huge).reason,
            "a row of 4294967296 elements is too long even for the multi-pass path "
            "(persistence=none): at most 65536 elements per thread and 1024 threads per row "
            "on schedlab-model-sm90");
  auto h = segment_of("softmax", huge);
  EXPECT_THAT(user_error_of([&] { p->compute_params(h.seg); }),
              HasSubstr("normalization: a row of 4294967296 elements is too long even for the "
                        "multi-pass path"));
}

TEST(NormalizationPlugin, SettingsTheSizesOrDeviceCannotTakeAreUserErrors) {
  auto p = builtin("normalization");
  auto error = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                   const std::vector<std::string>& settings) {
    auto s = segment_of(fusion, sizes);
    auto params = p->with_settings(p->compute_params(s.seg), settings);
    return user_error_of([&] { p->schedule(s.seg, params); });
  };
  EXPECT_THAT(error("softmax", {{"N", 3}, {"K", 8192}}, {"vector=1", "persist=1"}),
              HasSubstr("normalization: vector=1, persist=1, rows=1, persistence=registers needs "
                        "8192 x 1 = 8192 threads per block for rows of 8192, more than the "
                        "device's 1024"));
  EXPECT_THAT(
      error("softmax", {{"N", 3}, {"K", 16384}},
            {"vector=4", "persist=64", "persistence=registers"}),
      HasSubstr("normalization: vector=4, persist=64, rows=1, persistence=registers needs 544 "
                "registers per thread (512 for the persistent buffers), more than the 255 a "
                "block of 64 threads allows"));
  EXPECT_THAT(
      error("softmax_bf16", {{"N", 3}, {"K", 131072}},
            {"persistence=shared", "vector=8", "persist=32"}),
      HasSubstr("normalization: vector=8, persist=32, rows=1, persistence=shared needs 544 "
                "registers per thread (512 for the persistent buffers that do not fit in the "
                "228352 bytes of shared memory a block has), more than the 128 a block of 512 "
                "threads allows"));
  EXPECT_THAT(error("softmax", {{"N", 100}, {"K", 65536}}, {"persistence=shared"}),
              HasSubstr("normalization: vector=1, persist=128, rows=1, persistence=shared: persist "
                        "above 64 unrolls too far"));
  EXPECT_THAT(error("rmsnorm", {{"N", 3}, {"K", 1000}},
                    {"persistence=shared", "persist=100", "cache_inputs=false", "vector=1"}),
              HasSubstr("normalization: vector=1, persist=100, rows=1, persistence=shared: "
                        "persist above 64 unrolls too far; expected persistence=none (a serial "
                        "loop) for so many vectors per thread"));
  EXPECT_THAT(
      error("softmax", {{"N", 3}, {"K", 1002}}, {"vector=4"}),
      HasSubstr("normalization: vector=4 does not divide the innermost extent 1002 of the rows"));
  EXPECT_THAT(error("softmax", {{"N", 3}, {"K", 1000}}, {"cache_inputs=false"}),
              HasSubstr("normalization: vector=4 needs cache_inputs=true"));
}

}  // namespace
}  // namespace schedlab::plugin
