// ---- schedlab runtime header ----
#ifndef SCHEDLAB_CPU
#ifndef __CUDACC_RTC__
// nvcc (offline, e.g. `nvcc -arch=sm_90 -c`) has the standard headers.
#include <cstdint>
#else
// NVRTC has none: the fixed-width types and limits are spelled out.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT32_MAX 2147483647
#define INT32_MIN (-INT32_MAX - 1)
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-INT64_MAX - 1LL)
#endif
#define SL_FN __device__ __forceinline__
#define SL_NAN __int_as_float(0x7fffffff)
#define SL_INF __int_as_float(0x7f800000)
SL_FN uint32_t sl_f2u(float f) { return __float_as_uint(f); }
SL_FN float sl_u2f(uint32_t u) { return __uint_as_float(u); }
// Dynamic shared memory; the CPU shim maps it to the block's buffer.
#define SL_DYNAMIC_SMEM(name) extern __shared__ __align__(16) char name[]
#else
#define SL_FN inline
#define SL_NAN __builtin_nanf("")
#define SL_INF __builtin_inff()
inline uint32_t sl_f2u(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
inline float sl_u2f(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
#endif

// A strided view: sizes and strides (in elements) of index type I.
template <typename T, int N, typename I>
struct Tensor {
  T* data;
  I size[N];
  I stride[N];
};
template <typename T, typename I>
struct Tensor<T, 0, I> {
  T* data;
};

// Storage-only half types; arithmetic happens in float.
struct sl_half { uint16_t bits; };
struct sl_bfloat16 { uint16_t bits; };

SL_FN float sl_to_float(sl_bfloat16 h) { return sl_u2f(uint32_t(h.bits) << 16); }
SL_FN sl_bfloat16 sl_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // One instruction on sm_80+, the same round-to-nearest-even as below (a NaN
  // stays a NaN; only its payload may differ).
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return sl_bfloat16{h};
#else
  uint32_t u = sl_f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return sl_bfloat16{uint16_t((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return sl_bfloat16{uint16_t(u >> 16)};
#endif
}
SL_FN float sl_to_float(sl_half h) {
  uint32_t s = uint32_t(h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu;
  if (e == 0x1fu) return sl_u2f(s | 0x7f800000u | (m << 13));
  if (e == 0) {  // subnormal: m * 2^-24
    float v = float(m) * 5.9604644775390625e-8f;
    return s ? -v : v;
  }
  return sl_u2f(s | ((e + 112u) << 23) | (m << 13));
}
SL_FN sl_half sl_to_half(float f) {
  uint32_t u = sl_f2u(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sl_half{uint16_t(s | 0x7e00u)};   // NaN
  if (a >= 0x477ff000u) return sl_half{uint16_t(s | 0x7c00u)};  // rounds to inf
  if (a < 0x38800000u) {  // below 2^-14: subnormal, round to nearest even
    float v = sl_u2f(a) * 16777216.0f;  // in units of 2^-24, exact
    uint32_t q = uint32_t(v);
    float r = v - float(q);
    if (r > 0.5f || (r == 0.5f && (q & 1u))) ++q;
    return sl_half{uint16_t(s | q)};
  }
  uint32_t e = ((a >> 23) - 112u) << 10, m = (a >> 13) & 0x3ffu, rest = a & 0x1fffu;
  uint32_t h = e | m;
  if (rest > 0x1000u || (rest == 0x1000u && (m & 1u))) ++h;
  return sl_half{uint16_t(s | h)};
}
SL_FN float sl_to_float(float x) { return x; }

// Math whose NaN behaviour matches the reference evaluator.
template <typename T> SL_FN T sl_max(T a, T b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
template <typename T> SL_FN T sl_min(T a, T b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
template <typename T> SL_FN T sl_relu(T a) { return a != a ? a : (a > T(0) ? a : T(0)); }
SL_FN float sl_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
SL_FN double sl_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
SL_FN float sl_rsqrt(float x) { return 1.0f / sqrtf(x); }
SL_FN double sl_rsqrt(double x) { return 1.0 / sqrt(x); }
// Fast math (kir::Kernel::fast_math): f32 math through the hardware
// approximations. The CPU computes the formulas those instructions
// approximate: ex2.approx(x * log2 e), lg2.approx(x) * ln 2, a * rcp(b) with
// div.approx's zero (NaN for an infinite a) when 2^126 < |b| < 2^128, and
// 1/sqrt. The validation's error bounds (ref::EvalOptions::fast_math) cover
// both. pow keeps powf: __powf is NaN for a negative base.
#ifndef SCHEDLAB_CPU
SL_FN float sl_fast_exp(float x) { return __expf(x); }
SL_FN float sl_fast_log(float x) { return __logf(x); }
SL_FN float sl_fast_div(float a, float b) { return __fdividef(a, b); }
SL_FN float sl_fast_rsqrt(float x) { return rsqrtf(x); }
#else
SL_FN float sl_fast_exp(float x) { return exp2f(x * 1.44269504f); }
SL_FN float sl_fast_log(float x) { return log2f(x) * 0.693147181f; }
SL_FN float sl_fast_div(float a, float b) {
  const float m = fabsf(b);
  if (m > 0x1p126f && m < SL_INF) return a * (b > 0.0f ? 0.0f : -0.0f);
  return a * (1.0f / b);
}
SL_FN float sl_fast_rsqrt(float x) { return 1.0f / sqrtf(x); }
#endif
SL_FN float sl_fast_sigmoid(float x) { return sl_fast_div(1.0f, 1.0f + sl_fast_exp(-x)); }
// Mixed operand types: an int64 size divided by an int literal.
template <typename A, typename B> SL_FN auto sl_ceil_div(A a, B b) -> decltype(a + b) {
  return (a + b - 1) / b;
}
// Buffer accesses. The printer numbers every access site (the first
// argument) so that the CPU backend can trace them; on CUDA, and in a CPU
// unit that does not trace, they are plain accesses. SL_LD: one element's
// value; SL_ST(site, base, i, v): stores v at base[i] (the value travels
// with the store so the trace can tell a rewrite of the same value); SL_VLD/
// SL_VST: a pointer to n elements, the operands of sl_vec_copy (the trace's
// SL_VST is an object its sl_vec_copy reports with the copied bytes);
// SL_LOCAL: a Local array was just
// declared; SL_SYNC: __syncthreads at a barrier site; SL_SITE: a site id
// handed to a runtime function (sl_block_reduce's barriers).
#ifndef SCHEDLAB_TRACE
#define SL_LD(site, base, i) (base)[i]
#define SL_ST(site, base, i, v) ((base)[i] = (v))
#define SL_VLD(site, base, i, n) (&(base)[i])
#define SL_VST(site, base, i, n) (&(base)[i])
#define SL_LOCAL(site, name)
#define SL_SYNC(site) __syncthreads()
#endif
#define SL_SITE(site) (site)
// A w-wide copy as one vector access; the launch checked the alignment.
template <typename T, int N> struct alignas(sizeof(T) * N) SlVector { T v[N]; };
template <typename T, int N> SL_FN void sl_vec_copy(T* dst, const T* src) {
  *reinterpret_cast<SlVector<T, N>*>(dst) = *reinterpret_cast<const SlVector<T, N>*>(src);
}
// Reduction operators of block reductions; max and min propagate NaN as sl_max/sl_min.
struct SlOpSum {
  template <typename T> SL_FN T operator()(T a, T b) const { return a + b; }
};
struct SlOpProd {
  template <typename T> SL_FN T operator()(T a, T b) const { return a * b; }
};
struct SlOpMax {
  template <typename T> SL_FN T operator()(T a, T b) const { return sl_max(a, b); }
};
struct SlOpMin {
  template <typename T> SL_FN T operator()(T a, T b) const { return sl_min(a, b); }
};
// A block allreduce: combines `val` over the threads of the block that share
// their threadIdx in every dimension not reduced (X, Y, Z say which are) and
// returns the result to each of them (`site`: its barriers' access site,
// SL_SITE). Every thread of the block calls it (it
// synchronizes the block); a thread whose value must not count passes
// participate = false and contributes `init`. `ws` holds blockDim.x *
// blockDim.y * blockDim.z values and is free again when it returns. The
// combination order is a fixed tree, the same on every backend, and every
// thread of a group gets the bit-identical result.
//
// Warp shuffles plus shared memory, two or three barriers in all. A group
// whose threads are consecutive linear thread ids (the reduced dimensions
// come first, e.g. rows on threadIdx.y reduced over threadIdx.x) is reduced
// in place; any other (e.g. a reduction over threadIdx.y with threadIdx.x
// kept) is first transposed through `ws` so that it is. Then:
//  1. Each warp folds its lanes with __shfl_down_sync, per segment: the run
//     of its lanes that belong to one group (a group of 33 threads, or rows of
//     33, straddle warps). The segment's first lane ends up holding its
//     segment's combination and stores it in its own slot of `ws`.
//  2. Each thread combines its group's segments: with shuffles when groups are
//     whole warps (every warp of a group computes the same tree), otherwise
//     in a serial fold (at most 32 segments).
// The shuffle mask names only the lanes that exist: a block of 33 threads has
// a last warp of one lane.
template <typename T, typename Op>
SL_FN T sl_warp_reduce_down(T v, Op op, unsigned mask, unsigned lane, unsigned bound) {
  // Lane l combines lanes l, l+1, ... below `bound` (a bound that only grows
  // along the tree, so lane l ends with lanes [l, min(l + 32, bound))).
  for (unsigned o = 16u; o > 0u; o /= 2u) {
    T other = __shfl_down_sync(mask, v, o);
    if (lane + o < bound) v = op(v, other);
  }
  return v;
}
// A block whose shape the kernel fixes (BX, BY, BZ > 0) and whose groups are
// whole warps of consecutive thread ids: a butterfly (__shfl_xor_sync) in
// each warp, every warp's result in `ws`, then a butterfly over the group's
// warps. Every lane of a butterfly combines the same pairs (commuted), so
// every thread gets the bit-identical result. Two barriers, as below.
template <bool X, bool Y, bool Z, int BX, int BY, int BZ>
struct SlWholeWarps {
  static constexpr unsigned size = (X ? BX : 1) * (Y ? BY : 1) * (Z ? BZ : 1);
  static constexpr bool contiguous =
      (X || BX == 1 || !((Y && BY > 1) || (Z && BZ > 1))) && (Y || BY == 1 || !(Z && BZ > 1));
  static constexpr bool value = BX > 0 && BY > 0 && BZ > 0 && contiguous && size % 32u == 0u;
};
template <typename T, typename Op>
SL_FN T sl_warp_butterfly(T v, Op op) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <bool X, bool Y, bool Z, int BX, int BY, int BZ, typename T, typename Op>
SL_FN T sl_block_reduce_warps(int site, T v, Op op, T init, T* ws) {
  (void)site;
  constexpr unsigned nseg = SlWholeWarps<X, Y, Z, BX, BY, BZ>::size / 32u;
  const unsigned tid = threadIdx.x + (BY > 1 || BZ > 1 ? unsigned(BX) * (threadIdx.y + unsigned(BY) * threadIdx.z) : 0u);
  const unsigned lane = tid % 32u, warp = tid / 32u;
  v = sl_warp_butterfly(v, op);
  if (lane == 0u) ws[warp] = v;
  SL_SYNC(site);
  const unsigned first_warp = warp / nseg * nseg;
  T p = nseg == 1u ? v : (lane < nseg ? ws[first_warp + lane] : init);
  if (nseg > 1u) p = sl_warp_butterfly(p, op);
  SL_SYNC(site);  // every thread has read its result: ws may be reused
  return p;
}
// BX, BY, BZ: blockDim when the kernel fixes it at compile time (then the
// shape tests below fold away, and whole warps take the path above), 0 to
// read it at run time.
template <bool X, bool Y, bool Z, int BX, int BY, int BZ, typename T, typename Op>
SL_FN T sl_block_reduce(int site, T val, Op op, T init, T* ws, bool participate) {
  if constexpr (SlWholeWarps<X, Y, Z, BX, BY, BZ>::value)
    return sl_block_reduce_warps<X, Y, Z, BX, BY, BZ>(site, participate ? val : init, op, init, ws);
  (void)site;  // the barriers' site (SL_SYNC), for the CPU backend's trace
  const unsigned bx = BX ? unsigned(BX) : blockDim.x, by = BY ? unsigned(BY) : blockDim.y,
                 bz = BZ ? unsigned(BZ) : blockDim.z;
  const unsigned nx = X ? bx : 1u, ny = Y ? by : 1u, nz = Z ? bz : 1u;
  const unsigned size = nx * ny * nz, nthreads = bx * by * bz;
  // This thread's place in its group, and the group's among the block's.
  const unsigned pos =
      (X ? threadIdx.x : 0u) + nx * ((Y ? threadIdx.y : 0u) + ny * (Z ? threadIdx.z : 0u));
  const unsigned gx = X ? 1u : bx, gy = Y ? 1u : by;
  const unsigned group =
      (X ? 0u : threadIdx.x) + gx * ((Y ? 0u : threadIdx.y) + gy * (Z ? 0u : threadIdx.z));
  const unsigned tid = threadIdx.x + bx * (threadIdx.y + by * threadIdx.z);
  // Uniform over the block: no kept dimension of extent > 1 lies below a
  // reduced one of extent > 1, so tid == group * size + pos.
  const bool contiguous = (X || bx == 1u || !((Y && by > 1u) || (Z && bz > 1u))) &&
                          (Y || by == 1u || !(Z && bz > 1u));
  T v = participate ? val : init;
  if (!contiguous) {
    ws[group * size + pos] = v;
    SL_SYNC(site);
    v = ws[tid];  // from here on this thread works for group tid / size
  }
  const unsigned lane = tid % 32u, warp_start = tid - lane;
  const unsigned lanes = nthreads - warp_start < 32u ? nthreads - warp_start : 32u;
  const unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
  // 1. Segments: lanes below the warp's end and the group's end.
  const unsigned vpos = tid % size, group_end = lane + (size - vpos);
  v = sl_warp_reduce_down(v, op, mask, lane, group_end < lanes ? group_end : lanes);
  if (lane == 0u || vpos == 0u) ws[tid] = v;  // only this thread reads its slot before
  SL_SYNC(site);
  // 2. This thread's group's segments: the first at its first thread, the
  //    others at the warp starts inside it.
  const unsigned first = group * size, first_warp = first / 32u;
  const unsigned nseg = (first + size - 1u) / 32u - first_warp + 1u;
  T r;
  if (contiguous && size % 32u == 0u) {  // whole, full warps: first % 32 == 0
    T p = lane < nseg ? ws[first + 32u * lane] : init;
    p = sl_warp_reduce_down(p, op, 0xffffffffu, lane, nseg);
    r = __shfl_sync(0xffffffffu, p, 0);
  } else {
    r = ws[first];
    for (unsigned s = 1u; s < nseg; ++s) r = op(r, ws[(first_warp + s) * 32u]);
  }
  SL_SYNC(site);  // every thread has read its result: ws may be reused
  return r;
}
// A grid reduction's last step, for the one thread of its block that holds
// the block's partial `val` of output element `elem`: it stores the partial in
// slot elem * nblocks + block of `partials` (block: this block's index along
// the reduced blockIdx dimensions, of nblocks), fences, and counts its arrival
// on sem[elem]. The last block to arrive combines the nblocks partials in
// block order (deterministic, whichever block is last), stores the result at
// `out` and resets sem[elem] to 0 for the next launch. No block ever waits on
// another, so blocks may run in any order or one after another.
template <typename T, typename Op>
SL_FN void sl_grid_reduce(T* out, T val, Op op, T init, T* partials, int32_t* sem, int64_t elem,
                          int64_t block, int64_t nblocks) {
  volatile T* slots = partials + elem * nblocks;
  slots[block] = val;
  __threadfence();  // the partial is visible before the arrival is
  if (atomicAdd(&sem[elem], 1) != int32_t(nblocks - 1)) return;
  __threadfence();  // every other block's partial is visible now
  T r = init;
  for (int64_t b = 0; b < nblocks; ++b) r = op(r, T(slots[b]));
  *out = r;
  sem[elem] = 0;
}
// A grid-wide barrier (grid-persistent reductions, sched::grid_persistent):
// every thread of every block calls it, and none returns before all have
// arrived; what any block wrote before it is visible to every block after it.
// It needs every block resident at once (the launch checks the occupancy; a
// cooperative launch on CUDA). `bar`: two int32 counters in global memory,
// zero at launch (arrivals, generation); a generation barrier, so it resets
// itself and serves any number of barriers in one kernel. The block's first
// thread arrives for its block, between two __syncthreads; the last block to
// arrive resets the arrivals and starts the next generation, which the others
// spin on (a volatile read: no stale cached value). On the CPU, the host's
// fiber scheduler runs every block of the grid as resident fibers and is the
// barrier itself (CpuHooks::grid_sync): the counters are not used.
#ifndef SCHEDLAB_CPU
SL_FN void sl_grid_sync(int site, int32_t* bar) {
  SL_SYNC(site);
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const int32_t blocks = int32_t(gridDim.x * gridDim.y * gridDim.z);
    volatile int32_t* generation = bar + 1;
    const int32_t g = *generation;
    __threadfence();  // this block's writes, and the read of g, before the arrival
    if (atomicAdd(bar, 1) == blocks - 1) {
      atomicExch(bar, 0);
      __threadfence();
      atomicAdd(bar + 1, 1);
    } else {
      while (*generation == g) {
      }
    }
    __threadfence();  // every block's writes are visible from here
  }
  SL_SYNC(site);
}
// A value another block wrote before a grid barrier: from L2 (ld.global.cg),
// never from a stale L1 line.
template <typename T> SL_FN T sl_grid_load(const T* p) { return __ldcg(p); }
#else
SL_FN void sl_grid_sync(int site, int32_t* bar) {
  (void)bar;
  __asm__ __volatile__("" ::: "memory");
  sl_cpu_grid_sync(site);
  __asm__ __volatile__("" ::: "memory");
}
template <typename T> SL_FN T sl_grid_load(const T* p) { return *p; }
#endif
// ---- end of schedlab runtime header ----
