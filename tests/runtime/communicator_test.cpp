// The one-rank communicator and the launcher (no MPI: this test is one plain
// process; tests/runtime/communicator_mpi_test.cpp runs the MPI one as ranks).
#include "schedlab/runtime/communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "schedlab/base/error.h"

namespace schedlab::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ref::HostTensor tensor() {
  return {ir::DataType::F16, {2, 3}, {1, 2, 3, 4, 5, 6}, {0, 0.5, 0, 0, 0, 0}};
}

TEST(SelfCommunicator, CollectivesOverOneRankAreIdentities) {
  auto comm = make_self_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->name(), "self");
  ref::HostTensor t = tensor();
  comm->allreduce(t, ir::ReductionOpType::Sum);
  EXPECT_EQ(t.data, tensor().data);
  for (int axis : {0, 1}) {
    EXPECT_EQ(comm->allgather(t, axis).data, t.data);
    EXPECT_EQ(comm->gather_to_root(t, axis).error, t.error);
    EXPECT_EQ(comm->reduce_scatter(t, axis, ir::ReductionOpType::Max).shape, t.shape);
  }
  EXPECT_EQ(comm->max_over_ranks(2.5), 2.5);
  EXPECT_TRUE(comm->all(true));
  EXPECT_FALSE(comm->all(false));
  EXPECT_THROW(comm->allgather(t, 2), InternalError);
}

TEST(Launcher, MpirunOversubscribedOnSharedMemory) {
  const std::vector<std::string> argv = {"schedlab", "exec", "sum_sharded", "--mesh", "4"};
  LaunchEnvironment env{/*root=*/false, /*in_slurm_job=*/false, "/usr/bin/mpirun"};
  EXPECT_THAT(launcher_command(4, argv, env),
              ElementsAre("/usr/bin/mpirun", "-n", "4", "--oversubscribe", "--mca", "btl",
                          "self,vader", "schedlab", "exec", "sum_sharded", "--mesh", "4"));
  env.root = true;
  EXPECT_THAT(launcher_command(2, {"prog"}, env),
              ElementsAre("/usr/bin/mpirun", "-n", "2", "--oversubscribe", "--allow-run-as-root",
                          "--mca", "btl", "self,vader", "prog"));
}

TEST(Launcher, SrunInsideASlurmJob) {
  const LaunchEnvironment env{/*root=*/true, /*in_slurm_job=*/true, "/usr/bin/mpirun"};
  EXPECT_THAT(launcher_command(3, {"prog", "a"}, env), ElementsAre("srun", "--mpi=pmix", "-n", "3", "prog", "a"));
}

TEST(Launcher, TheConfiguredMpirun) {
  // CMake's MPIEXEC_EXECUTABLE, present on a machine that built schedlab.
  const LaunchEnvironment env = launch_environment();
  EXPECT_THAT(env.mpirun, ::testing::StartsWith("/"));
  EXPECT_THAT(env.mpirun, ::testing::AnyOf(HasSubstr("mpirun"), HasSubstr("mpiexec")));
}

/// Sets the environment variables of `set` and unsets those of `unset`,
/// restoring the previous values when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> set, std::vector<std::string> unset) {
    for (auto& [k, v] : set) save(k), ::setenv(k.c_str(), v.c_str(), 1);
    for (auto& k : unset) save(k), ::unsetenv(k.c_str());
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_) {
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }

 private:
  void save(const std::string& k) {
    const char* v = std::getenv(k.c_str());
    saved_.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

const std::vector<std::string> kLauncherVars = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                                "SLURM_PROCID",         "SLURM_STEP_ID",
                                                "SLURM_NTASKS",         "SLURM_STEP_NUM_TASKS"};

TEST(Launcher, WorldSizeFromTheLaunchersEnvironment) {
  {
    ScopedEnv e({}, kLauncherVars);
    EXPECT_EQ(launcher_world_size(), std::nullopt);
  }
  {
    ScopedEnv e({{"OMPI_COMM_WORLD_SIZE", "3"}}, {});
    EXPECT_EQ(launcher_world_size(), 3);
  }
  {
    ScopedEnv e({{"PMI_SIZE", "5"}}, {"OMPI_COMM_WORLD_SIZE"});
    EXPECT_EQ(launcher_world_size(), 5);
  }
  {
    // A batch script: SLURM_PROCID and SLURM_NTASKS, but no job step.
    ScopedEnv e({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}},
                {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_ID", "SLURM_STEP_NUM_TASKS"});
    EXPECT_EQ(launcher_world_size(), std::nullopt);
  }
  {
    ScopedEnv e({{"SLURM_PROCID", "1"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "2"}},
                {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"});
    EXPECT_EQ(launcher_world_size(), 2);
  }
  {
    ScopedEnv e({{"OMPI_COMM_WORLD_SIZE", "zero"}}, {"PMI_SIZE", "SLURM_PROCID"});
    EXPECT_EQ(launcher_world_size(), std::nullopt);
  }
}

// The command launcher_command gives really starts the ranks here (as root
// or not), each seeing the world size.
TEST(Launcher, TheCommandStartsTheRanks) {
  LaunchEnvironment env = launch_environment();
  if (env.in_slurm_job) GTEST_SKIP() << "inside a Slurm job: srun would start the ranks";
  std::string line;
  for (const std::string& w : launcher_command(
           2, {"sh", "-c", "echo rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE"}, env))
    line += "'" + w + "' ";
  FILE* p = ::popen((line + "2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(::pclose(p), 0) << line << "\n" << out;
  EXPECT_THAT(out, HasSubstr("rank 0 of 2"));
  EXPECT_THAT(out, HasSubstr("rank 1 of 2"));
}

}  // namespace
}  // namespace schedlab::runtime
