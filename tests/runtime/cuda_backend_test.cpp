// The CUDA backend: NVRTC compile-only checks that run on any machine. The
// launch/timing checks that need a device are in cuda_device_test.cpp.
#include "schedlab/runtime/cuda_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "schedlab/base/error.h"
#include "schedlab/codegen/runtime_header.h"

namespace schedlab::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// A fresh cache directory per test, so parallel ctest runs never share one.
std::string test_cache_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(SCHEDLAB_BINARY_DIR) / "cuda-test-cache" / info->name();
  fs::remove_all(dir);
  return dir.string();
}

KernelSource with_header(const std::string& body) {
  KernelSource src;
  src.source = std::string(codegen::runtime_header()) + body;
  src.has_barrier = body.find("__syncthreads") != std::string::npos;
  return src;
}

// Exercises the parts of the runtime header NVRTC is most likely to reject:
// Tensor with an explicit index type, the half conversions, sl_max, and
// shared memory with barriers.
const char* kHeaderKernel = R"(
extern "C" __global__ void schedlab_kernel(Tensor<sl_half, 2, int> out, Tensor<float, 2, int> in) {
  __shared__ float tile[128];
  int row = blockIdx.x, col = threadIdx.x;
  float v = col < in.size[1] ? in.data[row * in.stride[0] + col * in.stride[1]] : -SL_INF;
  tile[col] = sl_to_float(sl_to_half(v));
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (col < s) tile[col] = sl_max(tile[col], tile[col + s]);
    __syncthreads();
  }
  if (col < out.size[1]) out.data[row * out.stride[0] + col * out.stride[1]] = sl_to_half(v - tile[0]);
}
)";

TEST(CudaTest, UnavailableWithoutDriverSaysWhy) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THAT(why, ::testing::AnyOf(HasSubstr("libcuda"), HasSubstr("no device"),
                                    HasSubstr("CUDA_ERROR_NO_DEVICE")));
  EXPECT_EQ(cuda_device_properties(), std::nullopt);
  try {
    make_cuda_backend(test_cache_dir());
    FAIL() << "make_cuda_backend succeeded without a device";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "no CUDA device: " + why);
  }
}

TEST(CudaTest, NvrtcCompilesRuntimeHeaderKernelToCubin) {
  std::string log;
  std::string cubin = nvrtc_compile(with_header(kHeaderKernel), "sm_90", &log, test_cache_dir());
  EXPECT_EQ(log, "");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

// The device runtime is a real .cuh (core/codegen/runtime.cuh), embedded
// verbatim: the file on disk compiles on its own, and is what kernels get.
TEST(CudaTest, RuntimeCuhCompilesOnItsOwnAndIsTheEmbeddedHeader) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/core/codegen/runtime.cuh");
  ASSERT_TRUE(in.good());
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file, std::string(codegen::runtime_header()));
  KernelSource alone;
  alone.source = file;
  std::string log;
  EXPECT_NO_THROW(nvrtc_compile(alone, "compute_90", &log, test_cache_dir())) << log;
}

TEST(CudaTest, NvrtcPtxNamesTheKernelAndTarget) {
  std::string ptx =
      nvrtc_compile(with_header(kHeaderKernel), "compute_90", nullptr, test_cache_dir());
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry schedlab_kernel("));
  EXPECT_THAT(ptx, HasSubstr(".shared"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync"));
}

TEST(CudaTest, NvrtcErrorCarriesLogAndSavedSource) {
  std::string dir = test_cache_dir();
  KernelSource src = with_header("extern \"C\" __global__ void schedlab_kernel() { int x = ; }\n");
  std::string log;
  try {
    nvrtc_compile(src, "sm_90", &log, dir);
    FAIL() << "a syntax error compiled";
  } catch (const UserError& e) {
    fs::path saved = fs::path(dir) / (src.hash() + ".cu");
    EXPECT_THAT(e.message(), StartsWith("nvrtc: kernel 'schedlab_kernel' does not compile for "
                                        "sm_90 (NVRTC_ERROR_COMPILATION); source saved to " +
                                        saved.string() + "\n"));
    EXPECT_THAT(log, HasSubstr(src.hash() + ".cu("));  // positions point into the saved file
    EXPECT_THAT(log, HasSubstr("error: expected an expression"));
    EXPECT_THAT(e.message(), HasSubstr(log));
    std::ifstream in(saved);
    ASSERT_TRUE(in) << saved;
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), src.source);
  }
}

TEST(CudaTest, NvrtcRejectsUnknownArchSpelling) {
  try {
    nvrtc_compile(with_header(kHeaderKernel), "90");
    FAIL() << "arch \"90\" accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(),
              "nvrtc: arch must be sm_XX (CUBIN) or compute_XX (PTX), got '90' (kernel "
              "'schedlab_kernel')");
  }
}

// The tests that need a device are in cuda_device_test.cpp
// (runtime_cuda_device_test, CTest label gpu).

}  // namespace
}  // namespace schedlab::runtime
