// The CUDA backend on a device: launches, shared memory, the CUBIN cache,
// timing and launch errors. Every test skips when no device answers
// (runtime_cuda_gpu_test, CTest label gpu; the NVRTC compile-only checks
// are in cuda_backend_test.cpp).
#include "schedlab/runtime/cuda_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/codegen/runtime_header.h"

namespace schedlab::runtime {
namespace {

namespace fs = std::filesystem;
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

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    cache_dir_ = test_cache_dir();
    backend_ = make_cuda_backend(cache_dir_);
  }
  void TearDown() override {
    for (void* p : buffers_) backend_->free(p);
  }

  /// A device copy of `host`, viewed as a contiguous 1-D f32 tensor.
  TensorArg upload(const std::vector<float>& host) {
    void* p = backend_->alloc(host.size() * sizeof(float));
    buffers_.push_back(p);
    backend_->copy_to_device(p, host.data(), host.size() * sizeof(float));
    return TensorArg{p, ir::DataType::F32, {int64_t(host.size())}, {1}};
  }
  std::vector<float> download(const TensorArg& t) {
    std::vector<float> host(size_t(t.sizes[0]));
    backend_->copy_to_host(host.data(), t.data, host.size() * sizeof(float));
    return host;
  }

  std::string cache_dir_;
  std::unique_ptr<Backend> backend_;
  std::vector<void*> buffers_;
};

const char* kScale = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> out, Tensor<float, 1, int> in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < in.size[0]) out.data[i * out.stride[0]] = sl_max(2.0f * in.data[i * in.stride[0]] + 1.0f, 0.0f);
}
)";

const char* kBlockSum = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> out, Tensor<float, 1, int> in) {
  __shared__ float buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < in.size[0] ? in.data[i * in.stride[0]] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out.data[blockIdx.x * out.stride[0]] = buf[0];
}
)";

TEST_F(CudaDeviceTest, DeviceProperties) {
  auto p = cuda_device_properties();
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->arch, StartsWith("sm_"));
  EXPECT_EQ(p->warp_size, 32);
  EXPECT_GT(p->sm_count, 0);
  EXPECT_GE(p->max_threads_per_block, 1024);
  EXPECT_GE(p->shared_bytes_per_block, 48u * 1024);
  EXPECT_GT(p->l2_bytes, 0u);
  EXPECT_GT(p->peak_bandwidth_bytes_per_s, 1e11);
}

TEST_F(CudaDeviceTest, ElementwiseLaunch) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) - 500.0f;
  TensorArg in = upload(x), out = upload(std::vector<float>(x.size(), -7.0f));
  auto k = backend_->compile(with_header(kScale));
  backend_->launch(*k, LaunchDims{{4, 1, 1}, {256, 1, 1}, 0}, {out, in});
  std::vector<float> got = download(out);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], std::max(2.0f * x[i] + 1.0f, 0.0f)) << "i=" << i;
  }
}

TEST_F(CudaDeviceTest, SharedMemoryBlockSum) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17);
  TensorArg in = upload(x), out = upload(std::vector<float>(4, -1.0f));
  auto k = backend_->compile(with_header(kBlockSum));
  backend_->launch(*k, LaunchDims{{4, 1, 1}, {256, 1, 1}, 0}, {out, in});
  std::vector<float> got = download(out);
  for (size_t b = 0; b < 4; ++b) {
    size_t end = std::min(x.size(), 256 * (b + 1));
    EXPECT_EQ(got[b], std::accumulate(x.begin() + long(256 * b), x.begin() + long(end), 0.0f))
        << "block " << b;
  }
}

TEST_F(CudaDeviceTest, CompileIsCachedInMemoryAndOnDisk) {
  KernelSource src = with_header(kScale);
  auto a = backend_->compile(src);
  EXPECT_EQ(backend_->compile(src), a);
  auto props = cuda_device_properties();
  ASSERT_TRUE(props.has_value());
  // The name the backend gives it (the NVRTC version and options in its key).
  fs::path file = fs::path(cache_dir_) / nvrtc_cache_name(src, props->arch);
  EXPECT_TRUE(fs::exists(file)) << file;
  // A second backend finds the image on disk and never writes it again.
  auto before = fs::last_write_time(file);
  auto other = make_cuda_backend(cache_dir_);
  EXPECT_NE(other->compile(src), nullptr);
  EXPECT_EQ(fs::last_write_time(file), before);
}

TEST_F(CudaDeviceTest, TimeUsesCudaEvents) {
  std::vector<float> x(1 << 20, 1.0f);
  TensorArg in = upload(x), out = upload(x);
  auto k = backend_->compile(with_header(kScale));
  Timing t = backend_->time(*k, LaunchDims{{4096, 1, 1}, {256, 1, 1}, 0}, {out, in}, 2, 5);
  EXPECT_EQ(t.clock, "cuda-events");
  ASSERT_EQ(t.seconds.size(), 5u);
  for (double s : t.seconds) EXPECT_GT(s, 0.0);
  EXPECT_EQ(download(out)[0], 3.0f);
}

TEST_F(CudaDeviceTest, TimeWithNoRepetitionsOnlyWarmsUp) {
  // The sweep's timer warms a kernel up with time(k, dims, args, n, 0): the
  // contract of Backend::time (and the CPU backend) allows no timed launch.
  std::vector<float> x(1 << 10, 1.0f);
  TensorArg in = upload(x), out = upload(x);
  auto k = backend_->compile(with_header(kScale));
  Timing t = backend_->time(*k, LaunchDims{{4, 1, 1}, {256, 1, 1}, 0}, {out, in}, 3, 0);
  EXPECT_TRUE(t.seconds.empty());
  EXPECT_EQ(download(out)[0], 3.0f);
}

TEST_F(CudaDeviceTest, BadLaunchNamesKernelAndError) {
  TensorArg in = upload({1.0f}), out = upload({0.0f});
  auto k = backend_->compile(with_header(kScale));
  try {
    backend_->launch(*k, LaunchDims{{1, 1, 1}, {4096, 1, 1}, 0}, {out, in});
    FAIL() << "a 4096-thread block launched";
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), StartsWith("cuda: launching kernel 'schedlab_kernel' (grid (1, 1, "
                                        "1), block (4096, 1, 1), shared 0 B) failed: "
                                        "CUDA_ERROR_INVALID_VALUE"));
  }
}

}  // namespace
}  // namespace schedlab::runtime
