// ---- schedlab cache-policy loads (core/codegen/cache_load.cuh) ----
// Appended after the runtime header by the units that load global memory
// with a cache policy (cache_after(tv, cache_op=...), kir::Load::cache), and
// only by them (codegen::cache_load_header()): the CUDA of every other kernel
// is unchanged by it.
//  * sl_ld{ca,cg,cs}(p): the element *p of global memory, loaded by
//    ld.global.{ca,cg,cs} (PTX ISA, ld, "Cache Operators"): .ca caches in L1
//    and L2 (ir::CacheOp::AllLevels), .cg in L2 only (Global), .cs marks the
//    line evict-first (Streaming).
//  * sl_vec_copy_{ca,cg,cs}<T, N>(dst, src): sl_vec_copy whose load from src
//    (global memory; N * sizeof(T) = 2, 4, 8 or 16 bytes, aligned as the
//    launch checked) has that qualifier.
// On CUDA they are CUDA's __ldca / __ldcg / __ldcs where those take the type
// (float, double, the integers); sl_half and sl_bfloat16 load their bits (an
// unsigned short), bool an unsigned char, and a vector copy its bytes as an
// unsigned short, unsigned int, uint2 or uint4 (16 bytes: ld.global.cg.v4.u32
// for .cg), whatever its element type.
// The read-only path: a plain load of a fusion input goes through its
// `const T* __restrict__` pointer, which the compiler may turn into
// ld.global.nc (the non-coherent texture path). A load with a cache policy is
// ld.global.{ca,cg,cs} instead, as in nvFuser: the policy replaces the
// compiler's choice for that load only; CacheOp::Unspecified keeps it.
// On the CPU the qualifiers are cache hints only (they do not change the
// memory consistency behaviour, PTX ISA): the same names are plain loads and
// copies, and the traced build's access macros (SL_VLD, SL_VST, through which
// the printer passes the addresses) still see every access.
#ifndef SCHEDLAB_CPU
template <int BYTES> struct SlBitsOf;
template <> struct SlBitsOf<2> { typedef unsigned short type; };
template <> struct SlBitsOf<4> { typedef unsigned int type; };
template <> struct SlBitsOf<8> { typedef uint2 type; };
template <> struct SlBitsOf<16> { typedef uint4 type; };
#define SL_CACHED_LOADS(q)                                                                 \
  template <typename T> SL_FN T sl_ld##q(const T* p) { return __ld##q(p); }                \
  SL_FN sl_half sl_ld##q(const sl_half* p) { return sl_half{__ld##q(&p->bits)}; }          \
  SL_FN sl_bfloat16 sl_ld##q(const sl_bfloat16* p) {                                       \
    return sl_bfloat16{__ld##q(&p->bits)};                                                 \
  }                                                                                        \
  SL_FN bool sl_ld##q(const bool* p) {                                                     \
    return __ld##q(reinterpret_cast<const unsigned char*>(p)) != 0;                        \
  }                                                                                        \
  template <typename T, int N> SL_FN void sl_vec_copy_##q(T* dst, const T* src) {          \
    typedef typename SlBitsOf<sizeof(T) * N>::type U;                                      \
    *reinterpret_cast<U*>(dst) = __ld##q(reinterpret_cast<const U*>(src));                 \
  }
#else
#define SL_CACHED_LOADS(q)                                                                 \
  template <typename T> SL_FN T sl_ld##q(const T* p) { return *p; }                        \
  template <typename T, int N, typename D> SL_FN void sl_vec_copy_##q(D dst, const T* src) { \
    sl_vec_copy<T, N>(dst, src);                                                           \
  }
#endif
SL_CACHED_LOADS(ca)
SL_CACHED_LOADS(cg)
SL_CACHED_LOADS(cs)
#undef SL_CACHED_LOADS
// ---- end of schedlab cache-policy loads ----
