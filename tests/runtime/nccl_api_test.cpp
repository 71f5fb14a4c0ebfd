// core/runtime/nccl_api.h against NCCL's own nccl.h (built only where nccl.h
// is installed): the values schedlab passes through dlsym'd entry points are
// NCCL's.
#include <gtest/gtest.h>
#include <nccl.h>

#include <type_traits>

#include "nccl_api.h"

namespace nccl = schedlab::runtime::nccl;

static_assert(std::is_same_v<ncclComm_t, nccl::Comm>);
static_assert(sizeof(ncclUniqueId) == sizeof(nccl::UniqueId));
static_assert(NCCL_UNIQUE_ID_BYTES == nccl::kUniqueIdBytes);
static_assert(sizeof(ncclResult_t) == sizeof(nccl::Result));
static_assert(sizeof(ncclDataType_t) == sizeof(nccl::DataType));
static_assert(sizeof(ncclRedOp_t) == sizeof(nccl::RedOp));

TEST(NcclApi, ValuesAreNcclHs) {
  EXPECT_EQ(int(ncclSuccess), nccl::kSuccess);
  EXPECT_EQ(int(ncclUnhandledCudaError), nccl::kUnhandledCudaError);
  EXPECT_EQ(int(ncclSystemError), nccl::kSystemError);
  EXPECT_EQ(int(ncclInternalError), nccl::kInternalError);
  EXPECT_EQ(int(ncclInvalidArgument), nccl::kInvalidArgument);
  EXPECT_EQ(int(ncclInvalidUsage), nccl::kInvalidUsage);
  EXPECT_EQ(int(ncclRemoteError), nccl::kRemoteError);
  EXPECT_EQ(int(ncclInProgress), nccl::kInProgress);
  EXPECT_EQ(int(ncclInt32), nccl::kInt32);
  EXPECT_EQ(int(ncclInt64), nccl::kInt64);
  EXPECT_EQ(int(ncclFloat16), nccl::kFloat16);
  EXPECT_EQ(int(ncclFloat32), nccl::kFloat32);
  EXPECT_EQ(int(ncclFloat64), nccl::kFloat64);
  EXPECT_EQ(int(ncclBfloat16), nccl::kBfloat16);
  EXPECT_EQ(int(ncclSum), nccl::kSum);
  EXPECT_EQ(int(ncclProd), nccl::kProd);
  EXPECT_EQ(int(ncclMax), nccl::kMax);
  EXPECT_EQ(int(ncclMin), nccl::kMin);
}
