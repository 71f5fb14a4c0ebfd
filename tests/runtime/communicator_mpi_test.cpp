// The MPI communicator, run as 2 and 4 ranks (tests/runtime/mpi.cmake,
// add_mpi_test). Every rank runs every test and asserts on its own result;
// after each test the ranks agree (Communicator::all) so that a failure on
// any rank fails the test on rank 0, which reports, and the exit status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/runtime/communicator.h"
#include "mpi_gtest_main.h"

namespace schedlab::runtime {
namespace {

using ir::DataType;
using ir::ReductionOpType;
using ::testing::HasSubstr;

Communicator* g_comm = nullptr;

class Mpi : public ::testing::Test {
 protected:
  Communicator& comm() { return *g_comm; }
  int rank() { return g_comm->rank(); }
  int size() { return g_comm->size(); }
  void TearDown() override {
    EXPECT_TRUE(g_comm->all(!HasFailure())) << "a rank failed this test (rank " << rank() << ")";
  }
};

/// Half a unit in the last place of 1 in `dtype`: 1 + h rounds to 1 (a tie,
/// to even), 1 + 2h does not.
double half_ulp_of_one(DataType dtype) {
  switch (dtype) {
    case DataType::F16:
      return std::ldexp(1.0, -11);
    case DataType::BF16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

/// Rank r's tensor in the reduction tests: values `dtype` stores exactly.
/// Element 0 is 1 on rank 0 and half an ulp of 1 elsewhere, so that its sum
/// over 3 or more ranks rounded once exceeds 1 while a sum rounded after
/// every rank stays 1.
ref::HostTensor rank_tensor(int r, DataType dtype) {
  ref::HostTensor t{dtype, {3, 5}, {}};
  t.data.push_back(r == 0 ? 1.0 : half_ulp_of_one(dtype));
  for (int i = 1; i < 15; ++i)
    t.data.push_back(
        ir::round_to_dtype((i % 2 ? -1 : 1) * (1.0 + (i + 1) * 0.0371 * (r + 1)), dtype));
  return t;
}

ref::HostTensor iota(std::vector<int64_t> shape, double scale = 1) {
  ref::HostTensor t{DataType::F32, std::move(shape), {}};
  t.data.resize(t.numel());
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = scale * static_cast<double>(i);
  return t;
}

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST_F(Mpi, WorldIsTheLaunchersWorld) {
  EXPECT_EQ(comm().name(), "mpi");
  EXPECT_EQ(launcher_world_size(), size());
  EXPECT_GE(size(), 2);
  EXPECT_LT(rank(), size());
}

TEST_F(Mpi, AllreduceCombinesInRankOrderAndRoundsOnceIdenticallyOnEveryRank) {
  for (DataType dtype : {DataType::F32, DataType::F16, DataType::BF16}) {
    for (ReductionOpType op : {ReductionOpType::Sum, ReductionOpType::Max, ReductionOpType::Min,
                               ReductionOpType::Prod}) {
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)) + " " +
                   std::string(ir::reduction_op_name(op)));
      ref::HostTensor t = rank_tensor(rank(), dtype);
      comm().allreduce(t, op);
      ref::HostTensor want = rank_tensor(0, dtype);
      for (int r = 1; r < size(); ++r) {
        const ref::HostTensor x = rank_tensor(r, dtype);
        for (size_t i = 0; i < want.data.size(); ++i)
          want.data[i] = ir::apply_reduction(op, want.data[i], x.data[i]);
      }
      for (double& v : want.data) v = ir::round_to_dtype(v, dtype);
      EXPECT_EQ(t.shape, want.shape);
      EXPECT_EQ(t.data, want.data);
      EXPECT_TRUE(t.error.empty());
      // The same bits on every rank: rank 0's result against everyone's.
      const ref::HostTensor all = comm().allgather(t, 0);
      for (size_t i = 0; i < all.data.size(); ++i)
        EXPECT_EQ(bits(all.data[i]), bits(t.data[i % t.data.size()])) << "element " << i;
      if (op == ReductionOpType::Sum && size() >= 3) {
        EXPECT_GT(t.data[0], 1.0) << "the sum was rounded after every rank, not once";
      }
    }
  }
}

TEST_F(Mpi, AllreduceAddsTheErrorBoundsOfASum) {
  ref::HostTensor t{DataType::F32, {2}, {1.0, 2.0}, {}};
  if (rank() % 2 == 0) t.error = {0.25, 0.5};
  comm().allreduce(t, ReductionOpType::Sum);
  const int with_error = (size() + 1) / 2;
  EXPECT_EQ(t.data, (std::vector<double>{1.0 * size(), 2.0 * size()}));
  EXPECT_EQ(t.error, (std::vector<double>{0.25 * with_error, 0.5 * with_error}));
}

TEST_F(Mpi, AllgatherAndGatherToRootOnEveryAxisOf3D) {
  ref::HostTensor whole = iota({12, 12, 24}, 0.5);
  whole.error.assign(whole.data.begin(), whole.data.end());
  for (int axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const ref::HostTensor piece = ref::slice_axis(whole, axis, rank(), size());
    const ref::HostTensor all = comm().allgather(piece, axis);
    EXPECT_EQ(all.shape, whole.shape);
    EXPECT_EQ(all.data, whole.data);
    EXPECT_EQ(all.error, whole.error);
    const ref::HostTensor root = comm().gather_to_root(piece, axis);
    if (rank() == 0) {
      EXPECT_EQ(root.shape, whole.shape);
      EXPECT_EQ(root.data, whole.data);
      EXPECT_EQ(root.error, whole.error);
    } else {
      EXPECT_TRUE(root.shape.empty() && root.data.empty());
    }
  }
}

TEST_F(Mpi, ReduceScatterGivesEachRankItsChunkOfTheSum) {
  for (int axis : {0, 1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const ref::HostTensor t = iota({12, 12}, rank() + 1);
    const ref::HostTensor mine = comm().reduce_scatter(t, axis, ReductionOpType::Sum);
    const double factor = size() * (size() + 1) / 2.0;  // 1 + 2 + ... + size()
    const ref::HostTensor want = ref::slice_axis(iota({12, 12}, factor), axis, rank(), size());
    EXPECT_EQ(mine.shape, want.shape);
    EXPECT_EQ(mine.data, want.data);
  }
  ref::HostTensor m = iota({size(), 3}, rank() == size() - 1 ? -1.0 : 1.0);
  const ref::HostTensor mx = comm().reduce_scatter(m, 0, ReductionOpType::Min);
  EXPECT_EQ(mx.data, ref::slice_axis(iota({size(), 3}, -1.0), 0, rank(), size()).data);
}

TEST_F(Mpi, MaxOverRanksAndAll) {
  EXPECT_EQ(comm().max_over_ranks(1.5 * rank()), 1.5 * (size() - 1));
  EXPECT_TRUE(comm().all(true));
  EXPECT_FALSE(comm().all(rank() != 1));
}

TEST_F(Mpi, ShapeMismatchIsAnInternalErrorNamingTheRanksOnEveryRank) {
  ref::HostTensor t = iota({2, rank() == 1 ? 4 : 3});
  try {
    comm().allreduce(t, ReductionOpType::Sum);
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("allreduce: rank 1 has f32 [2, 4], rank 0 has f32 [2, 3]"));
  }
  // A gather may differ on its axis, not elsewhere; nor in the dtype.
  const ref::HostTensor g = iota({rank() + 1, 2});
  EXPECT_EQ(comm().allgather(g, 0).shape, (std::vector<int64_t>{size() * (size() + 1) / 2, 2}));
  try {
    comm().gather_to_root(g, 1);
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gather_to_root along axis 1: rank 1 has f32 [2, 2], rank 0 "
                                    "has f32 [1, 2]"));
  }
  ref::HostTensor d = iota({2});
  if (rank() == size() - 1) d.dtype = DataType::F16;
  EXPECT_THROW(comm().reduce_scatter(d, 0, ReductionOpType::Sum), InternalError);
  // Not a hang: every rank threw at the same collective, the next one works.
  EXPECT_EQ(comm().max_over_ranks(rank()), size() - 1);
}

}  // namespace
}  // namespace schedlab::runtime

int main(int argc, char** argv) {
  return schedlab::test::run_tests_on_ranks(argc, argv, schedlab::runtime::make_mpi_communicator(), schedlab::runtime::g_comm);
}
