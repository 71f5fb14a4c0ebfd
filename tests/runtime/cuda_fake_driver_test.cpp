// The CUDA backend's driver plumbing against fake_libcuda (found through this
// executable's rpath): loading, contexts, the CUBIN caches, launch arguments,
// timing and error messages, all without a GPU. Kernels do not execute here;
// cuda_backend_test.cpp checks results on a real device.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_libcuda.h"
#include "schedlab/base/error.h"
#include "schedlab/codegen/runtime_header.h"
#include "schedlab/runtime/cuda_backend.h"
#include "test_support.h"

namespace schedlab::runtime {
namespace {

namespace fs = std::filesystem;
using test_support::user_error_of;
using ::testing::HasSubstr;

const char* kKernel = R"(
extern "C" __global__ void schedlab_kernel(Tensor<float, 1, int> out, Tensor<float, 1, int> in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < in.size[0]) out.data[i * out.stride[0]] = sl_max(in.data[i * in.stride[0]], 0.0f);
}
)";

class CudaFakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(cuda_available(&why)) << why;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto* get =
        lib ? reinterpret_cast<FakeCudaState* (*)()>(dlsym(lib, "fake_cuda_state")) : nullptr;
    if (get == nullptr) GTEST_SKIP() << "libcuda.so.1 is a real driver, not the fake";
    fake_ = get();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::path(SCHEDLAB_BINARY_DIR) / "cuda-fake-cache" / info->name()).string();
    fs::remove_all(dir_);
    src_.source = std::string(codegen::runtime_header()) + kKernel;
    backend_ = make_cuda_backend(dir_);
  }

  fs::path cubin_path() const { return fs::path(dir_) / nvrtc_cache_name(src_, "sm_90"); }
  TensorArg vec(void* p, int64_t n) const { return TensorArg{p, ir::DataType::F32, {n}, {1}}; }

  FakeCudaState* fake_ = nullptr;
  std::string dir_;
  KernelSource src_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(CudaFakeDriverTest, PropertiesComeFromTheDevice) {
  auto p = cuda_device_properties();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->name, "Fake H100");
  EXPECT_EQ(p->arch, "sm_90");
  EXPECT_EQ(p->sm_count, 132);
  EXPECT_EQ(p->shared_bytes_per_block_optin, 227u * 1024);
  EXPECT_EQ(p->l2_bytes, size_t(40) << 20);
  EXPECT_DOUBLE_EQ(p->peak_bandwidth_bytes_per_s, 2.0 * 2619e6 * 5120 / 8);
  EXPECT_EQ(backend_->name(), "cuda");
}

TEST_F(CudaFakeDriverTest, CompileCachesInMemoryAndOnDisk) {
  int loads = fake_->module_loads;
  auto k = backend_->compile(src_);
  EXPECT_EQ(backend_->compile(src_), k);
  EXPECT_EQ(fake_->module_loads, loads + 1);
  ASSERT_TRUE(fs::exists(cubin_path()));

  // Another backend loads the image from disk and leaves the file alone.
  auto written = fs::last_write_time(cubin_path());
  EXPECT_NE(make_cuda_backend(dir_)->compile(src_), nullptr);
  EXPECT_EQ(fs::last_write_time(cubin_path()), written);

  // An image the driver rejects is rebuilt and replaced.
  std::ofstream(cubin_path(), std::ios::binary | std::ios::trunc) << "not a cubin";
  EXPECT_NE(make_cuda_backend(dir_)->compile(src_), nullptr);
  std::ifstream in(cubin_path(), std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4),
            "\x7f"
            "ELF");
}

// The disk cache's name holds the NVRTC version and every option: an image
// built with other options is never served (issue 14: it used to be
// <hash>.<arch>.cubin, so a changed option got a stale CUBIN).
TEST_F(CudaFakeDriverTest, ChangedOptionRecompiles) {
  const std::vector<std::string> extra{"-DSCHEDLAB_CACHE_TEST=1"};
  EXPECT_NE(nvrtc_cache_name(src_, "sm_90", extra), nvrtc_cache_name(src_, "sm_90"));
  EXPECT_NE(nvrtc_cache_name(src_, "sm_80"), nvrtc_cache_name(src_, "sm_90"));
  EXPECT_EQ(nvrtc_cache_name(src_, "sm_90"), nvrtc_cache_name(src_, "sm_90"));
  EXPECT_THAT(nvrtc_cache_name(src_, "sm_90"),
              ::testing::MatchesRegex(src_.hash() + "\\.sm_90\\.[0-9a-f]{8}\\.cubin"));

  ASSERT_NE(backend_->compile(src_), nullptr);
  ASSERT_TRUE(fs::exists(cubin_path()));
  const fs::path other = fs::path(dir_) / nvrtc_cache_name(src_, "sm_90", extra);
  ASSERT_FALSE(fs::exists(other));
  const auto written = fs::last_write_time(cubin_path());
  // The same source with one more option: compiled again, cached apart.
  EXPECT_NE(make_cuda_backend(dir_, extra)->compile(src_), nullptr);
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(fs::last_write_time(cubin_path()), written);
  // And that image is served from disk next time.
  const auto other_written = fs::last_write_time(other);
  EXPECT_NE(make_cuda_backend(dir_, extra)->compile(src_), nullptr);
  EXPECT_EQ(fs::last_write_time(other), other_written);
}

TEST_F(CudaFakeDriverTest, MissingKernelNameIsAUserError) {
  src_.name = "other";
  int unloads = fake_->module_unloads;
  EXPECT_EQ(user_error_of([&] { backend_->compile(src_); }),
            "cuda: kernel 'other' not found in its compiled module (" + cubin_path().string() +
                "): CUDA_ERROR_NOT_FOUND (fake description)");
  EXPECT_EQ(fake_->module_unloads, unloads + 1);
}

TEST_F(CudaFakeDriverTest, LaunchPassesDimsAndPackedTensors) {
  auto k = backend_->compile(src_);
  void* out = backend_->alloc(4000);
  void* in = backend_->alloc(4000);
  backend_->launch(*k, LaunchDims{{3, 2, 1}, {128, 2, 1}, 512}, {vec(out, 1000), vec(in, 1000)});
  EXPECT_THAT(fake_->grid, ::testing::ElementsAre(3u, 2u, 1u));
  EXPECT_THAT(fake_->block, ::testing::ElementsAre(128u, 2u, 1u));
  EXPECT_EQ(fake_->shared, 512u);
  // Tensor<float, 1, int>: the data pointer, then size and stride as int32.
  for (int i = 0; i < 2; ++i) {
    void* data = nullptr;
    int32_t size_stride[2] = {};
    std::memcpy(&data, fake_->params[i], 8);
    std::memcpy(size_stride, fake_->params[i] + 8, 8);
    EXPECT_EQ(data, i == 0 ? out : in) << "param " << i;
    EXPECT_THAT(size_stride, ::testing::ElementsAre(1000, 1)) << "param " << i;
  }
  backend_->free(out);
  backend_->free(in);
}

TEST_F(CudaFakeDriverTest, GridBarriersLaunchCooperativelyAfterTheOccupancyCheck) {
  // A kernel with grid barriers (KernelSource::grid_sync): cuLaunchCooperativeKernel,
  // after the occupancy query says every block is resident (132 SMs x 2).
  KernelSource coop = src_;
  coop.source += "// (a unit of its own: compiled kernels are cached by source)\n";
  coop.grid_sync = true;
  auto k = backend_->compile(coop);
  void* out = backend_->alloc(4000);
  void* in = backend_->alloc(4000);
  const int launches = fake_->launches, queries = fake_->occupancy_queries;
  backend_->launch(*k, LaunchDims{{66, 2, 1}, {512, 1, 1}, 0}, {vec(out, 1000), vec(in, 1000)});
  EXPECT_EQ(fake_->cooperative_launches, 1);
  EXPECT_EQ(fake_->launches, launches) << "not a plain cuLaunchKernel";
  EXPECT_EQ(fake_->occupancy_queries, queries + 1);
  EXPECT_THAT(fake_->grid, ::testing::ElementsAre(66u, 2u, 1u));
  // More blocks than are resident at once: refused before the driver is asked.
  EXPECT_THAT(user_error_of([&] {
                backend_->launch(*k, LaunchDims{{133, 2, 1}, {512, 1, 1}, 0},
                                 {vec(out, 1000), vec(in, 1000)});
              }),
              HasSubstr("a kernel with grid barriers (grid-persistent reductions) needs all 266 "
                        "blocks of grid (133,2,1) resident at once, but"));
  EXPECT_EQ(fake_->cooperative_launches, 1);
  // A kernel without grid barriers launches as before.
  auto plain = backend_->compile(src_);
  backend_->launch(*plain, LaunchDims{{3, 1, 1}, {128, 1, 1}, 0}, {vec(out, 1000), vec(in, 1000)});
  EXPECT_EQ(fake_->launches, launches + 1);
  EXPECT_EQ(fake_->cooperative_launches, 1);
  backend_->free(out);
  backend_->free(in);
}

TEST_F(CudaFakeDriverTest, LaunchAndRunErrorsNameKernelDimsAndError) {
  auto k = backend_->compile(src_);
  void* buf = backend_->alloc(4);
  std::vector<TensorArg> args = {vec(buf, 1), vec(buf, 1)};
  EXPECT_EQ(user_error_of([&] {
              backend_->launch(*k, LaunchDims{{1, 1, 1}, {4096, 1, 1}, 0}, args);
            }),
            "cuda: launching kernel 'schedlab_kernel' (grid (1, 1, 1), block (4096, 1, 1), shared "
            "0 B) failed: CUDA_ERROR_INVALID_VALUE (fake description)");
  fake_->next_sync_error = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
  EXPECT_EQ(user_error_of([&] {
              backend_->launch(*k, LaunchDims{{2, 1, 1}, {32, 1, 1}, 0}, args);
            }),
            "cuda: running kernel 'schedlab_kernel' (grid (2, 1, 1), block (32, 1, 1), shared 0 "
            "B) failed: CUDA_ERROR_ILLEGAL_ADDRESS (fake description)");
  EXPECT_EQ(user_error_of([&] {
              backend_->launch(*k, LaunchDims{{0, 1, 1}, {32, 1, 1}, 0}, args);
            }),
            "cuda: kernel 'schedlab_kernel': launch extents must be positive and fit 32 bits, got "
            "grid (0, 1, 1), block (32, 1, 1), shared 0 B");
  backend_->free(buf);
}

TEST_F(CudaFakeDriverTest, LargeDynamicSharedMemoryOptsInOnce) {
  auto k = backend_->compile(src_);
  void* buf = backend_->alloc(4);
  std::vector<TensorArg> args = {vec(buf, 1), vec(buf, 1)};
  int opt_ins = fake_->smem_opt_ins;
  backend_->launch(*k, LaunchDims{{1, 1, 1}, {32, 1, 1}, 40 * 1024}, args);
  EXPECT_EQ(fake_->smem_opt_ins, opt_ins);
  backend_->launch(*k, LaunchDims{{1, 1, 1}, {32, 1, 1}, 100 * 1024}, args);
  backend_->launch(*k, LaunchDims{{1, 1, 1}, {32, 1, 1}, 100 * 1024}, args);
  EXPECT_EQ(fake_->smem_opt_ins, opt_ins + 1);
  EXPECT_EQ(fake_->shared, 100u * 1024);
  backend_->free(buf);
}

TEST_F(CudaFakeDriverTest, TimeFlushesL2BeforeEveryRepetition) {
  auto k = backend_->compile(src_);
  void* buf = backend_->alloc(4);
  std::vector<TensorArg> args = {vec(buf, 1), vec(buf, 1)};
  int launches = fake_->launches, memsets = fake_->memsets;
  Timing t = backend_->time(*k, LaunchDims{}, args, 2, 4);
  EXPECT_EQ(t.clock, "cuda-events");
  ASSERT_EQ(t.seconds.size(), 4u);
  for (double s : t.seconds) EXPECT_GT(s, 0.0);
  EXPECT_EQ(fake_->launches, launches + 6);
  EXPECT_EQ(fake_->memsets, memsets + 4);
  EXPECT_EQ(fake_->last_memset_bytes, size_t(80) << 20);  // twice the 40 MiB L2
  // No repetition: only the warm-up (the sweep's timer warms up so; the H200
  // check of 2026-12-04 found every sweep on the GPU stopped here).
  launches = fake_->launches, memsets = fake_->memsets;
  EXPECT_TRUE(backend_->time(*k, LaunchDims{}, args, 3, 0).seconds.empty());
  EXPECT_EQ(fake_->launches, launches + 3);
  EXPECT_EQ(fake_->memsets, memsets);
  EXPECT_EQ(user_error_of([&] { backend_->time(*k, LaunchDims{}, args, 1, -1); }),
            "cuda: time() needs warmup >= 0 and reps >= 0, got warmup 1, reps -1 (kernel "
            "'schedlab_kernel')");
  backend_->free(buf);
}

TEST_F(CudaFakeDriverTest, MemoryRoundTrip) {
  EXPECT_EQ(backend_->alloc(0), nullptr);
  backend_->free(nullptr);
  std::vector<float> x = {1, 2, 3, 4}, y(4, -1.0f);
  void* p = backend_->alloc(16);
  backend_->copy_to_device(p, x.data(), 16);
  backend_->copy_to_host(y.data(), p, 16);
  EXPECT_EQ(y, x);
  backend_->memset_zero(p, 8);
  backend_->copy_to_host(y.data(), p, 16);
  EXPECT_THAT(y, ::testing::ElementsAre(0.0f, 0.0f, 3.0f, 4.0f));
  backend_->free(p);
}

TEST_F(CudaFakeDriverTest, KernelOutlivesItsBackend) {
  int retained = fake_->retained, unloads = fake_->module_unloads;
  auto k = backend_->compile(src_);
  backend_.reset();
  EXPECT_EQ(fake_->retained, retained);  // the kernel still holds the context
  k.reset();
  EXPECT_EQ(fake_->module_unloads, unloads + 1);
  EXPECT_EQ(fake_->retained, retained - 1);
}

TEST_F(CudaFakeDriverTest, UsableFromAnotherThread) {
  auto k = backend_->compile(src_);
  std::string error = "not run";
  std::thread([&] {
    try {
      void* buf = backend_->alloc(4);
      backend_->launch(*k, LaunchDims{}, {vec(buf, 1), vec(buf, 1)});
      backend_->free(buf);
      error = "";
    } catch (const UserError& e) {
      error = e.message();
    }
  }).join();
  EXPECT_EQ(error, "");
}

}  // namespace
}  // namespace schedlab::runtime
