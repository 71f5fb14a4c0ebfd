// Tests for sweep/mutate: parsing every kind and its errors, and what each
// kind does to outputs, including the outputs it cannot change.
#include "schedlab/sweep/pipeline/mutate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "schedlab/base/error.h"

namespace schedlab::sweep {
namespace {

ref::HostTensor tensor(std::vector<double> data, ir::DataType dtype = ir::DataType::F32,
                       std::vector<int64_t> shape = {}) {
  ref::HostTensor t;
  t.dtype = dtype;
  t.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(data.size())} : shape;
  t.data = std::move(data);
  return t;
}

std::string parse_error(const std::string& text) {
  try {
    parse_mutation(text);
  } catch (const UserError& e) {
    return e.message();
  }
  return "(no error)";
}

TEST(MutateTest, ParsesEveryKind) {
  EXPECT_EQ(parse_mutation("zero").kind, Mutation::Kind::Zero);
  EXPECT_EQ(parse_mutation("swap").kind, Mutation::Kind::Swap);
  EXPECT_EQ(parse_mutation("nan").kind, Mutation::Kind::Nan);
  Mutation s = parse_mutation("scale:0.99");
  EXPECT_EQ(s.kind, Mutation::Kind::Scale);
  EXPECT_DOUBLE_EQ(s.value, 0.99);
  EXPECT_EQ(s.str(), "scale:0.99");
  Mutation o = parse_mutation("one:-1e-3");
  EXPECT_EQ(o.kind, Mutation::Kind::One);
  EXPECT_DOUBLE_EQ(o.value, -1e-3);
  EXPECT_EQ(o.str(), "one:-0.001");
}

TEST(MutateTest, ParseErrorsSayWhatWasExpected) {
  const std::string kinds = "--mutate: expected zero, scale:F, one:R, swap or nan, got ";
  EXPECT_EQ(parse_error("scal:2"), kinds + "'scal:2'");
  EXPECT_EQ(parse_error(""), kinds + "''");
  EXPECT_EQ(parse_error("zero:1"), kinds + "'zero:1'");
  EXPECT_EQ(parse_error("scale"), kinds + "'scale'");
  EXPECT_EQ(parse_error("scale:x"),
            "--mutate scale:F: expected a finite number F other than 1, got 'x'");
  EXPECT_EQ(parse_error("scale:1"),
            "--mutate scale:F: expected a finite number F other than 1, got '1'");
  EXPECT_EQ(parse_error("scale:inf"),
            "--mutate scale:F: expected a finite number F other than 1, got 'inf'");
  EXPECT_EQ(parse_error("one:"), "--mutate one:R: expected a finite number R other than 0, got ''");
  EXPECT_EQ(parse_error("one:0"),
            "--mutate one:R: expected a finite number R other than 0, got '0'");
}

TEST(MutateTest, ZeroAndScaleTouchEveryElement) {
  std::vector<ref::HostTensor> want{tensor({1, -2, 0, 4})};
  std::vector<ref::HostTensor> got = want;
  MutationEffect e = mutate(parse_mutation("zero"), got, want);
  EXPECT_EQ(got[0].data, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(e.changed, 3);
  EXPECT_EQ(e.outputs[0], "every element set to 0 (3 of 4 elements changed)");

  got = want;
  e = mutate(parse_mutation("scale:0.5"), got, want);
  EXPECT_EQ(got[0].data, (std::vector<double>{0.5, -1, 0, 2}));
  EXPECT_EQ(e.changed, 3);
}

TEST(MutateTest, OneMovesTheLargestElementAwayFromZero) {
  std::vector<ref::HostTensor> want{tensor({0.5, -4, 1, 3}, ir::DataType::F64, {2, 2})};
  std::vector<ref::HostTensor> got = want;
  MutationEffect e = mutate(parse_mutation("one:0.25"), got, want);
  EXPECT_EQ(got[0].data, (std::vector<double>{0.5, -5, 1, 3}));
  EXPECT_EQ(e.changed, 1);
  EXPECT_EQ(e.outputs[0], "element 1 [0, 1] (largest |reference|, 4): -4 -> -5");
}

TEST(MutateTest, MutantsAreStorableValues) {
  // bf16 holds 8 significant bits: 1 + 2^-10 rounds back to 1.
  std::vector<ref::HostTensor> want{tensor({1.0, 0.5}, ir::DataType::BF16)};
  std::vector<ref::HostTensor> got = want;
  MutationEffect e = mutate(parse_mutation("one:0.0009765625"), got, want);
  EXPECT_TRUE(e.noop());
  EXPECT_EQ(e.outputs[0], "unchanged: element 0 [0] (1) rounds back to its own value");
  e = mutate(parse_mutation("scale:0.99"), got, want);
  EXPECT_EQ(got[0].data, (std::vector<double>{0.98828125, 0.494140625}));
}

TEST(MutateTest, SwapExchangesLargestAndSmallest) {
  std::vector<ref::HostTensor> want{tensor({2, -1, 5, 0})};
  std::vector<ref::HostTensor> got = want;
  MutationEffect e = mutate(parse_mutation("swap"), got, want);
  EXPECT_EQ(got[0].data, (std::vector<double>{2, 5, -1, 0}));
  EXPECT_EQ(e.changed, 2);
}

TEST(MutateTest, NanSetsOneElement) {
  std::vector<ref::HostTensor> want{tensor({0.1, 0.7, 0.2}), tensor({3, 4}, ir::DataType::I32)};
  std::vector<ref::HostTensor> got = want;
  MutationEffect e = mutate(parse_mutation("nan"), got, want);
  EXPECT_TRUE(std::isnan(got[0].data[1]));
  EXPECT_EQ(got[1].data, (std::vector<double>{3, 4}));
  EXPECT_EQ(e.changed, 1);
  EXPECT_EQ(e.outputs[1], "unchanged: i32 cannot hold NaN");
}

TEST(MutateTest, NoOpsAreReported) {
  std::vector<ref::HostTensor> want{tensor({0, 0}), tensor({3, 3}), tensor({7})};
  std::vector<ref::HostTensor> got = want;
  MutationEffect z = mutate(parse_mutation("zero"), got, want);
  EXPECT_EQ(z.outputs[0], "unchanged: every element is already 0");
  got = want;
  MutationEffect s = mutate(parse_mutation("swap"), got, want);
  EXPECT_TRUE(s.noop());
  EXPECT_EQ(s.outputs[1], "unchanged: every element of the reference is equal");
  EXPECT_EQ(s.outputs[2], "unchanged: every element of the reference is equal");
  got = want;
  MutationEffect o = mutate(parse_mutation("one:0.01"), got, want);
  EXPECT_EQ(o.outputs[0], "unchanged: the reference is all zeros");
  EXPECT_EQ(o.changed, 2);
}

}  // namespace
}  // namespace schedlab::sweep
