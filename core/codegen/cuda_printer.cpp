// The CUDA printer: one small function per node kind.
#include "schedlab/codegen/cuda_printer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "schedlab/base/error.h"
#include "schedlab/codegen/half_math_header.h"
#include "schedlab/codegen/mma_header.h"
#include "schedlab/codegen/runtime_header.h"
#include "schedlab/ir/scalar_format.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::codegen {

using kir::Expr;
using kir::ExprP;
using kir::Stmt;
using kir::StmtP;

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
  internal_error << "codegen: unknown dtype " << static_cast<int>(t);
}

namespace {

/// The thread and block dimensions in the order their indices are read at
/// the top of the kernel (threads first).
constexpr ir::ParallelType kIndexDims[] = {ir::ParallelType::TIDx, ir::ParallelType::TIDy,
                                           ir::ParallelType::TIDz, ir::ParallelType::BIDx,
                                           ir::ParallelType::BIDy, ir::ParallelType::BIDz};

/// CUDA's name of a built-in: threadIdx.x, blockIdx.y, blockDim.z, gridDim.x
/// (the one place the compiler spells them; the CPU runtime defines them).
std::string cuda_name(const kir::Builtin& b) {
  const bool thread = ir::is_thread_dim(b.parallel);
  const char* base = b.of == kir::Builtin::Of::Index ? (thread ? "threadIdx" : "blockIdx")
                                                     : (thread ? "blockDim" : "gridDim");
  const std::string_view p = ir::parallel_type_name(b.parallel);  // TIDx ... BIDz
  return std::string(base) + "." + p.back();
}

/// The local a thread or block index is read into once, as the index type:
/// sl_tx, sl_ty, sl_tz, sl_bx, sl_by, sl_bz.
std::string index_local(ir::ParallelType p) {
  const std::string_view name = ir::parallel_type_name(p);
  return std::string("sl_") + (ir::is_thread_dim(p) ? 't' : 'b') + name.back();
}

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
const char* reduce_op(ir::ReductionOpType op) {
  switch (op) {
    case ir::ReductionOpType::Sum: return "SlOpSum()";
    case ir::ReductionOpType::Max: return "SlOpMax()";
    case ir::ReductionOpType::Min: return "SlOpMin()";
    case ir::ReductionOpType::Prod: return "SlOpProd()";
  }
  internal_error << "codegen: unknown reduction " << static_cast<int>(op);
}

bool reads_memory(const ExprP& e) {
  return kir::any_expr(e, [](const Expr& x) { return x.kind == Expr::Kind::Load; });
}

/// Whether the kernel loads global memory with a cache policy (then its
/// unit appends cache_load_header()).
bool has_cached_load(const kir::Kernel& k) {
  return kir::any_stmt(*k.body, [](const Stmt& s) {
    const auto* st = s.as<kir::Store>();
    return st && !st->async && kir::any_expr(st->value, [](const Expr& x) {
      const auto* l = x.as<kir::Load>();
      return l && l->cache != ir::CacheOp::Unspecified;
    });
  });
}

/// Whether the kernel copies with cp.async (then its unit appends
/// mma_header(), which has sl_cp_async and its groups).
bool has_async_copy(const kir::Kernel& k) {
  return kir::any_stmt(*k.body, [](const Stmt& s) {
    const auto* st = s.as<kir::Store>();
    return st && st->async;
  });
}

/// Whether the kernel computes half ops natively (then its unit appends
/// half_math_header()).
bool has_native_half_math(const kir::Kernel& k) {
  return k.native_half_math && kir::any_stmt(*k.body, [](const Stmt& s) {
    const auto* st = s.as<kir::Store>();
    return st && kir::any_expr(st->value, [](const Expr& x) {
      return (x.kind == Expr::Kind::Unary || x.kind == Expr::Kind::Binary) && ir::is_half(x.dtype);
    });
  });
}

/// `f32` (an f32 expression) rounded to the half type t.
std::string to_half(ir::DataType t, const std::string& f32) {
  return (t == ir::DataType::F16 ? "sl_to_half(" : "sl_to_bf16(") + f32 + ")";
}

/// The CUDA Math API's name of a half op (ir::half_op_is_native), `2`
/// appended for its half2 form.
std::string half_intrinsic(const Expr& e, bool pair) {
  std::string n;
  if (const auto* u = e.as<kir::Unary>())
    n = u->op == ir::UnaryOpType::Neg ? "__hneg" : "__habs";
  else
    switch (e.as<kir::Binary>()->op) {
      case ir::BinaryOpType::Add: n = "__hadd"; break;
      case ir::BinaryOpType::Sub: n = "__hsub"; break;
      default: n = "__hmul"; break;
    }
  return pair ? n + "2" : n;
}

/// The store of a loop that may compute two iterations as one half2 op:
/// the loop's only statement, a half op (not reading the buffer it writes,
/// so iterations i and i + 1 are independent) stored one element at a
/// time, over a constant even extent.
const kir::Store* pairable(const kir::For& s) {
  const auto* n = s.extent->as<kir::IntImm>();
  if (!n || n->value < 2 || n->value % 2 != 0 || s.body.size() != 1) return nullptr;
  const auto* st = s.body[0]->as<kir::Store>();
  if (!st || st->async || st->vector != 1 || !ir::is_half(st->value->dtype) ||
      (st->value->kind != Expr::Kind::Unary && st->value->kind != Expr::Kind::Binary))
    return nullptr;
  const bool reads_own = kir::any_expr(st->value, [st](const Expr& x) {
    const auto* l = x.as<kir::Load>();
    return l && l->buffer == st->buffer;
  });
  return reads_own ? nullptr : st;
}

/// Whether the kernel has an mma tile (then its unit appends mma_header()).
bool has_mma(const kir::Kernel& k) {
  return kir::any_stmt(*k.body, [](const Stmt& s) { return s.kind == Stmt::Kind::MmaTile; });
}

bool synchronizes(const Stmt& s) {
  return kir::any_stmt(s, [](const Stmt& x) {
    return x.kind == Stmt::Kind::Sync || x.kind == Stmt::Kind::BlockReduce ||
           x.kind == Stmt::Kind::GridReduce;
  });
}

/// An If that may share its braces with a neighbour of the same condition:
/// the condition is index math only (no store in either body can change it)
/// and nothing in it synchronizes.
const kir::If* mergeable(const Stmt& s) {
  const auto* i = s.as<kir::If>();
  return i && i->else_body.empty() && !reads_memory(i->cond) && !synchronizes(s) ? i : nullptr;
}

/// The kernel body's printer. Every buffer access goes through a runtime
/// header macro carrying a site id (SL_LD, SL_ST(site, base, index, value),
/// SL_VLD, SL_VST; SL_LOCAL
/// after a Local array's declaration; SL_SYNC and sl_block_reduce's first
/// argument, SL_SITE(n), for barriers): plain accesses on CUDA, calls into
/// the host when the CPU backend traces (runtime/access_trace.h). Sites are
/// numbered in print order; their lines are found in the finished text.
class Printer : public kir::IRVisitor {
 public:
  std::vector<AccessSite> sites;
  /// blockDim when the kernel fixes it (kir::Kernel::static_block), else 0s.
  std::array<int64_t, 3> block{};
  /// kir::Kernel::fast_math: f32 math through the runtime's sl_fast_*.
  bool fast_math = false;
  /// kir::Kernel::native_half_math: half ops through __hmul and the like.
  bool native_half = false;
  /// The fusion inputs' buffers, and those the printed statements read.
  std::set<const kir::Buffer*> inputs, inputs_read;

  std::string expr(const ExprP& e);
  /// Prints a statement list at `depth` into os.
  void stmts(const std::vector<StmtP>& list, int depth, std::ostringstream& os);

 protected:
  // Expressions: each visit sets expr_ for its node.
  void visit(const kir::IntImm& e) override {
    expr_ = e.value < 0 ? "(" + std::to_string(e.value) + ")" : std::to_string(e.value);
  }
  void visit(const kir::BoolImm& e) override { expr_ = e.value ? "true" : "false"; }
  void visit(const kir::FloatImm& e) override { expr_ = literal(e.value, e.dtype); }
  void visit(const kir::Var& e) override {
    expr_ = e.name == renamed_ ? "(" + e.name + " + 1)" : e.name;
  }
  void visit(const kir::Builtin& e) override;
  void visit(const kir::TensorDim& e) override;
  void visit(const kir::Unary& e) override;
  void visit(const kir::Binary& e) override;
  void visit(const kir::Select& e) override {
    expr_ = "(" + expr(e.cond) + " ? " + expr(e.true_value) + " : " + expr(e.false_value) + ")";
  }
  void visit(const kir::Cast& e) override;
  void visit(const kir::Load& e) override {
    // A load with a cache policy takes the address (a one-element SL_VLD, so
    // the CPU backend's trace still sees the read): sl_ldcg(&T0_in[i]).
    expr_ = e.cache == ir::CacheOp::Unspecified
                ? load(*e.buffer, e.index)
                : "sl_ld" + std::string(kir::cache_qualifier(e.cache)) + "(" +
                      vector_access(*e.buffer, e.index, 1, false) + ")";
  }
  void visit(const kir::IndexOp& e) override {
    const std::string a = expr(e.a), b = expr(e.b);
    expr_ = e.op == kir::IndexOpType::CeilDiv
                ? "sl_ceil_div(" + a + ", " + b + ")"
                : "(" + a + " " + std::string(kir::index_op_symbol(e.op)) + " " + b + ")";
  }
  // Statements: each visit appends its lines at depth_ to *os_.
  void visit(const kir::Block& s) override { stmts(s.body, depth_, *os_); }
  void visit(const kir::For& s) override;
  void visit(const kir::If& s) override;
  void visit(const kir::Store& s) override;
  void visit(const kir::Allocate& s) override;
  void visit(const kir::Sync&) override {
    *os_ << pad() << "SL_SYNC(" << site(AccessSite::Kind::Barrier, nullptr) << ");\n";
  }
  void visit(const kir::Comment& s) override { *os_ << pad() << "// " << s.text << "\n"; }
  void visit(const kir::AsyncGroup& s) override {
    if (s.commit) *os_ << pad() << "sl_cp_async_commit();\n";
    if (s.wait >= 0) *os_ << pad() << "sl_cp_async_wait<" << s.wait << ">();\n";
  }
  void visit(const kir::BlockReduce& s) override;
  void visit(const kir::MmaTile& s) override;
  void visit(const kir::GridReduce& s) override;

 private:
  std::string pad() const { return std::string(static_cast<size_t>(depth_) * 2, ' '); }
  int site(AccessSite::Kind kind, const kir::Buffer* b, int64_t elements = 1) {
    sites.push_back({kind, b, elements, 0});
    return static_cast<int>(sites.size()) - 1;
  }
  /// A fusion input is read through `const T* __restrict__ <name>_in` (the
  /// kernel never writes it: read-only loads, ld.global.nc on a GPU); other
  /// parameters through their data pointer, Local and Shared buffers by name.
  std::string base(const kir::Buffer& b) {
    if (inputs.count(&b)) {
      inputs_read.insert(&b);
      return b.name + "_in";
    }
    return b.is_param ? b.name + ".data" : b.name;
  }
  /// SL_LD(site, base, index): one element's value.
  std::string load(const kir::Buffer& b, const ExprP& index) {
    const int id = site(AccessSite::Kind::Read, &b);
    return "SL_LD(" + std::to_string(id) + ", " + base(b) + ", " + expr(index) + ")";
  }
  /// The head of a store, "SL_ST(site, base, index, ": the caller appends
  /// the value and ");".
  std::string store_head(const kir::Buffer& b, const ExprP& index) {
    const int id = site(AccessSite::Kind::Write, &b);
    return "SL_ST(" + std::to_string(id) + ", " + base(b) + ", " + expr(index) + ", ";
  }
  /// SL_VLD(site, base, index, n) / SL_VST(...): a pointer to n elements.
  std::string vector_access(const kir::Buffer& b, const ExprP& index, int64_t n, bool write) {
    const int id = site(write ? AccessSite::Kind::Write : AccessSite::Kind::Read, &b, n);
    return std::string(write ? "SL_VST(" : "SL_VLD(") + std::to_string(id) + ", " + base(b) +
           ", " + expr(index) + ", " + std::to_string(n) + ")";
  }

  /// A loop computing iterations i and i + 1 together (pairable): the store
  /// and its operands, printed once for each.
  void pair(const kir::For& s, const kir::Store& st);

  std::string expr_;
  /// The loop variable that prints as (var + 1): the second of a pair.
  std::string renamed_;
  int depth_ = 0;
  std::ostringstream* os_ = nullptr;
};

std::string Printer::expr(const ExprP& e) {
  internal_assert(e != nullptr) << "codegen: a null expression";
  include(e);
  return std::move(expr_);
}

void Printer::visit(const kir::Builtin& e) {
  // Thread and block indices are read once, as the index type
  // (index_local); blockDim is unsigned int too: cast, or blockIdx.x * 128
  // would wrap at 2^32 in an int64 kernel.
  if (e.of == kir::Builtin::Of::Index)
    expr_ = index_local(e.parallel);
  else if (ir::is_thread_dim(e.parallel))
    expr_ = "((sl_index_t)" + cuda_name(e) + ")";
  else
    expr_ = cuda_name(e);
}

void Printer::visit(const kir::TensorDim& e) {
  expr_ = e.buffer->name + (e.field == kir::TensorDim::Field::Size ? ".size[" : ".stride[") +
          std::to_string(e.axis) + "]";
  if (e.divisor > 1)
    expr_ = e.shift() > 0 ? "(" + expr_ + " >> " + std::to_string(e.shift()) + ")"
                          : "(" + expr_ + " / " + std::to_string(e.divisor) + ")";
}

void Printer::visit(const kir::Unary& e) {
  const std::string a = expr(e.a);
  const ir::DataType t = e.dtype;
  if (ir::is_half(t)) {  // neg or abs (ir::half_op_is_native)
    expr_ = native_half ? half_intrinsic(e, false) + "(" + a + ")"
            : e.op == ir::UnaryOpType::Neg ? to_half(t, "-sl_to_float(" + a + ")")
                                           : to_half(t, "fabsf(sl_to_float(" + a + "))");
    return;
  }
  if (fast_math && t == ir::DataType::F32) {
    switch (e.op) {
      case ir::UnaryOpType::Exp: expr_ = "sl_fast_exp(" + a + ")"; return;
      case ir::UnaryOpType::Log: expr_ = "sl_fast_log(" + a + ")"; return;
      case ir::UnaryOpType::Rsqrt: expr_ = "sl_fast_rsqrt(" + a + ")"; return;
      case ir::UnaryOpType::Sigmoid: expr_ = "sl_fast_sigmoid(" + a + ")"; return;
      case ir::UnaryOpType::Reciprocal: expr_ = "sl_fast_div(1.0f, " + a + ")"; return;
      default: break;  // exact, or (tanh, erf, sqrt) as accurate as without fast math
    }
  }
  switch (e.op) {
    case ir::UnaryOpType::Neg: expr_ = "(-" + a + ")"; return;
    case ir::UnaryOpType::Abs:
      expr_ = ir::is_float(t) ? math_fn("fabs", t) + "(" + a + ")"
                              : "(" + a + " < 0 ? -" + a + " : " + a + ")";
      return;
    case ir::UnaryOpType::Exp: expr_ = math_fn("exp", t) + "(" + a + ")"; return;
    case ir::UnaryOpType::Log: expr_ = math_fn("log", t) + "(" + a + ")"; return;
    case ir::UnaryOpType::Sqrt: expr_ = math_fn("sqrt", t) + "(" + a + ")"; return;
    case ir::UnaryOpType::Tanh: expr_ = math_fn("tanh", t) + "(" + a + ")"; return;
    case ir::UnaryOpType::Erf: expr_ = math_fn("erf", t) + "(" + a + ")"; return;
    case ir::UnaryOpType::Rsqrt: expr_ = "sl_rsqrt(" + a + ")"; return;
    case ir::UnaryOpType::Sigmoid: expr_ = "sl_sigmoid(" + a + ")"; return;
    case ir::UnaryOpType::Relu: expr_ = "sl_relu(" + a + ")"; return;
    case ir::UnaryOpType::Reciprocal: expr_ = "(" + literal(1.0, t) + " / " + a + ")"; return;
    case ir::UnaryOpType::Not: expr_ = "(!" + a + ")"; return;
  }
  internal_error << "codegen: unknown unary operator " << static_cast<int>(e.op);
}

void Printer::visit(const kir::Binary& e) {
  const std::string a = expr(e.a), b = expr(e.b);
  if (ir::is_half(e.dtype)) {  // +, - or * (ir::half_op_is_native): in f32, or native
    const char* op = e.op == ir::BinaryOpType::Add ? " + " : e.op == ir::BinaryOpType::Sub ? " - " : " * ";
    expr_ = native_half ? half_intrinsic(e, false) + "(" + a + ", " + b + ")"
                        : to_half(e.dtype, "sl_to_float(" + a + ")" + op + "sl_to_float(" + b + ")");
    return;
  }
  auto infix = [&](const char* op) { return "(" + a + " " + op + " " + b + ")"; };
  switch (e.op) {
    case ir::BinaryOpType::Add: expr_ = infix("+"); return;
    case ir::BinaryOpType::Sub: expr_ = infix("-"); return;
    case ir::BinaryOpType::Mul: expr_ = infix("*"); return;
    case ir::BinaryOpType::Div:
      expr_ = fast_math && e.dtype == ir::DataType::F32 ? "sl_fast_div(" + a + ", " + b + ")"
                                                        : infix("/");
      return;
    case ir::BinaryOpType::Max: expr_ = "sl_max(" + a + ", " + b + ")"; return;
    case ir::BinaryOpType::Min: expr_ = "sl_min(" + a + ", " + b + ")"; return;
    case ir::BinaryOpType::Pow: expr_ = math_fn("pow", e.dtype) + "(" + a + ", " + b + ")"; return;
    case ir::BinaryOpType::Lt: expr_ = infix("<"); return;
    case ir::BinaryOpType::Le: expr_ = infix("<="); return;
    case ir::BinaryOpType::Gt: expr_ = infix(">"); return;
    case ir::BinaryOpType::Ge: expr_ = infix(">="); return;
    case ir::BinaryOpType::Eq: expr_ = infix("=="); return;
    case ir::BinaryOpType::Ne: expr_ = infix("!="); return;
    case ir::BinaryOpType::And: expr_ = infix("&&"); return;
    case ir::BinaryOpType::Or: expr_ = infix("||"); return;
  }
  internal_error << "codegen: unknown binary operator " << static_cast<int>(e.op);
}

void Printer::visit(const kir::Cast& e) {
  std::string s = expr(e.value);
  ir::DataType from = e.value->dtype, to = e.dtype;
  if (ir::is_half(from)) s = "sl_to_float(" + s + ")", from = ir::DataType::F32;
  if (from == to) expr_ = s;
  else if (to == ir::DataType::F16) expr_ = "sl_to_half((float)(" + s + "))";
  else if (to == ir::DataType::BF16) expr_ = "sl_to_bf16((float)(" + s + "))";
  else if (to == ir::DataType::Bool) expr_ = "((" + s + ") != 0)";
  else expr_ = "((" + c_type(to) + ")(" + s + "))";
}

/// A statement list. Adjacent Ifs with the same condition (every store of a
/// fused nest repeats its predicate) print as one. (Conditions that merge
/// read no memory, so printing them to compare takes no site.)
void Printer::stmts(const std::vector<StmtP>& list, int depth, std::ostringstream& os) {
  std::ostringstream* const saved_os = os_;
  const int saved_depth = depth_;
  os_ = &os;
  depth_ = depth;
  for (size_t i = 0; i < list.size();) {
    size_t j = i + 1;
    std::string cond;
    if (const kir::If* first = mergeable(*list[i])) {
      cond = expr(first->cond);
      while (j < list.size()) {
        const kir::If* next = mergeable(*list[j]);
        if (!next || expr(next->cond) != cond) break;
        ++j;
      }
    }
    if (j - i == 1) {
      include(*list[i++]);
      continue;
    }
    os << pad() << "if (" << cond << ") {\n";
    ++depth_;
    for (; i < j; ++i) include(list[i]->as<kir::If>()->then_body);
    --depth_;
    os << pad() << "}\n";
  }
  os_ = saved_os;
  depth_ = saved_depth;
}

void Printer::visit(const kir::For& s) {
  if (native_half)
    if (const kir::Store* st = pairable(s)) return pair(s, *st);
  if (s.unroll) *os_ << pad() << "#pragma unroll\n";
  *os_ << pad() << "for (sl_index_t " << s.var << " = 0; " << s.var << " < " << expr(s.extent)
       << "; ++" << s.var << ") {\n";
  stmts(s.body, depth_ + 1, *os_);
  *os_ << pad() << "}\n";
}

void Printer::pair(const kir::For& s, const kir::Store& st) {
  // The pair's operands are two elements each, adjacent or not: building a
  // half2 from two halves is a register move.
  std::vector<ExprP> ops;
  if (const auto* u = st.value->as<kir::Unary>()) ops = {u->a};
  else ops = {st.value->as<kir::Binary>()->a, st.value->as<kir::Binary>()->b};
  std::string args;
  for (const ExprP& o : ops) {
    const std::string first = expr(o);
    renamed_ = s.var;
    const std::string second = expr(o);
    renamed_.clear();
    args += (args.empty() ? "" : ", ") + ("sl_pair(" + first + ", " + second + ")");
  }
  if (s.unroll) *os_ << pad() << "#pragma unroll\n";
  *os_ << pad() << "for (sl_index_t " << s.var << " = 0; " << s.var << " < " << expr(s.extent)
       << "; " << s.var << " += 2) {  // two iterations in one half2 op\n";
  *os_ << pad() << "  const auto sl_p = " << half_intrinsic(*st.value, true) << "(" << args
       << ");\n";
  *os_ << pad() << "  " << store_head(*st.buffer, st.index) << "sl_p.x);\n";
  renamed_ = s.var;
  *os_ << pad() << "  " << store_head(*st.buffer, st.index) << "sl_p.y);\n";
  renamed_.clear();
  *os_ << pad() << "}\n";
}

void Printer::visit(const kir::If& s) {
  *os_ << pad() << "if (" << expr(s.cond) << ") {\n";
  stmts(s.then_body, depth_ + 1, *os_);
  if (!s.else_body.empty()) {
    *os_ << pad() << "} else {\n";
    stmts(s.else_body, depth_ + 1, *os_);
  }
  *os_ << pad() << "}\n";
}

void Printer::visit(const kir::Store& s) {
  if (s.async) {
    // sl_cp_async<BYTES, CG>(site of the shared write, base, index, source,
    // src_bytes): src_bytes 0 zero-fills (lowering clamped the source).
    const auto* src = s.value->as<kir::Load>();
    internal_assert(src) << "codegen: the cp.async into " << s.buffer->name << " copies no load";
    const int64_t bytes = s.vector * ir::dtype_size(s.buffer->dtype);
    const int dst = site(AccessSite::Kind::Write, s.buffer, s.vector);
    const std::string index = expr(s.index);
    const std::string from = vector_access(*src->buffer, src->index, s.vector, false);
    *os_ << pad() << "sl_cp_async<" << bytes << ", "
         << (src->cache == ir::CacheOp::Global ? "true" : "false") << ">(SL_SITE(" << dst << "), "
         << base(*s.buffer) << ", " << index << ", " << from << ", "
         << (s.src_valid ? "(" + expr(s.src_valid) + ") ? " + std::to_string(bytes) + " : 0"
                         : std::to_string(bytes))
         << ");\n";
    return;
  }
  if (s.vector > 1) {
    const auto* src = s.value->as<kir::Load>();
    internal_assert(src) << "codegen: a vector store of " << s.buffer->name << " copies no load";
    const std::string dst = vector_access(*s.buffer, s.index, s.vector, true);
    const std::string from = vector_access(*src->buffer, src->index, s.vector, false);
    const std::string_view q = kir::cache_qualifier(src->cache);
    *os_ << pad() << "sl_vec_copy" << (q.empty() ? "" : "_") << q << "<" << c_type(s.buffer->dtype)
         << ", " << s.vector << ">(" << dst << ", " << from << ");\n";
    return;
  }
  const std::string head = store_head(*s.buffer, s.index);
  *os_ << pad() << head << expr(s.value) << ");\n";
}

void Printer::visit(const kir::Allocate& s) {
  const kir::Buffer& b = *s.buffer;
  const std::string t = c_type(b.dtype);
  if (b.memory == ir::MemoryType::Shared && b.dynamic_offset)
    *os_ << pad() << t << "* " << b.name << " = reinterpret_cast<" << t << "*>(sl_smem + "
         << expr(b.dynamic_offset) << ");  // sized at launch\n";
  else if (b.memory == ir::MemoryType::Shared)
    *os_ << pad() << t << "* " << b.name << " = reinterpret_cast<" << t << "*>(sl_smem + "
         << b.shared_offset << ");  // " << b.size << " elements\n";
  else  // aligned so that vectorized copies into registers are legal
    *os_ << pad() << "alignas(16) " << t << " " << b.name << "[" << b.size << "]; SL_LOCAL("
         << site(AccessSite::Kind::Declare, &b, b.size) << ", " << b.name << ");\n";
}

void Printer::visit(const kir::BlockReduce& s) {
  const std::string t = c_type(s.buffer->dtype);
  auto b = [](bool v) { return v ? "true" : "false"; };
  const int barrier = site(AccessSite::Kind::Barrier, nullptr);
  const std::string participate = expr(s.participate);
  // A thread that does not take part may never have initialised its
  // accumulator (its predicates were false): it must not read it.
  const std::string src =
      "(" + participate + " ? " + load(*s.buffer, s.index) + " : " + expr(s.identity) + ")";
  // Every thread calls it (it synchronizes the block); only one whose element
  // exists stores the result: an element past the tensor's end may share its
  // accumulator slot with a real one (fuzz seed 1 case 4194).
  *os_ << pad() << "{\n";
  *os_ << pad() << "  const " << t << " sl_r = sl_block_reduce<" << b(s.dims[0]) << ", "
       << b(s.dims[1]) << ", " << b(s.dims[2]) << ", " << block[0] << ", " << block[1] << ", "
       << block[2] << ", " << t << ">(SL_SITE(" << barrier << "), "
       << src << ", " << reduce_op(s.op) << ", " << expr(s.identity) << ", reinterpret_cast<" << t
       << "*>(sl_smem + " << s.workspace << "), " << participate << ");\n";
  *os_ << pad() << "  if (" << participate << ") " << store_head(*s.buffer, s.index) << "sl_r);\n";
  *os_ << pad() << "}\n";
}

void Printer::visit(const kir::MmaTile& s) {
  // A warp collective: every lane packs its fragments, reads the accumulator
  // elements it owns (0 for one past the output's end), and writes them back.
  const std::string t = c_type(s.dtype);
  auto elem = [&](const kir::ExprP& v, const kir::ExprP& valid) {
    return valid->is_true() ? expr(v) : "(" + expr(valid) + ") ? " + expr(v) + " : " + t + "{0}";
  };
  auto pack = [&](const auto& v, const auto& valid, size_t j) {
    return "sl_pack_b16<" + t + ">(" + elem(v[j], valid[j]) + ", " + elem(v[j + 1], valid[j + 1]) +
           ")";
  };
  // An operand with ldmatrix rows (lower/mma_tile.h): the warp's ldmatrix
  // when its whole tile is in range (the same branch for every lane), else
  // the element reads. Each lane's row is a traced 16-byte read (SL_VLD), so
  // the sanitizer and the model's shared-memory wavefronts see it. `dst` is
  // the register array written, declared here when `declare`.
  auto operand = [&](const std::string& dst, bool declare, size_t regs, const kir::ExprP& row,
                     const kir::ExprP& full, bool trans, const auto& v, const auto& valid) {
    if (!row) {
      if (declare) {
        std::string packs;
        for (size_t r = 0; r < regs; ++r) packs += (r ? ", " : "") + pack(v, valid, 2 * r);
        *os_ << pad() << "  const uint32_t " << dst << "[" << regs << "] = {" << packs << "};\n";
        return;
      }
      for (size_t r = 0; r < regs; ++r)
        *os_ << pad() << "  " << dst << "[" << r << "] = " << pack(v, valid, 2 * r) << ";\n";
      return;
    }
    const auto* ld = row->as<kir::Load>();
    internal_assert(ld != nullptr) << "codegen: an ldmatrix row that is not a load";
    std::string addr = vector_access(*ld->buffer, ld->index, 8, false);
    if (regs == 2)  // .x2: lanes 16-31 pass an address that is not read (not traced)
      addr = "(" +
             expr(kir::Expr::launch_index(ir::ParallelType::TIDx) % kir::Expr::integer(32) <
                  kir::Expr::integer(16)) +
             ") ? " + addr + " : " + base(*ld->buffer);
    if (declare) *os_ << pad() << "  uint32_t " << dst << "[" << regs << "];\n";
    *os_ << pad() << "  if (" << expr(full) << ") {\n";
    *os_ << pad() << "    sl_ldmatrix<" << (trans ? "true" : "false") << ">(" << dst << ", " << addr
         << ");\n";
    *os_ << pad() << "  } else {\n";
    for (size_t r = 0; r < regs; ++r)
      *os_ << pad() << "    " << dst << "[" << r << "] = " << pack(v, valid, 2 * r) << ";\n";
    *os_ << pad() << "  }\n";
  };
  auto mma = [&](const std::string& a, const std::string& b) {
    *os_ << pad() << "  float sl_mc[4];\n";
    for (size_t i = 0; i < 4; ++i)
      *os_ << pad() << "  sl_mc[" << i << "] = (" << expr(s.acc_valid[i]) << ") ? "
           << load(*s.acc, s.acc_index[i]) << " : 0.0f;\n";
    *os_ << pad() << "  sl_mma_m16n8k16<" << t << ">(sl_mc, " << a << ", " << b << ", sl_mc);\n";
    for (size_t i = 0; i < 4; ++i)
      *os_ << pad() << "  if (" << expr(s.acc_valid[i]) << ") " << store_head(*s.acc, s.acc_index[i])
           << "sl_mc[" << i << "]);\n";
  };
  *os_ << pad() << "{\n";
  if (s.m_var.empty() && s.n_var.empty()) {
    operand("sl_ma", true, 4, s.a_row, s.a_full, false, s.a, s.a_valid);
    operand("sl_mb", true, 2, s.b_row, s.b_full, s.b_trans, s.b, s.b_valid);
    mma("sl_ma", "sl_mb");
    *os_ << pad() << "}\n";
    return;
  }
  // A warp tile (kir::MmaTile::m_var/n_var): the A fragments of every m and
  // the B fragments of every n in registers first, then the m x n mma.sync.
  const std::string mv = s.m_var.empty() ? "sl_wm" : s.m_var;
  const std::string nv = s.n_var.empty() ? "sl_wn" : s.n_var;
  *os_ << pad() << "  uint32_t sl_fa[" << s.m_trips << "][4];\n";
  *os_ << pad() << "  uint32_t sl_fb[" << s.n_trips << "][2];\n";
  const int saved = depth_;
  auto open = [&](const std::string& var, int64_t trips) {
    *os_ << pad() << "  #pragma unroll\n";
    *os_ << pad() << "  for (sl_index_t " << var << " = 0; " << var << " < " << trips << "; ++"
         << var << ") {\n";
    ++depth_;
  };
  auto close = [&] {
    --depth_;
    *os_ << pad() << "  }\n";
  };
  open(mv, s.m_trips);
  operand("sl_fa[" + mv + "]", false, 4, s.a_row, s.a_full, false, s.a, s.a_valid);
  close();
  open(nv, s.n_trips);
  operand("sl_fb[" + nv + "]", false, 2, s.b_row, s.b_full, s.b_trans, s.b, s.b_valid);
  close();
  open(mv, s.m_trips);
  open(nv, s.n_trips);
  mma("sl_fa[" + mv + "]", "sl_fb[" + nv + "]");
  close();
  close();
  depth_ = saved;
  *os_ << pad() << "}\n";
}

void Printer::visit(const kir::GridReduce& s) {
  if (s.persistent()) {
    // An allreduce over the grid (kir::GridReduce, grid-persistent): this
    // block's partial into its slot, the grid barrier, then every thread of
    // an existing element combines the slots in block order. The slots are
    // access sites (traced: a read before the barrier is a race).
    const std::string t = c_type(s.buffer->dtype);
    const int barrier = site(AccessSite::Kind::Barrier, nullptr);
    const ExprP slot = s.element * s.blocks;
    *os_ << pad() << "{  // grid allreduce: partial, grid barrier, combine\n";
    *os_ << pad() << "  if (" << expr(s.participate) << ") "
         << store_head(*s.partials, slot + s.block) << load(*s.buffer, s.index) << ");\n";
    *os_ << pad() << "  sl_grid_sync(SL_SITE(" << barrier << "), " << s.barrier->name
         << ".data);\n";
    *os_ << pad() << "  if (" << expr(s.valid) << ") {\n";
    *os_ << pad() << "    " << t << " sl_r = " << expr(s.identity) << ";\n";
    *os_ << pad() << "    for (int64_t sl_b = 0; sl_b < " << expr(s.blocks) << "; ++sl_b)\n";
    *os_ << pad() << "      sl_r = " << reduce_op(s.op) << "(sl_r, sl_grid_load("
         << vector_access(*s.partials, slot + kir::Expr::var("sl_b"), 1, false) << "));\n";
    *os_ << pad() << "    " << store_head(*s.buffer, s.index) << "sl_r);\n";
    *os_ << pad() << "  }\n";
    *os_ << pad() << "}\n";
    return;
  }
  // The result's store and the workspaces follow sl_grid_reduce's own
  // protocol: they are not access sites (see runtime/access_trace.h).
  *os_ << pad() << "if (" << expr(s.participate) << ") {\n";
  *os_ << pad() << "  sl_grid_reduce<" << c_type(s.buffer->dtype) << ">(&" << s.out->name
       << ".data[" << expr(s.out_index) << "], " << load(*s.buffer, s.index) << ", "
       << reduce_op(s.op) << ", " << expr(s.identity) << ", " << s.partials->name << ".data, "
       << s.semaphores->name << ".data, " << expr(s.element) << ", " << expr(s.block) << ", "
       << expr(s.blocks) << ");\n";
  *os_ << pad() << "}\n";
}

/// The thread and block dimensions whose index the kernel reads.
std::set<ir::ParallelType> indices_read(const kir::Kernel& k) {
  std::set<ir::ParallelType> read;
  kir::any_expr(*k.body, [&](const Expr& e) {
    if (const auto* b = e.as<kir::Builtin>(); b && b->of == kir::Builtin::Of::Index)
      read.insert(b->parallel);
    return false;
  });
  return read;
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
  os << "extern \"C\" __global__ void ";
  // A fixed block: ptxas may budget registers for exactly that many threads.
  if (k.static_block[0] > 0)
    os << "__launch_bounds__(" << k.static_block[0] * k.static_block[1] * k.static_block[2]
       << ") ";
  os << "schedlab_kernel(";
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
  printer.block = k.static_block;
  printer.fast_math = k.fast_math;
  printer.native_half = k.native_half_math;
  for (const kir::Param& p : k.params)
    if (p.source == kir::Param::Source::Input) printer.inputs.insert(p.buffer);
  std::ostringstream body;
  printer.stmts(k.body->body, 1, body);
  for (const kir::Param& p : k.params)
    if (printer.inputs_read.count(p.buffer))
      os << "  const " << c_type(p.buffer->dtype) << "* __restrict__ " << p.buffer->name
         << "_in = " << p.buffer->name << ".data;\n";
  const std::set<ir::ParallelType> read = indices_read(k);
  for (ir::ParallelType p : kIndexDims)
    if (read.count(p))
      os << "  const sl_index_t " << index_local(p) << " = "
         << cuda_name(kir::Builtin(p, kir::Builtin::Of::Index)) << ";\n";
  os << body.str();
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
  if (has_cached_load(k)) os << cache_load_header();
  if (has_async_copy(k) || has_mma(k)) os << mma_header();
  if (has_native_half_math(k)) os << half_math_header();
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
