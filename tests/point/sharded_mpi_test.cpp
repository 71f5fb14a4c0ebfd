// point::run_sharded (schedlab/point/sharded.h) on the standard sharded
// fusions: as 2 ranks under mpirun (add_mpi_test), and as one rank on the
// self communicator (a plain test: the same binary started by hand). Every
// rank runs every test and asserts on its own result; after each test the
// ranks agree (Communicator::all), so a failure on any rank fails rank 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/base/install_paths.h"
#include "schedlab/model/collective.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/point/sharded.h"
#include "schedlab/runtime/communicator.h"
#include "mpi_gtest_main.h"

namespace schedlab::point {
namespace {

using ::testing::HasSubstr;

runtime::Communicator* g_comm = nullptr;

class Sharded : public ::testing::Test {
 protected:
  runtime::Communicator& comm() { return *g_comm; }
  int rank() { return g_comm->rank(); }
  int ranks() { return g_comm->size(); }
  void TearDown() override {
    EXPECT_TRUE(g_comm->all(!HasFailure())) << "a rank failed this test (rank " << rank() << ")";
  }

  /// The standard fusion `name` at `sizes` on a mesh of every rank, each
  /// local step scheduled by the segmenter over the built-in plugins.
  ShardedResult run(const std::string& name, const ir::SizeBindings& sizes,
                    ShardedOptions options = {}) {
    sweep::BoundFusion bf = sweep::bind_fusion(name, {base::config_dir() + "/fusions"}, sizes);
    plugin::Registry registry(
        plugin::plugin_search_path({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"}));
    const SegmenterRef ref{sweep::segmenter_plugins(registry), nullptr};
    return run_sharded(std::move(bf), ref, ir::DeviceMesh::of_size(ranks()), backend_.get(), comm(),
                       options);
  }

  std::unique_ptr<runtime::Backend> backend_ = sweep::make_backend("cpu");
};

TEST_F(Sharded, SumShardedValidatesOnRankZeroAndEveryRankKnows) {
  const ShardedResult r = run("sum_sharded", {{"N", 3}, {"K", 8}});
  EXPECT_EQ(r.verdict, Verdict::Ok);
  EXPECT_EQ(r.rank, rank());
  // One local step (the partial sums), then an allreduce when there is more
  // than one rank.
  EXPECT_EQ(r.plan.steps.size(), ranks() > 1 ? 2u : 1u);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].point->fusion().sizes.at("K"), 8 / ranks());
  EXPECT_FALSE(r.steps[0].point->result().kernels.empty());
  ASSERT_EQ(r.rank_seconds.size(), static_cast<size_t>(ranks()));
  EXPECT_EQ(r.max_seconds, r.rank_seconds[static_cast<size_t>(r.slowest_rank)]);
  EXPECT_EQ(r.rank_seconds[static_cast<size_t>(rank())], r.seconds);
  if (rank() == 0) {
    ASSERT_TRUE(r.validation.has_value());
    EXPECT_TRUE(r.validation->ok) << r.validation->summary();
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{3}));
  } else {
    EXPECT_FALSE(r.validation.has_value());
    EXPECT_TRUE(r.outputs.empty());
  }
}

TEST_F(Sharded, LayernormRowsGatheredToRankZero) {
  const ShardedResult r = run("layernorm_rowsharded", {{"N", 4}, {"K", 16}});
  EXPECT_EQ(r.verdict, Verdict::Ok);
  if (rank() == 0) {
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{4, 16}));
  }
}

TEST_F(Sharded, SoftmaxSanitizedCleanOnEveryRank) {
  ShardedOptions o;
  o.point.sanitize = true;
  const ShardedResult r = run("softmax_seqsharded", {{"N", 2}, {"K", 8}}, o);
  EXPECT_EQ(r.verdict, Verdict::Ok);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front();
}

TEST_F(Sharded, AWrongLocalKernelFailsOnEveryRank) {
  ShardedOptions o;
  o.fault = ShardedFault{0, ranks() - 1, sweep::parse_mutation("scale:2")};
  const ShardedResult r = run("sum_sharded", {{"N", 3}, {"K", 8}}, o);
  EXPECT_EQ(r.verdict, Verdict::WrongResult);
  if (rank() == 0) {
    EXPECT_FALSE(r.validation->ok);
  }
}

TEST_F(Sharded, AWrongCollectiveFailsThroughTheOtherRanksCopy) {
  if (ranks() == 1) GTEST_SKIP() << "one rank: no collective";
  ShardedOptions o;
  o.fault = ShardedFault{1, ranks() - 1, sweep::parse_mutation("one:0.5")};
  const ShardedResult r = run("sum_sharded", {{"N", 3}, {"K", 8}}, o);
  EXPECT_EQ(r.verdict, Verdict::WrongResult);
  if (rank() == 0) {
    EXPECT_THAT(r.validation->summary(),
                HasSubstr("rank " + std::to_string(ranks() - 1) + "'s copy"));
  }
}

TEST_F(Sharded, ABrokenRuleIsAUserErrorOnEveryRank) {
  if (ranks() == 1) GTEST_SKIP() << "one rank: every extent divides";
  EXPECT_THROW(run("sum_sharded", {{"N", 3}, {"K", 2 * ranks() + 1}}), UserError);
}

TEST_F(Sharded, RepetitionsRunEveryStepAfterTheValidatingRun) {
  // Each local step's Run stage: once validating, then per warmup and timed
  // repetition (Stage::Run events reach the caller's observer).
  int runs = 0;
  ShardedOptions o;
  o.warmup = 1;
  o.repetitions = 3;
  o.point.observer = [&](const Event& e, const Point&) {
    if (e.stage == Stage::Run && e.begin && e.kernel == Event::kWhole) ++runs;
    return true;
  };
  const ShardedResult r = run("softmax_seqsharded", {{"N", 2}, {"K", 8}}, o);
  EXPECT_EQ(r.verdict, Verdict::Ok);
  EXPECT_EQ(runs, static_cast<int>(r.steps.size()) * (1 + 1 + 3));
  ASSERT_EQ(r.times.size(), 3u);
  ASSERT_EQ(r.comm_times.size(), 3u);
  // The point's time: the median of the repetitions' slowest ranks.
  std::vector<double> sorted = r.times;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(r.max_seconds, sorted[1]);
  for (size_t k = 0; k < 3; ++k) EXPECT_LE(r.comm_times[k], r.times[k]);
  ASSERT_EQ(r.rank_seconds.size(), static_cast<size_t>(ranks()));
  EXPECT_EQ(r.slowest_rank, std::max_element(r.rank_seconds.begin(), r.rank_seconds.end()) -
                                r.rank_seconds.begin());
  // Without repetitions the validating run is the one time.
  const ShardedResult once = run("sum_sharded", {{"N", 3}, {"K", 8}});
  EXPECT_EQ(once.times, std::vector<double>{once.max_seconds});
  EXPECT_TRUE(once.comm_times.empty());
}

TEST_F(Sharded, ConfigBytesAndPredictionOfEveryStep) {
  const model::DeviceModel h200 = model::load_device("h200", {base::config_dir() + "/devices"});
  ShardedOptions o;
  o.profile_device = &h200;
  const ShardedResult r = run("sum_sharded", {{"N", 3}, {"K", 8}}, o);
  EXPECT_EQ(r.verdict, Verdict::Ok);
  // One rank's kernels: its chunk of x (3 x 8 / ranks f32) and y (3 f32).
  EXPECT_EQ(r.bytes_moved, (3 * 8 / ranks() + 3) * 4);
  // One kernel (the partial sums): its plugin's parameters, unprefixed.
  ASSERT_FALSE(r.config.empty());
  for (const auto& [k, v] : r.config) EXPECT_EQ(k.find('.'), std::string::npos) << k;
  const ShardedResult soft = run("softmax_seqsharded", {{"N", 2}, {"K", 8}}, o);
  ASSERT_FALSE(soft.config.empty());
  if (ranks() > 1) {
    // Three kernels (plan steps 0, 2 and 4): each key names its step.
    EXPECT_EQ(soft.config.front().first.substr(0, 3), "s0.");
    EXPECT_EQ(soft.config.back().first.substr(0, 3), "s4.");
  }
  if (rank() != 0) {
    EXPECT_FALSE(r.prediction.has_value());
    return;
  }
  ASSERT_TRUE(r.prediction.has_value());
  const double comm_us = model::communication_us(h200, r.plan);
  EXPECT_EQ(comm_us > 0, ranks() > 1);
  EXPECT_EQ(r.prediction->device, "h200");
  EXPECT_GT(r.prediction->predicted_us, comm_us);
  EXPECT_THAT(r.prediction->profile, HasSubstr("sum_sharded_l0"));
  ASSERT_TRUE(soft.prediction.has_value());
  EXPECT_GT(soft.prediction->predicted_us, model::communication_us(h200, soft.plan));
}

TEST(ShardedPrediction, SumsTheStepsAndTheCommunications) {
  const model::DeviceModel h200 = model::load_device("h200", {base::config_dir() + "/devices"});
  // No kernels: the communications alone, the interconnect the limiter.
  const report::Prediction p = sharded_prediction({}, 5, 1000, h200);
  EXPECT_EQ(p.predicted_us, 5);
  EXPECT_EQ(p.limiter, "interconnect");
  EXPECT_EQ(p.device, "h200");
  EXPECT_DOUBLE_EQ(p.bandwidth_fraction, 1000 / 5e-6 / (h200.dram_bandwidth_gbs * 1e9));
}

TEST_F(Sharded, EveryRanksLinesMeetInRankOrder) {
  // Rank r says r + 1 lines: one empty, then lines with bytes past ASCII;
  // rank r's differ in length, so each is padded differently.
  std::vector<std::string> mine;
  for (int i = 0; i <= rank(); ++i)
    mine.push_back(i == 0 ? ""
                          : "rank " + std::to_string(rank()) + " line " + std::to_string(i) +
                                " \xc3\xa9");
  const std::vector<std::vector<std::string>> all = all_lines(comm(), mine);
  ASSERT_EQ(all.size(), static_cast<size_t>(ranks()));
  for (int r = 0; r < ranks(); ++r) {
    ASSERT_EQ(all[static_cast<size_t>(r)].size(), static_cast<size_t>(r) + 1) << "rank " << r;
    for (int i = 0; i <= r; ++i)
      EXPECT_EQ(
          all[static_cast<size_t>(r)][static_cast<size_t>(i)],
          i == 0 ? "" : "rank " + std::to_string(r) + " line " + std::to_string(i) + " \xc3\xa9");
  }
}

}  // namespace
}  // namespace schedlab::point

int main(int argc, char** argv) {
  // Under a launcher: the MPI ranks; started by hand: one rank, no MPI.
  return schedlab::test::run_tests_on_ranks(
      argc, argv,
      schedlab::runtime::launcher_world_size() ? schedlab::runtime::make_mpi_communicator()
                                               : schedlab::runtime::make_self_communicator(),
      schedlab::point::g_comm);
}
