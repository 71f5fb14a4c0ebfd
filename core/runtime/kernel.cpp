// The backend-independent half of the runtime: source hashing, the kernel
// parameter ABI and the cache location.
#include "schedlab/runtime/kernel.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "schedlab/base/error.h"
#include "schedlab/runtime/device.h"

namespace schedlab::runtime {

Residency resident_blocks(const DeviceProperties& d, int64_t threads, size_t shared_bytes,
                          int registers) {
  Residency r;
  r.per_sm = d.max_blocks_per_sm;
  r.limit = "blocks";
  const int64_t whole = (threads + d.warp_size - 1) / d.warp_size * d.warp_size;
  auto limit = [&](int64_t n, const char* what) {
    if (n < r.per_sm) {
      r.per_sm = n;
      r.limit = what;
    }
  };
  if (whole > 0 && d.max_threads_per_sm > 0) limit(d.max_threads_per_sm / whole, "threads");
  if (shared_bytes > 0 && d.shared_bytes_per_sm > 0)
    limit(static_cast<int64_t>(d.shared_bytes_per_sm / shared_bytes), "shared memory");
  if (registers > 0 && d.registers_per_sm > 0)
    limit(d.registers_per_sm / (int64_t{registers} * whole), "registers");
  r.total = r.per_sm * d.sm_count;
  return r;
}

std::string KernelSource::hash() const {
  // FNV-1a, 64 bits: stable across runs and machines, which std::hash is not.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : source) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = kHex[h & 0xf];
  return out;
}

void Backend::launch_traced(CompiledKernel& k, const LaunchDims&, const std::vector<TensorArg>&,
                            const TraceKernel&, AccessObserver&) {
  user_error << "launch of '" << k.source().name << "': the " << name()
             << " backend cannot trace memory accesses; the sanitizer and the access counts "
                "run on the cpu backend";
}

namespace {

// Appends v as the index type I, checking that it fits.
template <typename I>
void put_index(std::vector<std::byte>& blob, int64_t v, size_t arg, const char* what, size_t dim,
               int index_bits) {
  if (v < std::numeric_limits<I>::min() || v > std::numeric_limits<I>::max())
    user_error << "kernel argument " << arg << ": " << what << "[" << dim << "] = " << v
               << " does not fit the " << index_bits
               << "-bit index type the kernel was generated with";
  I x = static_cast<I>(v);
  const auto* p = reinterpret_cast<const std::byte*>(&x);
  blob.insert(blob.end(), p, p + sizeof x);
}

template <typename I>
std::vector<std::byte> pack_tensor(const TensorArg& a, size_t arg, int index_bits) {
  // Exactly the layout of `struct Tensor<T, N, I> { T* data; I size[N]; I stride[N]; }`.
  std::vector<std::byte> blob(sizeof(void*));
  std::memcpy(blob.data(), &a.data, sizeof(void*));
  for (size_t d = 0; d < a.sizes.size(); ++d)
    put_index<I>(blob, a.sizes[d], arg, "size", d, index_bits);
  for (size_t d = 0; d < a.strides.size(); ++d)
    put_index<I>(blob, a.strides[d], arg, "stride", d, index_bits);
  // The struct's alignment is the pointer's; sizeof rounds up to it.
  blob.resize((blob.size() + alignof(void*) - 1) / alignof(void*) * alignof(void*));
  return blob;
}

}  // namespace

ParamPack::ParamPack(const std::vector<TensorArg>& args, int index_bits) {
  user_assert(index_bits == 32 || index_bits == 64)
      << "kernel parameters: index_bits must be 32 or 64, got " << index_bits;
  blobs_.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorArg& a = args[i];
    user_assert(a.sizes.size() == a.strides.size())
        << "kernel argument " << i << ": " << a.sizes.size() << " sizes but " << a.strides.size()
        << " strides";
    blobs_.push_back(index_bits == 32 ? pack_tensor<int32_t>(a, i, index_bits)
                                      : pack_tensor<int64_t>(a, i, index_bits));
  }
  // Taken after every blob exists: the vector of blobs no longer moves.
  for (auto& b : blobs_) ptrs_.push_back(b.data());
}

std::string cache_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (std::string d = env("SCHEDLAB_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/schedlab";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/schedlab";
  // No home (some CI sandboxes): a per-machine temporary location still caches.
  return (std::filesystem::temp_directory_path() / "schedlab-cache").string();
}

}  // namespace schedlab::runtime
