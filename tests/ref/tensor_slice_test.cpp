// slice_axis and concat_axis: a sharded axis's pieces and their inverse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "schedlab/base/error.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::ref {
namespace {

using ir::DataType;

/// A tensor of `shape` holding 0, 1, 2, ... (row-major), so that an element's
/// value is its flat index in the whole.
HostTensor iota(std::vector<int64_t> shape) {
  HostTensor t{DataType::F32, std::move(shape), {}};
  t.data.resize(t.numel());
  std::iota(t.data.begin(), t.data.end(), 0.0);
  return t;
}

TEST(SliceAxis, TakesTheContiguousChunkOfThePart) {
  const HostTensor t = iota({2, 4, 3});
  const HostTensor a0 = slice_axis(t, 0, 1, 2);
  EXPECT_EQ(a0.shape, (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(a0.data.front(), 12);
  EXPECT_EQ(a0.data.back(), 23);
  const HostTensor a1 = slice_axis(t, 1, 1, 2);  // rows 2..3 of each of the 2 blocks
  EXPECT_EQ(a1.shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(a1.data, (std::vector<double>{6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23}));
  const HostTensor a2 = slice_axis(t, 2, 2, 3);  // the last column
  EXPECT_EQ(a2.shape, (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(a2.data, (std::vector<double>{2, 5, 8, 11, 14, 17, 20, 23}));
  EXPECT_EQ(a2.dtype, DataType::F32);
  EXPECT_TRUE(a2.error.empty());
}

TEST(SliceAxis, SlicesTheErrorBoundWithTheData) {
  HostTensor t = iota({2, 4});
  t.error = {0, 1, 2, 3, 4, 5, 6, 7};
  const HostTensor s = slice_axis(t, 1, 0, 2);
  EXPECT_EQ(s.data, (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ(s.error, (std::vector<double>{0, 1, 4, 5}));
}

TEST(ConcatAxis, InvertsSliceOnEveryAxis) {
  HostTensor t = iota({4, 6, 2});
  t.error.assign(t.data.begin(), t.data.end());
  for (int axis = 0; axis < 3; ++axis) {
    const int parts = 2;
    std::vector<HostTensor> pieces;
    for (int p = 0; p < parts; ++p) pieces.push_back(slice_axis(t, axis, p, parts));
    const HostTensor back = concat_axis(pieces, axis);
    EXPECT_EQ(back.shape, t.shape) << "axis " << axis;
    EXPECT_EQ(back.data, t.data) << "axis " << axis;
    EXPECT_EQ(back.error, t.error) << "axis " << axis;
  }
}

TEST(ConcatAxis, UnequalPiecesAndAPieceWithoutErrorBound) {
  HostTensor a = iota({2, 1});
  a.error = {0.5, 0.25};
  const HostTensor b = iota({2, 2});
  const HostTensor c = concat_axis({a, b}, 1);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.data, (std::vector<double>{0, 0, 1, 1, 2, 3}));
  EXPECT_EQ(c.error, (std::vector<double>{0.5, 0, 0, 0.25, 0, 0}));
}

TEST(SliceAxis, MisuseIsAnInternalError) {
  const HostTensor t = iota({3, 4});
  EXPECT_THROW(slice_axis(t, 0, 0, 2), InternalError);  // 3 is not a multiple of 2
  EXPECT_THROW(slice_axis(t, 2, 0, 1), InternalError);
  EXPECT_THROW(slice_axis(t, 1, 2, 2), InternalError);
  try {
    concat_axis({iota({2, 3}), iota({3, 3})}, 1);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("piece 1 has shape [3, 3], piece 0 [2, 3]"));
  }
}

}  // namespace
}  // namespace schedlab::ref
