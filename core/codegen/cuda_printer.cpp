// The CUDA printer: one small function per node kind.
#include "schedlab/codegen/cuda_printer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <utility>

#include "schedlab/base/error.h"
#include "schedlab/codegen/runtime_header.h"
#include "schedlab/ir/scalar_format.h"

namespace schedlab::codegen {

using kir::Expr;
using kir::Stmt;

std::string c_type(ir::DataType t) {
  switch (t) {
    case ir::DataType::Bool: return "bool";
    case ir::DataType::I32: return "int32_t";
    case ir::DataType::I64: return "int64_t";
    case ir::DataType::F16: return "sl_half";
    case ir::DataType::BF16: return "sl_bfloat16";
    case ir::DataType::F32: return "float";
    case ir::DataType::F64: return "double";
  }
  return "?";
}

namespace {

/// The thread and block indices, each read once at the top of the kernel
/// into a local of the index type under this name.
constexpr std::pair<const char*, const char*> kIndexLocals[] = {
    {"threadIdx.x", "sl_tx"}, {"threadIdx.y", "sl_ty"}, {"threadIdx.z", "sl_tz"},
    {"blockIdx.x", "sl_bx"},  {"blockIdx.y", "sl_by"},  {"blockIdx.z", "sl_bz"}};

std::string literal(double v, ir::DataType t) {
  if (ir::is_integral(t)) {
    // The identity of an integer max/min reduction is the type's own limit
    // (INT64_MIN stored to an int32_t truncates to 0).
    if (std::isinf(v))
      return std::string(t == ir::DataType::I32 ? "INT32" : "INT64") + (v > 0 ? "_MAX" : "_MIN");
    return "(" + c_type(t) + ")" + ir::format_scalar(v, ir::DataType::I64);
  }
  if (t == ir::DataType::Bool) return v != 0.0 ? "true" : "false";
  std::string suffix = t == ir::DataType::F64 ? "" : "f";
  if (std::isnan(v)) return t == ir::DataType::F64 ? "(double)SL_NAN" : "SL_NAN";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (t == ir::DataType::F64 ? "(double)SL_INF" : "SL_INF");
  std::string s = ir::format_scalar(v, ir::DataType::F64);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

/// The C function for a float math op: expf for f32, exp for f64.
std::string math_fn(const char* base, ir::DataType t) {
  return std::string(base) + (t == ir::DataType::F64 ? "" : "f");
}

std::string param_type(const kir::Buffer& b) {
  return "Tensor<" + c_type(b.dtype) + ", " + std::to_string(b.rank) + ", sl_index_t>";
}

/// The runtime header's functor for an ir::ReductionOpType.
const char* reduce_op(int op) {
  static constexpr const char* kOps[] = {"SlOpSum()", "SlOpMax()", "SlOpMin()", "SlOpProd()"};
  static_assert(static_cast<int>(ir::ReductionOpType::Sum) == 0 &&
                static_cast<int>(ir::ReductionOpType::Max) == 1 &&
                static_cast<int>(ir::ReductionOpType::Min) == 2 &&
                static_cast<int>(ir::ReductionOpType::Prod) == 3);
  return kOps[op];
}

bool reads_memory(const kir::ExprP& e) {
  if (e->kind == Expr::Kind::Load) return true;
  for (const auto& a : e->args)
    if (reads_memory(a)) return true;
  return false;
}

bool synchronizes(const Stmt& s) {
  if (s.kind == Stmt::Kind::Sync || s.kind == Stmt::Kind::BlockReduce ||
      s.kind == Stmt::Kind::GridReduce)
    return true;
  for (const auto* list : {&s.body, &s.else_body})
    for (const auto& c : *list)
      if (synchronizes(*c)) return true;
  return false;
}

/// An If that may share its braces with a neighbour of the same condition:
/// the condition is index math only (no store in either body can change it)
/// and nothing in it synchronizes.
bool mergeable(const Stmt& s) {
  return s.kind == Stmt::Kind::If && s.else_body.empty() && !reads_memory(s.cond) &&
         !synchronizes(s);
}

/// The kernel body's printer. Every buffer access goes through a runtime
/// header macro carrying a site id (SL_LD, SL_ST(site, base, index, value),
/// SL_VLD, SL_VST; SL_LOCAL
/// after a Local array's declaration; SL_SYNC and sl_block_reduce's first
/// argument, SL_SITE(n), for barriers): plain accesses on CUDA, calls into
/// the host when the CPU backend traces (runtime/access_trace.h). Sites are
/// numbered in print order; their lines are found in the finished text.
class Printer {
 public:
  std::vector<AccessSite> sites;

  std::string expr(const kir::ExprP& e);
  void stmt(const Stmt& s, int depth, std::ostringstream& os);

 private:
  int site(AccessSite::Kind kind, const kir::Buffer* b, int64_t elements = 1) {
    sites.push_back({kind, b, elements, 0});
    return static_cast<int>(sites.size()) - 1;
  }
  static std::string base(const kir::Buffer& b) { return b.is_param ? b.name + ".data" : b.name; }
  /// SL_LD(site, base, index): one element's value.
  std::string load(const kir::Buffer& b, const kir::ExprP& index) {
    const int id = site(AccessSite::Kind::Read, &b);
    return "SL_LD(" + std::to_string(id) + ", " + base(b) + ", " + expr(index) + ")";
  }
  /// The head of a store, "SL_ST(site, base, index, ": the caller appends
  /// the value and ");".
  std::string store_head(const kir::Buffer& b, const kir::ExprP& index) {
    const int id = site(AccessSite::Kind::Write, &b);
    return "SL_ST(" + std::to_string(id) + ", " + base(b) + ", " + expr(index) + ", ";
  }
  /// SL_VLD(site, base, index, n) / SL_VST(...): a pointer to n elements.
  std::string vector_access(const kir::Buffer& b, const kir::ExprP& index, int64_t n, bool write) {
    const int id = site(write ? AccessSite::Kind::Write : AccessSite::Kind::Read, &b, n);
    return std::string(write ? "SL_VST(" : "SL_VLD(") + std::to_string(id) + ", " + base(b) +
           ", " + expr(index) + ", " + std::to_string(n) + ")";
  }
  std::string unary(const Expr& e);
  std::string binary(const Expr& e);
  std::string cast(const Expr& e);
  void stmts(const std::vector<kir::StmtP>& list, int depth, std::ostringstream& os);
};

std::string Printer::unary(const Expr& e) {
  std::string a = expr(e.args[0]);
  ir::DataType t = e.dtype;
  switch (static_cast<ir::UnaryOpType>(e.op)) {
    case ir::UnaryOpType::Neg: return "(-" + a + ")";
    case ir::UnaryOpType::Abs:
      return ir::is_float(t) ? math_fn("fabs", t) + "(" + a + ")" : "(" + a + " < 0 ? -" + a + " : " + a + ")";
    case ir::UnaryOpType::Exp: return math_fn("exp", t) + "(" + a + ")";
    case ir::UnaryOpType::Log: return math_fn("log", t) + "(" + a + ")";
    case ir::UnaryOpType::Sqrt: return math_fn("sqrt", t) + "(" + a + ")";
    case ir::UnaryOpType::Tanh: return math_fn("tanh", t) + "(" + a + ")";
    case ir::UnaryOpType::Erf: return math_fn("erf", t) + "(" + a + ")";
    case ir::UnaryOpType::Rsqrt: return "sl_rsqrt(" + a + ")";
    case ir::UnaryOpType::Sigmoid: return "sl_sigmoid(" + a + ")";
    case ir::UnaryOpType::Relu: return "sl_relu(" + a + ")";
    case ir::UnaryOpType::Reciprocal: return "(" + literal(1.0, t) + " / " + a + ")";
    case ir::UnaryOpType::Not: return "(!" + a + ")";
  }
  return "?";
}

std::string Printer::binary(const Expr& e) {
  std::string a = expr(e.args[0]), b = expr(e.args[1]);
  auto infix = [&](const char* op) { return "(" + a + " " + op + " " + b + ")"; };
  switch (static_cast<ir::BinaryOpType>(e.op)) {
    case ir::BinaryOpType::Add: return infix("+");
    case ir::BinaryOpType::Sub: return infix("-");
    case ir::BinaryOpType::Mul: return infix("*");
    case ir::BinaryOpType::Div: return infix("/");
    case ir::BinaryOpType::Max: return "sl_max(" + a + ", " + b + ")";
    case ir::BinaryOpType::Min: return "sl_min(" + a + ", " + b + ")";
    case ir::BinaryOpType::Pow: return math_fn("pow", e.dtype) + "(" + a + ", " + b + ")";
    case ir::BinaryOpType::Lt: return infix("<");
    case ir::BinaryOpType::Le: return infix("<=");
    case ir::BinaryOpType::Gt: return infix(">");
    case ir::BinaryOpType::Ge: return infix(">=");
    case ir::BinaryOpType::Eq: return infix("==");
    case ir::BinaryOpType::Ne: return infix("!=");
    case ir::BinaryOpType::And: return infix("&&");
    case ir::BinaryOpType::Or: return infix("||");
  }
  return "?";
}

std::string Printer::cast(const Expr& e) {
  const kir::ExprP& a = e.args[0];
  std::string s = expr(a);
  ir::DataType from = a->dtype, to = e.dtype;
  if (ir::is_half(from)) s = "sl_to_float(" + s + ")", from = ir::DataType::F32;
  if (from == to) return s;
  if (to == ir::DataType::F16) return "sl_to_half((float)(" + s + "))";
  if (to == ir::DataType::BF16) return "sl_to_bf16((float)(" + s + "))";
  if (to == ir::DataType::Bool) return "((" + s + ") != 0)";
  return "((" + c_type(to) + ")(" + s + "))";
}

std::string Printer::expr(const kir::ExprP& e) {
  switch (e->kind) {
    case Expr::Kind::Int: return e->i < 0 ? "(" + std::to_string(e->i) + ")" : std::to_string(e->i);
    case Expr::Kind::Bool: return e->i ? "true" : "false";
    case Expr::Kind::Float: return literal(e->f, e->dtype);
    case Expr::Kind::Var: {
      // threadIdx/blockIdx are read once, as the index type (kIndexLocals);
      // blockDim is unsigned int too: cast, or blockIdx.x * 128 would wrap
      // at 2^32 in an int64 kernel.
      for (const auto& [var, local] : kIndexLocals)
        if (e->name == var) return local;
      if (e->name.starts_with("blockDim.")) return "((sl_index_t)" + e->name + ")";
      return e->name;
    }
    case Expr::Kind::Unary: return unary(*e);
    case Expr::Kind::Binary: return binary(*e);
    case Expr::Kind::Select:
      return "(" + expr(e->args[0]) + " ? " + expr(e->args[1]) + " : " + expr(e->args[2]) + ")";
    case Expr::Kind::Cast: return cast(*e);
    case Expr::Kind::Load: return load(*e->buffer, e->args[0]);
    case Expr::Kind::IntOp:
      if (e->name == "ceilDiv") return "sl_ceil_div(" + expr(e->args[0]) + ", " + expr(e->args[1]) + ")";
      return "(" + expr(e->args[0]) + " " + e->name + " " + expr(e->args[1]) + ")";
  }
  return "?";
}

/// A statement list. Adjacent Ifs with the same condition (every store of a
/// fused nest repeats its predicate) print as one. (Conditions that merge
/// read no memory, so printing them to compare takes no site.)
void Printer::stmts(const std::vector<kir::StmtP>& list, int depth, std::ostringstream& os) {
  std::string pad(static_cast<size_t>(depth) * 2, ' ');
  for (size_t i = 0; i < list.size();) {
    size_t j = i + 1;
    std::string cond;
    if (mergeable(*list[i])) {
      cond = expr(list[i]->cond);
      while (j < list.size() && mergeable(*list[j]) && expr(list[j]->cond) == cond) ++j;
    }
    if (j - i == 1) {
      stmt(*list[i++], depth, os);
      continue;
    }
    os << pad << "if (" << cond << ") {\n";
    for (; i < j; ++i)
      for (const auto& c : list[i]->body) stmt(*c, depth + 1, os);
    os << pad << "}\n";
  }
}

void Printer::stmt(const Stmt& s, int depth, std::ostringstream& os) {
  std::string pad(static_cast<size_t>(depth) * 2, ' ');
  switch (s.kind) {
    case Stmt::Kind::Block:
      stmts(s.body, depth, os);
      break;
    case Stmt::Kind::For:
      if (s.unroll) os << pad << "#pragma unroll\n";
      os << pad << "for (sl_index_t " << s.var << " = 0; " << s.var << " < " << expr(s.extent) << "; ++"
         << s.var << ") {\n";
      stmts(s.body, depth + 1, os);
      os << pad << "}\n";
      break;
    case Stmt::Kind::If:
      os << pad << "if (" << expr(s.cond) << ") {\n";
      stmts(s.body, depth + 1, os);
      if (!s.else_body.empty()) {
        os << pad << "} else {\n";
        stmts(s.else_body, depth + 1, os);
      }
      os << pad << "}\n";
      break;
    case Stmt::Kind::Store:
      if (s.vector > 1) {
        const std::string dst = vector_access(*s.buffer, s.index, s.vector, true);
        const std::string src = vector_access(*s.value->buffer, s.value->args[0], s.vector, false);
        os << pad << "sl_vec_copy<" << c_type(s.buffer->dtype) << ", " << s.vector << ">(" << dst
           << ", " << src << ");\n";
        break;
      }
      {
        const std::string head = store_head(*s.buffer, s.index);
        os << pad << head << expr(s.value) << ");\n";
      }
      break;
    case Stmt::Kind::Allocate: {
      const kir::Buffer& b = *s.buffer;
      if (b.memory == ir::MemoryType::Shared && b.dynamic_offset)
        os << pad << c_type(b.dtype) << "* " << b.name << " = reinterpret_cast<" << c_type(b.dtype)
           << "*>(sl_smem + " << expr(b.dynamic_offset) << ");  // sized at launch\n";
      else if (b.memory == ir::MemoryType::Shared)
        os << pad << c_type(b.dtype) << "* " << b.name << " = reinterpret_cast<" << c_type(b.dtype)
           << "*>(sl_smem + " << b.shared_offset << ");  // " << b.size << " elements\n";
      else  // aligned so that vectorized copies into registers are legal
        os << pad << "alignas(16) " << c_type(b.dtype) << " " << b.name << "[" << b.size
           << "]; SL_LOCAL(" << site(AccessSite::Kind::Declare, &b, b.size) << ", " << b.name
           << ");\n";
      break;
    }
    case Stmt::Kind::Sync:
      os << pad << "SL_SYNC(" << site(AccessSite::Kind::Barrier, nullptr) << ");\n";
      break;
    case Stmt::Kind::BlockReduce: {
      std::string t = c_type(s.buffer->dtype);
      auto b = [](bool v) { return v ? "true" : "false"; };
      const std::string head = store_head(*s.buffer, s.index);
      const int barrier = site(AccessSite::Kind::Barrier, nullptr);
      // A thread that does not take part may never have initialised its
      // accumulator (its predicates were false): it must not read it.
      const std::string src =
          "(" + expr(s.cond) + " ? " + load(*s.buffer, s.index) + " : " + expr(s.value) + ")";
      // Parenthesized: the template arguments' commas are inside a macro call.
      os << pad << head << "(sl_block_reduce<" << b(s.reduce_dims[0]) << ", "
         << b(s.reduce_dims[1]) << ", " << b(s.reduce_dims[2]) << ", " << t << ">(SL_SITE("
         << barrier << "), " << src << ", " << reduce_op(s.reduce_op) << ", " << expr(s.value)
         << ", reinterpret_cast<" << t << "*>(sl_smem + " << s.workspace << "), " << expr(s.cond)
         << ")));\n";
      break;
    }
    case Stmt::Kind::GridReduce: {
      // The result's store and the workspaces follow sl_grid_reduce's own
      // protocol: they are not access sites (see runtime/access_trace.h).
      os << pad << "if (" << expr(s.cond) << ") {\n";
      os << pad << "  sl_grid_reduce<" << c_type(s.buffer->dtype) << ">(&" << s.out->name
         << ".data[" << expr(s.out_index) << "], " << load(*s.buffer, s.index) << ", "
         << reduce_op(s.reduce_op) << ", " << expr(s.value) << ", " << s.workspaces[0]->name
         << ".data, " << s.workspaces[1]->name << ".data, " << expr(s.grid[0]) << ", "
         << expr(s.grid[1]) << ", " << expr(s.grid[2]) << ");\n";
      os << pad << "}\n";
      break;
    }
    case Stmt::Kind::Comment: os << pad << "// " << s.text << "\n"; break;
  }
}

/// Sets each site's line: the line of `text` (1-based, counting from
/// `first_line`) where its id appears as the first argument of an SL_ macro.
void locate_sites(const std::string& text, int first_line, std::vector<AccessSite>& sites) {
  int line = first_line;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      continue;
    }
    if (text.compare(i, 3, "SL_") != 0 || (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')))
      continue;
    size_t j = i + 3;
    while (j < text.size() && (std::isupper(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    if (j >= text.size() || text[j] != '(') continue;
    size_t k = j + 1;
    int id = 0;
    bool digits = false;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])))
      id = id * 10 + (text[k++] - '0'), digits = true;
    if (digits && k < text.size() && (text[k] == ',' || text[k] == ')') && id < static_cast<int>(sites.size()))
      sites[static_cast<size_t>(id)].line = line;
    i = j;
  }
}

/// The kernel function and its sites; `first_line` is the line it starts at.
PrintedUnit kernel_unit(const kir::Kernel& k, int first_line) {
  std::ostringstream os;
  os << "extern \"C\" __global__ void schedlab_kernel(";
  for (size_t i = 0; i < k.params.size(); ++i)
    os << (i ? ", " : "") << param_type(*k.params[i].buffer) << " " << k.params[i].buffer->name;
  os << ") {\n";
  if (!k.dynamic_shared.empty())
    os << "  SL_DYNAMIC_SMEM(sl_smem);  // " << k.dynamic_shared.size()
       << " Shared buffers sized at launch\n";
  else if (k.reduce_workspace_bytes > 0)
    os << "  SL_DYNAMIC_SMEM(sl_smem);  // " << k.shared_bytes << " bytes, then "
       << k.reduce_workspace_bytes << " per thread from byte " << k.reduce_workspace_offset
       << " for block reductions\n";
  else if (k.shared_bytes > 0)
    os << "  SL_DYNAMIC_SMEM(sl_smem);  // " << k.shared_bytes << " bytes\n";
  Printer printer;
  std::ostringstream body;
  printer.stmt(*k.body, 1, body);
  const std::string text = body.str();
  for (const auto& [var, local] : kIndexLocals)
    if (text.find(local) != std::string::npos)
      os << "  const sl_index_t " << local << " = " << var << ";\n";
  os << text;
  os << "}\n";
  PrintedUnit u{os.str(), std::move(printer.sites)};
  locate_sites(u.text, first_line, u.sites);
  return u;
}

}  // namespace

std::string print_kernel(const kir::Kernel& k) {
  return kernel_unit(k, 1).text;
}

PrintedUnit print_unit(const kir::Kernel& k) {
  std::ostringstream os;
  os << runtime_header();
  os << "typedef " << (k.index_bits == 64 ? "int64_t" : "int32_t") << " sl_index_t;\n\n";
  const std::string prefix = os.str();
  PrintedUnit u = kernel_unit(k, 1 + static_cast<int>(std::count(prefix.begin(), prefix.end(), '\n')));
  os << u.text;
  os << "\n#ifdef SCHEDLAB_CPU\nextern \"C\" void schedlab_kernel_entry(void** p) {\n  schedlab_kernel(";
  for (size_t i = 0; i < k.params.size(); ++i)
    os << (i ? ", " : "") << "*static_cast<" << param_type(*k.params[i].buffer) << "*>(p[" << i << "])";
  os << ");\n}\n#endif\n";
  u.text = os.str();
  return u;
}

std::string print_cuda(const kir::Kernel& k) {
  return print_unit(k).text;
}

}  // namespace schedlab::codegen
