// NumPy .npy files (core/ref/npy.cpp).
//
// Round trips through encode_npy/parse_npy for every dtype; files written by
// NumPy itself (tests/fixtures/npy/, made by gen_npy.py there); and one test
// per malformed or mismatched file, asserting the whole diagnostic.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ref/npy.h"
#include "test_support.h"

namespace schedlab::ref {
namespace {

using ir::DataType;
using test_support::user_error_what_of;

const std::string kFixtures = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/fixtures/npy/";

/// A .npy file by hand: magic, version, header length, `dict` padded with
/// spaces and a newline, then `data`.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + " \n";
  std::string out = std::string("\x93NUMPY") + static_cast<char>(major) + '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int k = 0; k < len_bytes; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string f4_dict(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

HostTensor round_trip(const HostTensor& t) {
  return parse_npy(encode_npy(t), "rt.npy");
}

TEST(Npy, RoundTripEachDtype) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<HostTensor> cases = {
      {DataType::F64, {2, 2}, {0.1, -1e300, inf, 5e-324}},
      {DataType::F32, {3}, {0.5f, -3.25f, 1e-40f}},
      {DataType::F16, {2, 3}, {1.0, -2.5, 65504.0, std::ldexp(1.0, -24), -inf, 0.0}},
      {DataType::I32, {4}, {-2147483648.0, 2147483647.0, 0, -7}},
      {DataType::I64, {1, 3}, {-9007199254740992.0, 9007199254740992.0, 42}},
      {DataType::Bool, {2, 2}, {1, 0, 0, 1}},
      {DataType::BF16, {2, 2}, {1.0, -0.0078125, 3.3895313892515355e38, -inf}},
      {DataType::F64, {}, {3.5}},      // a 0-d array
      {DataType::F32, {2, 0, 3}, {}},  // an empty one
  };
  for (const HostTensor& t : cases) {
    HostTensor r = round_trip(t);
    EXPECT_EQ(r.dtype, t.dtype) << ir::dtype_name(t.dtype);
    EXPECT_EQ(r.shape, t.shape) << ir::dtype_name(t.dtype);
    EXPECT_EQ(r.data, t.data) << ir::dtype_name(t.dtype);
  }
  // NaN survives (compared apart: NaN != NaN).
  HostTensor nan{DataType::F16, {1}, {std::nan("")}};
  EXPECT_TRUE(std::isnan(round_trip(nan).data[0]));
}

TEST(Npy, Bf16IsWrittenAsRawBitsWithANote) {
  // bf16 has no NumPy dtype: the file holds its bits as <u2 and says so in a
  // comment after the header dict, which NumPy's header parser skips.
  HostTensor t{DataType::BF16, {3}, {1.0, -0.0078125, 3.140625}};
  std::string bytes = encode_npy(t);
  EXPECT_NE(bytes.find("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), } # schedlab "
                       "dtype bf16: raw bits, decode with (a.astype('<u4') << 16).view('<f4')"),
            std::string::npos);
  size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9])
                                                                 << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string data = bytes.substr(10 + header_len);
  EXPECT_EQ(data, std::string("\x80\x3f\x00\xbc\x49\x40", 6));  // 0x3f80 0xbc00 0x4049
  HostTensor r = parse_npy(bytes, "bf16.npy");
  EXPECT_EQ(r.dtype, DataType::BF16);
  EXPECT_EQ(r.shape, t.shape);
  EXPECT_EQ(r.data, t.data);
  // Written values are rounded to bf16 first (ties to even), as a kernel stores them.
  HostTensor tie{DataType::BF16, {2}, {1.00390625, 1.01171875}};  // 1 + 2^-8, 1 + 3 * 2^-8
  EXPECT_EQ(round_trip(tie).data, (std::vector<double>{1.0, 1.015625}));
}

TEST(Npy, ReadsBf16BitsWrittenByNumPy) {
  // np.save of a uint16 array (ml_dtypes' a.view(np.uint16)): no note, same meaning.
  HostTensor t = read_npy(kFixtures + "bf16_bits_4.npy");
  EXPECT_EQ(t.dtype, DataType::BF16);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(t.data, (std::vector<double>{1.0, -2.5, 3.3895313892515355e38,
                                         -std::numeric_limits<double>::infinity()}));
}

TEST(Npy, WritesVersion1WithAlignedData) {
  std::string bytes = encode_npy({DataType::F32, {2, 3}, {0, 1, 2, 3, 4, 5}});
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9])
                                                                 << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 6 * 4);
  EXPECT_EQ(bytes.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
}

TEST(Npy, WriteThenReadAFile) {
  const std::string path = testing::TempDir() + "/npy_test_write.npy";
  HostTensor t{DataType::I64, {2}, {-5, 6}};
  write_npy(path, t);
  HostTensor r = read_npy(path);
  EXPECT_EQ(r.dtype, DataType::I64);
  EXPECT_EQ(r.shape, t.shape);
  EXPECT_EQ(r.data, t.data);
  std::filesystem::remove(path);
}

TEST(Npy, ReadsFilesWrittenByNumPy) {
  HostTensor f32 = read_npy(kFixtures + "f32_2x3.npy");
  EXPECT_EQ(f32.dtype, DataType::F32);
  EXPECT_EQ(f32.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f32.data, (std::vector<double>{-1, -0.5, 0, 0.5, 1, 1.5}));

  HostTensor f16 = read_npy(kFixtures + "f16_5.npy");
  EXPECT_EQ(f16.dtype, DataType::F16);
  EXPECT_EQ(f16.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(f16.data, (std::vector<double>{1.0, -2.5, 65504.0, std::ldexp(1.0, -24),
                                           std::numeric_limits<double>::infinity()}));

  HostTensor i64 = read_npy(kFixtures + "i64_2x2_v2.npy");  // format version 2.0
  EXPECT_EQ(i64.dtype, DataType::I64);
  EXPECT_EQ(i64.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(i64.data, (std::vector<double>{-3, 0, 7, 1099511627776.0}));

  HostTensor b = read_npy(kFixtures + "bool_3.npy");
  EXPECT_EQ(b.dtype, DataType::Bool);
  EXPECT_EQ(b.data, (std::vector<double>{1, 0, 1}));
}

TEST(Npy, ReadsAHandWrittenVersion2Header) {
  std::string data(8, '\0');
  HostTensor t = parse_npy(npy_bytes(f4_dict("(1, 2)"), data, 2), "v2.npy");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(t.data, (std::vector<double>{0, 0}));
}

// ---- malformed files --------------------------------------------------------

TEST(NpyInvalid, MissingFile) {
  EXPECT_EQ(user_error_what_of([] { read_npy("no/such.npy"); }),
            "no/such.npy: error: cannot read .npy file: no such file");
}

TEST(NpyInvalid, BadMagic) {
  EXPECT_EQ(user_error_what_of([] { parse_npy("PK\x03\x04 zip", "a.npy"); }),
            "a.npy: error: not a .npy file: expected the magic string '\\x93NUMPY' at the start, "
            "found 'PK\\x03\\x04 z'");
}

TEST(NpyInvalid, UnsupportedVersion) {
  EXPECT_EQ(user_error_what_of([] { parse_npy(npy_bytes(f4_dict("(1,)"), "", 3), "v3.npy"); }),
            "v3.npy: error: unsupported .npy format version 3.0; expected 1.0 or 2.0");
}

TEST(NpyInvalid, TruncatedPreamble) {
  EXPECT_EQ(user_error_what_of([] { parse_npy(std::string("\x93NUMPY\x01\x00\x10", 9), "t.npy"); }),
            "t.npy: error: truncated header: the file ends after 9 bytes, inside the 10-byte "
            "preamble");
}

TEST(NpyInvalid, TruncatedHeader) {
  std::string bytes = npy_bytes(f4_dict("(2,)"), "").substr(0, 30);
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "t.npy"); }),
            "t.npy: error: truncated header: the preamble declares a 59-byte header, but only 20 "
            "bytes follow");
}

TEST(NpyInvalid, UnparsableDict) {
  std::string bytes =
      npy_bytes("{'descr': '<f4', 'fortran_order': Nope, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "d.npy"); }),
            "d.npy: error: cannot parse the header dict: expected True or False for "
            "'fortran_order' at character 34, found 'Nope, 'shape'; header: {'descr': '<f4', "
            "'fortran_order': Nope, 'shape': (1,), }");
}

TEST(NpyInvalid, TextAfterTheDict) {
  // A comment may follow the dict (schedlab's bf16 note); nothing else may.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  EXPECT_EQ(parse_npy(npy_bytes(dict + " # a note", std::string(4, '\0')), "c.npy").data,
            (std::vector<double>{0}));
  std::string bytes = npy_bytes(dict + " # a note\nxyz", std::string(4, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "t.npy"); }),
            "t.npy: error: cannot parse the header dict: expected the end of the header after "
            "'}' at character 67, found 'xyz \n'; header: " +
                dict + " # a note\nxyz");
}

TEST(NpyInvalid, MissingKey) {
  std::string bytes = npy_bytes("{'descr': '<f4', 'shape': (1,)}", std::string(4, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "k.npy"); }),
            "k.npy: error: the header dict has no 'fortran_order' key; expected descr, "
            "fortran_order and shape");
}

TEST(NpyInvalid, UnsupportedDtype) {
  std::string u1 =
      npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", std::string(2, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(u1, "u.npy"); }),
            "u.npy: error: unsupported dtype '|u1' (for a bool input, save a.astype(bool)); "
            "expected one of <f2 (f16), <u2 (bf16 bits), <f4 (f32), <f8 (f64), <i4 (i32), "
            "<i8 (i64), |b1 (bool)");
  std::string big =
      npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(big, "b.npy"); }),
            "b.npy: error: unsupported dtype '>f4' (big-endian: save "
            "a.astype(a.dtype.newbyteorder('<'))); expected one of <f2 (f16), <u2 (bf16 bits), "
            "<f4 (f32), <f8 (f64), <i4 (i32), <i8 (i64), |b1 (bool)");
}

TEST(NpyInvalid, FortranOrder) {
  std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                                std::string(16, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "f.npy"); }),
            "f.npy: error: fortran_order is True; only C-order arrays are supported (save "
            "numpy.ascontiguousarray(a))");
}

TEST(NpyInvalid, DataSizeMismatch) {
  std::string bytes = npy_bytes(f4_dict("(2, 3)"), std::string(20, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(bytes, "s.npy"); }),
            "s.npy: error: data size mismatch: shape (2, 3) of <f4 needs 24 bytes of data, "
            "found 20");
  // A shape whose element count overflows is reported, not multiplied out.
  std::string huge = npy_bytes(f4_dict("(4294967296, 4294967296, 4)"), std::string(4, '\0'));
  EXPECT_EQ(user_error_what_of([&] { parse_npy(huge, "h.npy"); }),
            "h.npy: error: data size mismatch: shape (4294967296, 4294967296, 4) of <f4 needs "
            "more than 4 bytes of data, found 4");
}

// ---- mismatched inputs ------------------------------------------------------

/// A fusion with an f32 input x[N, K] and an i64 input n[N], and a bf16 one.
frontend::FusionDefinition mixed() {
  return frontend::parse_fusion_text(R"(fusion: mixed
inputs:
  x: {dtype: f32, shape: [N, K]}
  n: {dtype: i64, shape: [N]}
  h: {dtype: bf16, shape: [K]}
body: |
  y = x + 1
outputs: [y]
)",
                                     "mixed.yaml");
}

TEST(NpyInput, MatchingFileIsRead) {
  auto def = mixed();
  HostTensor t =
      read_npy_input(kFixtures + "f32_2x3.npy", def.fusion->inputs()[0], {{"N", 2}, {"K", 3}});
  EXPECT_EQ(t.dtype, DataType::F32);
  EXPECT_EQ(t.data.size(), 6u);
}

TEST(NpyInput, DtypeMismatch) {
  auto def = mixed();
  const std::string path = kFixtures + "f32_2x3.npy";
  EXPECT_EQ(user_error_what_of([&] {
              read_npy_input(path, def.fusion->inputs()[1], {{"N", 2}, {"K", 3}});
            }),
            path + ": error: dtype <f4 (f32) does not match input T1 (n), which is i64 (<i8)");
}

TEST(NpyInput, ShapeMismatch) {
  auto def = mixed();
  const std::string path = kFixtures + "f32_2x3.npy";
  EXPECT_EQ(user_error_what_of([&] {
              read_npy_input(path, def.fusion->inputs()[0], {{"N", 3}, {"K", 5}});
            }),
            path +
                ": error: shape (2, 3) does not match input T0 (x), which is (3, 5) with sizes "
                "N=3, K=5");
}

TEST(NpyInput, Bf16IsReadFromItsBits) {
  auto def = mixed();
  HostTensor t =
      read_npy_input(kFixtures + "bf16_bits_4.npy", def.fusion->inputs()[2], {{"N", 1}, {"K", 4}});
  EXPECT_EQ(t.dtype, DataType::BF16);
  EXPECT_EQ(t.data[1], -2.5);
  // bf16 bits given for an f32 input.
  EXPECT_EQ(user_error_what_of([&] {
              read_npy_input(kFixtures + "bf16_bits_4.npy", def.fusion->inputs()[0],
                             {{"N", 1}, {"K", 4}});
            }),
            kFixtures +
                "bf16_bits_4.npy: error: dtype <u2 (bf16 bits) does not match input T0 (x), "
                "which is f32 (<f4)");
}

TEST(NpyInput, Bf16IsReadFromF32AndRounded) {
  auto def = mixed();
  const std::string path = testing::TempDir() + "/npy_test_bf16.npy";
  write_npy(path, {DataType::F32, {2}, {1.0, 1.00390625}});  // 1 + 2^-8: a tie, rounds to even
  HostTensor t = read_npy_input(path, def.fusion->inputs()[2], {{"N", 1}, {"K", 2}});
  EXPECT_EQ(t.dtype, DataType::BF16);
  EXPECT_EQ(t.data, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(
      user_error_what_of([&] {
        read_npy_input(kFixtures + "f16_5.npy", def.fusion->inputs()[2], {{"N", 1}, {"K", 5}});
      }),
      kFixtures +
          "f16_5.npy: error: dtype <f2 (f16) does not match input T2 (h), which is "
          "bf16 (<u2 bits, or <f4 rounded to bf16)");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace schedlab::ref
