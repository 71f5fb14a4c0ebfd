// The default validation criterion (docs/validation.md): |got - want| <= C x
// the reference's error bound + the dtype's floor. Issue 33's table as a
// test: long softmax rows, whose outputs are about 1/K, reject a kernel that
// writes zeros or halves its outputs, and accept the CPU backend's kernel and
// f32 computations in the orders schedules use; a long row sum rejects one
// element moved by 1% of the largest output. And hand-computable bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "test_support.h"

namespace schedlab::ref {
namespace {

using ir::DataType;
using ::testing::HasSubstr;

constexpr double u32 = 0x1p-24;

/// A fusion of configs/fusions, its inputs (seed 1, as exec) and reference.
struct Case {
  sweep::BoundFusion bf;
  std::vector<HostTensor> inputs, want;
};

Case make_case(const std::string& fusion, const ir::SizeBindings& sizes) {
  Case c;
  c.bf = sweep::bind_fusion(fusion, {test_support::config_fusion_dir()}, sizes);
  c.inputs = make_inputs(*c.bf.def.fusion, c.bf.sizes, 1, c.bf.def.input_ranges);
  c.want = evaluate(*c.bf.def.fusion, c.inputs, c.bf.sizes);
  return c;
}

sweep::Validation check(const Case& c, const std::vector<HostTensor>& got,
                        std::optional<Tolerance> tol = {}) {
  return sweep::validate(*c.bf.def.fusion, c.bf.sizes, got, c.want, tol);
}

/// The built-in heuristics' kernels on the CPU backend.
std::vector<HostTensor> cpu_kernel(const Case& c) {
  plugin::Registry registry({plugin::builtin_plugin_dir()});
  auto plugins = sweep::segmenter_plugins(registry);
  sweep::SegmentedFusion s = sweep::segment_and_schedule(c.bf, plugins, {});
  auto backend =
      runtime::make_cpu_backend(model::model_device_properties(),
                                std::string(SCHEDLAB_BINARY_DIR) + "/tests/ref/kernel_cache");
  auto kernels = sweep::compile_segments(*backend, s.segmentation, c.bf.sizes);
  return sweep::run_segments(*backend, s.segmentation, kernels, c.inputs, c.bf.sizes);
}

HostTensor like(const HostTensor& t, std::vector<double> data) {
  return HostTensor{t.dtype, t.shape, std::move(data)};
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for (double v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

/// `want` with the element of the largest |value| moved by r x max|want|
/// (issue 33's `one:R` mutation).
HostTensor moved_one(const HostTensor& want, double r) {
  HostTensor t = like(want, want.data);
  const auto it = std::max_element(t.data.begin(), t.data.end(),
                                   [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  *it += r * max_abs(want);
  return t;
}

/// A row's f32 sum in the orders schedules use.
enum class Order { Serial, Strided, Pairwise };

float sum_f32(const std::vector<float>& x, Order order) {
  std::function<float(size_t, size_t)> pairwise = [&](size_t lo, size_t hi) -> float {
    if (hi - lo == 1) return x[lo];
    const size_t mid = lo + (hi - lo) / 2;
    return pairwise(lo, mid) + pairwise(mid, hi);
  };
  switch (order) {
    case Order::Serial: {
      float s = 0;
      for (float v : x) s += v;
      return s;
    }
    case Order::Strided: {
      // 256 threads each serial over a stride of 256, then a tree over them.
      constexpr size_t kThreads = 256;
      std::vector<float> part(kThreads, 0.0f);
      for (size_t i = 0; i < x.size(); ++i) part[i % kThreads] += x[i];
      for (size_t w = kThreads / 2; w > 0; w /= 2)
        for (size_t t = 0; t < w; ++t) part[t] += part[t + w];
      return part[0];
    }
    case Order::Pairwise: return pairwise(0, x.size());
  }
  return 0;
}

/// softmax of each row of x [N, K] computed in f32 with the sum in `order`.
HostTensor softmax_f32(const HostTensor& x, const HostTensor& like_out, Order order) {
  const int64_t n = x.shape[0], k = x.shape[1];
  std::vector<double> out(x.data.size());
  for (int64_t r = 0; r < n; ++r) {
    const double* row = &x.data[static_cast<size_t>(r * k)];
    float m = -INFINITY;
    for (int64_t i = 0; i < k; ++i) m = std::max(m, static_cast<float>(row[i]));
    std::vector<float> e(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
      e[static_cast<size_t>(i)] = std::exp(static_cast<float>(row[i]) - m);
    const float s = sum_f32(e, order);
    for (int64_t i = 0; i < k; ++i)
      out[static_cast<size_t>(r * k + i)] = e[static_cast<size_t>(i)] / s;
  }
  return like(like_out, std::move(out));
}

// Issue 33's table: at K = 32768 and 262144 the old count-based atol (2e-3,
// 1.6e-2) exceeded every softmax output and passed zeros and halves.
class SoftmaxRows : public ::testing::TestWithParam<int64_t> {};

TEST_P(SoftmaxRows, WrongOutputsAreRejectedAndCorrectOnesAccepted) {
  const int64_t k = GetParam();
  const Case c = make_case("softmax", {{"N", 2}, {"K", k}});
  const HostTensor& want = c.want[0];
  ASSERT_LT(max_abs(want), 0.1);

  HostTensor zero = like(want, std::vector<double>(want.data.size(), 0.0));
  sweep::Validation v = check(c, {zero});
  EXPECT_FALSE(v.ok) << "all zeros at K=" << k;
  EXPECT_THAT(v.summary(), HasSubstr("x error bound"));
  HostTensor half = like(want, want.data);
  for (double& x : half.data) x *= 0.5;
  EXPECT_FALSE(check(c, {half}).ok) << "halved at K=" << k;
  HostTensor scaled = like(want, want.data);
  for (double& x : scaled.data) x *= 0.99;
  EXPECT_FALSE(check(c, {scaled}).ok) << "scaled by 0.99 at K=" << k;
  EXPECT_FALSE(check(c, {moved_one(want, 0.01)}).ok) << "one element moved at K=" << k;

  for (Order order : {Order::Serial, Order::Strided, Order::Pairwise}) {
    sweep::Validation ok = check(c, {softmax_f32(c.inputs[0], want, order)});
    EXPECT_TRUE(ok.ok) << ok.summary();
    EXPECT_LT(ok.max_ratio, 0.5) << ok.max_ratio_at;
  }
  sweep::Validation kernel = check(c, cpu_kernel(c));
  EXPECT_TRUE(kernel.ok) << kernel.summary();
  EXPECT_LT(kernel.max_ratio, 0.5) << kernel.max_ratio_at;
}

INSTANTIATE_TEST_SUITE_P(Issue33, SoftmaxRows, ::testing::Values(4096, 32768, 262144));

// A row sum of 262144 uniform(-1, 1) values: the old bound, 2 sqrt(n) u
// sum|x| ~ 8, let one element move by 0.01 x max|sum| ~ 3-6; the partial
// sums' bound is about 0.05.
TEST(LongRowSum, OneElementMovedIsRejected) {
  const int64_t k = 262144;
  const Case c = make_case("row_sum", {{"N", 4}, {"K", k}});
  const HostTensor& want = c.want[0];
  for (size_t r = 0; r < want.data.size(); ++r) EXPECT_LT(want.error[r], 0.2) << "row " << r;
  sweep::Validation moved = check(c, {moved_one(want, 0.01)});
  EXPECT_FALSE(moved.ok);
  EXPECT_THAT(moved.summary(), HasSubstr("allowed"));
  // Every order of f32 summation is accepted, the single-thread serial one too.
  for (Order order : {Order::Serial, Order::Strided, Order::Pairwise}) {
    std::vector<double> sums;
    for (int64_t r = 0; r < want.numel(); ++r) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i)
        row[static_cast<size_t>(i)] =
            static_cast<float>(c.inputs[0].data[static_cast<size_t>(r * k + i)]);
      sums.push_back(sum_f32(row, order));
    }
    sweep::Validation ok = check(c, {like(want, sums)});
    EXPECT_TRUE(ok.ok) << ok.summary();
  }
  sweep::Validation kernel = check(c, cpu_kernel(c));
  EXPECT_TRUE(kernel.ok) << kernel.summary();
}

// A tolerance the user writes is the whole tolerance, both ways.
TEST(UserTolerance, OverridesTheBound) {
  const Case c = make_case("softmax", {{"N", 2}, {"K", 32768}});
  HostTensor zero = like(c.want[0], std::vector<double>(c.want[0].data.size(), 0.0));
  sweep::Validation loose = check(c, {zero}, Tolerance::user(0, 1e-3));
  EXPECT_TRUE(loose.ok) << "atol 1e-3 exceeds every output: the user asked for it";
  EXPECT_TRUE(loose.outputs[0].tol.is_user());
  HostTensor f32 = softmax_f32(c.inputs[0], c.want[0], Order::Serial);
  sweep::Validation strict = check(c, {f32}, Tolerance::user(0, 0));
  EXPECT_FALSE(strict.ok) << "an f32 kernel is not bit-exact with the double reference";
  EXPECT_THAT(strict.summary(), HasSubstr("(atol 0 + rtol 0 x |expected|)"));
  EXPECT_TRUE(check(c, {f32}).ok);
}

// ---- The bound on hand-computable cases ----

std::vector<HostTensor> eval_text(const std::string& body, const std::string& inputs,
                                  const std::vector<HostTensor>& values,
                                  const ir::SizeBindings& sizes, bool fast_math = false) {
  const std::string text = "fusion: t\ninputs:\n" + inputs + "body: |\n" + body + "outputs: [r]\n";
  auto def = frontend::parse_fusion_text(text, "t.yaml");
  return evaluate(*def.fusion, values, sizes, EvalOptions{fast_math});
}

TEST(SumBound, PartialSumsInIndexOrderOrTheirExpectationOverOrders) {
  // s_2..s_4 = 3, 6, 10: sum s_k^2 = 145. Mean 2.5, variance 1.25:
  // sum_{k=2}^4 (6.25 k^2 + 1.25 k) = 6.25 x 29 + 1.25 x 9 = 192.5, larger.
  // lambda u sqrt(192.5) + u |10| (+ 3 u tiny).
  auto r = eval_text("  r = sum(x, axis=0)\n", "  x: {dtype: f32, shape: [N]}\n",
                     {HostTensor{DataType::F32, {4}, {1, 2, 3, 4}}}, {{"N", 4}});
  EXPECT_EQ(r[0].data[0], 10.0);
  EXPECT_NEAR(r[0].error[0], 8 * u32 * std::sqrt(192.5) + 10 * u32, 1e-20);
  // Sorted along the row, the index order's partial sums are the larger:
  // 1 x 4 then -1 x 4: s_2..s_8 = 2, 3, 4, 3, 2, 1, 0 (43); mean 0, variance
  // 1: sum_{k=2}^8 k = 35.
  auto sorted = eval_text("  r = sum(x, axis=0)\n", "  x: {dtype: f32, shape: [N]}\n",
                          {HostTensor{DataType::F32, {8}, {1, 1, 1, 1, -1, -1, -1, -1}}},
                          {{"N", 8}});
  EXPECT_NEAR(sorted[0].error[0], 8 * u32 * std::sqrt(43.0), 1e-20);
  // One element: nothing rounds.
  auto one = eval_text("  r = sum(x, axis=0)\n", "  x: {dtype: f32, shape: [N]}\n",
                       {HostTensor{DataType::F32, {1}, {0.3f}}}, {{"N", 1}});
  EXPECT_NEAR(one[0].error[0], u32 * 0.3f, 1e-20);
}

TEST(SumBound, CancellingInIndexOrderIsBoundedForOtherOrders) {
  // +1, -1, +1, -1, ...: in index order the partial sums are 0 and 1, but
  // a stride-2 thread or a tree's node adds like signs; the bound is the
  // expectation over orders, lambda u sqrt(sum_{k=2}^n k) ~ lambda u n / sqrt 2.
  const int64_t n = 1000;
  std::vector<double> x;
  for (int64_t i = 0; i < n; ++i) x.push_back(i % 2 ? -1.0 : 1.0);
  auto r = eval_text("  r = sum(x, axis=0)\n", "  x: {dtype: f32, shape: [N]}\n",
                     {HostTensor{DataType::F32, {n}, x}}, {{"N", n}});
  EXPECT_EQ(r[0].data[0], 0.0);
  EXPECT_NEAR(r[0].error[0], 8 * u32 * std::sqrt(n * (n + 1) / 2.0 - 1), 1e-12);
}

TEST(SumBound, OperandBoundsAddLinearly) {
  // exp rounds by 4 u |e^x| (error_bound.cpp); the sum carries each.
  auto r = eval_text("  r = sum(exp(x), axis=0)\n", "  x: {dtype: f32, shape: [N]}\n",
                     {HostTensor{DataType::F32, {2}, {0, 0}}}, {{"N", 2}});
  EXPECT_EQ(r[0].data[0], 2.0);
  EXPECT_NEAR(r[0].error[0], 2 * 4 * u32 + 8 * u32 * 2 + 2 * u32, 1e-20);
}

TEST(StorageBound, ACastMatchesExactlyUnlessItsIntervalStraddlesARoundingBoundary) {
  // The reference rounds to bf16 as the kernel does. 1 + 2^-10 rounds to 1
  // from anywhere in x * 1.0's interval: nothing else is right.
  auto b = eval_text("  r = cast(x * 1.0, bf16)\n", "  x: {dtype: f32, shape: [N]}\n",
                     {HostTensor{DataType::F32, {1}, {1 + 0x1p-10}}}, {{"N", 1}});
  EXPECT_EQ(b[0].data[0], 1.0);
  EXPECT_EQ(b[0].error[0], 0.0);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: a kernel's f32 value a rounding
  // away lands on either side. C x bound is the jump, one bf16 ulp.
  auto tie = eval_text("  r = cast(x * 1.0, bf16)\n", "  x: {dtype: f32, shape: [N]}\n",
                       {HostTensor{DataType::F32, {1}, {1 + 0x1p-8}}}, {{"N", 1}});
  EXPECT_EQ(tie[0].data[0], 1.0);
  EXPECT_EQ(kBoundFactor * tie[0].error[0], 0x1p-7);
  // f16 below its smallest normal (2^-14) rounds to multiples of 2^-24:
  // absolutely, whatever the value.
  auto h = eval_text("  r = cast(x * 1.0, f16)\n", "  x: {dtype: f32, shape: [N]}\n",
                     {HostTensor{DataType::F32, {1}, {0x1p-20 + 0x1p-25}}}, {{"N", 1}});
  EXPECT_EQ(h[0].data[0], 0x1p-20);
  EXPECT_EQ(kBoundFactor * h[0].error[0], 0x1p-24);
}

TEST(StorageBound, FastMathMayFlushSubnormals) {
  auto accurate = eval_text("  r = x * 0.5\n", "  x: {dtype: f32, shape: [N]}\n",
                            {HostTensor{DataType::F32, {1}, {0x1p-126}}}, {{"N", 1}});
  auto fast = eval_text("  r = x * 0.5\n", "  x: {dtype: f32, shape: [N]}\n",
                        {HostTensor{DataType::F32, {1}, {0x1p-126}}}, {{"N", 1}}, true);
  EXPECT_NEAR(accurate[0].error[0], u32 * 0x1p-126, 1e-50);  // gradual underflow
  EXPECT_GE(fast[0].error[0], 0x1p-127);                      // -ftz: 0 is right
}

}  // namespace
}  // namespace schedlab::ref
