// NumPy .npy files: a preamble (magic, version, header length), a Python
// dict literal describing the array, then the raw little-endian data.
#include "schedlab/ref/npy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"

namespace schedlab::ref {

namespace {

using ir::DataType;

const std::string kMagic = "\x93NUMPY";

/// One supported NumPy dtype.
struct NpyType {
  const char* descr;  ///< the header's 'descr'
  DataType dtype;     ///< what it reads as
  int size;           ///< bytes per element
};

// NumPy has no bf16: its values travel as their raw bits in <u2 (the upper
// half of the f32 with the same value), as ml_dtypes' a.view(np.uint16) and
// torch's t.view(torch.int16) give them. schedlab has no unsigned dtype, so
// <u2 has no other meaning here.
constexpr NpyType kTypes[] = {{"<f2", DataType::F16, 2}, {"<u2", DataType::BF16, 2},
                              {"<f4", DataType::F32, 4}, {"<f8", DataType::F64, 8},
                              {"<i4", DataType::I32, 4}, {"<i8", DataType::I64, 8},
                              {"|b1", DataType::Bool, 1}};

/// The comment after the header dict of a bf16 file: NumPy reads the file
/// as uint16 (its header parser, ast.literal_eval, skips the comment), and a
/// reader of the header learns what the bits are and how to decode them.
constexpr const char* kBf16Note =
    "# schedlab dtype bf16: raw bits, decode with (a.astype('<u4') << 16).view('<f4')";

const NpyType* find_type(const std::string& descr) {
  for (const NpyType& t : kTypes)
    if (descr == t.descr) return &t;
  return nullptr;
}

/// The type a dtype is written as.
const NpyType& type_for(DataType d) {
  for (const NpyType& t : kTypes)
    if (t.dtype == d) return t;
  internal_error << "no .npy type for dtype " << ir::dtype_name(d);
}

/// "<u2 (bf16 bits)" and "<f4 (f32)": the file type and what it holds.
std::string type_str(const NpyType& t) {
  return std::string(t.descr) + " (" + std::string(ir::dtype_name(t.dtype)) +
         (t.dtype == DataType::BF16 ? " bits)" : ")");
}

std::string type_choices() {
  std::string r;
  for (const NpyType& t : kTypes) r += (r.empty() ? "" : ", ") + type_str(t);
  return r;
}

/// Python's spelling of a shape: (), (3,), (2, 3).
std::string shape_str(const std::vector<int64_t>& shape) {
  std::string r = "(";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + (shape.size() == 1 ? ",)" : ")");
}

// IEEE binary16 <-> double. ref shares no code with the runtime's copy of
// these (see evaluator.h), so a bug there cannot hide by being repeated here.
double f16_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f;
  int man = h & 0x3ff;
  double mag = exp == 0    ? std::ldexp(man, -24)
               : exp == 31 ? (man ? std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::infinity())
                           : std::ldexp(man + 1024, exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

/// v must already be representable in f16 (ir::round_to_dtype).
uint16_t double_to_f16(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return sign | 0x7e00;
  if (a == 0.0) return sign;
  if (std::isinf(a)) return sign | 0x7c00;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  if (e - 1 > 15) return sign | 0x7c00;
  if (e - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) |
         static_cast<uint16_t>(std::ldexp(a, 11 - e) - 1024);
}

uint64_t load_le(const char* p, int n) {
  uint64_t v = 0;
  for (int k = n; k-- > 0;) v = v << 8 | static_cast<unsigned char>(p[k]);
  return v;
}

void store_le(std::string& out, uint64_t v, int n) {
  for (int k = 0; k < n; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

/// The header dict, as NumPy writes it.
struct Header {
  std::string descr;           ///< dtype string, e.g. '<f4'
  bool fortran_order = false;  ///< column-major data
  std::vector<int64_t> shape;  ///< extents, outermost first
};

/// A parser for the Python dict literal NumPy writes:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Header run() {
    Header h;
    bool seen[3] = {false, false, false};
    expect('{', "'{' opening the header dict");
    while (!at('}')) {
      std::string key = str("a quoted key");
      expect(':', "':' after the key '" + key + "'");
      if (key == "descr") {
        if (at('['))
          user_error_at(SourceLoc{path_})
              << "unsupported dtype: a structured array "
              << "(descr is a list); expected one of " << type_choices();
        h.descr = str("a quoted dtype string for 'descr'");
        seen[0] = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        seen[1] = true;
      } else if (key == "shape") {
        h.shape = tuple();
        seen[2] = true;
      } else {
        user_error_at(SourceLoc{path_}) << "unexpected key '" << key << "' in the header dict; "
                                        << "expected descr, fortran_order and shape";
      }
      if (!at('}')) expect(',', "',' or '}' in the header dict");
    }
    ++i_;
    skip_ws();
    // A Python comment may follow the dict (schedlab's bf16 note does).
    if (i_ < s_.size() && s_[i_] == '#') {
      size_t end = s_.find('\n', i_);
      i_ = end == std::string::npos ? s_.size() : end;
      skip_ws();
    }
    if (i_ != s_.size()) fail("the end of the header after '}'");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k])
        user_error_at(SourceLoc{path_}) << "the header dict has no '" << names[k]
                                        << "' key; expected descr, fortran_order and shape";
    return h;
  }

 private:
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool at(char c) {
    skip_ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c, const std::string& what) {
    if (!at(c)) fail(what);
    ++i_;
  }
  [[noreturn]] void fail(const std::string& what) {
    std::string found = i_ < s_.size() ? "'" + s_.substr(i_, 12) + "'" : "the end of the header";
    std::string header = s_;
    while (!header.empty() && std::isspace(static_cast<unsigned char>(header.back())))
      header.pop_back();
    user_error_at(SourceLoc{path_})
        << "cannot parse the header dict: expected " << what << " at character " << i_ << ", found "
        << found << "; header: " << header;
  }
  std::string str(const std::string& what) {
    skip_ws();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail(what);
    char q = s_[i_];
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("a closing quote");
    std::string r = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return r;
  }
  bool boolean() {
    skip_ws();
    for (bool b : {true, false}) {
      std::string word = b ? "True" : "False";
      if (s_.compare(i_, word.size(), word) == 0) {
        i_ += word.size();
        return b;
      }
    }
    fail("True or False for 'fortran_order'");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> r;
    expect('(', "a tuple of extents for 'shape'");
    while (!at(')')) {
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        fail("a non-negative integer extent");
      int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("an extent below 2^63");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      r.push_back(v);
      if (!at(')')) expect(',', "',' or ')' in the shape");
    }
    ++i_;
    return r;
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

}  // namespace

HostTensor parse_npy(const std::string& bytes, const std::string& path) {
  const SourceLoc loc{path};
  if (bytes.compare(0, kMagic.size(), kMagic) != 0) {
    std::string found;
    for (size_t i = 0; i < std::min<size_t>(bytes.size(), 6); ++i) {
      auto c = static_cast<unsigned char>(bytes[i]);
      char buf[8];
      std::snprintf(buf, sizeof buf, std::isprint(c) ? "%c" : "\\x%02x", c);
      found += buf;
    }
    user_error_at(loc) << "not a .npy file: expected the magic string '\\x93NUMPY' at the start, "
                       << "found '" << found << "'";
  }
  if (bytes.size() < 8)
    user_error_at(loc) << "truncated header: the file ends after " << bytes.size()
                       << " bytes, inside the preamble";
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2) || minor != 0)
    user_error_at(loc) << "unsupported .npy format version " << major << "." << minor
                       << "; expected 1.0 or 2.0";
  // 1.0 has a 16-bit header length; 2.0 widened it to 32 bits.
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = 8 + len_bytes;
  if (bytes.size() < preamble)
    user_error_at(loc) << "truncated header: the file ends after " << bytes.size()
                       << " bytes, inside the " << preamble << "-byte preamble";
  size_t header_len = load_le(bytes.data() + 8, static_cast<int>(len_bytes));
  if (bytes.size() - preamble < header_len)
    user_error_at(loc) << "truncated header: the preamble declares a " << header_len
                       << "-byte header, but only " << bytes.size() - preamble << " bytes follow";
  Header h = HeaderParser(bytes.substr(preamble, header_len), path).run();

  const NpyType* type = find_type(h.descr);
  if (!type) {
    std::string hint;
    if (!h.descr.empty() && h.descr[0] == '>')
      hint = " (big-endian: save a.astype(a.dtype.newbyteorder('<')))";
    else if (h.descr == "|u1")
      hint = " (for a bool input, save a.astype(bool))";
    user_error_at(loc) << "unsupported dtype '" << h.descr << "'" << hint << "; expected one of "
                       << type_choices();
  }
  if (h.fortran_order)
    user_error_at(loc) << "fortran_order is True; only C-order arrays are supported (save "
                       << "numpy.ascontiguousarray(a))";

  HostTensor t;
  t.dtype = type->dtype;
  t.shape = h.shape;
  const size_t data_bytes = bytes.size() - preamble - header_len;
  // The element count stops growing once it passes the data's size, so a
  // hostile shape cannot overflow it.
  uint64_t numel = 1;
  bool fits = true;
  if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) numel = 0;
  for (int64_t e : t.shape) {
    if (numel == 0 || !fits) break;
    fits = numel <= data_bytes / static_cast<uint64_t>(e);
    numel *= static_cast<uint64_t>(e);
  }
  const uint64_t want = numel * static_cast<uint64_t>(type->size);
  if (!fits || want != data_bytes)
    user_error_at(loc) << "data size mismatch: shape " << shape_str(t.shape) << " of " << h.descr
                       << " needs " << (fits ? "" : "more than ") << (fits ? want : data_bytes)
                       << " bytes of data, found " << data_bytes;

  t.data.resize(numel);
  const char* p = bytes.data() + preamble + header_len;
  for (double& v : t.data) {
    uint64_t bits = load_le(p, type->size);
    p += type->size;
    switch (t.dtype) {
      case DataType::F16:
        v = f16_to_double(static_cast<uint16_t>(bits));
        break;
      case DataType::F32: {
        float f;
        auto b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, sizeof f);
        v = f;
        break;
      }
      case DataType::F64:
        std::memcpy(&v, &bits, sizeof v);
        break;
      case DataType::I32:
        v = static_cast<int32_t>(static_cast<uint32_t>(bits));
        break;
      case DataType::I64:
        v = static_cast<double>(static_cast<int64_t>(bits));
        break;
      case DataType::Bool:
        v = bits != 0 ? 1.0 : 0.0;
        break;
      case DataType::BF16: {
        float f;
        auto b32 = static_cast<uint32_t>(bits) << 16;
        std::memcpy(&f, &b32, sizeof f);
        v = f;
        break;
      }
    }
  }
  return t;
}

std::string encode_npy(const HostTensor& t) {
  internal_assert(static_cast<int64_t>(t.data.size()) == t.numel())
      << t.data.size() << " values for shape " << shape_str(t.shape);
  const NpyType& type = type_for(t.dtype);
  std::string header = std::string("{'descr': '") + type.descr +
                       "', 'fortran_order': False, 'shape': " + shape_str(t.shape) + ", }";
  if (t.dtype == DataType::BF16) header += std::string(" ") + kBf16Note;
  // Version 1.0: pad with spaces so that the data starts 64-byte aligned,
  // then end the header with a newline, as NumPy does.
  const size_t preamble = kMagic.size() + 4;
  header.append(63 - (preamble + header.size()) % 64, ' ');
  header += '\n';
  internal_assert(header.size() <= 0xffff) << "header of " << header.size() << " bytes";

  std::string out = kMagic;
  out += '\x01';
  out += '\x00';
  store_le(out, header.size(), 2);
  out += header;
  for (double v : t.data) {
    double r = ir::round_to_dtype(v, t.dtype);
    switch (type.dtype) {
      case DataType::F16:
        store_le(out, double_to_f16(r), 2);
        break;
      case DataType::F32: {
        auto f = static_cast<float>(r);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        store_le(out, bits, 4);
        break;
      }
      case DataType::F64: {
        uint64_t bits;
        std::memcpy(&bits, &r, sizeof bits);
        store_le(out, bits, 8);
        break;
      }
      case DataType::I32:
        store_le(out, static_cast<uint32_t>(static_cast<int32_t>(r)), 4);
        break;
      case DataType::I64:
        store_le(out, static_cast<uint64_t>(static_cast<int64_t>(r)), 8);
        break;
      case DataType::Bool:
        out += r != 0.0 ? '\x01' : '\x00';
        break;
      case DataType::BF16: {
        // A bf16 value is an f32 value whose low 16 bits are zero.
        auto f = static_cast<float>(r);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        store_le(out, bits >> 16, 2);
        break;
      }
    }
  }
  return out;
}

HostTensor read_npy(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    user_error_at(SourceLoc{path})
        << "cannot read .npy file: "
        << (fs::exists(path, ec) ? "not a regular file" : "no such file");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in.good()) user_error_at(SourceLoc{path}) << "cannot read .npy file: permission denied";
  return parse_npy(ss.str(), path);
}

void write_npy(const std::string& path, const HostTensor& t) {
  std::string bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out.good())
    user_error_at(SourceLoc{path}) << "cannot write .npy file (does the directory exist and is it "
                                   << "writable?)";
}

HostTensor read_npy_input(const std::string& path, const ir::TensorView* in,
                          const ir::SizeBindings& sizes) {
  HostTensor t = read_npy(path);
  const SourceLoc loc{path};
  const DataType want = in->dtype();
  // NumPy users hold bf16 data as f32 more often than as raw bits: a bf16
  // input takes <f4 too, rounded to bf16.
  const bool bf16_from_f32 = want == DataType::BF16 && t.dtype == DataType::F32;
  if (t.dtype != want && !bf16_from_f32)
    user_error_at(loc) << "dtype " << type_str(type_for(t.dtype)) << " does not match input "
                       << in->describe() << ", which is " << ir::dtype_name(want) << " ("
                       << type_for(want).descr
                       << (want == DataType::BF16 ? " bits, or <f4 rounded to bf16" : "") << ")";
  std::vector<int64_t> shape = concrete_shape(in, sizes);
  if (t.shape != shape) {
    // This input's sizes in the order its shape names them, then the others.
    std::vector<std::string> names;
    for (const ir::IterDomain* id : in->logical()) id->extent().collect_symbols(names);
    for (const auto& [k, v] : sizes)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
    std::string bound;
    for (const std::string& k : names)
      if (auto it = sizes.find(k); it != sizes.end())
        bound += (bound.empty() ? "" : ", ") + k + "=" + std::to_string(it->second);
    user_error_at(loc) << "shape " << shape_str(t.shape) << " does not match input "
                       << in->describe() << ", which is " << shape_str(shape) << " with sizes "
                       << (bound.empty() ? "(none)" : bound);
  }
  if (want == DataType::BF16) {
    for (double& v : t.data) v = ir::round_to_dtype(v, want);
    t.dtype = want;
  }
  return t;
}

}  // namespace schedlab::ref
