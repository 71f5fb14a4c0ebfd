// The NCCL communicator end to end without a GPU: the fake libcuda.so.1
// (found through this executable's rpath) gives the device buffers, the fake
// libnccl ($SCHEDLAB_NCCL_LIBRARY, set by tests/runtime/nccl.cmake) runs the
// collectives with MPI underneath. Run as 2 ranks (add_mpi_test). Each NCCL
// result is compared with the MPI communicator's, and the fake's record says
// that the call went through NCCL, in which type and with which operator.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "fake_libnccl.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/runtime/cuda_backend.h"
#include "test_support.h"
#include "mpi_gtest_main.h"

namespace schedlab::runtime {
namespace {

using ir::DataType;
using ir::ReductionOpType;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Communicator* g_mpi = nullptr;

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("SCHEDLAB_NCCL_LIBRARY");
    ASSERT_NE(path, nullptr) << "SCHEDLAB_NCCL_LIBRARY names the fake libnccl";
    library_ = path;
    std::string why;
    comm_ = make_nccl_communicator({}, &why);
    ASSERT_NE(comm_, nullptr) << why;
    void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    auto* get =
        lib ? reinterpret_cast<FakeNcclState* (*)()>(dlsym(lib, "fake_nccl_state")) : nullptr;
    ASSERT_NE(get, nullptr) << path << " is not the fake libnccl";
    fake_ = get();
  }
  void TearDown() override {
    comm_.reset();
    EXPECT_TRUE(g_mpi->all(!HasFailure())) << "a rank failed this test (rank " << rank() << ")";
  }
  Communicator& nccl() { return *comm_; }
  Communicator& mpi() { return *g_mpi; }
  int rank() const { return g_mpi->rank(); }
  int size() const { return g_mpi->size(); }

  std::string library_;
  std::unique_ptr<Communicator> comm_;
  FakeNcclState* fake_ = nullptr;
};

/// Rank r's values of `dtype`, exactly representable, of both signs.
ref::HostTensor rank_tensor(int r, DataType dtype, std::vector<int64_t> shape = {3, 4, 2}) {
  ref::HostTensor t{dtype, std::move(shape), {}};
  t.data.resize(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < t.data.size(); ++i) {
    const double v = (i % 3 == 0 ? -1 : 1) * (1.0 + 0.0371 * static_cast<double>(i) * (r + 1));
    t.data[i] = ir::is_integral(dtype) ? std::round(v * 10) : ir::round_to_dtype(v, dtype);
  }
  return t;
}

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

void expect_same_bits(const ref::HostTensor& got, const ref::HostTensor& want) {
  EXPECT_EQ(got.dtype, want.dtype);
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i)
    EXPECT_EQ(bits(got.data[i]), bits(want.data[i]))
        << "element " << i << ": " << got.data[i] << " vs " << want.data[i];
}

TEST_F(Nccl, InitBroadcastsRankZerosUniqueId) {
  EXPECT_EQ(nccl().name(), "nccl");
  EXPECT_EQ(nccl().rank(), rank());
  EXPECT_EQ(nccl().size(), size());
  EXPECT_EQ(launcher_world_size(), size());
  // Only rank 0 asks for an id; every rank's ncclCommInitRank got rank 0's
  // (the fake compares them all and fails otherwise), all 128 bytes of it.
  EXPECT_EQ(fake_->unique_ids, rank() == 0 ? fake_->inits : 0);
  EXPECT_THAT(std::string(fake_->last_id), StartsWith("fake-nccl-id pid "));
  ref::HostTensor id{DataType::F64, {1, 128}, std::vector<double>(128)};
  for (size_t i = 0; i < 128; ++i) id.data[i] = static_cast<unsigned char>(fake_->last_id[i]);
  const ref::HostTensor all = mpi().allgather(id, 0);
  for (int r = 1; r < size(); ++r)
    for (size_t i = 0; i < 128; ++i) EXPECT_EQ(all.data[r * 128 + i], all.data[i]) << r << " " << i;
  const int destroys = fake_->destroys;
  comm_.reset();
  EXPECT_EQ(fake_->destroys, destroys + 1);
}

TEST_F(Nccl, AllreduceIsMpisInEveryTypeAndOperator) {
  // nccl.h's values: ncclInt32 2, ncclFloat32 7, ncclFloat64 8; halves
  // travel as f32. ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3.
  const std::vector<std::pair<DataType, int>> types = {{DataType::F32, 7},  {DataType::F16, 7},
                                                       {DataType::BF16, 7}, {DataType::F64, 8},
                                                       {DataType::I32, 2},  {DataType::I64, 4}};
  const std::vector<std::pair<ReductionOpType, int>> ops = {{ReductionOpType::Sum, 0},
                                                            {ReductionOpType::Prod, 1},
                                                            {ReductionOpType::Max, 2},
                                                            {ReductionOpType::Min, 3}};
  for (const auto& [dtype, wire] : types) {
    for (const auto& [op, nccl_op] : ops) {
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)) + " op " + std::to_string(nccl_op));
      ref::HostTensor got = rank_tensor(rank(), dtype), want = got;
      const int before = fake_->allreduces;
      nccl().allreduce(got, op);
      mpi().allreduce(want, op);
      EXPECT_EQ(fake_->allreduces, before + 1);
      EXPECT_EQ(fake_->last_dtype, wire);
      EXPECT_EQ(fake_->last_op, nccl_op);
      EXPECT_EQ(fake_->last_count, 24u);
      // Two ranks: one rounding either way, so the same bits.
      if (size() == 2) expect_same_bits(got, want);
      EXPECT_TRUE(got.error.empty());
    }
  }
}

TEST_F(Nccl, AllgatherOnEveryAxisIsMpis) {
  for (int axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const ref::HostTensor piece = rank_tensor(rank(), DataType::BF16);
    const int before = fake_->allgathers;
    const ref::HostTensor got = nccl().allgather(piece, axis);
    EXPECT_EQ(fake_->allgathers, before + 1);
    EXPECT_EQ(fake_->last_dtype, 7);
    EXPECT_EQ(fake_->last_count, 24u);
    expect_same_bits(got, mpi().allgather(piece, axis));
  }
}

TEST_F(Nccl, UnequalPiecesAndErrorBoundsGoThroughMpi) {
  // Rank r's piece has r + 1 rows: NCCL gathers equal counts only.
  const ref::HostTensor piece = rank_tensor(rank(), DataType::F32, {rank() + 1, 3});
  const int before = fake_->allgathers;
  expect_same_bits(nccl().allgather(piece, 0), mpi().allgather(piece, 0));
  EXPECT_EQ(fake_->allgathers, before);

  // Error bounds are MPI's bookkeeping (one rank with them is enough).
  ref::HostTensor t = rank_tensor(rank(), DataType::F32, {4});
  if (rank() == 1) t.error.assign(4, 0.5);
  ref::HostTensor want = t;
  const int reduces = fake_->allreduces;
  nccl().allreduce(t, ReductionOpType::Sum);
  mpi().allreduce(want, ReductionOpType::Sum);
  EXPECT_EQ(fake_->allreduces, reduces);
  expect_same_bits(t, want);
  ASSERT_EQ(t.error.size(), 4u);
  EXPECT_EQ(t.error, want.error);

  // Bool has no NCCL type.
  ref::HostTensor b{DataType::Bool, {2}, {1.0, rank() == 0 ? 1.0 : 0.0}};
  nccl().allreduce(b, ReductionOpType::Min);
  EXPECT_EQ(fake_->allreduces, reduces);
  EXPECT_EQ(b.data, (std::vector<double>{1.0, 0.0}));
}

TEST_F(Nccl, ReduceScatterOnEveryAxisIsMpis) {
  for (int axis = 0; axis < 2; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const ref::HostTensor t = rank_tensor(rank(), DataType::F16, {4, 6, 3});
    const int before = fake_->reduce_scatters;
    const ref::HostTensor got = nccl().reduce_scatter(t, axis, ReductionOpType::Sum);
    EXPECT_EQ(fake_->reduce_scatters, before + 1);
    EXPECT_EQ(fake_->last_op, 0);
    EXPECT_EQ(fake_->last_count, static_cast<size_t>(72 / size()));
    const ref::HostTensor want = mpi().reduce_scatter(t, axis, ReductionOpType::Sum);
    if (size() == 2) expect_same_bits(got, want);
  }
}

TEST_F(Nccl, AFailingCallNamesItAndNcclsText) {
  // On every rank, so that no rank waits for the others inside the call.
  fake_->next_error = 5;  // ncclInvalidUsage
  ref::HostTensor t = rank_tensor(rank(), DataType::F32);
  const std::string e =
      test_support::user_error_of([&] { nccl().allreduce(t, ReductionOpType::Max); });
  EXPECT_THAT(e, HasSubstr("nccl: ncclAllReduce failed: ncclResult_t 5 (fake: invalid usage)"));
  fake_->next_error = 2;
  EXPECT_THAT(test_support::user_error_of([&] { nccl().allgather(t, 1); }),
              HasSubstr("ncclAllGather failed: ncclResult_t 2 (fake: unhandled system error)"));
  fake_->next_error = 4;
  EXPECT_THAT(
      test_support::user_error_of([&] { nccl().reduce_scatter(t, 1, ReductionOpType::Sum); }),
      HasSubstr("ncclReduceScatter failed: ncclResult_t 4 (fake: invalid argument)"));
  // The communicator still works.
  ref::HostTensor again = rank_tensor(rank(), DataType::F32), want = again;
  nccl().allreduce(again, ReductionOpType::Max);
  mpi().allreduce(want, ReductionOpType::Max);
  expect_same_bits(again, want);
}

TEST_F(Nccl, AMismatchIsMpisErrorOnEveryRank) {
  ref::HostTensor t = rank_tensor(rank(), DataType::F32, {2, rank() == 1 ? 4 : 3});
  try {
    nccl().allreduce(t, ReductionOpType::Sum);
    ADD_FAILURE() << "expected an internal error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("allreduce: rank 1 has f32 [2, 4], rank 0 has f32 [2, 3]"));
  }
}

TEST_F(Nccl, InitFailingOnOneRankFailsOnEvery) {
  if (rank() == 1) fake_->init_error = 2;  // after the id check: no rank hangs
  std::string why;
  const int aborts = fake_->aborts;
  EXPECT_EQ(make_nccl_communicator({}, &why), nullptr);
  // Rank 0's communicator was made, and is aborted (local), not destroyed.
  EXPECT_EQ(fake_->aborts, aborts + (rank() == 0 ? 1 : 0));
  if (rank() == 1)
    EXPECT_THAT(why, HasSubstr("rank 1: ncclCommInitRank failed: ncclResult_t 2 (fake: unhandled "
                               "system error)"));
  else
    EXPECT_THAT(why, HasSubstr("another rank failed ncclCommInitRank"));
  // The device index wraps around the visible devices (the fake shows one).
  EXPECT_NE(make_nccl_communicator({7, 9}, &why), nullptr) << why;
}

TEST_F(Nccl, DeviceBuffersStageThroughTheDriver) {
  EXPECT_EQ(cuda_device_count(), 1);
  std::unique_ptr<DeviceBuffers> b = make_cuda_device_buffers(0);
  EXPECT_EQ(b->device(), 0);
  const double in[3] = {1.5, -2, 3}, none[3] = {};
  double out[3] = {};
  void* p = b->alloc(sizeof in);
  b->copy_to_device(p, in, sizeof in);
  b->synchronize();
  b->copy_to_host(out, p, sizeof out);
  b->free(p);
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  EXPECT_EQ(b->alloc(0), nullptr);
  b->copy_to_device(nullptr, none, 0);  // nothing to copy: no driver call
  EXPECT_THAT(test_support::user_error_of([] { make_cuda_device_buffers(1); }),
              HasSubstr("cuda: device 1 requested, the driver shows 1"));
  // Every call makes the context current first: another thread has none
  // (the fake driver's current context is per thread, as the real one's).
  std::thread([&] {
    double again[3] = {};
    void* q = b->alloc(sizeof in);
    b->copy_to_device(q, in, sizeof in);
    b->copy_to_host(again, q, sizeof again);
    b->free(q);
    EXPECT_EQ(std::memcmp(in, again, sizeof in), 0);
  }).join();
}

TEST_F(Nccl, WithoutTheLibraryCollectivesGoThroughMpi) {
  comm_.reset();
  struct Restore {
    std::string path;
    ~Restore() { setenv("SCHEDLAB_NCCL_LIBRARY", path.c_str(), 1); }
  } restore{library_};
  setenv("SCHEDLAB_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  std::string why;
  EXPECT_EQ(make_nccl_communicator({}, &why), nullptr);
  EXPECT_THAT(why, HasSubstr("/nonexistent/libnccl.so.2 not found"));
  EXPECT_EQ(make_communicator(true)->name(), "mpi");
  // A library without NCCL's symbols (the fake driver).
  setenv("SCHEDLAB_NCCL_LIBRARY", SCHEDLAB_FAKE_CUDA, 1);
  EXPECT_EQ(make_nccl_communicator({}, &why), nullptr);
  EXPECT_THAT(why, HasSubstr("lacks ncclGetErrorString"));
  setenv("SCHEDLAB_NCCL_LIBRARY", library_.c_str(), 1);
  EXPECT_EQ(make_communicator(true)->name(), "nccl");
  EXPECT_EQ(make_communicator(false)->name(), "mpi");
}

}  // namespace
}  // namespace schedlab::runtime

int main(int argc, char** argv) {
  return schedlab::test::run_tests_on_ranks(argc, argv, schedlab::runtime::make_mpi_communicator(), schedlab::runtime::g_mpi);
}
