// Helpers for the CPU backend tests: a temporary cache directory per test,
// kernel units built on the runtime header, and buffers owned by a backend.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "schedlab/codegen/runtime_header.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime::testing {

/// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "schedlab-test-XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The runtime header followed by `body`: a whole unit, as codegen emits it.
inline std::string unit(std::string_view body) {
  return std::string(codegen::runtime_header()) + std::string(body);
}

/// Replaces every `from` in `s` by `to`.
inline std::string subst(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// A buffer of T allocated by a backend, filled from and read back to host vectors.
template <typename T>
class Buffer {
 public:
  Buffer(Backend& b, const std::vector<T>& host) : b_(b), n_(host.size()) {
    p_ = b_.alloc(bytes());
    b_.copy_to_device(p_, host.data(), bytes());
  }
  Buffer(Backend& b, size_t n) : b_(b), n_(n) {
    p_ = b_.alloc(bytes());
    b_.memset_zero(p_, bytes());
  }
  ~Buffer() { b_.free(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::vector<T> read() const {
    std::vector<T> out(n_);
    b_.copy_to_host(out.data(), p_, bytes());
    return out;
  }
  /// A view with the given sizes and strides (in elements).
  TensorArg arg(ir::DataType dt, std::vector<int64_t> sizes, std::vector<int64_t> strides) const {
    return TensorArg{p_, dt, std::move(sizes), std::move(strides)};
  }
  /// A contiguous 1-D view of the whole buffer.
  TensorArg arg1(ir::DataType dt) const { return arg(dt, {static_cast<int64_t>(n_)}, {1}); }

 private:
  size_t bytes() const { return n_ * sizeof(T); }
  Backend& b_;
  size_t n_;
  void* p_ = nullptr;
};

}  // namespace schedlab::runtime::testing
