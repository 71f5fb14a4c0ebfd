// ---- schedlab native half math (core/codegen/half_math.cuh) ----
// Appended after the runtime header by the units that compute half math
// natively (kir::Kernel::native_half_math), and only by them. The CUDA Math
// API's half intrinsics, with its names and semantics, over the runtime's
// storage types (cuda_fp16.h is not included: NVRTC has no include path):
//  * sl_half2 / sl_bfloat162: two halves, x in the low 16 bits (__half2's
//    layout), built from any two values by sl_pair(x, y).
//  * __hadd, __hsub, __hmul (a op b), __hfma (a * b + c, one rounding),
//    __hneg, __habs on sl_half and sl_bfloat16; __hadd2, __hsub2, __hmul2,
//    __hfma2, __hneg2, __habs2 on the pairs, each half independently.
// Every result is the exact one rounded once to nearest even (PTX's .rn);
// bf16 needs sm_80 (fma.rn.bf16x2, as cuda_bf16.hpp does it there) and has
// its own add/sub/mul from sm_90; below sm_80 it computes in f32, which is
// the same rounding (ir::half_op_is_native). The CPU computes the exact
// result in double rounded to odd at f32 precision, then rounds to nearest
// even (tests/codegen/half_math_test.cpp checks it against integers).
struct alignas(4) sl_half2 { sl_half x, y; };
struct alignas(4) sl_bfloat162 { sl_bfloat16 x, y; };
SL_FN sl_half2 sl_pair(sl_half x, sl_half y) { return sl_half2{x, y}; }
SL_FN sl_bfloat162 sl_pair(sl_bfloat16 x, sl_bfloat16 y) { return sl_bfloat162{x, y}; }
SL_FN sl_half sl_neg_bits(sl_half a) { return sl_half{uint16_t(a.bits ^ 0x8000u)}; }
SL_FN sl_bfloat16 sl_neg_bits(sl_bfloat16 a) { return sl_bfloat16{uint16_t(a.bits ^ 0x8000u)}; }
SL_FN sl_half sl_abs_bits(sl_half a) { return sl_half{uint16_t(a.bits & 0x7fffu)}; }
SL_FN sl_bfloat16 sl_abs_bits(sl_bfloat16 a) { return sl_bfloat16{uint16_t(a.bits & 0x7fffu)}; }
#ifndef SCHEDLAB_CPU
template <typename P> SL_FN uint32_t sl_u32(P p) {
  return uint32_t(p.x.bits) | (uint32_t(p.y.bits) << 16);
}
SL_FN sl_half2 sl_h2(uint32_t u) { return sl_half2{{uint16_t(u)}, {uint16_t(u >> 16)}}; }
SL_FN sl_bfloat162 sl_b2(uint32_t u) {
  return sl_bfloat162{{uint16_t(u)}, {uint16_t(u >> 16)}};
}
#define SL_F16_BINARY(name, name2, ptx)                                                    \
  SL_FN sl_half name(sl_half a, sl_half b) {                                              \
    uint16_t d;                                                                           \
    asm(ptx ".f16 %0, %1, %2;" : "=h"(d) : "h"(a.bits), "h"(b.bits));                     \
    return sl_half{d};                                                                    \
  }                                                                                       \
  SL_FN sl_half2 name2(sl_half2 a, sl_half2 b) {                                          \
    uint32_t d;                                                                           \
    asm(ptx ".f16x2 %0, %1, %2;" : "=r"(d) : "r"(sl_u32(a)), "r"(sl_u32(b)));             \
    return sl_h2(d);                                                                      \
  }
SL_F16_BINARY(__hadd, __hadd2, "add.rn")
SL_F16_BINARY(__hsub, __hsub2, "sub.rn")
SL_F16_BINARY(__hmul, __hmul2, "mul.rn")
#undef SL_F16_BINARY
SL_FN sl_half __hfma(sl_half a, sl_half b, sl_half c) {
  uint16_t d;
  asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(d) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
  return sl_half{d};
}
SL_FN sl_half2 __hfma2(sl_half2 a, sl_half2 b, sl_half2 c) {
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(sl_u32(a)), "r"(sl_u32(b)), "r"(sl_u32(c)));
  return sl_h2(d);
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
SL_FN sl_bfloat162 __hfma2(sl_bfloat162 a, sl_bfloat162 b, sl_bfloat162 c) {
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(sl_u32(a)), "r"(sl_u32(b)), "r"(sl_u32(c)));
  return sl_b2(d);
}
#if __CUDA_ARCH__ >= 900
#define SL_BF16_BINARY(name2, ptx)                                                         \
  SL_FN sl_bfloat162 name2(sl_bfloat162 a, sl_bfloat162 b) {                              \
    uint32_t d;                                                                           \
    asm(ptx ".bf16x2 %0, %1, %2;" : "=r"(d) : "r"(sl_u32(a)), "r"(sl_u32(b)));            \
    return sl_b2(d);                                                                      \
  }
SL_BF16_BINARY(__hadd2, "add.rn")
SL_BF16_BINARY(__hsub2, "sub.rn")
SL_BF16_BINARY(__hmul2, "mul.rn")
#undef SL_BF16_BINARY
#else
// sm_80 has only the fma: a * 1 + b, b * -1 + a, a * b + -0 (-0 keeps the
// product's signed zero), each exact before its one rounding.
SL_FN sl_bfloat162 __hadd2(sl_bfloat162 a, sl_bfloat162 b) {
  return __hfma2(a, sl_b2(0x3f803f80u), b);
}
SL_FN sl_bfloat162 __hsub2(sl_bfloat162 a, sl_bfloat162 b) {
  return __hfma2(b, sl_b2(0xbf80bf80u), a);
}
SL_FN sl_bfloat162 __hmul2(sl_bfloat162 a, sl_bfloat162 b) {
  return __hfma2(a, b, sl_b2(0x80008000u));
}
#endif
#else
// Below sm_80: through f32 (+ - * round once there: ir::half_op_is_native).
SL_FN sl_bfloat162 __hfma2(sl_bfloat162 a, sl_bfloat162 b, sl_bfloat162 c) {
  // f32's fma rounds a * b + c once to 24 bits; bf16 keeps 8 of them, which
  // is a second rounding: only sm_80+ computes this natively (see the header).
  return sl_pair(sl_to_bf16(fmaf(sl_to_float(a.x), sl_to_float(b.x), sl_to_float(c.x))),
                 sl_to_bf16(fmaf(sl_to_float(a.y), sl_to_float(b.y), sl_to_float(c.y))));
}
SL_FN sl_bfloat162 __hadd2(sl_bfloat162 a, sl_bfloat162 b) {
  return sl_pair(sl_to_bf16(sl_to_float(a.x) + sl_to_float(b.x)),
                 sl_to_bf16(sl_to_float(a.y) + sl_to_float(b.y)));
}
SL_FN sl_bfloat162 __hsub2(sl_bfloat162 a, sl_bfloat162 b) {
  return sl_pair(sl_to_bf16(sl_to_float(a.x) - sl_to_float(b.x)),
                 sl_to_bf16(sl_to_float(a.y) - sl_to_float(b.y)));
}
SL_FN sl_bfloat162 __hmul2(sl_bfloat162 a, sl_bfloat162 b) {
  return sl_pair(sl_to_bf16(sl_to_float(a.x) * sl_to_float(b.x)),
                 sl_to_bf16(sl_to_float(a.y) * sl_to_float(b.y)));
}
#endif
// The scalar bf16 forms: the low half of the pair form.
SL_FN sl_bfloat16 __hadd(sl_bfloat16 a, sl_bfloat16 b) { return __hadd2(sl_pair(a, a), sl_pair(b, b)).x; }
SL_FN sl_bfloat16 __hsub(sl_bfloat16 a, sl_bfloat16 b) { return __hsub2(sl_pair(a, a), sl_pair(b, b)).x; }
SL_FN sl_bfloat16 __hmul(sl_bfloat16 a, sl_bfloat16 b) { return __hmul2(sl_pair(a, a), sl_pair(b, b)).x; }
SL_FN sl_bfloat16 __hfma(sl_bfloat16 a, sl_bfloat16 b, sl_bfloat16 c) {
  return __hfma2(sl_pair(a, a), sl_pair(b, b), sl_pair(c, c)).x;
}
#else
// The exact p + c (p, c doubles, p + c not overflowing), rounded to odd at
// f32's precision: its rounding to nearest even at 8 or 11 bits is then the
// exact sum's (round to odd keeps a sticky bit for the last rounding). s is
// the double nearest p + c and e the exact rest (Knuth's TwoSum).
SL_FN float sl_round_odd_f32(double p, double c) {
  const double s = p + c;
  if (!(s - s == 0.0)) return float(s);  // inf or NaN
  const double bp = s - p;
  const double e = (p - (s - bp)) + (c - bp);
  float f = float(s);
  const double back = double(f);
  if ((back == s && e == 0.0) || (sl_f2u(f) & 1u)) return f;
  const bool up = back != s ? s > back : e > 0.0;
  return __builtin_nextafterf(f, up ? SL_INF : -SL_INF);
}
SL_FN sl_half sl_half_of(double p, double c, sl_half) { return sl_to_half(sl_round_odd_f32(p, c)); }
SL_FN sl_bfloat16 sl_half_of(double p, double c, sl_bfloat16) {
  return sl_to_bf16(sl_round_odd_f32(p, c));
}
// Products of two halves are exact in double (22 bits at most); -0 as the
// addend keeps the product's signed zero.
template <typename T> SL_FN T sl_hadd(T a, T b) {
  return sl_half_of(double(sl_to_float(a)), double(sl_to_float(b)), a);
}
template <typename T> SL_FN T sl_hsub(T a, T b) {
  return sl_half_of(double(sl_to_float(a)), -double(sl_to_float(b)), a);
}
template <typename T> SL_FN T sl_hmul(T a, T b) {
  return sl_half_of(double(sl_to_float(a)) * double(sl_to_float(b)), -0.0, a);
}
template <typename T> SL_FN T sl_hfma(T a, T b, T c) {
  return sl_half_of(double(sl_to_float(a)) * double(sl_to_float(b)), double(sl_to_float(c)), a);
}
SL_FN sl_half __hadd(sl_half a, sl_half b) { return sl_hadd(a, b); }
SL_FN sl_half __hsub(sl_half a, sl_half b) { return sl_hsub(a, b); }
SL_FN sl_half __hmul(sl_half a, sl_half b) { return sl_hmul(a, b); }
SL_FN sl_half __hfma(sl_half a, sl_half b, sl_half c) { return sl_hfma(a, b, c); }
SL_FN sl_bfloat16 __hadd(sl_bfloat16 a, sl_bfloat16 b) { return sl_hadd(a, b); }
SL_FN sl_bfloat16 __hsub(sl_bfloat16 a, sl_bfloat16 b) { return sl_hsub(a, b); }
SL_FN sl_bfloat16 __hmul(sl_bfloat16 a, sl_bfloat16 b) { return sl_hmul(a, b); }
SL_FN sl_bfloat16 __hfma(sl_bfloat16 a, sl_bfloat16 b, sl_bfloat16 c) { return sl_hfma(a, b, c); }
template <typename P> SL_FN P __hadd2(P a, P b) { return P{__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
template <typename P> SL_FN P __hsub2(P a, P b) { return P{__hsub(a.x, b.x), __hsub(a.y, b.y)}; }
template <typename P> SL_FN P __hmul2(P a, P b) { return P{__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
template <typename P> SL_FN P __hfma2(P a, P b, P c) {
  return P{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
#endif
// neg and abs flip or clear the sign bit (neg.f16x2, abs.bf16x2: no rounding).
SL_FN sl_half __hneg(sl_half a) { return sl_neg_bits(a); }
SL_FN sl_bfloat16 __hneg(sl_bfloat16 a) { return sl_neg_bits(a); }
SL_FN sl_half __habs(sl_half a) { return sl_abs_bits(a); }
SL_FN sl_bfloat16 __habs(sl_bfloat16 a) { return sl_abs_bits(a); }
SL_FN sl_half2 __hneg2(sl_half2 a) { return sl_pair(sl_neg_bits(a.x), sl_neg_bits(a.y)); }
SL_FN sl_bfloat162 __hneg2(sl_bfloat162 a) { return sl_pair(sl_neg_bits(a.x), sl_neg_bits(a.y)); }
SL_FN sl_half2 __habs2(sl_half2 a) { return sl_pair(sl_abs_bits(a.x), sl_abs_bits(a.y)); }
SL_FN sl_bfloat162 __habs2(sl_bfloat162 a) { return sl_pair(sl_abs_bits(a.x), sl_abs_bits(a.y)); }
// ---- end of schedlab native half math ----
