// The NCCL communicator on a real GPU and the real libnccl.so.2 (label gpu;
// skips without a device or without NCCL). Run as 1 rank and as 2 ranks
// (add_mpi_test); 2 ranks on one GPU are refused by NCCL (a duplicate GPU),
// which must give nullptr on every rank alike, never a hang. Each result is
// compared with the MPI communicator's: bit for bit, as with 1 or 2 ranks
// every element is rounded once either way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "schedlab/ir/op_semantics.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/runtime/cuda_backend.h"
#include "mpi_gtest_main.h"

namespace schedlab::runtime {
namespace {

using ir::DataType;
using ir::ReductionOpType;

Communicator* g_mpi = nullptr;

ref::HostTensor rank_tensor(int r, DataType dtype) {
  ref::HostTensor t{dtype, {4, 6, 3}, {}};
  t.data.resize(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = ir::round_to_dtype(
        (i % 3 == 0 ? -1 : 1) * (1.0 + 0.0371 * static_cast<double>(i) * (r + 1)), dtype);
  return t;
}

void expect_same_bits(const ref::HostTensor& got, const ref::HostTensor& want) {
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i)
    EXPECT_EQ(std::memcmp(&got.data[i], &want.data[i], sizeof(double)), 0)
        << "element " << i << ": " << got.data[i] << " vs " << want.data[i];
}

TEST(NcclGpu, CollectivesAreMpis) {
  Communicator& mpi = *g_mpi;
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  std::unique_ptr<Communicator> nccl = make_nccl_communicator({}, &why);
  if (nccl == nullptr) {
    // Decided alike on every rank: the same verdict everywhere.
    if (why.find("not found") != std::string::npos) GTEST_SKIP() << why;
    if (mpi.size() > cuda_device_count()) GTEST_SKIP() << "more ranks than GPUs: " << why;
    FAIL() << why;
  }
  std::printf("rank %d: nccl on device %d of %d\n", mpi.rank(), mpi.rank() % cuda_device_count(),
              cuda_device_count());
  for (DataType dtype : {DataType::F32, DataType::F16, DataType::BF16, DataType::F64}) {
    for (ReductionOpType op : {ReductionOpType::Sum, ReductionOpType::Max, ReductionOpType::Prod}) {
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
      ref::HostTensor got = rank_tensor(mpi.rank(), dtype), want = got;
      nccl->allreduce(got, op);
      mpi.allreduce(want, op);
      expect_same_bits(got, want);
    }
    const ref::HostTensor t = rank_tensor(mpi.rank(), dtype);
    for (int axis = 0; axis < 3; ++axis) {
      expect_same_bits(nccl->allgather(t, axis), mpi.allgather(t, axis));
      if (t.shape[axis] % mpi.size() == 0)
        expect_same_bits(nccl->reduce_scatter(t, axis, ReductionOpType::Sum),
                         mpi.reduce_scatter(t, axis, ReductionOpType::Sum));
    }
  }
  EXPECT_EQ(nccl->max_over_ranks(mpi.rank()), mpi.size() - 1);
}

}  // namespace
}  // namespace schedlab::runtime

int main(int argc, char** argv) {
  return schedlab::test::run_tests_on_ranks(argc, argv, schedlab::runtime::make_mpi_communicator(), schedlab::runtime::g_mpi);
}
