#include "schedlab/ir/dtype.h"

#include <array>
#include <utility>

namespace schedlab::ir {

namespace {
constexpr std::array<std::pair<DataType, std::string_view>, 7> kNames = {{
    {DataType::Bool, "bool"},
    {DataType::I32, "i32"},
    {DataType::I64, "i64"},
    {DataType::F16, "f16"},
    {DataType::BF16, "bf16"},
    {DataType::F32, "f32"},
    {DataType::F64, "f64"},
}};

int float_rank(DataType t) {
  switch (t) {
    case DataType::F16:
    case DataType::BF16: return 1;
    case DataType::F32: return 2;
    case DataType::F64: return 3;
    default: return 0;
  }
}
}  // namespace

std::string_view dtype_name(DataType t) {
  for (const auto& [d, n] : kNames)
    if (d == t) return n;
  return "?";
}

std::optional<DataType> parse_dtype(std::string_view s) {
  for (const auto& [d, n] : kNames)
    if (n == s) return d;
  return std::nullopt;
}

std::string dtype_choices() {
  std::string s;
  for (const auto& [d, n] : kNames) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

int dtype_size(DataType t) {
  switch (t) {
    case DataType::Bool: return 1;
    case DataType::F16:
    case DataType::BF16: return 2;
    case DataType::I32:
    case DataType::F32: return 4;
    case DataType::I64:
    case DataType::F64: return 8;
  }
  return 0;
}

bool is_float(DataType t) { return float_rank(t) > 0; }
bool is_integral(DataType t) { return t == DataType::I32 || t == DataType::I64; }
DataType compute_dtype(DataType t) { return is_half(t) ? DataType::F32 : t; }

DataType promote(DataType a, DataType b) {
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == rb) return DataType::F32;  // f16 with bf16
    return ra > rb ? a : b;
  }
  if (a == DataType::I64 || b == DataType::I64) return DataType::I64;
  if (a == DataType::I32 || b == DataType::I32) return DataType::I32;
  return DataType::Bool;
}

}  // namespace schedlab::ir
