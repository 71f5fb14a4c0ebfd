// Helpers of the tensor-core tests: units built on the runtime header and the
// tensor-core runtime (codegen/mma.cuh), exact bf16/f16 encodings of small
// values, and the PTX ISA's fragment tables as a scalar model: which element
// of A, B or C/D each lane holds in which register half.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "schedlab/codegen/mma_header.h"
#include "schedlab/codegen/runtime_header.h"
#include "schedlab/runtime/kernel.h"

namespace schedlab::mma_testing {

/// The runtime header, the tensor-core runtime, then `body`.
inline std::string mma_unit(std::string_view body) {
  return std::string(codegen::runtime_header()) + std::string(codegen::mma_header()) +
         std::string(body);
}

/// A unit with barriers (the collectives are warp exchanges on the CPU).
inline runtime::KernelSource mma_kernel(std::string_view body, bool trace = false) {
  runtime::KernelSource k;
  k.source = mma_unit(body);
  k.has_barrier = true;
  k.trace = trace;
  return k;
}

/// The bf16 bits of `f`, which must be exactly representable (its low 16
/// bits zero).
inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_value(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
/// The f16 bits of a normal or zero `f` exactly representable in f16.
inline uint16_t f16_bits(float f) {
  if (f == 0.0f) return std::signbit(f) ? 0x8000u : 0u;
  int e = 0;
  const float m = std::frexp(std::fabs(f), &e);  // f = m 2^e, m in [0.5, 1)
  const auto mant = static_cast<uint32_t>(std::ldexp(m, 11)) & 0x3ffu;
  const auto exp = static_cast<uint32_t>(e - 1 + 15);
  return static_cast<uint16_t>((f < 0 ? 0x8000u : 0u) | exp << 10 | mant);
}
inline float f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
                         : std::ldexp(static_cast<float>(m | 0x400), e - 25);
  return (h & 0x8000u) ? -v : v;
}

// The fragment tables of mma.m16n8k16 with .f16/.bf16 operands (PTX ISA,
// "Matrix Fragments for mma.m16n8k16 with floating point type"), with
// groupID = lane >> 2 and threadID_in_group = lane % 4.
struct RowCol {
  int row, col;
};
/// Element a_i (i in 0..7; register i / 2, half i % 2) of A (16x16) in `lane`.
inline RowCol a_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
/// Element b_i (i in 0..3; register i / 2, half i % 2) of B (16x8, k x n).
inline RowCol b_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
/// Element c_i (i in 0..3) of C/D (16x8).
inline RowCol c_element(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

// ldmatrix .m8n8 .b16 (PTX ISA, "Warp-level matrix load instruction:
// ldmatrix"): lane l receives in register i the elements (l / 4, 2 (l % 4))
// and (l / 4, 2 (l % 4) + 1) of matrix i, low half first; with .trans the
// element (2 (l % 4) + h, l / 4) in half h.
inline RowCol ldmatrix_element(int lane, int half, bool trans) {
  const RowCol rc{lane / 4, 2 * (lane % 4) + half};
  return trans ? RowCol{rc.col, rc.row} : rc;
}

}  // namespace schedlab::mma_testing
