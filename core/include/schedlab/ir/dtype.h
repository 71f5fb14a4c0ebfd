// Scalar element types of the fusion IR.
//
// f16 and bf16 are real storage types: tensors of those types are stored in
// 16 bits, while arithmetic on them is carried out in f32 (the builder inserts
// the casts, as nvFuser's frontend does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace schedlab::ir {

/// Element type of a tensor or scalar.
enum class DataType { Bool, I32, I64, F16, BF16, F32, F64 };

/// Short name used in fusion text and printed IR: "f32", "bf16", "bool", ...
std::string_view dtype_name(DataType t);
/// Parses a short name; nullopt if unknown.
std::optional<DataType> parse_dtype(std::string_view s);
/// The list of valid names, for error messages: "bool, i32, i64, f16, bf16, f32, f64".
std::string dtype_choices();
/// Storage size in bytes.
int dtype_size(DataType t);

bool is_float(DataType t);
bool is_integral(DataType t);  ///< i32 or i64 (not bool)
/// f16 and bf16: stored narrow, computed in f32.
inline bool is_half(DataType t) { return t == DataType::F16 || t == DataType::BF16; }
/// The type arithmetic on t is carried out in (f32 for the half types).
DataType compute_dtype(DataType t);
/// Result type of arithmetic between two tensors: float beats integer beats
/// bool; within floats the wider wins, and f16 with bf16 gives f32.
DataType promote(DataType a, DataType b);

}  // namespace schedlab::ir
