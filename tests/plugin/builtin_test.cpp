// The built-in plugins (plugins/): each standard fusion they accept,
// scheduled by the plugin's own choice and by explicit settings, validates on
// the CPU backend and compiles with NVRTC; what they cannot schedule is
// rejected with the reason. The same steps as `schedlab exec` (bench/main.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin_check.h"
#include "plugin_test_util.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/host.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using ::testing::HasSubstr;
using testing::load_fusion;

std::shared_ptr<const Plugin> builtin(const std::string& name) {
  return load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/" + name + ".so");
}

std::string cache_dir() {
  return std::string(SCHEDLAB_BINARY_DIR) + "/tests/plugin/kernel_cache";
}

struct Scheduled {
  frontend::FusionDefinition def;
  HostSegment seg;
};

Scheduled segment_of(const std::string& fusion, const ir::SizeBindings& sizes) {
  Scheduled s{load_fusion(fusion), {}};
  s.seg.fusion = s.def.fusion.get();
  s.seg.sizes = frontend::bind_sizes(s.def, sizes);
  return s;
}

/// test_support::schedule_and_validate on the CPU backend.
std::string schedule_and_validate(const std::string& plugin, const std::string& fusion,
                                  const ir::SizeBindings& sizes,
                                  const std::vector<std::string>& settings = {}) {
  static auto backend = runtime::make_cpu_backend(model::model_device_properties(), cache_dir());
  return test_support::schedule_and_validate(
      *builtin(plugin), [&] { return load_fusion(fusion); }, sizes, settings, *backend,
      cache_dir());
}

// ---- pointwise

struct Case {
  std::string fusion;
  ir::SizeBindings sizes;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fusion;
}

/// Every pointwise-only standard fusion at an odd size and at vector-friendly ones.
std::vector<Case> pointwise_cases() {
  std::vector<Case> r;
  for (const char* f : {"add", "pointwise_add_mul", "gelu", "gelu_backward", "bias_relu",
                        "silu_mul", "pointwise_f16", "gelu_bf16", "transpose2d"}) {
    r.push_back({f, {{"N", 37}, {"K", 29}}});
    r.push_back({f, {{"N", 64}, {"K", 128}}});
    r.push_back({f, {{"N", 1030}, {"K", 1024}}});
  }
  r.push_back({"batched_transpose", {{"B", 3}, {"M", 7}, {"N", 5}}});
  r.push_back({"batched_transpose", {{"B", 4}, {"M", 32}, {"N", 64}}});
  r.push_back({"batched_transpose", {{"B", 8}, {"M", 256}, {"N", 512}}});
  return r;
}

class PointwiseFusions : public ::testing::TestWithParam<Case> {};

TEST_P(PointwiseFusions, OwnChoiceValidatesOnCpuAndCompilesWithNvrtc) {
  schedule_and_validate("pointwise", GetParam().fusion, GetParam().sizes);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.fusion;
  for (const auto& [k, v] : info.param.sizes) n += "_" + k + std::to_string(v);
  return n;
}
INSTANTIATE_TEST_SUITE_P(Builtin, PointwiseFusions, ::testing::ValuesIn(pointwise_cases()),
                         case_name);

TEST(BuiltinPointwise, ComputeParamsFollowsSizesDtypesAndDevice) {
  // f32: 16 bytes hold 4; an odd innermost extent allows no vector.
  // 2048 vectors: 32-thread blocks, so that more SMs get one.
  EXPECT_EQ(schedule_and_validate("pointwise", "add", {{"N", 64}, {"K", 128}}),
            "block=32, vector=4, unroll=1, break_point=0");
  EXPECT_EQ(schedule_and_validate("pointwise", "add", {{"N", 1024}, {"K", 128}}),
            "block=128, vector=4, unroll=1, break_point=0");
  EXPECT_EQ(schedule_and_validate("pointwise", "add", {{"N", 37}, {"K", 29}}),
            "block=32, vector=1, unroll=1, break_point=0");
  // f16: 8 elements per 16 bytes.
  // (16384 vectors: 128 blocks of 128 would leave 4 of the 132 SMs idle.)
  EXPECT_EQ(schedule_and_validate("pointwise", "pointwise_f16", {{"N", 1024}, {"K", 128}}),
            "block=64, vector=8, unroll=1, break_point=0");
  // bf16 storage, f32 math: the inputs' and outputs' 2 bytes decide, 8 per 16 bytes.
  EXPECT_EQ(schedule_and_validate("pointwise", "gelu_bf16", {{"N", 1024}, {"K", 128}}),
            "block=64, vector=8, unroll=1, break_point=0");
  // K=6: the vector divides the innermost extent.
  EXPECT_EQ(schedule_and_validate("pointwise", "add", {{"N", 1000}, {"K", 6}}),
            "block=32, vector=2, unroll=1, break_point=0");
  // A [K] bias under [N, K]: 2D, the bias vectorized too; 128 threads as
  // 32 (a row of 128 / 4 vectors) x 4 rows.
  EXPECT_EQ(schedule_and_validate("pointwise", "bias_relu", {{"N", 1024}, {"K", 128}}),
            "block=128, vector=4, unroll=1, break_point=1");
  // Transposed: the output's innermost extent (N) decides.
  EXPECT_EQ(schedule_and_validate("pointwise", "transpose2d", {{"N", 64}, {"K", 30}}),
            "block=32, vector=4, unroll=1, break_point=0");
  // Enough work to cover every resident thread of the device (132 * 2048) twice.
  auto p = builtin("pointwise");
  auto big = segment_of("add", {{"N", 4096}, {"K", 1024}});  // 2^20 vectors: 3.9 times
  EXPECT_EQ(p->format(p->compute_params(big.seg)), "block=128, vector=4, unroll=2, break_point=0");
  big.seg.device.max_threads_per_block = 64;
  EXPECT_EQ(p->format(p->compute_params(big.seg)), "block=64, vector=4, unroll=2, break_point=0");
  auto huge = segment_of("add", {{"N", 16384}, {"K", 1024}});  // capped at 4
  EXPECT_EQ(p->format(p->compute_params(huge.seg)), "block=128, vector=4, unroll=4, break_point=0");
  big.seg.device.sm_count = 16;  // a smaller device is covered sooner
  EXPECT_EQ(p->format(p->compute_params(big.seg)), "block=64, vector=4, unroll=4, break_point=0");
  auto odd = segment_of("add", {{"N", 16384}, {"K", 1023}});
  EXPECT_EQ(p->format(p->compute_params(odd.seg)), "block=128, vector=1, unroll=4, break_point=0");
}

TEST(BuiltinPointwise, ExplicitSettingsValidate) {
  schedule_and_validate("pointwise", "pointwise_add_mul", {{"N", 33}, {"K", 64}},
                        {"block=64", "vector=4", "unroll=2"});
  schedule_and_validate("pointwise", "gelu_backward", {{"N", 17}, {"K", 8}},
                        {"block=32", "vector=2", "unroll=3"});
  schedule_and_validate("pointwise", "pointwise_f16", {{"N", 5}, {"K", 24}},
                        {"block=32", "vector=8", "unroll=2"});
  schedule_and_validate("pointwise", "silu_mul", {{"N", 37}, {"K", 29}},
                        {"block=256", "vector=1", "unroll=4"});
  schedule_and_validate("pointwise", "batched_transpose", {{"B", 2}, {"M", 6}, {"N", 4}},
                        {"block=32", "vector=2", "unroll=2"});
}

TEST(BuiltinPointwise, AVectorThatDoesNotDivideIsAUserError) {
  auto p = builtin("pointwise");
  auto s = segment_of("add", {{"N", 4}, {"K", 6}});
  auto params = p->with_settings(p->defaults(), {"vector=4"});
  EXPECT_THAT(testing::user_error_of([&] { p->schedule(s.seg, params); }),
              HasSubstr("pointwise: vector=4 does not divide the innermost extent 6 of T"));
  // Wider than 16 bytes: the host's primitive refuses it.
  auto wide = segment_of("add", {{"N", 4}, {"K", 8}});
  auto eight = p->with_settings(p->defaults(), {"vector=8"});
  EXPECT_THAT(testing::user_error_of([&] { p->schedule(wide.seg, eight); }),
              HasSubstr("expected a power of two of at most 16 bytes"));
}

/// The user names of the tensors whose innermost loop axis is Vectorize.
std::vector<std::string> vectorized(const ir::Fusion& f) {
  std::vector<std::string> r;
  for (const ir::TensorView* t : f.tensors())
    if (t->nloop() > 0 && t->loop().back()->loop_transform() == ir::LoopTransform::Vectorize)
      r.push_back(t->user_name());
  return r;
}

TEST(BuiltinPointwise, VectorizesTheInputsAndOutputsLoweringAllows) {
  auto p = builtin("pointwise");
  auto vectorize = [&](const std::string& fusion, const ir::SizeBindings& sizes) {
    auto s = segment_of(fusion, sizes);
    p->schedule(s.seg, p->compute_params(s.seg));
    return vectorized(*s.def.fusion);
  };
  using ::testing::UnorderedElementsAre;
  EXPECT_THAT(vectorize("pointwise_add_mul", {{"N", 64}, {"K", 128}}),
              UnorderedElementsAre("x_cache", "y_cache", "b_cache", "out"));  // 2D: the bias too
  EXPECT_THAT(vectorize("bias_relu", {{"N", 64}, {"K", 128}}),
              UnorderedElementsAre("x_cache", "b_cache", "y"));
  EXPECT_THAT(vectorize("transpose2d", {{"N", 64}, {"K", 128}}),
              UnorderedElementsAre("y"));  // x's innermost axis is not y's
  EXPECT_THAT(vectorize("add", {{"N", 37}, {"K", 29}}), ::testing::IsEmpty());
}

TEST(BuiltinPointwise, BroadcastInputsTakeThe2DScheduleAndValidate) {
  // The break point separates the rows, which the [K] bias lacks, from K.
  // Odd K: no vector, still 2D (the bias indexed by the inner loop alone).
  EXPECT_EQ(schedule_and_validate("pointwise", "pointwise_add_mul", {{"N", 33}, {"K", 65}}),
            "block=32, vector=1, unroll=1, break_point=1");
  EXPECT_EQ(schedule_and_validate("pointwise", "bias_relu", {{"N", 1}, {"K", 4097}}),
            "block=32, vector=1, unroll=1, break_point=1");
  // K=36: 9 vectors a row, under a warp: flat packs rows instead.
  EXPECT_EQ(schedule_and_validate("pointwise", "bias_relu", {{"N", 1000}, {"K", 36}}),
            "block=64, vector=4, unroll=1, break_point=0");
  // 2^21 rows, 4 a block: more than gridDim.y holds at unroll=4 (131072), so
  // unroll rises to 16 rows a thread (32768 blocks).
  auto p = builtin("pointwise");
  auto tall = segment_of("bias_relu", {{"N", int64_t{1} << 21}, {"K", 128}});
  EXPECT_EQ(p->format(p->compute_params(tall.seg)),
            "block=128, vector=4, unroll=16, break_point=1");
  // Explicit settings: rows unrolled, a ragged last block of rows (N=37), a
  // K not divisible by the vector's width times the block.
  schedule_and_validate("pointwise", "pointwise_add_mul", {{"N", 37}, {"K", 72}},
                        {"block=64", "vector=4", "unroll=3", "break_point=1"});
  schedule_and_validate("pointwise", "bias_relu", {{"N", 5}, {"K", 260}},
                        {"block=128", "vector=2", "unroll=2", "break_point=1"});
  // Where it does not apply: no broadcast input.
  auto s = segment_of("add", {{"N", 4}, {"K", 8}});
  EXPECT_THAT(testing::user_error_of(
                  [&] { p->schedule(s.seg, p->with_settings(p->defaults(), {"break_point=1"})); }),
              HasSubstr("pointwise: break_point=1 does not apply; this segment's is 0"));
}

TEST(BuiltinPointwise, The2DScheduleReadsTheBiasWithVectorLoads) {
  auto p = builtin("pointwise");
  auto s = segment_of("bias_relu", {{"N", 64}, {"K", 128}});
  p->schedule(s.seg, p->compute_params(s.seg));
  EXPECT_THAT(vectorized(*s.def.fusion), ::testing::Contains("b_cache"));
}

TEST(BuiltinPointwise, RejectsReductionsWithTheReason) {
  auto p = builtin("pointwise");
  for (const char* f : {"softmax", "int_affine", "layernorm"}) {
    auto s = segment_of(f, {});
    Verdict v = p->can_schedule(s.seg, p->defaults());
    EXPECT_FALSE(v.accepted) << f;
    EXPECT_THAT(v.reason, HasSubstr("pointwise schedules fusions without reductions; T")) << f;
  }
  auto s = segment_of("int_affine", {});
  EXPECT_THAT(p->can_schedule(s.seg, p->defaults()).reason, HasSubstr(" is a sum reduction"));
}

TEST(BuiltinPointwise, TakesASingleReductionSeriallyAsTheLastResort) {
  // One expression: the segmenter's last resort, one thread per output element.
  schedule_and_validate("pointwise", "row_sum", {{"N", 37}, {"K", 29}});
  schedule_and_validate("pointwise", "col_sum", {{"N", 5}, {"K", 130}});
  schedule_and_validate("pointwise", "sum_all", {{"N", 3}, {"K", 7}});
}

}  // namespace
}  // namespace schedlab::plugin
