// The plugin host: loading real .so files, ABI negotiation, schema checks,
// the registry, every way a plugin can fail, the C table itself, and a
// plugin's schedule validated end to end on the CPU backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/dll/library_info.hpp>
#include <cstring>

#include "host_api.h"
#include "plugin_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/compare.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::load_fusion;
using testing::plugin_file;
using testing::user_error_of;

// ---- loading and negotiation

TEST(PluginLoad, GoodPluginReportsItselfAndItsSchema) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  EXPECT_EQ(p->name(), "test_pointwise");
  EXPECT_EQ(p->version(), "1.0");
  EXPECT_EQ(p->abi_str(), "1.10");
  EXPECT_EQ(p->abi_version(), SCHEDLAB_PLUGIN_ABI_VERSION);
  ASSERT_EQ(p->schema().size(), 4u);
  EXPECT_EQ(p->schema()[0].name, "block");
  EXPECT_EQ(p->schema()[0].domain_str(), "int in [32, 1024]");
  EXPECT_EQ(p->schema()[1].domain_str(), "float in [0.5, 64]");
  EXPECT_EQ(p->schema()[2].domain_str(), "one of {bidx, serial}");
  EXPECT_EQ(p->schema()[3].domain_str(), "bool");
  EXPECT_EQ(p->schema()[3].doc, "log 'schedule: start' before scheduling");
  EXPECT_EQ(p->format(p->defaults()), "block=128, waves=2, grid=bidx, log_progress=false");
}

TEST(PluginLoad, PluginsExportOnlyTheEntryPoint) {
  for (const char* target : {"test_pointwise_v1", "bad_split", "throwing", "c_plugin"}) {
    boost::dll::library_info info(plugin_file(target));
    EXPECT_THAT(info.symbols(), ElementsAre("schedlab_plugin_entry")) << target;
  }
}

TEST(PluginLoad, WrongMajorIsRejectedNamingBothVersions) {
  std::string f = plugin_file("wrong_major");
  EXPECT_EQ(user_error_of([&] { load_plugin(f); }),
            "error: plugin '" + f +
                "' was built against plugin ABI 2.0, but this host speaks ABI 1.10: a different "
                "major version never loads; rebuild the plugin against this host's plugin.h");
}

TEST(PluginLoad, NewerMinorIsRejectedNamingBothVersions) {
  std::string f = plugin_file("newer_minor");
  EXPECT_EQ(user_error_of([&] { load_plugin(f); }),
            "error: plugin '" + f +
                "' was built against plugin ABI 1.11, newer than this host's ABI 1.10: upgrade "
                "schedlab or rebuild the plugin against this host's plugin.h");
}

TEST(PluginLoad, MissingEntrySymbol) {
  std::string f = plugin_file("no_entry");
  EXPECT_EQ(user_error_of([&] { load_plugin(f); }),
            "error: plugin '" + f +
                "' has no entry point 'schedlab_plugin_entry' (define it with "
                "SCHEDLAB_PLUGIN(Class) and build with schedlab_add_plugin)");
}

TEST(PluginLoad, EntryPointErrorStatus) {
  std::string f = plugin_file("entry_fails");
  EXPECT_EQ(
      user_error_of([&] { load_plugin(f); }),
      "error: plugin '" + f +
          "': entry point failed with SCHEDLAB_ERR_PLUGIN (-4): error status from a C plugin");
}

TEST(PluginLoad, SchemaIsValidated) {
  std::string f = plugin_file("bad_schema");
  EXPECT_EQ(user_error_of([&] { load_plugin(f); }),
            "error: plugin 'bad_schema' (" + f +
                "): parameter 'block': default 2000 is outside [32, 1024]");
}

TEST(PluginLoad, NotAPlugin) {
  testing::TempDir dir;
  testing::write_file(dir.file("text.so"), "not an ELF file\n");
  EXPECT_THAT(user_error_of([&] { load_plugin(dir.file("text.so")); }),
              HasSubstr("is not an ELF shared object (16 bytes); is it still being written?"));
  EXPECT_EQ(user_error_of([&] { load_plugin(dir.file("missing.so")); }),
            "error: plugin file '" + dir.file("missing.so") +
                "' does not exist or is not a regular file");
}

// ---- registry

TEST(PluginRegistry, DuplicateNameIsAClearError) {
  Registry r;
  r.add(plugin_file("test_pointwise_v1"));
  std::string v2 = plugin_file("test_pointwise_v2");
  EXPECT_EQ(user_error_of([&] { r.add(v2); }),
            "error: duplicate plugin name 'test_pointwise': '" + v2 +
                "' cannot be registered under it, it is taken by '" +
                plugin_file("test_pointwise_v1") + "'");
  EXPECT_EQ(r.find("test_pointwise")->version(), "1.0");
}

TEST(PluginRegistry, FindsByNameAlongTheSearchPath) {
  testing::TempDir empty;
  Registry r({empty.file("none"), PLUGIN_DIR});
  EXPECT_EQ(r.find("c_plugin"), nullptr);
  EXPECT_EQ(r.get("c_plugin")->description(), "a plugin written in C");
  EXPECT_EQ(r.get("c_plugin"), r.find("c_plugin"));
  EXPECT_EQ(user_error_of([&] { r.get("nope"); }),
            "error: unknown plugin 'nope' (loaded: bad_split, c_plugin, test_pointwise, throwing; "
            "searched " +
                empty.file("none") + ", " + PLUGIN_DIR + ")");
  // A plugin whose file is not named after it is found by loading the path.
  Registry r2({PLUGIN_DIR});
  EXPECT_EQ(r2.get("test_pointwise")->path(), plugin_file("test_pointwise_v1"));
}

TEST(PluginRegistry, DirectoryLoadRegistersTheGoodAndReportsEachBrokenPlugin) {
  Registry r;
  EXPECT_TRUE(r.add_directory(PLUGIN_DIR).empty());
  std::vector<std::string> names;
  for (const auto& p : r.plugins()) names.push_back(p->name());
  EXPECT_THAT(names, ElementsAre("bad_split", "c_plugin", "test_pointwise", "throwing"));
  // test_pointwise_v2 is a duplicate of v1; the five broken ones fail, each
  // with its own reason.
  auto errors = r.add_directory(PLUGIN_OTHER_DIR);
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_THAT(errors[0], HasSubstr("(" + plugin_file("bad_schema") + "): parameter 'block'"));
  EXPECT_THAT(errors[4], HasSubstr("duplicate plugin name 'test_pointwise'"));
}

TEST(PluginRegistry, LoadingADirectoryTwiceLoadsEachFileOnce) {
  Registry r({PLUGIN_DIR, std::string(PLUGIN_DIR) + "/."});
  // Registered by name first, then met again on the path (twice, under two
  // spellings of its directory): loaded once, and no "duplicate" error.
  std::shared_ptr<const Plugin> c = r.get("c_plugin");
  EXPECT_TRUE(r.add_search_path().empty());
  EXPECT_TRUE(r.add_search_path().empty());
  EXPECT_EQ(r.find("c_plugin"), c);
  EXPECT_EQ(r.plugins().size(), 4u);
  // A file that failed is reported again, with the same message.
  std::vector<std::string> first = r.add_directory(PLUGIN_OTHER_DIR);
  EXPECT_EQ(first.size(), 6u);
  EXPECT_EQ(r.add_directory(PLUGIN_OTHER_DIR), first);
}

TEST(PluginRegistry, SearchPathOrder) {
  setenv("SCHEDLAB_PLUGIN_PATH", "/a:/b::", 1);
  auto path = plugin_search_path({"/x"});
  unsetenv("SCHEDLAB_PLUGIN_PATH");
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(path[0], "/x");
  EXPECT_EQ(path[1], "/a");
  EXPECT_EQ(path[2], "/b");
  EXPECT_EQ(path[3], builtin_plugin_dir());
}

// ---- calls and failures

struct Scheduled {
  frontend::FusionDefinition def;
  HostSegment seg;
};

Scheduled segment_of(const std::string& fusion, ir::SizeBindings sizes = {}) {
  Scheduled s{load_fusion(fusion), {}};
  s.seg.fusion = s.def.fusion.get();
  s.seg.sizes = frontend::bind_sizes(s.def, sizes);
  return s;
}

TEST(PluginCall, CanScheduleAcceptsPointwiseAndRejectsReductionsWithAReason) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto pw = segment_of("pointwise_add_mul");
  EXPECT_TRUE(p->can_schedule(pw.seg, p->defaults()).accepted);
  auto sm = segment_of("softmax");
  Verdict v = p->can_schedule(sm.seg, p->defaults());
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.reason, "test_pointwise schedules pointwise fusions only; T1 is a max reduction");
}

TEST(PluginCall, ComputeParamsFollowsSizesAndDevice) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto small = segment_of("pointwise_add_mul");
  EXPECT_EQ(p->format(p->compute_params(small.seg)),
            "block=32, waves=2, grid=bidx, log_progress=false");
  auto big = segment_of("pointwise_add_mul", {{"N", 1024}, {"K", 1024}});
  EXPECT_EQ(p->compute_params(big.seg)[0].i, 1024);  // 1024 blocks of 1024 >= 132 SMs * 2
  big.seg.device.max_threads_per_block = 256;
  EXPECT_EQ(p->compute_params(big.seg)[0].i, 256);
}

TEST(PluginCall, SettingsOverrideDefaults) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto v = p->with_settings(p->defaults(),
                            {"block=256", "waves=1.5", "grid=serial", "log_progress=true"});
  EXPECT_EQ(p->format(v), "block=256, waves=1.5, grid=serial, log_progress=true");
  auto d = p->defaults();
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"blok=2"}); }),
            "error: --set: plugin 'test_pointwise' has no parameter 'blok' (its parameters: "
            "block, waves, grid, log_progress)");
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"block=0"}); }),
            "error: --set block=0: expected int in [32, 1024], found '0'");
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"block=12x"}); }),
            "error: --set block=12x: expected int in [32, 1024], found '12x'");
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"grid=bidy"}); }),
            "error: --set grid=bidy: expected one of {bidx, serial}, found 'bidy'");
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"log_progress=yes"}); }),
            "error: --set log_progress=yes: expected bool, found 'yes'");
  EXPECT_EQ(user_error_of([&] { p->with_settings(d, {"block"}); }),
            "error: --set: expected KEY=VALUE, found 'block'");
  EXPECT_EQ(user_error_of([&] {
              p->with_settings(d, {"block=64", "block=32"});
            }),
            "error: --set: block is given twice");
}

TEST(PluginCall, ScheduleMatchesTheSameScheduleWrittenAsAScript) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto s = segment_of("pointwise_add_mul");
  p->schedule(s.seg, p->defaults());
  auto script = load_fusion("pointwise_add_mul");
  frontend::apply_schedule_file(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/pointwise_add_mul.sched", script,
      {{"block", 128}});
  EXPECT_EQ(sched::print_scheduled_fusion(*s.def.fusion),
            sched::print_scheduled_fusion(*script.fusion));
}

TEST(PluginCall, ScheduleValidatesOnTheCpuBackend) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  for (const char* grid : {"grid=bidx", "grid=serial"}) {
    auto s = segment_of("pointwise_add_mul", {{"N", 37}, {"K", 29}});
    p->schedule(s.seg, p->with_settings(p->defaults(), {"block=64", grid}));
    auto plain = load_fusion("pointwise_add_mul");
    auto inputs = ref::make_inputs(*plain.fusion, s.seg.sizes, 7, plain.input_ranges);
    auto want = ref::evaluate(*plain.fusion, inputs, s.seg.sizes);
    auto backend =
        runtime::make_cpu_backend(model::model_device_properties(),
                                  std::string(SCHEDLAB_BINARY_DIR) + "/tests/plugin/kernel_cache");
    auto prepared = runtime::prepare(*s.def.fusion, s.seg.sizes);
    auto compiled = backend->compile(prepared.source);
    auto got = runtime::execute(*backend, *compiled, prepared, inputs, s.seg.sizes);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      auto c = ref::compare(got[i], want[i],
                            ref::Tolerance::error_bound(s.def.fusion->outputs()[i]->dtype()));
      EXPECT_TRUE(c.ok) << grid << ": " << c.first_mismatch;
    }
  }
}

TEST(PluginCall, InvalidScheduleUserErrorReachesTheCallerIntact) {
  // What the primitive says when called directly...
  auto direct = segment_of("pointwise_add_mul");
  std::string expected = user_error_of([&] { direct.def.fusion->outputs()[0]->split(0, 0); });
  EXPECT_THAT(expected, HasSubstr("split: factor must be positive, got 0"));
  // ...is exactly what the caller of the plugin sees.
  auto p = load_plugin(plugin_file("bad_split"));
  auto s = segment_of("pointwise_add_mul");
  EXPECT_EQ(user_error_of([&] { p->schedule(s.seg, p->defaults()); }), expected);
}

TEST(PluginCall, ExceptionsBecomeStatusesWithTheirMessage) {
  auto p = load_plugin(plugin_file("throwing"));
  auto s = segment_of("pointwise_add_mul");
  EXPECT_EQ(user_error_of([&] { p->schedule(s.seg, p->defaults()); }),
            "error: plugin 'throwing' schedule failed with SCHEDLAB_ERR_PLUGIN (-4): boom while "
            "scheduling pointwise_add_mul");
  EXPECT_EQ(user_error_of([&] { p->can_schedule(s.seg, p->defaults()); }),
            "error: plugin 'throwing' can_schedule failed with SCHEDLAB_ERR_PLUGIN (-4): "
            "can_schedule exploded");
  EXPECT_EQ(user_error_of([&] { p->compute_params(s.seg); }),
            "error: plugin 'throwing' compute_params failed with SCHEDLAB_ERR_PLUGIN (-4): unknown "
            "exception");
}

TEST(PluginCall, ErrorStatusFromACPlugin) {
  auto p = load_plugin(plugin_file("c_plugin"));
  auto s = segment_of("pointwise_add_mul");
  EXPECT_EQ(p->format(p->defaults()), "block=128, order=a");
  Verdict v = p->can_schedule(s.seg, p->defaults());
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.reason, "c_plugin never accepts");
  EXPECT_EQ(user_error_of([&] { p->schedule(s.seg, p->defaults()); }),
            "error: plugin 'c_plugin' schedule failed with SCHEDLAB_ERR_PLUGIN (-4): error status "
            "from a C plugin");
}

TEST(PluginCall, ValuesAreCheckedAgainstTheSchema) {
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto s = segment_of("pointwise_add_mul");
  auto v = p->defaults();
  v[0].i = 4096;
  EXPECT_EQ(
      user_error_of([&] { p->schedule(s.seg, v); }),
      "error: plugin 'test_pointwise' schedule: parameter 'block' = 4096 is not int in [32, 1024]");
}

TEST(PluginCall, LogLinesNameThePlugin) {
  std::vector<std::string> lines;
  set_log_sink([&](int level, const std::string& plugin, const std::string& msg) {
    lines.push_back(std::to_string(level) + " " + plugin + ": " + msg);
  });
  auto p = load_plugin(plugin_file("test_pointwise_v1"));
  auto s = segment_of("pointwise_add_mul");
  p->schedule(s.seg, p->with_settings(p->defaults(), {"log_progress=true"}));
  set_log_sink({});
  EXPECT_THAT(
      lines,
      ElementsAre("1 test_pointwise: schedule: start",
                  "1 test_pointwise: schedule: done for schedlab-model-sm90, a model device"));
}

// ---- the C table itself, as a plugin sees it

class HostApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.segment = &s_.seg;
    out_ = reinterpret_cast<SchedlabTensor*>(s_.def.fusion->outputs()[0]);
  }
  Scheduled s_ = segment_of("pointwise_add_mul", {{"N", 6}, {"K", 10}});
  SchedlabSegment ctx_;
  SchedlabTensor* out_ = nullptr;
  const SchedlabHostApi& api_ = *host_api();
};

TEST_F(HostApiTest, TableCarriesItsSizeAndVersion) {
  EXPECT_EQ(api_.struct_size, sizeof(SchedlabHostApi));
  EXPECT_EQ(api_.abi_version, SCHEDLAB_PLUGIN_ABI_VERSION);
  // Every entry is implemented.
  const char* begin = reinterpret_cast<const char*>(&api_.last_error);
  const char* end = reinterpret_cast<const char*>(&api_) + sizeof api_;
  for (const char* p = begin; p < end; p += sizeof(void*)) {
    void* fn = nullptr;
    std::memcpy(&fn, p, sizeof fn);
    EXPECT_NE(fn, nullptr) << "entry at offset " << (p - reinterpret_cast<const char*>(&api_));
  }
}

TEST_F(HostApiTest, BadArgumentsAreStatusesWithMessages) {
  EXPECT_EQ(api_.split(&ctx_, nullptr, 0, 4, 1), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "split: tensor handle is null");
  int foreign = 0;
  EXPECT_EQ(api_.split(&ctx_, reinterpret_cast<SchedlabTensor*>(&foreign), 0, 4, 1),
            SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(api_.last_error(), HasSubstr("is not a tensor of segment 'pointwise_add_mul'"));
  EXPECT_EQ(api_.parallelize(&ctx_, out_, 0, 42), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "parallelize: unknown SchedlabParallelType 42");
  EXPECT_EQ(api_.split(nullptr, out_, 0, 4, 1), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api_.last_error(), "split: segment handle is null");
}

TEST_F(HostApiTest, PrimitiveUserErrorsKeepTheirMessage) {
  EXPECT_EQ(api_.merge(&ctx_, out_, 0, 7), SCHEDLAB_ERR_USER);
  std::string direct = user_error_of([&] { s_.def.fusion->outputs()[0]->merge(0, 7); });
  EXPECT_EQ("error: " + std::string(api_.last_error()), direct);
  EXPECT_EQ(api_.split(&ctx_, out_, 1, 4, 1), SCHEDLAB_OK);
}

TEST_F(HostApiTest, ListsUseTheTwoCallIdiom) {
  int32_t n = -1;
  ASSERT_EQ(api_.segment_tensors(&ctx_, SCHEDLAB_TENSORS_INPUTS, nullptr, 0, &n), SCHEDLAB_OK);
  EXPECT_EQ(n, 3);
  SchedlabTensor* items[2] = {nullptr, nullptr};
  ASSERT_EQ(api_.segment_tensors(&ctx_, SCHEDLAB_TENSORS_INPUTS, items, 2, &n), SCHEDLAB_OK);
  EXPECT_EQ(n, 3);  // the full count, though only two fit
  EXPECT_EQ(items[0], reinterpret_cast<SchedlabTensor*>(s_.def.fusion->inputs()[0]));
  EXPECT_EQ(items[1], reinterpret_cast<SchedlabTensor*>(s_.def.fusion->inputs()[1]));
}

TEST_F(HostApiTest, OutStructsCopyOnlyWhatBothSidesKnow) {
  // An older plugin whose SchedlabTensorInfo ends before op_kind.
  SchedlabTensorInfo info;
  std::memset(&info, 0xAB, sizeof info);
  info.struct_size = offsetof(SchedlabTensorInfo, op_kind);
  ASSERT_EQ(api_.tensor_info(&ctx_, out_, &info), SCHEDLAB_OK);
  EXPECT_EQ(info.struct_size, offsetof(SchedlabTensorInfo, op_kind));
  EXPECT_EQ(info.dtype, SCHEDLAB_DTYPE_F32);
  EXPECT_STREQ(info.name, "out");
  EXPECT_EQ(info.op_kind, static_cast<int32_t>(0xABABABAB));  // not written
  // A newer plugin's bigger struct gets the host's size back.
  struct Bigger {
    SchedlabTensorInfo info;
    int32_t future;
  } big{};
  big.info.struct_size = sizeof big;
  ASSERT_EQ(api_.tensor_info(&ctx_, out_, &big.info), SCHEDLAB_OK);
  EXPECT_EQ(big.info.struct_size, sizeof(SchedlabTensorInfo));
  EXPECT_EQ(big.info.op_kind, SCHEDLAB_OP_BINARY);
  EXPECT_STREQ(big.info.op_name, "sub");  // out = q * 2 - x
  EXPECT_EQ(big.info.is_output, 1);
}

TEST_F(HostApiTest, AxesHaveConcreteExtents) {
  SchedlabAxisInfo a{};
  a.struct_size = sizeof a;
  ASSERT_EQ(api_.merge(&ctx_, out_, 0, 1), SCHEDLAB_OK);
  ASSERT_EQ(api_.split(&ctx_, out_, 0, 8, 1), SCHEDLAB_OK);
  ASSERT_EQ(api_.tensor_axis(&ctx_, out_, SCHEDLAB_DOMAIN_LOOP, 0, &a), SCHEDLAB_OK);
  EXPECT_EQ(a.extent, 8);  // ceilDiv(6 * 10, 8)
  EXPECT_STREQ(a.extent_expr, "ceilDiv((N * K), 8)");
  ASSERT_EQ(api_.tensor_axis(&ctx_, out_, SCHEDLAB_DOMAIN_LOGICAL, -1, &a), SCHEDLAB_OK);
  EXPECT_EQ(a.extent, 10);
  EXPECT_EQ(api_.tensor_axis(&ctx_, out_, SCHEDLAB_DOMAIN_LOOP, 2, &a), SCHEDLAB_ERR_USER);
  EXPECT_THAT(api_.last_error(), HasSubstr("axis 2 is out of range"));
}

TEST_F(HostApiTest, ModelDeviceOnTheCpuBackend) {
  SchedlabDeviceProperties d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(api_.device_properties(&ctx_, &d), SCHEDLAB_OK);
  EXPECT_EQ(d.is_model, 1);
  EXPECT_STREQ(d.name, "schedlab-model-sm90");
  EXPECT_STREQ(d.arch, "sm_90");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.warp_size, 32);
  EXPECT_EQ(d.max_threads_per_block, 1024);
  EXPECT_EQ(d.shared_bytes_per_block, 48u * 1024);
  EXPECT_DOUBLE_EQ(d.peak_bandwidth_bytes_per_s, 3.35e12);
}

TEST_F(HostApiTest, SizesByName) {
  int64_t v = 0;
  ASSERT_EQ(api_.segment_size(&ctx_, "K", &v), SCHEDLAB_OK);
  EXPECT_EQ(v, 10);
  EXPECT_EQ(api_.segment_size(&ctx_, "Q", &v), SCHEDLAB_ERR_USER);
  EXPECT_STREQ(api_.last_error(),
               "segment 'pointwise_add_mul' has no size named 'Q' (its sizes: K, N)");
}

}  // namespace
}  // namespace schedlab::plugin
