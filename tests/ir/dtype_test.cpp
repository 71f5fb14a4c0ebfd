// DataType: names, sizes, classification, promotion.
#include "schedlab/ir/dtype.h"

#include <gtest/gtest.h>

#include <tuple>

namespace schedlab::ir {
namespace {

constexpr DataType kAll[] = {DataType::Bool, DataType::I32, DataType::I64, DataType::F16,
                             DataType::BF16, DataType::F32, DataType::F64};

TEST(DTypeTest, NamesRoundTrip) {
  for (DataType t : kAll) {
    auto parsed = parse_dtype(dtype_name(t));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(t);
    EXPECT_EQ(*parsed, t) << dtype_name(t);
  }
}

TEST(DTypeTest, Names) {
  EXPECT_EQ(dtype_name(DataType::Bool), "bool");
  EXPECT_EQ(dtype_name(DataType::I32), "i32");
  EXPECT_EQ(dtype_name(DataType::I64), "i64");
  EXPECT_EQ(dtype_name(DataType::F16), "f16");
  EXPECT_EQ(dtype_name(DataType::BF16), "bf16");
  EXPECT_EQ(dtype_name(DataType::F32), "f32");
  EXPECT_EQ(dtype_name(DataType::F64), "f64");
}

TEST(DTypeTest, UnknownNamesDoNotParse) {
  EXPECT_EQ(parse_dtype("float"), std::nullopt);
  EXPECT_EQ(parse_dtype("F32"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  EXPECT_EQ(parse_dtype("f32 "), std::nullopt);
}

TEST(DTypeTest, Choices) {
  EXPECT_EQ(dtype_choices(), "bool, i32, i64, f16, bf16, f32, f64");
}

TEST(DTypeTest, Sizes) {
  EXPECT_EQ(dtype_size(DataType::Bool), 1);
  EXPECT_EQ(dtype_size(DataType::I32), 4);
  EXPECT_EQ(dtype_size(DataType::I64), 8);
  EXPECT_EQ(dtype_size(DataType::F16), 2);
  EXPECT_EQ(dtype_size(DataType::BF16), 2);
  EXPECT_EQ(dtype_size(DataType::F32), 4);
  EXPECT_EQ(dtype_size(DataType::F64), 8);
}

TEST(DTypeTest, Classification) {
  for (DataType t : {DataType::F16, DataType::BF16, DataType::F32, DataType::F64}) {
    EXPECT_TRUE(is_float(t)) << dtype_name(t);
    EXPECT_FALSE(is_integral(t)) << dtype_name(t);
  }
  for (DataType t : {DataType::I32, DataType::I64}) {
    EXPECT_TRUE(is_integral(t)) << dtype_name(t);
    EXPECT_FALSE(is_float(t)) << dtype_name(t);
  }
  EXPECT_FALSE(is_integral(DataType::Bool));
  EXPECT_FALSE(is_float(DataType::Bool));
  EXPECT_TRUE(is_half(DataType::F16));
  EXPECT_TRUE(is_half(DataType::BF16));
  EXPECT_FALSE(is_half(DataType::F32));
}

TEST(DTypeTest, ComputeDtypeWidensOnlyHalves) {
  EXPECT_EQ(compute_dtype(DataType::F16), DataType::F32);
  EXPECT_EQ(compute_dtype(DataType::BF16), DataType::F32);
  for (DataType t : {DataType::Bool, DataType::I32, DataType::I64, DataType::F32, DataType::F64})
    EXPECT_EQ(compute_dtype(t), t) << dtype_name(t);
}

using PromoteCase = std::tuple<DataType, DataType, DataType>;

class PromoteTest : public ::testing::TestWithParam<PromoteCase> {};

TEST_P(PromoteTest, IsSymmetricAndMatchesTable) {
  auto [a, b, want] = GetParam();
  EXPECT_EQ(promote(a, b), want) << dtype_name(a) << " + " << dtype_name(b);
  EXPECT_EQ(promote(b, a), want) << dtype_name(b) << " + " << dtype_name(a);
}

INSTANTIATE_TEST_SUITE_P(Table, PromoteTest,
                         ::testing::Values(
                             // Same type.
                             PromoteCase{DataType::Bool, DataType::Bool, DataType::Bool},
                             PromoteCase{DataType::F16, DataType::F16, DataType::F16},
                             PromoteCase{DataType::BF16, DataType::BF16, DataType::BF16},
                             // The two half types have no common 16-bit type.
                             PromoteCase{DataType::F16, DataType::BF16, DataType::F32},
                             // Within floats the wider wins.
                             PromoteCase{DataType::F16, DataType::F32, DataType::F32},
                             PromoteCase{DataType::BF16, DataType::F64, DataType::F64},
                             PromoteCase{DataType::F32, DataType::F64, DataType::F64},
                             // Float beats integer, whatever the widths.
                             PromoteCase{DataType::I32, DataType::F16, DataType::F16},
                             PromoteCase{DataType::I64, DataType::BF16, DataType::BF16},
                             PromoteCase{DataType::I64, DataType::F32, DataType::F32},
                             // Integer beats bool; the wider integer wins.
                             PromoteCase{DataType::Bool, DataType::I32, DataType::I32},
                             PromoteCase{DataType::Bool, DataType::I64, DataType::I64},
                             PromoteCase{DataType::I32, DataType::I64, DataType::I64},
                             PromoteCase{DataType::Bool, DataType::F16, DataType::F16}),
                         [](const ::testing::TestParamInfo<PromoteCase>& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                  std::string(dtype_name(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace schedlab::ir
