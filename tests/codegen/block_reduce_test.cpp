// The runtime header's sl_block_reduce (warp shuffles plus shared memory),
// called directly from a hand-written unit on the CPU backend (or, built as
// codegen_block_reduce_gpu_test, the CUDA backend): block shapes around and
// across warps (1, 31, 32, 33, 64+7, 1024 threads), several groups per block
// (rows on threadIdx.y, also when rows straddle warps), reductions over
// threadIdx.y with threadIdx.x kept (groups that are not consecutive thread
// ids), x and z together, every op, f32/f64/i64, threads that do not
// participate, and NaN in some lanes. Values are small integers so that every
// combination order gives the exact result; each thread's result is compared
// with the host's combination of its group, so a thread that reads another
// group's segment or misses a lane shows. Each unit also compiles with NVRTC.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "lower_test_util.h"

namespace schedlab::codegen {
namespace {

using runtime::testing::Buffer;
using runtime::testing::subst;
using runtime::testing::unit;
using Dims = std::array<int64_t, 3>;
using Flags = std::array<bool, 3>;

// Four reductions in a row (the workspace is reused), the product over its
// own values `pin`; results at out[4 * g + op].
constexpr std::string_view kFrame = R"CUDA(
typedef Tensor<TYPE, 1, int32_t> TV;
typedef Tensor<int32_t, 1, int32_t> TP;
extern "C" __global__ void schedlab_kernel(TV in, TV pin, TP part, TV out) {
  SL_DYNAMIC_SMEM(sl_smem);
  TYPE* ws = reinterpret_cast<TYPE*>(sl_smem);
  const int n = blockDim.x * blockDim.y * blockDim.z;
  const int g = blockIdx.x * n + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const TYPE v = in.data[g];
  const bool p = part.data[g] != 0;
  out.data[4 * g + 0] = sl_block_reduce<FLAGS, TYPE>(SL_SITE(0), v, SlOpSum(), (TYPE)0, ws, p);
  out.data[4 * g + 1] = sl_block_reduce<FLAGS, TYPE>(SL_SITE(0), v, SlOpMax(), LOWEST, ws, p);
  out.data[4 * g + 2] = sl_block_reduce<FLAGS, TYPE>(SL_SITE(0), v, SlOpMin(), HIGHEST, ws, p);
  out.data[4 * g + 3] = sl_block_reduce<FLAGS, TYPE>(SL_SITE(0), pin.data[g], SlOpProd(), (TYPE)1, ws, p);
}
#ifdef SCHEDLAB_CPU
extern "C" void schedlab_kernel_entry(void** p) { schedlab_kernel(*(TV*)p[0], *(TV*)p[1], *(TP*)p[2], *(TV*)p[3]); }
#endif
)CUDA";

template <typename T>
struct TypeInfo;
template <>
struct TypeInfo<float> {
  static constexpr const char* name = "float";
  static constexpr const char* lowest = "(-SL_INF)";
  static constexpr const char* highest = "SL_INF";
  static constexpr ir::DataType dtype = ir::DataType::F32;
  static constexpr int64_t offset = 0;
};
template <>
struct TypeInfo<double> {
  static constexpr const char* name = "double";
  static constexpr const char* lowest = "(-(double)SL_INF)";
  static constexpr const char* highest = "((double)SL_INF)";
  static constexpr ir::DataType dtype = ir::DataType::F64;
  static constexpr int64_t offset = 0;
};
template <>
struct TypeInfo<int64_t> {
  static constexpr const char* name = "int64_t";
  static constexpr const char* lowest = "INT64_MIN";
  static constexpr const char* highest = "INT64_MAX";
  static constexpr ir::DataType dtype = ir::DataType::I64;
  // Values above 2^32, so that a 32-bit exchange of the bits would show.
  static constexpr int64_t offset = int64_t{1} << 36;
};

std::string flags_str(Flags f) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  return std::string(b(f[0])) + ", " + b(f[1]) + ", " + b(f[2]);
}

/// fixed: blockDim as template arguments (a kernel compiled for its block),
/// else 0s (read at run time).
template <typename T>
runtime::KernelSource kernel(Flags flags, Dims fixed) {
  std::string body = subst(std::string(kFrame), "FLAGS",
                           flags_str(flags) + ", " + std::to_string(fixed[0]) + ", " +
                               std::to_string(fixed[1]) + ", " + std::to_string(fixed[2]));
  body = subst(subst(body, "LOWEST", TypeInfo<T>::lowest), "HIGHEST", TypeInfo<T>::highest);
  runtime::KernelSource k;
  k.source = unit(subst(body, "TYPE", TypeInfo<T>::name));
  k.has_barrier = true;
  return k;
}

/// The host's allreduce of one op over the participating values of a group;
/// NaN in any of them gives NaN, as sl_max/sl_min and arithmetic do.
template <typename T>
T combine(int op, const std::vector<T>& vals) {
  T r = op == 0 ? T(0) : op == 3 ? T(1) : op == 1 ? std::numeric_limits<T>::lowest()
                                                  : std::numeric_limits<T>::max();
  if constexpr (std::is_floating_point_v<T>) {
    if (op == 1) r = -std::numeric_limits<T>::infinity();
    if (op == 2) r = std::numeric_limits<T>::infinity();
  }
  for (T v : vals) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
    r = op == 0 ? r + v : op == 3 ? r * v : op == 1 ? std::max(r, v) : std::min(r, v);
  }
  return r;
}

/// Runs the unit for `flags` on a `block` (two blocks in the grid) and
/// compares every thread's four results with the host's. `nan_every` > 0 puts
/// NaN in every nan_every-th value (floating types). Once with the block read
/// at run time, once with it compiled in.
template <typename T>
void check_once(Flags flags, Dims block, int nan_every, bool fixed);
template <typename T>
void check(Flags flags, Dims block, int nan_every = 0) {
  check_once<T>(flags, block, nan_every, false);
  check_once<T>(flags, block, nan_every, true);
}

template <typename T>
void check_once(Flags flags, Dims block, int nan_every, bool fixed) {
  SCOPED_TRACE("flags " + flags_str(flags) + ", block " + std::to_string(block[0]) + "x" +
               std::to_string(block[1]) + "x" + std::to_string(block[2]) + ", " +
               TypeInfo<T>::name + (nan_every ? ", NaN lanes" : "") +
               (fixed ? ", block compiled in" : ", block read at run time"));
  const runtime::KernelSource src = kernel<T>(flags, fixed ? block : Dims{0, 0, 0});
  lower::testing::expect_nvrtc_accepts(src);
  runtime::Backend& be = lower::testing::test_backend();
  const int64_t n = block[0] * block[1] * block[2], grid = 2, total = n * grid;
  std::vector<T> in(static_cast<size_t>(total));
  std::vector<int32_t> part(in.size());
  for (int64_t g = 0; g < total; ++g) {
    // Small integers (sums and products stay exact in f32): values in
    // [-40, 40], products of +-1 with a rare 2, and every 7th thread out.
    const int64_t v = (g * 37 + 11) % 81 - 40;
    in[static_cast<size_t>(g)] = static_cast<T>(TypeInfo<T>::offset + v);
    part[static_cast<size_t>(g)] = g % 7 != 3;
    if constexpr (std::is_floating_point_v<T>)
      if (nan_every > 0 && g % nan_every == 5) in[static_cast<size_t>(g)] = std::nan("");
  }
  // The products: +-1 (and 2 in one place per 97) over the same participants.
  std::vector<T> prod_in(in.size());
  for (size_t g = 0; g < in.size(); ++g)
    prod_in[g] = std::isnan(static_cast<double>(in[g])) ? in[g]
                 : g % 97 == 13                         ? T(2)
                 : g % 3 == 0                           ? T(-1)
                                                        : T(1);
  auto compiled = be.compile(src);
  Buffer<T> in_buf(be, in), prod_buf(be, prod_in);
  Buffer<int32_t> part_buf(be, part);
  Buffer<T> out(be, static_cast<size_t>(4 * total));
  runtime::LaunchDims dims;
  dims.grid = {grid, 1, 1};
  dims.block = block;
  dims.shared_bytes = static_cast<size_t>(n) * sizeof(T);
  be.launch(*compiled, dims,
            {in_buf.arg1(TypeInfo<T>::dtype), prod_buf.arg1(TypeInfo<T>::dtype),
             part_buf.arg1(ir::DataType::I32), out.arg1(TypeInfo<T>::dtype)});
  const std::vector<T> got_all = out.read();
  // Group the threads by block and by their kept thread indices.
  std::map<std::array<int64_t, 4>, std::vector<int64_t>> groups;
  for (int64_t b = 0; b < grid; ++b)
    for (int64_t z = 0; z < block[2]; ++z)
      for (int64_t y = 0; y < block[1]; ++y)
        for (int64_t x = 0; x < block[0]; ++x) {
          const int64_t g = b * n + x + block[0] * (y + block[1] * z);
          groups[{b, flags[0] ? -1 : x, flags[1] ? -1 : y, flags[2] ? -1 : z}].push_back(g);
        }
  int failures = 0;
  for (const auto& [key, members] : groups) {
    for (int op = 0; op < 4; ++op) {
      const std::vector<T>& src_vals = op == 3 ? prod_in : in;
      std::vector<T> vals;
      for (int64_t g : members)
        if (part[static_cast<size_t>(g)]) vals.push_back(src_vals[static_cast<size_t>(g)]);
      const T want = combine(op, vals);
      for (int64_t g : members) {
        const T got = got_all[static_cast<size_t>(4 * g + op)];
        const bool same = std::isnan(static_cast<double>(want))
                              ? std::isnan(static_cast<double>(got))
                              : got == want;
        if (!same && ++failures <= 5)
          ADD_FAILURE() << "op " << op << " (sum, max, min, prod), thread " << g << " of group ("
                        << key[0] << ", " << key[1] << ", " << key[2] << ", " << key[3]
                        << ") of " << members.size() << " threads: got " << got << ", expected "
                        << want;
      }
    }
  }
}

using BlockReduce = lower::testing::BackendTest;

constexpr Flags kX{true, false, false};
constexpr Flags kY{false, true, false};
constexpr Flags kXY{true, true, false};
constexpr Flags kXZ{true, false, true};
constexpr Flags kZ{false, false, true};
constexpr Flags kXYZ{true, true, true};

TEST_F(BlockReduce, OneGroupAroundAWarp) {
  for (int64_t t : {1, 2, 31, 32, 33, 64 + 7, 96, 1000, 1024}) check<float>(kX, {t, 1, 1});
}

TEST_F(BlockReduce, RowsOnTIDy) {
  // Rows of 32 (whole warps), of 33 and 5 (rows straddle warps), of 16 (two
  // rows per warp) and of 100 with a partial last warp.
  for (Dims d : {Dims{32, 4, 1}, Dims{33, 3, 1}, Dims{5, 13, 1}, Dims{16, 8, 1}, Dims{100, 3, 1},
                 Dims{1, 40, 1}, Dims{32, 32, 1}})
    check<float>(kX, d);
}

TEST_F(BlockReduce, OverTIDyWithTIDxKept) {
  // Groups that are not consecutive thread ids: strided by blockDim.x.
  for (Dims d : {Dims{32, 8, 1}, Dims{8, 5, 1}, Dims{3, 33, 1}, Dims{1, 70, 1}, Dims{32, 32, 1}})
    check<float>(kY, d);
}

TEST_F(BlockReduce, SeveralDimensions) {
  check<float>(kXY, {32, 4, 1});
  check<float>(kXY, {7, 9, 2});
  check<float>(kXZ, {5, 7, 3});
  check<float>(kZ, {4, 2, 9});
  check<float>(kXYZ, {3, 3, 3});
  check<float>(kXYZ, {16, 8, 8});
}

TEST_F(BlockReduce, NaNLanesPropagate) {
  // NaN in some lanes of some groups (NaN in a non-participating thread
  // must not count: every 7th thread is out).
  check<float>(kX, {64 + 7, 1, 1}, 61);
  check<float>(kX, {33, 3, 1}, 29);
  check<float>(kY, {8, 5, 1}, 13);
  check<double>(kX, {1024, 1, 1}, 300);
}

TEST_F(BlockReduce, DoubleAndInt64) {
  for (Dims d : {Dims{33, 1, 1}, Dims{32, 4, 1}, Dims{5, 13, 1}}) {
    check<double>(kX, d);
    check<int64_t>(kX, d);
  }
  check<int64_t>(kY, {8, 5, 1});
  check<double>(kY, {3, 33, 1});
}

}  // namespace
}  // namespace schedlab::codegen
