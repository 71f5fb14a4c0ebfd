// The cache policy of cache_after (ir::CacheOp) in the kernel: the same
// schedule under each of the four values gives its own CUDA (AllLevels
// sl_ldca / ld.global.ca, Global sl_ldcg / .cg, Streaming sl_ldcs / .cs,
// Unspecified the plain load it always was), each validates on the test
// backend against the reference, and NVRTC compiles each for sm_80 and sm_90
// with the qualifier in its PTX; vectorized bf16 and f16 copies of 4, 8 and
// 16 bytes too. A cache policy on a load that does not read global memory is
// refused (tests/lower/soundness/cache_op_not_global).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/kir_printer.h"

namespace schedlab::lower::testing {
namespace {

using ir::CacheOp;

constexpr CacheOp kAll[] = {CacheOp::Unspecified, CacheOp::AllLevels, CacheOp::Global,
                            CacheOp::Streaming};

/// The PTX qualifier the policy prints ("" for Unspecified).
std::string qualifier(CacheOp c) { return std::string(kir::cache_qualifier(c)); }

const char* const kScalarFusion = R"(fusion: cache_op_scalar
inputs:
  x: {dtype: f32, shape: [N, K]}
  b: {dtype: f32, shape: [N, K]}
sizes: {N: 5, K: 8}
body: |
  y = x * b + 1
outputs: [y]
)";

const char* const kVectorFusion = R"(fusion: cache_op_vector
inputs:
  x: {dtype: bf16, shape: [N, K]}
  h: {dtype: f16, shape: [N, K]}
sizes: {N: 3, K: 64}
body: |
  y = x + h
outputs: [y]
)";

/// `x`'s cache (and with `vector` > 1 `h`'s) loaded with policy c, the
/// caches' copies vectorized by `vector`.
std::string schedule(CacheOp c, int vector) {
  const std::string op = std::string(ir::cache_op_name(c));
  std::string s = "xc = cache_after(x, cache_op=" + op + ")\n";
  if (vector > 1) s += "hc = cache_after(h, cache_op=" + op + ")\n";
  s += "split(y, 1, " + std::to_string(vector > 1 ? vector : 4) +
       ")\nparallelize(y, 0, BIDx)\nparallelize(y, 1, TIDx)\npropagate_transformation(y)\n"
       "parallelize_all_like(y)\n";
  if (vector > 1) s += "parallelize(xc, 2, Vectorize)\nparallelize(hc, 2, Vectorize)\n";
  return s + "inline_most()\n";
}

struct Lowered {
  runtime::PreparedKernel kernel;
  std::string error;  ///< a run-and-compare failure, "" when it validates
};

/// Schedules `fusion` with schedule(c, vector), lowers it and runs it on the
/// test backend against the reference.
Lowered lower_and_run(const char* fusion, CacheOp c, int vector) {
  auto plain = frontend::parse_fusion_text(fusion, "cache_op.yaml");
  auto def = frontend::parse_fusion_text(fusion, "cache_op.yaml");
  frontend::apply_schedule_text(schedule(c, vector), "cache_op.sched", def, {});
  const ir::SizeBindings sizes = frontend::bind_sizes(plain, {});
  Lowered l{prepare_or_report(def, sizes), ""};
  auto compiled = test_backend().compile(l.kernel.source);
  l.error = run_and_compare(plain, l.kernel, *compiled, sizes);
  return l;
}

/// The generated kernel function (the unit after its headers).
std::string kernel_text(const std::string& unit) {
  return unit.substr(unit.find("schedlab_kernel("));
}

/// NVRTC's PTX of src for sm_80 and sm_90 (none when NVRTC does not answer).
std::vector<std::string> ptx_of(const runtime::KernelSource& src) {
  std::vector<std::string> ptx;
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string log;
    try {
      ptx.push_back(runtime::nvrtc_compile_all(src, arch, {}, &log, kernel_cache_dir()).ptx);
    } catch (const UserError& e) {
      ADD_FAILURE() << arch << ": NVRTC rejected the unit: " << e.what() << "\n" << log;
    }
  }
  return ptx;
}

/// How many ld.global loads with qualifier q (ca, cg, cs) the PTX has.
int qualified_loads(const std::string& ptx, const std::string& q) {
  const std::regex re("ld\\.global\\." + q + "\\.");
  return static_cast<int>(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), re),
                                        std::sregex_iterator()));
}

class CacheOpScalar : public BackendTestWithParam<CacheOp> {};

TEST_P(CacheOpScalar, PrintsItsQualifierAndValidates) {
  const CacheOp c = GetParam();
  Lowered l = lower_and_run(kScalarFusion, c, 1);
  EXPECT_EQ(l.error, "");
  const std::string body = kernel_text(l.kernel.source.source);
  const std::string kir = kir::print_kir(l.kernel.kernel);
  for (CacheOp other : {CacheOp::AllLevels, CacheOp::Global, CacheOp::Streaming}) {
    // x's load only: b keeps the plain SL_LD.
    EXPECT_EQ(body.find("sl_ld" + qualifier(other) + "(SL_VLD(") != std::string::npos, other == c)
        << body;
    EXPECT_EQ(kir.find("ld." + qualifier(other) + "(T0[") != std::string::npos, other == c) << kir;
  }
  EXPECT_THAT(body, ::testing::HasSubstr("SL_LD("));
  // The cache-load header only in a unit that uses it.
  EXPECT_EQ(l.kernel.source.source.find("schedlab cache-policy loads") != std::string::npos,
            c != CacheOp::Unspecified);
}

INSTANTIATE_TEST_SUITE_P(Values, CacheOpScalar, ::testing::ValuesIn(kAll),
                         [](const auto& info) { return std::string(ir::cache_op_name(info.param)); });

// The acceptance line of issue 36: each CacheOp value gives different CUDA
// for the same schedule, and NVRTC's PTX carries the qualifier.
TEST(CacheOp, EachValueGivesDifferentCudaAndItsPtxQualifier) {
  std::set<std::string> texts;
  for (CacheOp c : kAll) {
    SCOPED_TRACE(std::string(ir::cache_op_name(c)));
    auto def = frontend::parse_fusion_text(kScalarFusion, "cache_op.yaml");
    frontend::apply_schedule_text(schedule(c, 1), "cache_op.sched", def, {});
    auto p = prepare_or_report(def, frontend::bind_sizes(def, {}));
    texts.insert(p.source.source);
    if (runtime::nvrtc_version() == "unknown") continue;
    for (const std::string& ptx : ptx_of(p.source))
      for (const char* q : {"ca", "cg", "cs"})
        EXPECT_EQ(qualified_loads(ptx, q) > 0, q == qualifier(c)) << q << "\n" << ptx;
  }
  EXPECT_EQ(texts.size(), 4u);
}

struct VectorCase {
  CacheOp cache;
  int width;  ///< elements of 2 bytes: 2, 4 or 8 (4, 8 or 16 bytes)
};

class CacheOpVector : public BackendTestWithParam<VectorCase> {};

// bf16 and f16 copies have no __ldcg overload of their own: their bytes load
// as an unsigned int, uint2 or uint4 (ld.global.cg.v4.u32 for 16 bytes).
TEST_P(CacheOpVector, Bf16AndF16CopiesValidateAndCompile) {
  const auto [c, w] = GetParam();
  Lowered l = lower_and_run(kVectorFusion, c, w);
  EXPECT_EQ(l.error, "");
  const std::string body = kernel_text(l.kernel.source.source);
  const std::string copy = "sl_vec_copy_" + qualifier(c) + "<";
  EXPECT_THAT(body, ::testing::HasSubstr(copy + "sl_bfloat16, " + std::to_string(w) + ">"));
  EXPECT_THAT(body, ::testing::HasSubstr(copy + "sl_half, " + std::to_string(w) + ">"));
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  const std::string vec = w == 2 ? "" : w == 4 ? "v2\\." : "v4\\.";
  const std::regex load("ld\\.global\\." + qualifier(c) + "\\." + vec + "u32");
  for (const std::string& ptx : ptx_of(l.kernel.source))
    EXPECT_TRUE(std::regex_search(ptx, load)) << ptx;
}

std::vector<VectorCase> vector_cases() {
  std::vector<VectorCase> v;
  for (CacheOp c : {CacheOp::AllLevels, CacheOp::Global, CacheOp::Streaming})
    for (int w : {2, 4, 8}) v.push_back({c, w});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Widths, CacheOpVector, ::testing::ValuesIn(vector_cases()),
                         [](const auto& info) {
                           return std::string(ir::cache_op_name(info.param.cache)) + "_" +
                                  std::to_string(info.param.width * 2) + "bytes";
                         });

}  // namespace
}  // namespace schedlab::lower::testing
