// schedlab/ref: NumPy .npy files for HostTensors, so that `schedlab exec`
// can run a fusion on the user's own arrays and hand its outputs back.
//
// Owns: the .npy format (versions 1.0 and 2.0 read, 1.0 written; NumPy's
// format.py is the specification) and the dtype mapping below. May depend
// on: schedlab/base and schedlab/ir only, like the rest of ref.
// Invariants: only little-endian, C-order arrays of the seven mapped dtypes
// are accepted; anything else is a UserError located at the file, saying
// what was expected and what was found. Values are held as doubles, so an
// i64 beyond 2^53 loses precision, as in every HostTensor.
//
// Mapping:   <f2 f16   <f4 f32   <f8 f64   <i4 i32   <i8 i64   |b1 bool
//            <u2 bf16 (raw bits)
// bf16 has no NumPy dtype: it is written as its raw bits, <u2, with a
// comment after the header dict saying so (NumPy loads the file as uint16;
// (a.astype('<u4') << 16).view('<f4') gives the values). A <u2 file reads
// back as bf16. A bf16 input is read from <u2 bits or from <f4, rounded.
#pragma once

#include <string>

#include "schedlab/ir/fusion.h"
#include "schedlab/ref/evaluator.h"

namespace schedlab::ref {

/// Decodes the bytes of a .npy file; `path` names it in messages.
HostTensor parse_npy(const std::string& bytes, const std::string& path);
/// The bytes of a version 1.0 .npy file holding t (values rounded to t.dtype).
std::string encode_npy(const HostTensor& t);

/// Reads the .npy file at `path`. user_error if it cannot be read or is malformed.
HostTensor read_npy(const std::string& path);
/// Writes t to `path` as .npy. user_error if the file cannot be written.
void write_npy(const std::string& path, const HostTensor& t);

/// Reads fusion input `in` from `path`: the file's dtype must be in's (<u2
/// or <f4 for bf16) and its shape concrete_shape(in, sizes). A mismatch is a
/// user_error naming the file, the input and both dtypes or both shapes.
HostTensor read_npy_input(const std::string& path, const ir::TensorView* in,
                          const ir::SizeBindings& sizes);

}  // namespace schedlab::ref
