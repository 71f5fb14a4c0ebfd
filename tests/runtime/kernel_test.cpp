// The backend-independent runtime pieces: the kernel parameter ABI
// (ParamPack), the source hash, and the cache directory lookup.
#include "schedlab/runtime/kernel.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "test_support.h"

namespace schedlab::runtime {
namespace {

using test_support::user_error_of;

// The runtime header's Tensor<T, N, I>, as the kernel sees its parameters.
template <typename T, int N, typename I>
struct Tensor {
  T* data;
  I size[N];
  I stride[N];
};

template <typename S>
S read_param(ParamPack& p, size_t i) {
  S s;
  std::memcpy(&s, p.pointers()[i], sizeof s);
  return s;
}

TEST(ParamPack, Int32LayoutMatchesTensorStruct) {
  float x = 0;
  double y = 0;
  ParamPack p({{&x, ir::DataType::F32, {3, 5}, {5, 1}}, {&y, ir::DataType::F64, {7}, {-2}}}, 32);
  static_assert(sizeof(Tensor<float, 2, int32_t>) == 24);
  auto a = read_param<Tensor<float, 2, int32_t>>(p, 0);
  EXPECT_EQ(a.data, &x);
  EXPECT_EQ(a.size[0], 3);
  EXPECT_EQ(a.size[1], 5);
  EXPECT_EQ(a.stride[0], 5);
  EXPECT_EQ(a.stride[1], 1);
  auto b = read_param<Tensor<double, 1, int32_t>>(p, 1);
  EXPECT_EQ(b.data, &y);
  EXPECT_EQ(b.size[0], 7);
  EXPECT_EQ(b.stride[0], -2);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.pointers()[i]) % alignof(void*), 0u);
}

TEST(ParamPack, Int64LayoutAndRankZero) {
  int64_t big = int64_t{1} << 40;
  float x = 0;
  ParamPack p(
      {{&x, ir::DataType::F32, {2, big, 4}, {big * 4, 4, 1}}, {&x, ir::DataType::F32, {}, {}}}, 64);
  auto a = read_param<Tensor<float, 3, int64_t>>(p, 0);
  EXPECT_EQ(a.data, &x);
  EXPECT_EQ(a.size[1], big);
  EXPECT_EQ(a.stride[0], big * 4);
  EXPECT_EQ(a.stride[2], 1);
  EXPECT_EQ(read_param<float*>(p, 1), &x);
}

TEST(ParamPack, SizeOverflowsInt32) {
  float x = 0;
  EXPECT_EQ(user_error_of([&] {
              ParamPack p({{&x, ir::DataType::F32, {4}, {1}},
                           {&x, ir::DataType::F32, {2, int64_t{1} << 31}, {1, 1}}},
                          32);
            }),
            "kernel argument 1: size[1] = 2147483648 does not fit the 32-bit index type the "
            "kernel was generated with");
  // The same sizes fit int64.
  ParamPack ok({{&x, ir::DataType::F32, {2, int64_t{1} << 31}, {1, 1}}}, 64);
}

TEST(ParamPack, StrideOverflowsInt32) {
  float x = 0;
  EXPECT_EQ(user_error_of([&] {
              ParamPack p({{&x, ir::DataType::F32, {2}, {-(int64_t{1} << 31) - 1}}}, 32);
            }),
            "kernel argument 0: stride[0] = -2147483649 does not fit the 32-bit index type the "
            "kernel was generated with");
}

TEST(ParamPack, RankMismatch) {
  float x = 0;
  EXPECT_EQ(user_error_of([&] {
              ParamPack p({{&x, ir::DataType::F32, {2, 3}, {1}}}, 32);
            }),
            "kernel argument 0: 2 sizes but 1 strides");
}

TEST(ParamPack, BadIndexBits) {
  EXPECT_EQ(user_error_of([&] { ParamPack p({}, 16); }),
            "kernel parameters: index_bits must be 32 or 64, got 16");
}

TEST(KernelSourceHash, IsFnv1a64Hex) {
  EXPECT_EQ(KernelSource{.source = ""}.hash(), "cbf29ce484222325");
  EXPECT_EQ(KernelSource{.source = "a"}.hash(), "af63dc4c8601ec8c");
  EXPECT_NE(KernelSource{.source = "ab"}.hash(), KernelSource{.source = "ba"}.hash());
}

// Sets environment variables for one scope and restores them after.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (auto& [name, old] : saved_)
      old ? setenv(name.c_str(), old->c_str(), 1) : unsetenv(name.c_str());
  }
  void set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    value ? setenv(name.c_str(), value, 1) : unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(CacheDir, Precedence) {
  ScopedEnv env;
  env.set("SCHEDLAB_CACHE_DIR", "/c/env");
  env.set("XDG_CACHE_HOME", "/c/xdg");
  env.set("HOME", "/c/home");
  EXPECT_EQ(cache_dir("/c/flag"), "/c/flag");
  EXPECT_EQ(cache_dir(), "/c/env");
  env.set("SCHEDLAB_CACHE_DIR", nullptr);
  EXPECT_EQ(cache_dir(), "/c/xdg/schedlab");
  env.set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(cache_dir(), "/c/home/.cache/schedlab");
  env.set("HOME", nullptr);
  EXPECT_EQ(cache_dir(), (std::filesystem::temp_directory_path() / "schedlab-cache").string());
}

}  // namespace
}  // namespace schedlab::runtime
