// Plugin ABI 1.1 to 1.10 on real .so files: string parameters end to end, a
// plugin built against 1.0 still loading and scheduling under the 1.3 host, a
// newer minor refused naming both versions, and the schedule-script,
// pad_shared and swizzle host entries called through the C table as a plugin
// calls them (the transpose plugin, transpose_test.cpp, calls pad_shared and
// swizzle from a real .so), 1.8's circular_buffer, 1.9's fuse_mma and
// mma_tile, and 1.10's swizzle_bytes and grid_persistent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "host_api.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "sp_test_util.h"

namespace schedlab::plugin {
namespace {

using sp_testing::user_error_what_of;
using sp_testing::run_and_compare;
using sp_testing::Scheduled;
using sp_testing::segment_of;
using sp_testing::TempFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A test plugin of tests/script_plugin/CMakeLists.txt.
std::string sp_plugin(const std::string& name) {
  std::string good = std::string(SP_PLUGIN_DIR) + "/" + name + ".so";
  return std::filesystem::exists(good) ? good : std::string(SP_OTHER_DIR) + "/" + name + ".so";
}

// ---- versions

TEST(Abi11, HeaderAndHostSayOnePointTen) {
  EXPECT_EQ(SCHEDLAB_PLUGIN_ABI_MAJOR, 1);
  EXPECT_EQ(SCHEDLAB_PLUGIN_ABI_MINOR, 10);
  EXPECT_EQ(host_api()->abi_version, SCHEDLAB_PLUGIN_ABI_VERSION_OF(1, 10));
  // 1.4 appended to SchedlabParamSet after its 1.0 fields, which stay put.
  EXPECT_EQ(offsetof(SchedlabParamSet, values), 8u);
  EXPECT_EQ(offsetof(SchedlabParamSet, tuned), 16u);
  EXPECT_EQ(offsetof(SchedlabParamSet, tuned_source), 24u);
  // Appended, never inserted: the 1.0 part of every grown struct is where it was.
  EXPECT_EQ(offsetof(SchedlabHostApi, apply_schedule_script),
            offsetof(SchedlabHostApi, _axes_mapped) + sizeof(void*));
  EXPECT_EQ(offsetof(SchedlabParamValue, string_value), 24u);
  EXPECT_EQ(offsetof(SchedlabParamDesc, string_default), 88u);
  EXPECT_NE(host_api()->apply_schedule_script, nullptr);
  EXPECT_NE(host_api()->_schedule_placeholders, nullptr);
  // 1.2 appended pad_shared after the 1.1 part, which stays where it was.
  EXPECT_EQ(offsetof(SchedlabHostApi, pad_shared),
            offsetof(SchedlabHostApi, _schedule_placeholders) + sizeof(void*));
  EXPECT_NE(host_api()->pad_shared, nullptr);
  // 1.3 appended swizzle after pad_shared.
  EXPECT_EQ(offsetof(SchedlabHostApi, swizzle),
            offsetof(SchedlabHostApi, pad_shared) + sizeof(void*));
  EXPECT_NE(host_api()->swizzle, nullptr);
  // 1.5 appended offered_by_segmenter after swizzle.
  EXPECT_EQ(offsetof(SchedlabHostApi, offered_by_segmenter),
            offsetof(SchedlabHostApi, swizzle) + sizeof(void*));
  EXPECT_NE(host_api()->offered_by_segmenter, nullptr);
  EXPECT_EQ(offsetof(SchedlabHostApi, recompute),
            offsetof(SchedlabHostApi, offered_by_segmenter) + sizeof(void*));
  EXPECT_NE(host_api()->recompute, nullptr);
  // 1.7 appended tensor_definition and tensor_operand after recompute.
  EXPECT_EQ(offsetof(SchedlabHostApi, tensor_definition),
            offsetof(SchedlabHostApi, recompute) + sizeof(void*));
  EXPECT_EQ(offsetof(SchedlabHostApi, tensor_operand),
            offsetof(SchedlabHostApi, tensor_definition) + sizeof(void*));
  EXPECT_NE(host_api()->tensor_definition, nullptr);
  EXPECT_NE(host_api()->tensor_operand, nullptr);
  // 1.8 appended circular_buffer after tensor_operand.
  EXPECT_EQ(offsetof(SchedlabHostApi, circular_buffer),
            offsetof(SchedlabHostApi, tensor_operand) + sizeof(void*));
  EXPECT_NE(host_api()->circular_buffer, nullptr);
  // 1.9 appended fuse_mma and mma_tile after circular_buffer.
  EXPECT_EQ(offsetof(SchedlabHostApi, fuse_mma),
            offsetof(SchedlabHostApi, circular_buffer) + sizeof(void*));
  EXPECT_EQ(offsetof(SchedlabHostApi, mma_tile),
            offsetof(SchedlabHostApi, fuse_mma) + sizeof(void*));
  EXPECT_NE(host_api()->fuse_mma, nullptr);
  EXPECT_NE(host_api()->mma_tile, nullptr);
  // 1.10 appended swizzle_bytes after mma_tile.
  EXPECT_EQ(offsetof(SchedlabHostApi, swizzle_bytes),
            offsetof(SchedlabHostApi, mma_tile) + sizeof(void*));
  EXPECT_NE(host_api()->swizzle_bytes, nullptr);
  // 1.10 appended grid_persistent after swizzle_bytes.
  EXPECT_EQ(offsetof(SchedlabHostApi, grid_persistent),
            offsetof(SchedlabHostApi, swizzle_bytes) + sizeof(void*));
  EXPECT_NE(host_api()->grid_persistent, nullptr);
  // 1.10 appended propagate_reshape after grid_persistent.
  EXPECT_EQ(offsetof(SchedlabHostApi, propagate_reshape),
            offsetof(SchedlabHostApi, grid_persistent) + sizeof(void*));
  EXPECT_EQ(sizeof(SchedlabHostApi), offsetof(SchedlabHostApi, propagate_reshape) + sizeof(void*));
  EXPECT_NE(host_api()->propagate_reshape, nullptr);
  // 1.6 appended the priority (and a reserved word) after schedule.
  EXPECT_EQ(offsetof(SchedlabPluginInfo, priority),
            offsetof(SchedlabPluginInfo, schedule) + sizeof(void*));
  EXPECT_EQ(offsetof(SchedlabPluginInfo, reserved1),
            offsetof(SchedlabPluginInfo, priority) + sizeof(int32_t));
}

// ---- 1.6: priorities

TEST(Abi16, APluginOfAnOlderMinorHasTheDefaultPriority) {
  auto p = load_plugin(sp_plugin("abi10"));
  EXPECT_EQ(p->priority(), SCHEDLAB_PRIORITY_DEFAULT);
  EXPECT_TRUE(p->volunteers());
  // A 1.6 plugin that declares none has the default too.
  auto s = load_plugin(sp_plugin("string_params"));
  EXPECT_EQ(s->abi_str(), "1.10");
  EXPECT_EQ(s->priority(), SCHEDLAB_PRIORITY_DEFAULT);
}

TEST(Abi16, TheBuiltinsDeclareTheSegmentersOrder) {
  Registry r(plugin_search_path());
  EXPECT_THAT(r.add_search_path(), ::testing::IsEmpty());
  std::vector<std::string> all, offered;
  for (const auto& p : r.by_priority()) {
    all.push_back(p->name() + "=" + std::to_string(p->priority()));
    if (p->volunteers()) offered.push_back(p->name());
  }
  // The most specific first; script needs a schedule text and python a heuristic file, so
  // neither volunteers (equal priorities by name).
  EXPECT_THAT(all, ElementsAre("matmul=50", "normalization=40", "reduction=30", "transpose=20",
                               "pointwise=10", "autosched=0", "python=-1", "script=-1"));
  EXPECT_THAT(offered, ElementsAre("matmul", "normalization", "reduction", "transpose", "pointwise",
                                   "autosched"));
  // The priority travels with a description (what an isolated worker sends).
  const PluginDescription d = r.get("script")->info();
  EXPECT_EQ(description_from_json(to_json(d), "test").priority, -1);
}

TEST(Abi11, NewerMinorIsRejectedNamingBothVersions) {
  std::string f = sp_plugin("sp_newer_minor");
  EXPECT_EQ(user_error_what_of([&] { load_plugin(f); }),
            "error: plugin '" + f +
                "' was built against plugin ABI 1.11, newer than this host's ABI 1.10: upgrade "
                "schedlab or rebuild the plugin against this host's plugin.h");
}

// ---- a 1.0 plugin under the 1.3 host

TEST(Abi10Plugin, LoadsWithItsSchemaReadAtTheOldStride) {
  auto p = load_plugin(sp_plugin("abi10"));
  EXPECT_EQ(p->name(), "abi10");
  EXPECT_EQ(p->abi_str(), "1.0");
  ASSERT_EQ(p->schema().size(), 2u);
  EXPECT_EQ(p->schema()[0].domain_str(), "int in [32, 1024]");
  EXPECT_EQ(p->schema()[1].name, "quiet");
  EXPECT_EQ(p->schema()[1].domain_str(), "bool");
  EXPECT_EQ(p->format(p->defaults()), "block=128, quiet=false");
}

TEST(Abi10Plugin, ChoosesAndSchedulesAndTheKernelValidates) {
  auto p = load_plugin(sp_plugin("abi10"));
  for (const ir::SizeBindings& sizes : std::vector<ir::SizeBindings>{
           {{"N", 33}, {"K", 65}}, {{"N", 1}, {"K", 1}}, {{"N", 64}, {"K", 128}}}) {
    Scheduled s = segment_of("pointwise_add_mul", sizes);
    ASSERT_TRUE(p->can_schedule(s.seg, p->defaults()).accepted);
    // compute_params writes the 1.0 value layout into the host's bigger one.
    ParamValues chosen = p->compute_params(s.seg);
    EXPECT_EQ(p->format(chosen), "block=32, quiet=false");
    p->schedule(s.seg, p->with_settings(chosen, {"block=64"}));
    EXPECT_EQ(s.def.fusion->outputs()[0]->axis(1)->extent().str(), "64");
    EXPECT_EQ(run_and_compare(s), "");
  }
  Scheduled softmax = segment_of("softmax", {});
  Verdict v = p->can_schedule(softmax.seg, p->defaults());
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.reason, "abi10 schedules fusions without reductions");
}

TEST(Abi10Plugin, AStringParameterFromAOnePointZeroPluginIsRefused) {
  std::string f = sp_plugin("abi10_string");
  EXPECT_EQ(user_error_what_of([&] { load_plugin(f); }),
            "error: plugin 'abi10_string' (" + f +
                "): parameter 'quiet': unknown kind 4 (SCHEDLAB_PARAM_STRING is ABI 1.1; the "
                "plugin reports ABI 1.0)");
}

// ---- ABI 1.2: pad_shared through the C table, as a plugin calls it

/// transpose2d's input read through a (Local) cache_after copy, made through
/// the C table as a plugin makes it: what the Shared-layout entries act on.
struct CachedInput {
  Scheduled s;
  SchedlabSegment ctx{};
  SchedlabTensor* c = nullptr;
  ir::TensorView* cache = nullptr;
  explicit CachedInput(const ir::SizeBindings& sizes) : s(segment_of("transpose2d", sizes)) {
    ctx.segment = &s.seg;
    auto* x = reinterpret_cast<SchedlabTensor*>(s.def.fusion->inputs()[0]);
    EXPECT_EQ(host_api()->cache_after(&ctx, x, SCHEDLAB_CACHE_UNSPECIFIED, &c), SCHEDLAB_OK);
    cache = reinterpret_cast<ir::TensorView*>(c);
  }
};

TEST(Abi12, PadSharedPadsASharedTensorAndRefusesTheRest) {
  CachedInput in({{"N", 6}, {"K", 10}});
  Scheduled& s = in.s;
  SchedlabSegment& ctx = in.ctx;
  SchedlabTensor* c = in.c;
  ir::TensorView* cache = in.cache;
  const SchedlabHostApi& api = *host_api();
  // Not Shared yet: the user error names the tensor and its memory type.
  EXPECT_EQ(api.pad_shared(&ctx, c, 1), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "pad_shared: " + cache->describe() +
                " is in Local memory; expected a Shared tensor (set_memory_type to Shared first)");
  ASSERT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_SHARED), SCHEDLAB_OK);
  EXPECT_EQ(api.pad_shared(&ctx, c, SCHEDLAB_MAX_SHARED_PAD + 1), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("must be in [0, 32] elements, got 33"));
  ASSERT_EQ(api.pad_shared(&ctx, c, 1), SCHEDLAB_OK) << api.last_error();
  EXPECT_EQ(cache->shared_pad(), 1);
  // A padded tensor stays Shared until the padding is removed.
  EXPECT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_LOCAL), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("padded by 1 elements per row"));
  EXPECT_EQ(api.pad_shared(nullptr, c, 1), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "pad_shared: segment handle is null");
  // Unscheduled, the padded cache still lowers and validates.
  EXPECT_EQ(run_and_compare(s), "");
  ASSERT_EQ(api.pad_shared(&ctx, c, 0), SCHEDLAB_OK);
  EXPECT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_LOCAL), SCHEDLAB_OK);
}

// ---- ABI 1.3: swizzle through the C table, as a plugin calls it

TEST(Abi13, SwizzleSwizzlesASharedTensorAndRefusesTheRest) {
  CachedInput in({{"N", 6}, {"K", 8}});
  SchedlabSegment& ctx = in.ctx;
  SchedlabTensor* c = in.c;
  ir::TensorView* cache = in.cache;
  const SchedlabHostApi& api = *host_api();
  // Not Shared yet: the user error names the tensor and its memory type.
  EXPECT_EQ(api.swizzle(&ctx, c, 4), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "swizzle: " + cache->describe() +
                " is in Local memory; expected a Shared tensor (set_memory_type to Shared first)");
  ASSERT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_SHARED), SCHEDLAB_OK);
  for (int64_t bad : {int64_t{0}, int64_t{3}, int64_t{SCHEDLAB_MAX_SWIZZLE_WIDTH * 2}}) {
    EXPECT_EQ(api.swizzle(&ctx, c, bad), SCHEDLAB_ERR_USER);
    EXPECT_EQ(std::string(api.last_error()), "swizzle: width of " + cache->describe() +
                                                 " must be a power of two in [1, 32], got " +
                                                 std::to_string(bad));
  }
  // One layout at a time: padded, it cannot be swizzled, and the reverse.
  ASSERT_EQ(api.pad_shared(&ctx, c, 1), SCHEDLAB_OK);
  EXPECT_EQ(api.swizzle(&ctx, c, 4), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()),
              HasSubstr("is padded by 1 elements per row (pad_shared); expected one layout"));
  ASSERT_EQ(api.pad_shared(&ctx, c, 0), SCHEDLAB_OK);
  ASSERT_EQ(api.swizzle(&ctx, c, 4), SCHEDLAB_OK) << api.last_error();
  EXPECT_EQ(cache->shared_swizzle(), 4);
  EXPECT_EQ(api.pad_shared(&ctx, c, 1), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("is swizzled with width 4 (swizzle)"));
  // A swizzled tensor stays Shared until the swizzle is removed.
  EXPECT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_LOCAL), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("swizzled with width 4 (swizzle)"));
  EXPECT_EQ(api.swizzle(nullptr, c, 4), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "swizzle: segment handle is null");
  ASSERT_EQ(api.swizzle(&ctx, c, 1), SCHEDLAB_OK);
  EXPECT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_LOCAL), SCHEDLAB_OK);
}

// ---- ABI 1.10: swizzle_bytes through the C table, as a plugin calls it

TEST(Abi110, SwizzleBytesSetsTheUnitAndRefusesTheRest) {
  CachedInput in({{"N", 6}, {"K", 64}});
  SchedlabSegment& ctx = in.ctx;
  SchedlabTensor* c = in.c;
  ir::TensorView* cache = in.cache;
  const SchedlabHostApi& api = *host_api();
  EXPECT_EQ(api.swizzle_bytes(&ctx, c, 8, 16), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "swizzle: " + cache->describe() +
                " is in Local memory; expected a Shared tensor (set_memory_type to Shared first)");
  ASSERT_EQ(api.set_memory_type(&ctx, c, SCHEDLAB_MEMORY_SHARED), SCHEDLAB_OK);
  // Units other than a bank word or a 16-byte chunk.
  EXPECT_EQ(api.swizzle_bytes(&ctx, c, 8, 8), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "swizzle: the unit of " + cache->describe() +
                " must be 4 bytes (a bank word) or 16 bytes (an ldmatrix row chunk), got 8");
  // 16-byte units: 8 of them cover a 128-byte row, so 16 is too wide.
  EXPECT_EQ(api.swizzle_bytes(&ctx, c, 16, 16), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "swizzle: width of " + cache->describe() +
                " must be a power of two in [1, 8], got 16 (16-byte units: 8 cover a 128-byte row)");
  EXPECT_EQ(cache->shared_swizzle(), 1);
  ASSERT_EQ(api.swizzle_bytes(&ctx, c, 8, 16), SCHEDLAB_OK) << api.last_error();
  EXPECT_EQ(cache->shared_swizzle(), 8);
  EXPECT_EQ(cache->shared_swizzle_bytes(), 16);
  // 4 bytes is what swizzle (1.3) sets.
  ASSERT_EQ(api.swizzle_bytes(&ctx, c, 16, 4), SCHEDLAB_OK) << api.last_error();
  EXPECT_EQ(cache->shared_swizzle(), 16);
  EXPECT_EQ(cache->shared_swizzle_bytes(), 4);
  EXPECT_EQ(api.swizzle_bytes(nullptr, c, 8, 16), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "swizzle_bytes: segment handle is null");
  // Recorded in the transform log with its unit: a replay swizzles in
  // 16-byte chunks; a 1.3 step (no unit) in bank words.
  TransformLog log;
  in.s.seg.log = &log;
  ASSERT_EQ(api.swizzle_bytes(&ctx, c, 4, 16), SCHEDLAB_OK) << api.last_error();
  in.s.seg.log = nullptr;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].op, Transform::Op::Swizzle);
  EXPECT_EQ(log[0].ints, (std::vector<int64_t>{4, 16}));
  ASSERT_EQ(api.swizzle_bytes(&ctx, c, 1, 4), SCHEDLAB_OK);
  apply(*in.s.def.fusion, log[0]);
  EXPECT_EQ(cache->shared_swizzle(), 4);
  EXPECT_EQ(cache->shared_swizzle_bytes(), 16);
  apply(*in.s.def.fusion, Transform(Transform::Op::Swizzle, log[0].tensors, {2}));
  EXPECT_EQ(cache->shared_swizzle(), 2);
  EXPECT_EQ(cache->shared_swizzle_bytes(), 4);
}

// ---- ABI 1.8: circular_buffer through the C table, as a plugin calls it

TEST(Abi18, CircularBufferSetsTheStagesAndRefusesTheRest) {
  CachedInput in({{"N", 6}, {"K", 8}});
  SchedlabSegment& ctx = in.ctx;
  SchedlabTensor* c = in.c;
  ir::TensorView* cache = in.cache;
  const SchedlabHostApi& api = *host_api();
  EXPECT_EQ(api.circular_buffer(&ctx, c, 1, 0), SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api.last_error()),
            "circular_buffer: stages of " + cache->describe() + " must be in [2, 8], got 1");
  EXPECT_EQ(api.circular_buffer(&ctx, c, 2, 2), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("must be in [1, 1] (fewer than its 2"));
  // A plain (Set) cache: a third stage could not be in flight.
  EXPECT_EQ(api.circular_buffer(&ctx, c, 3, 2), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("more than 2 stages need asynchronous"));
  EXPECT_EQ(api.circular_buffer(nullptr, c, 2, 1), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "circular_buffer: segment handle is null");
  ASSERT_EQ(api.circular_buffer(&ctx, c, 2, 1), SCHEDLAB_OK) << api.last_error();
  EXPECT_EQ(cache->circular_stages(), 2);
  EXPECT_EQ(cache->circular_prefetch(), 1);
}

// ---- ABI 1.9: fuse_mma and mma_tile through the C table, as a plugin calls them

TEST(Abi19, FuseMmaAndMmaTileMakeAWarpTileAndRefuseTheRest) {
  Scheduled s = segment_of("matmul_bf16", {{"M", 16}, {"N", 8}, {"K", 16}});
  SchedlabSegment ctx{};
  ctx.segment = &s.seg;
  const SchedlabHostApi& api = *host_api();
  ir::TensorView* sum = nullptr;
  for (ir::TensorView* tv : s.def.fusion->tensors())
    if (tv->definition() != nullptr && tv->definition()->kind() == ir::Expr::Kind::Reduction)
      sum = tv;
  ASSERT_NE(sum, nullptr);
  auto* t = reinterpret_cast<SchedlabTensor*>(sum);
  // Not an MmaOp yet: mma_tile names the tensor.
  EXPECT_EQ(api.mma_tile(&ctx, t), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("is not defined by an mma"));
  // An input is not a sum.
  auto* x = reinterpret_cast<SchedlabTensor*>(s.def.fusion->inputs()[0]);
  EXPECT_EQ(api.fuse_mma(&ctx, x), SCHEDLAB_ERR_USER);
  EXPECT_EQ(api.fuse_mma(nullptr, t), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "fuse_mma: segment handle is null");
  ASSERT_EQ(api.fuse_mma(&ctx, t), SCHEDLAB_OK) << api.last_error();
  // The host reports it as SCHEDLAB_OP_MMA (ir::Expr::Kind::Mma + 1,
  // static_assert in host_api_args.h).
  EXPECT_EQ(sum->definition()->kind(), ir::Expr::Kind::Mma);
  // matmul's sum is [M, rK, N]: the tile wants [m 16, n 8, k 16] innermost.
  EXPECT_EQ(api.mma_tile(&ctx, t), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api.last_error()), HasSubstr("expected the instruction tile's"));
  // [M, N, rK] -> [Mo, No, rKo, m16, n8, k16], as tests/matmul/mma_tile_test does.
  const int32_t old_axes[] = {1, 2};
  const int32_t new_axes[] = {2, 1};
  ASSERT_EQ(api.reorder(&ctx, t, old_axes, new_axes, 2), SCHEDLAB_OK) << api.last_error();
  ASSERT_EQ(api.split(&ctx, t, 0, 16, 1), SCHEDLAB_OK);
  ASSERT_EQ(api.split(&ctx, t, 2, 8, 1), SCHEDLAB_OK);
  ASSERT_EQ(api.split(&ctx, t, 4, 16, 1), SCHEDLAB_OK);
  const int32_t from[] = {1, 2, 3, 4};
  const int32_t to[] = {3, 1, 4, 2};
  ASSERT_EQ(api.reorder(&ctx, t, from, to, 4), SCHEDLAB_OK) << api.last_error();
  ASSERT_EQ(api.mma_tile(&ctx, t), SCHEDLAB_OK) << api.last_error();
  ASSERT_EQ(sum->nloop(), 6);
  EXPECT_EQ(sum->axis(3)->parallel_type(), ir::ParallelType::TIDx);  // the lane
  EXPECT_EQ(sum->axis(3)->extent().str(), "32");
}

// ---- string parameters, end to end

TEST(StringParams, SchemaDefaultsAndFormatting) {
  auto p = load_plugin(sp_plugin("string_params"));
  EXPECT_EQ(p->abi_str(), "1.10");
  ASSERT_EQ(p->schema().size(), 3u);
  EXPECT_EQ(p->schema()[1].kind, ParamKind::String);
  EXPECT_EQ(p->schema()[1].domain_str(), "string");
  EXPECT_EQ(param_kind_name(ParamKind::String), "string");
  EXPECT_EQ(p->schema()[1].string_default, "plain");
  EXPECT_EQ(p->schema()[2].string_default, "");
  EXPECT_EQ(p->format(p->defaults()), "block=128, label=\"plain\", note=\"\"");
  // Quotes and backslashes are escaped, so the list stays unambiguous.
  ParamValues v = p->with_settings(p->defaults(), {"note=say \"hi\", a\\b"});
  EXPECT_EQ(v[2].s, "say \"hi\", a\\b");
  EXPECT_EQ(p->format_value(2, v[2]), "\"say \\\"hi\\\", a\\\\b\"");
}

TEST(StringParams, RoundTripThroughComputeParamsSetAndSchedule) {
  auto p = load_plugin(sp_plugin("string_params"));
  std::vector<std::string> lines;
  set_log_sink([&](int, const std::string&, const std::string& msg) { lines.push_back(msg); });
  Scheduled s = segment_of("add", {});
  // compute_params chose a string; the host copied it out of the plugin.
  ParamValues chosen = p->compute_params(s.seg);
  EXPECT_EQ(chosen[1].s, "chosen for add");
  // Everything after the first '=' is the value: '=' and ',' included.
  ParamValues given = p->with_settings(chosen, {"note=k=v,k2=v2", "block=256"});
  EXPECT_TRUE(p->can_schedule(s.seg, given).accepted);
  p->schedule(s.seg, given);
  // The defaults reach the plugin too, an empty string included.
  p->schedule(s.seg, p->defaults());
  set_log_sink({});
  EXPECT_THAT(lines, ElementsAre("block=256 label=[chosen for add] note=[k=v,k2=v2]",
                                 "block=128 label=[plain] note=[]"));
  EXPECT_EQ(p->format(given), "block=256, label=\"chosen for add\", note=\"k=v,k2=v2\"");
}

TEST(StringParams, CanScheduleSeesTheGivenString) {
  auto p = load_plugin(sp_plugin("string_params"));
  Scheduled s = segment_of("add", {});
  Verdict v = p->can_schedule(s.seg, p->with_settings(p->defaults(), {"label=reject"}));
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.reason, "label is 'reject'");
  // A string set with nothing after '=' is the empty string, not an error.
  EXPECT_EQ(p->with_settings(p->defaults(), {"label="})[1].s, "");
}

// ---- the host entries, through the C table

class ScriptEntries : public ::testing::Test {
 protected:
  void SetUp() override { ctx_.segment = &s_.seg; }
  Scheduled s_ = segment_of("pointwise_add_mul", {{"N", 6}, {"K", 10}});
  SchedlabSegment ctx_;
  const SchedlabHostApi& api_ = *host_api();
  std::string script_ =
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/pointwise_add_mul.sched";
};

TEST_F(ScriptEntries, AppliesWithArgsAndReturnsTheLog) {
  const char* log = nullptr;
  ASSERT_EQ(api_.apply_schedule_script(&ctx_, script_.c_str(), "block=32", &log), SCHEDLAB_OK)
      << api_.last_error();
  ASSERT_NE(log, nullptr);
  EXPECT_THAT(std::string(log), HasSubstr("6: split(out, 0, 32)\n7: parallelize(out, 0, BIDx)"));
  ir::TensorView* out = s_.def.fusion->outputs()[0];
  EXPECT_EQ(out->axis(1)->extent().str(), "32");
  EXPECT_EQ(run_and_compare(s_), "");
}

TEST_F(ScriptEntries, WithoutArgsTheScriptsDefaultsApply) {
  ASSERT_EQ(api_.apply_schedule_script(&ctx_, script_.c_str(), nullptr, nullptr), SCHEDLAB_OK)
      << api_.last_error();
  EXPECT_EQ(s_.def.fusion->outputs()[0]->axis(1)->extent().str(), "128");
}

TEST_F(ScriptEntries, ScriptErrorsAreUserErrorsWithTheirLocation) {
  TempFile bad("bad.sched", "merge(out, 0)\nsplit(out, 0, 0)\n");
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, bad.path().c_str(), "", nullptr), SCHEDLAB_ERR_USER);
  EXPECT_THAT(std::string(api_.last_error()),
              ::testing::StartsWith(bad.path() + ":2:1: split: factor must be positive, got 0 (" +
                                    s_.def.fusion->outputs()[0]->describe() + " axis 0"));
  TempFile syntax("syntax.sched", "merge(out 0)\n");
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, syntax.path().c_str(), "", nullptr),
            SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api_.last_error()),
            syntax.path() + ":1:11: expected ',' or ')' in the call to 'merge', found '0'");
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, "/nonexistent/x.sched", "", nullptr),
            SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api_.last_error()),
            "cannot read schedule file '/nonexistent/x.sched': no such file");
}

TEST_F(ScriptEntries, ArgsAreCheckedAgainstThePlaceholders) {
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, script_.c_str(), "blok=32", nullptr),
            SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api_.last_error()),
            "args: 'blok' is not a placeholder of schedule script '" + script_ +
                "' (its placeholders: block)");
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, script_.c_str(), "block", nullptr),
            SCHEDLAB_ERR_USER);
  EXPECT_EQ(std::string(api_.last_error()),
            "args: expected NAME=INTEGER, found 'block' in 'block'");
  // Nothing was applied: the args are checked before the first statement.
  EXPECT_EQ(s_.def.fusion->outputs()[0]->nloop(), 2);
}

TEST_F(ScriptEntries, NullArgumentsAreAbiErrors) {
  EXPECT_EQ(api_.apply_schedule_script(&ctx_, nullptr, "", nullptr), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "apply_schedule_script: path is null");
  EXPECT_EQ(api_.apply_schedule_script(nullptr, script_.c_str(), "", nullptr),
            SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "apply_schedule_script: segment handle is null");
  EXPECT_EQ(api_._schedule_placeholders(&ctx_, script_.c_str(), nullptr),
            SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "_schedule_placeholders: names is null");
}

TEST_F(ScriptEntries, PlaceholdersListsUsesAndDefaults) {
  const char* names = nullptr;
  ASSERT_EQ(api_._schedule_placeholders(&ctx_, script_.c_str(), &names), SCHEDLAB_OK);
  EXPECT_STREQ(names, "block=128");
  TempFile two("two.sched", "params(b=4)\nsplit(out, 0, {a})\nsplit(out, 0, {b})\n");
  ASSERT_EQ(api_._schedule_placeholders(&ctx_, two.path().c_str(), &names), SCHEDLAB_OK);
  EXPECT_STREQ(names, "b=4,a");
  EXPECT_EQ(s_.def.fusion->outputs()[0]->nloop(), 2);  // nothing applied
}

}  // namespace
}  // namespace schedlab::plugin
