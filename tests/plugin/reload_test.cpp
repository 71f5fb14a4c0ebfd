// Hot reload (docs/plugins.md, "Hot reload"): swapping versions, keeping the last good
// one when the new file is broken or half-written, callers mid-call keeping
// the old instance, many reloads without growth, and the watcher (inotify
// and polling). Nothing here sleeps: every wait is on the event itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <latch>
#include <mutex>
#include <thread>

#include "plugin_test_util.h"
#include "schedlab/plugin/registry.h"

namespace schedlab::plugin {
namespace {

using ::testing::HasSubstr;
using testing::load_fusion;
using testing::plugin_file;
using testing::read_file;
using testing::write_file;

/// A registry serving test_pointwise from a file in a temp dir, v1 at first.
class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(path_, v1_);
    registry_.add(path_);
  }
  std::string version() const { return registry_.find("test_pointwise")->version(); }
  /// Schedules pointwise_add_mul with `p`; false if it threw.
  static bool schedules(const Plugin& p, const std::vector<std::string>& settings = {}) {
    auto def = load_fusion("pointwise_add_mul");
    HostSegment seg;
    seg.fusion = def.fusion.get();
    seg.sizes = frontend::bind_sizes(def, {});
    p.schedule(seg, p.with_settings(p.defaults(), settings));
    return def.fusion->outputs()[0]->nloop() == 2;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("test_pointwise.so");
  std::string v1_ = read_file(plugin_file("test_pointwise_v1"));
  std::string v2_ = read_file(plugin_file("test_pointwise_v2"));
  Registry registry_;
};

TEST_F(ReloadTest, SwapsInTheNewVersionAndTheOldOneStaysUsable) {
  std::shared_ptr<const Plugin> old = registry_.find("test_pointwise");
  write_file(path_, v2_);
  ReloadResult r = registry_.reload("test_pointwise");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.generation, 2u);
  EXPECT_EQ(version(), "2.0");
  EXPECT_EQ(old->version(), "1.0");
  EXPECT_TRUE(schedules(*old));
  EXPECT_TRUE(schedules(*registry_.find("test_pointwise")));
  EXPECT_NE(old->loaded_path(), r.plugin->loaded_path());
}

TEST_F(ReloadTest, TruncatedFileKeepsTheLastGoodVersion) {
  write_file(path_, v2_.substr(0, v2_.size() / 2));
  ReloadResult r = registry_.reload("test_pointwise");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("is incomplete"));
  EXPECT_THAT(r.message, HasSubstr("is it still being written?"));
  EXPECT_EQ(r.generation, 1u);
  EXPECT_EQ(version(), "1.0");
  EXPECT_TRUE(schedules(*registry_.find("test_pointwise")));
  // Just truncated, before the first byte: the same condition, the same words.
  write_file(path_, "");
  r = registry_.reload("test_pointwise");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("is incomplete: 0 bytes, shorter than the 64-byte ELF header; "
                                   "is it still being written?"));
  write_file(path_, v2_.substr(0, 4));
  EXPECT_THAT(registry_.reload("test_pointwise").message,
              HasSubstr("is incomplete: 4 bytes, shorter than the 64-byte ELF header"));
  EXPECT_EQ(version(), "1.0");
  // Once the writer finishes, the next attempt succeeds.
  write_file(path_, v2_);
  EXPECT_TRUE(registry_.reload("test_pointwise").ok);
  EXPECT_EQ(version(), "2.0");
}

TEST_F(ReloadTest, BrokenOrForeignReplacementsKeepTheLastGoodVersion) {
  write_file(path_, read_file(plugin_file("wrong_major")));
  ReloadResult r = registry_.reload("test_pointwise");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message,
              HasSubstr("was built against plugin ABI 2.0, but this host speaks ABI 1.10"));
  write_file(path_, read_file(plugin_file("c_plugin")));
  r = registry_.reload("test_pointwise");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("now names itself 'c_plugin', not 'test_pointwise'"));
  write_file(path_, "");
  EXPECT_FALSE(registry_.reload("test_pointwise").ok);
  EXPECT_EQ(version(), "1.0");
  EXPECT_EQ(registry_.generation("test_pointwise"), 1u);
}

TEST_F(ReloadTest, ACallerMidCallKeepsTheOldInstanceUntilItReleasesIt) {
  std::latch entered(1), release(1);
  set_log_sink([&](int, const std::string&, const std::string& msg) {
    if (msg == "schedule: start") {
      entered.count_down();
      release.wait();
    }
  });
  std::string old_file = registry_.find("test_pointwise")->loaded_path();
  bool ok = false;
  std::thread caller([&] {
    std::shared_ptr<const Plugin> p = registry_.find("test_pointwise");
    ok = schedules(*p, {"log_progress=true"});
  });
  entered.wait();  // the caller is inside v1's schedule now
  write_file(path_, v2_);
  ReloadResult r = registry_.reload("test_pointwise");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(version(), "2.0");
  EXPECT_GT(testing::mapped_count(old_file), 0);  // still mapped: the caller holds it
  release.count_down();
  caller.join();
  set_log_sink({});
  EXPECT_TRUE(ok);
  // Released by the caller, but the registry keeps it as the rollback
  // target until the next reload replaces that.
  EXPECT_GT(testing::mapped_count(old_file), 0);
  write_file(path_, v1_);
  ASSERT_TRUE(registry_.reload("test_pointwise").ok);
  EXPECT_EQ(testing::mapped_count(old_file), 0);  // released, so unloaded
}

TEST_F(ReloadTest, RollbackRestoresTheVersionTheLastReloadReplaced) {
  write_file(path_, v2_);
  ASSERT_TRUE(registry_.reload("test_pointwise").ok);
  EXPECT_EQ(version(), "2.0");
  ReloadResult r = registry_.rollback("test_pointwise");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.generation, 1u);
  EXPECT_EQ(r.rolled_back_from, 2u);
  EXPECT_EQ(r.plugin->version(), "1.0");
  EXPECT_EQ(version(), "1.0");
  EXPECT_EQ(registry_.generation("test_pointwise"), 1u);
  EXPECT_TRUE(schedules(*registry_.find("test_pointwise")));
  // One step back only: nothing is left to roll back to.
  r = registry_.rollback("test_pointwise");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message,
            "no earlier version of 'test_pointwise' is loaded to roll back to (generation 1 "
            "serves)");
  EXPECT_EQ(version(), "1.0");
  EXPECT_FALSE(registry_.rollback("nope").ok);
  // The next reload takes a new generation number, never the abandoned one's.
  write_file(path_, v2_);
  r = registry_.reload("test_pointwise");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.generation, 3u);
  EXPECT_EQ(version(), "2.0");
}

TEST_F(ReloadTest, ManyReloadsDoNotGrow) {
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i) {
      write_file(path_, i % 2 ? v1_ : v2_);
      ReloadResult r = registry_.reload("test_pointwise");
      ASSERT_TRUE(r.ok) << r.message;
    }
  };
  cycle(20);  // warm up allocator pools and the loader's caches
  long before = testing::rss_bytes();
  cycle(1000);
  // The version serving now becomes the rollback target of one more reload.
  const std::string replaced = registry_.find("test_pointwise")->loaded_path();
  cycle(1);
  long growth = testing::rss_bytes() - before;
  // Each version unloads once a second reload replaces it: two plugin
  // mappings in the shadow dir, the serving one and the rollback target.
  std::string current = registry_.find("test_pointwise")->loaded_path();
  std::string shadow_dir = std::filesystem::path(current).parent_path();
  EXPECT_EQ(testing::mapped_count(shadow_dir),
            testing::mapped_count(current) + testing::mapped_count(replaced));
  EXPECT_GT(testing::mapped_count(replaced), 0);
#ifdef __SANITIZE_ADDRESS__
  // Under ASan freed memory sits in quarantine, so RSS says nothing there;
  // the mapping check above and LeakSanitizer at exit cover that build.
  (void)growth;
#else
  EXPECT_LT(growth, 4l << 20) << "RSS grew by " << growth << " bytes from " << before;
#endif
  EXPECT_EQ(registry_.generation("test_pointwise"), 1022u);
}

/// Collects watcher reports and lets a test wait for the one it expects.
class Reports {
 public:
  Watcher::Callback callback() {
    return [this](const ReloadResult& r) {
      std::lock_guard<std::mutex> lock(mu_);
      results_.push_back(r);
      cv_.notify_all();
    };
  }
  /// Waits for the next report that `expected` accepts and returns it. The
  /// reports before it may only be about a file still being written ("is
  /// incomplete"): a watcher may catch a writer that stalls between its
  /// truncate and its write, and says so. A failsafe timeout
  /// turns a lost event into a test failure rather than a hang.
  ReloadResult next(const std::function<bool(const ReloadResult&)>& expected) {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      bool got =
          cv_.wait_for(lock, std::chrono::seconds(30), [&] { return results_.size() > consumed_; });
      EXPECT_TRUE(got) << "no reload report after #" << consumed_;
      if (!got) return ReloadResult{};
      ReloadResult r = results_[consumed_++];
      if (expected(r)) return r;
      EXPECT_THAT(r.message, HasSubstr("is incomplete")) << "report #" << consumed_;
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ReloadResult> results_;
  size_t consumed_ = 0;
};

bool reloaded(const ReloadResult& r) {
  return r.ok;
}
bool refused(const ReloadResult& r) {
  return !r.ok;
}

void watch_and_swap(Registry& registry, const std::string& path, const std::string& v1,
                    const std::string& v2, Watcher::Mode mode) {
  Reports reports;
  Watcher w(registry, reports.callback(), mode, std::chrono::milliseconds(20));
  EXPECT_EQ(w.mode(), mode);
  write_file(path, v2);
  ReloadResult r = reports.next(reloaded);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(registry.find("test_pointwise")->version(), "2.0");
  // A half-written file whose writer stopped: reported, and the last good
  // version keeps serving.
  write_file(path, v1.substr(0, v1.size() / 3));
  r = reports.next(refused);
  EXPECT_THAT(r.message, HasSubstr("is incomplete"));
  EXPECT_THAT(r.message, HasSubstr("is it still being written?"));
  EXPECT_EQ(registry.find("test_pointwise")->version(), "2.0");
  // Stopped right after its truncate: the same condition, the same words.
  write_file(path, "");
  r = reports.next([](const ReloadResult& x) {
    return !x.ok && x.message.find("is incomplete: 0 bytes") != std::string::npos;
  });
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(registry.find("test_pointwise")->version(), "2.0");
  write_file(path, v1);
  r = reports.next(reloaded);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(registry.find("test_pointwise")->version(), "1.0");
}

TEST_F(ReloadTest, InotifyWatcherReloadsOnWrite) {
  watch_and_swap(registry_, path_, v1_, v2_, Watcher::Mode::Inotify);
}

TEST_F(ReloadTest, PollingWatcherReloadsOnWrite) {
  watch_and_swap(registry_, path_, v1_, v2_, Watcher::Mode::Poll);
}

}  // namespace
}  // namespace schedlab::plugin
