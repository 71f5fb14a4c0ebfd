// The built-in `transpose` plugin (plugins/transpose): every transposing
// fusion it accepts, at ragged sizes (odd, prime, size 1) and friendly ones,
// by its own choice and by explicit settings, validates on the CPU backend
// and compiles with NVRTC; its choices follow dtype, sizes and device; what
// is not a two-layout transpose is rejected with the reason. Compiled a second
// time as script_plugin_gpu_test, the same kernels run on the GPU, scheduled
// for the real device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schedlab/plugin/host.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sched/sched.h"
#include "sp_test_util.h"
#include "test_support.h"

namespace schedlab::plugin {
namespace {

using sp_testing::user_error_what_of;
using sp_testing::nvrtc_errors;
using sp_testing::run_and_compare;
using sp_testing::Scheduled;
using sp_testing::segment_of;
using ::testing::HasSubstr;

std::shared_ptr<const Plugin> transpose_plugin() {
  static auto p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/transpose.so");
  return p;
}

/// Schedules with the plugin's choice overridden by `settings`, validates on
/// the CPU backend and with NVRTC; returns the parameters used.
std::string schedule_and_validate(const std::string& fusion, const ir::SizeBindings& sizes,
                                  const std::vector<std::string>& settings = {}) {
  auto p = transpose_plugin();
  Scheduled s = segment_of(fusion, sizes);
  if (sp_testing::kCudaTestBackend) s.seg.device = *runtime::cuda_device_properties();
  Verdict v = p->can_schedule(s.seg, p->defaults());
  EXPECT_TRUE(v.accepted) << fusion << ": " << v.reason;
  if (!v.accepted) return "";
  ParamValues params = p->with_settings(p->compute_params(s.seg), settings);
  p->schedule(s.seg, params);
  std::string what = fusion + " with " + p->format(params);
  EXPECT_EQ(run_and_compare(s), "") << what;
  EXPECT_EQ(nvrtc_errors(s), "") << what;
  // The transposition goes through shared memory.
  bool shared = false;
  for (const ir::TensorView* tv : s.def.fusion->tensors())
    shared = shared || tv->memory_type() == ir::MemoryType::Shared;
  EXPECT_TRUE(shared) << what;
  return p->format(params);
}

struct Case {
  std::string fusion;
  ir::SizeBindings sizes;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fusion;
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.fusion.substr(0, info.param.fusion.find('.'));
  for (const auto& [k, v] : info.param.sizes) n += "_" + k + std::to_string(v);
  return n;
}

std::vector<Case> cases() {
  std::vector<Case> r;
  for (const char* f : {"transpose2d", "transpose_pointwise.yaml", "transpose_two_layouts.yaml",
                        "transpose_f16.yaml", "transpose_f64.yaml"})
    for (const ir::SizeBindings& s : std::vector<ir::SizeBindings>{{{"N", 37}, {"K", 29}},
                                                                   {{"N", 1}, {"K", 77}},
                                                                   {{"N", 65}, {"K", 1}},
                                                                   {{"N", 1}, {"K", 1}},
                                                                   {{"N", 64}, {"K", 256}},
                                                                   {{"N", 300}, {"K", 257}}})
      r.push_back({f, s});
  for (const ir::SizeBindings& s : std::vector<ir::SizeBindings>{{{"B", 3}, {"M", 7}, {"N", 5}},
                                                                 {{"B", 1}, {"M", 1}, {"N", 9}},
                                                                 {{"B", 2}, {"M", 64}, {"N", 33}},
                                                                 {{"B", 4}, {"M", 128}, {"N", 96}}})
    r.push_back({"batched_transpose", s});
  r.push_back({"reverse3d.yaml", {{"A", 5}, {"B", 3}, {"C", 7}}});
  r.push_back({"reverse3d.yaml", {{"A", 40}, {"B", 2}, {"C", 33}}});
  return r;
}

class TransposeFusions : public sp_testing::BackendTest<::testing::TestWithParam<Case>> {};
using BuiltinTranspose = sp_testing::BackendTest<>;

TEST_P(TransposeFusions, OwnChoiceValidatesOnCpuAndCompilesWithNvrtc) {
  schedule_and_validate(GetParam().fusion, GetParam().sizes);
}

INSTANTIATE_TEST_SUITE_P(Builtin, TransposeFusions, ::testing::ValuesIn(cases()), case_name);

TEST_F(BuiltinTranspose, ExplicitSettingsValidate) {
  schedule_and_validate("transpose2d", {{"N", 50}, {"K", 31}},
                        {"tile1=16", "tile2=8", "threads=32", "unroll=false"});
  schedule_and_validate("transpose2d", {{"N", 19}, {"K", 23}}, {"tile1=7", "tile2=5"});
  // More threads than the tile has elements: the extra ones are predicated off.
  schedule_and_validate("batched_transpose", {{"B", 2}, {"M", 9}, {"N", 10}},
                        {"tile1=4", "tile2=4", "threads=64"});
  schedule_and_validate("transpose_two_layouts.yaml", {{"N", 40}, {"K", 70}},
                        {"tile1=64", "tile2=16", "threads=128"});
}

TEST_F(BuiltinTranspose, ComputeParamsFollowsDtypeSizesAndDevice) {
  auto p = transpose_plugin();
  auto choice = [&](const std::string& fusion, const ir::SizeBindings& sizes) {
    Scheduled s = segment_of(fusion, sizes);
    return p->format(p->compute_params(s.seg));
  };
  // A tile row is one 128-byte line: 32 f32, 64 f16 (the cap), 16 f64.
  EXPECT_EQ(choice("transpose2d", {{"N", 2048}, {"K", 2048}}),
            "tile1=32, tile2=32, threads=256, unroll=true, pad=true, swizzle=false");
  EXPECT_EQ(choice("transpose_f16.yaml", {{"N", 2048}, {"K", 2048}}),
            "tile1=64, tile2=64, threads=256, unroll=true, pad=true, swizzle=false");
  EXPECT_EQ(choice("transpose_f64.yaml", {{"N", 2048}, {"K", 2048}}),
            "tile1=16, tile2=16, threads=64, unroll=true, pad=true, swizzle=false");
  // Small extents: each edge capped at its extent rounded up to a power of two.
  EXPECT_EQ(choice("transpose2d", {{"N", 1}, {"K", 5000}}),
            "tile1=1, tile2=32, threads=32, unroll=true, pad=true, swizzle=false");
  // 32 x 32 tiles of a 64 x 64 transpose: 4 blocks for 132 SMs. The larger
  // edge halves until 8 x 8 (32 bytes, one sector, is the floor): 64 blocks.
  EXPECT_EQ(choice("transpose2d", {{"N", 64}, {"K", 64}}),
            "tile1=8, tile2=8, threads=32, unroll=true, pad=true, swizzle=false");
  EXPECT_EQ(choice("transpose2d", {{"N", 512}, {"K", 256}}),
            "tile1=16, tile2=32, threads=128, unroll=true, pad=true, swizzle=false");  // 32 * 8 = 256 blocks
  // The batch counts towards the blocks.
  EXPECT_EQ(choice("batched_transpose", {{"B", 200}, {"M", 64}, {"N", 64}}),
            "tile1=32, tile2=32, threads=256, unroll=true, pad=true, swizzle=false");
  // A device with little shared memory gets smaller tiles.
  // 32 x 32 f16 is 2048 bytes, but its rows padded by one bank word are 2176.
  Scheduled s = segment_of("transpose_f16.yaml", {{"N", 4096}, {"K", 4096}});
  s.seg.device.shared_bytes_per_block = 2048;
  EXPECT_EQ(p->format(p->compute_params(s.seg)),
            "tile1=16, tile2=32, threads=128, unroll=true, pad=true, swizzle=false");
}

TEST_F(BuiltinTranspose, ReadsAndWritesRunInOppositeThreadOrders) {
  // The Shared cache of x walks x's innermost axis with TIDx, y walks its own.
  auto p = transpose_plugin();
  Scheduled s = segment_of("transpose2d", {{"N", 64}, {"K", 64}});
  p->schedule(s.seg, p->with_settings(p->defaults(), {"tile1=32", "tile2=16", "threads=128"}));
  const ir::TensorView* y = s.def.fusion->outputs()[0];
  const ir::TensorView* cache = nullptr;
  for (const ir::TensorView* tv : s.def.fusion->tensors())
    if (tv->memory_type() == ir::MemoryType::Shared) cache = tv;
  ASSERT_NE(cache, nullptr);
  // Both [BIDx, 32 * 16 / 128 (Unroll), TIDy, TIDx], at the tile: one tile per
  // buffer, its rows the 16 threads of TIDx (gcd of the edges and threads).
  auto ysig = test_support::loop_sig(y), csig = test_support::loop_sig(cache);
  ASSERT_EQ(ysig.size(), 4u);
  EXPECT_EQ(ysig[2], "ithreadIdx.y{8}");
  EXPECT_EQ(ysig[3], "ithreadIdx.x{16}");
  EXPECT_EQ(std::vector<std::string>(ysig.begin() + 1, ysig.end()),
            std::vector<std::string>(csig.begin() + 1, csig.end()));
  EXPECT_EQ(cache->compute_at_pos(), 1);
  EXPECT_EQ(cache->axis(1)->loop_transform(), ir::LoopTransform::Unroll);
  // ... but the thread axes merge the tile in opposite orders: not the same loop.
  sched::LoopMap exact(*s.def.fusion, sched::LoopMap::Mode::Exact);
  EXPECT_TRUE(exact.mapped(y->axis(0), cache->axis(0)));
  EXPECT_FALSE(exact.mapped(y->axis(3), cache->axis(3)));
  // The cache's 16-element f32 rows are padded by one element (pad_shared).
  EXPECT_EQ(cache->shared_pad(), 1);
  EXPECT_EQ(run_and_compare(s), "");
}

TEST_F(BuiltinTranspose, PaddingFollowsTheRowAndTheDtype) {
  // One bank word per row when the row pitch is an even number of words: 1
  // f32 or f64 element, 2 f16 ones; none without `pad`, or when a row is a
  // single f32 (tile1 = 1: the pitch is one word, already odd).
  auto p = transpose_plugin();
  auto pad_of = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                    const std::vector<std::string>& settings) {
    Scheduled s = segment_of(fusion, sizes);
    p->schedule(s.seg, p->with_settings(p->compute_params(s.seg), settings));
    EXPECT_EQ(run_and_compare(s), "") << fusion;
    int64_t pad = -1;
    for (const ir::TensorView* tv : s.def.fusion->tensors())
      if (tv->memory_type() == ir::MemoryType::Shared) pad = tv->shared_pad();
    return pad;
  };
  EXPECT_EQ(pad_of("transpose2d", {{"N", 70}, {"K", 40}}, {"tile1=32", "tile2=32"}), 1);
  EXPECT_EQ(pad_of("transpose_f16.yaml", {{"N", 70}, {"K", 40}}, {"tile1=64", "tile2=64"}), 2);
  EXPECT_EQ(pad_of("transpose_f64.yaml", {{"N", 70}, {"K", 40}}, {}), 1);
  EXPECT_EQ(pad_of("transpose2d", {{"N", 70}, {"K", 40}}, {"pad=false"}), 0);
  EXPECT_EQ(pad_of("transpose2d", {{"N", 1}, {"K", 40}}, {}), 0);
}

TEST_F(BuiltinTranspose, SwizzleFollowsTheRowAndTheDtype) {
  // swizzle=true XORs whole bank words of each row (one f32 or f64 element,
  // two f16 ones) with the row number modulo the largest power of two, at
  // most 32, dividing the row's bank words; padding is then left out. Each
  // validates on the CPU backend and compiles with NVRTC, ragged tiles too.
  auto p = transpose_plugin();
  auto swizzle_of = [&](const std::string& fusion, const ir::SizeBindings& sizes,
                        std::vector<std::string> settings) {
    settings.push_back("swizzle=true");
    Scheduled s = segment_of(fusion, sizes);
    ParamValues params = p->with_settings(p->compute_params(s.seg), settings);
    p->schedule(s.seg, params);
    EXPECT_EQ(run_and_compare(s), "") << fusion << " with " << p->format(params);
    EXPECT_EQ(nvrtc_errors(s), "") << fusion << " with " << p->format(params);
    int64_t width = -1;
    for (const ir::TensorView* tv : s.def.fusion->tensors())
      if (tv->memory_type() == ir::MemoryType::Shared) {
        EXPECT_EQ(tv->shared_pad(), 0) << fusion;
        width = tv->shared_swizzle();
      }
    return width;
  };
  EXPECT_EQ(swizzle_of("transpose2d", {{"N", 70}, {"K", 40}}, {"tile1=32", "tile2=32"}), 32);
  EXPECT_EQ(swizzle_of("transpose_f16.yaml", {{"N", 70}, {"K", 40}}, {"tile1=64", "tile2=64"}), 32);
  EXPECT_EQ(swizzle_of("transpose_f64.yaml", {{"N", 70}, {"K", 40}}, {"tile1=16", "tile2=16"}), 16);
  // Rows of 8 (an 8 x 8 tile, and the rows of 8 of a 16 x 8 one), and rows of
  // 24 (gcd(24, 24, 96)): 24 units, of which 8 is the largest power of two
  // dividing it.
  EXPECT_EQ(swizzle_of("transpose2d", {{"N", 37}, {"K", 29}}, {"tile1=8", "tile2=8"}), 8);
  EXPECT_EQ(swizzle_of("transpose2d", {{"N", 37}, {"K", 29}}, {"tile1=16", "tile2=8"}), 8);
  EXPECT_EQ(
      swizzle_of("transpose2d", {{"N", 50}, {"K", 61}}, {"tile1=24", "tile2=24", "threads=96"}), 8);
  EXPECT_EQ(
      swizzle_of("batched_transpose", {{"B", 3}, {"M", 33}, {"N", 20}}, {"tile1=32", "tile2=32"}),
      32);
  // Rows of one element (gcd(5, 5, 32) = 1) need no swizzle: none is applied.
  EXPECT_EQ(swizzle_of("transpose2d", {{"N", 19}, {"K", 23}}, {"tile1=5", "tile2=5"}), 1);
  // A single f32 row (tile1 = 1) too.
  EXPECT_EQ(swizzle_of("transpose2d", {{"N", 1}, {"K", 40}}, {}), 1);
}

TEST_F(BuiltinTranspose, RejectsWhatIsNotATwoLayoutTranspose) {
  auto p = transpose_plugin();
  auto reason = [&](const std::string& fusion) {
    Scheduled s = segment_of(fusion, {});
    Verdict v = p->can_schedule(s.seg, p->defaults());
    EXPECT_FALSE(v.accepted) << fusion;
    return v.reason;
  };
  EXPECT_THAT(reason("add"), HasSubstr("no transpose: every input and output has the innermost "
                                       "axis of the reference T"));
  EXPECT_THAT(reason("outer_permute.yaml"),
              HasSubstr("no transpose: every input and output has the innermost axis"));
  EXPECT_THAT(reason("softmax"), HasSubstr("transpose schedules fusions without reductions; T"));
  EXPECT_THAT(reason("row_sum"), HasSubstr(" is a sum reduction"));
  EXPECT_THAT(reason("transpose_broadcast.yaml"),
              HasSubstr(" has a broadcast axis; transpose tiles full tensors only"));
  // schedule() refuses them too, as a user error.
  Scheduled s = segment_of("add", {});
  EXPECT_THAT(user_error_what_of([&] { p->schedule(s.seg, p->defaults()); }),
              HasSubstr("error: transpose: no transpose"));
}

TEST_F(BuiltinTranspose, TooManyThreadsIsAUserError) {
  auto p = transpose_plugin();
  Scheduled s = segment_of("transpose2d", {});
  s.seg.device.max_threads_per_block = 512;
  EXPECT_EQ(
      user_error_what_of([&] { p->schedule(s.seg, p->with_settings(p->defaults(), {"threads=1024"})); }),
      "error: transpose: threads=1024 exceeds the device's 512 threads per block");
}

}  // namespace
}  // namespace schedlab::plugin
