#include "schedlab/lower/kir_printer.h"

#include <fmt/format.h>

#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"

namespace schedlab::kir {

namespace {

std::string dtype(ir::DataType t) { return std::string(ir::dtype_name(t)); }

std::string memory(const Buffer& b) {
  return std::string(ir::memory_type_name(b.memory));
}

std::string dims(const std::array<bool, 3>& d) {
  std::string s;
  for (size_t i = 0; i < 3; ++i)
    if (d[i]) s += std::string(s.empty() ? "" : ",") + "xyz"[i];
  return s.empty() ? "-" : s;
}

std::string reduce_op(ir::ReductionOpType op) { return std::string(ir::reduction_op_name(op)); }

/// An expression as text: each visit sets `out` for its node.
class ExprPrinter : public IRVisitor {
 public:
  std::string print(const ExprP& e) {
    internal_assert(e != nullptr) << "kir: a null expression";
    include(e);
    return std::move(out_);
  }

 protected:
  void visit(const IntImm& e) override { out_ = std::to_string(e.value); }
  void visit(const FloatImm& e) override { out_ = fmt::format("{}:{}", e.value, dtype(e.dtype)); }
  void visit(const BoolImm& e) override { out_ = e.value ? "true" : "false"; }
  void visit(const Var& e) override { out_ = e.name; }
  void visit(const Builtin& e) override {
    const std::string_view p = ir::parallel_type_name(e.parallel);
    out_ = e.of == Builtin::Of::Index ? std::string(p) : fmt::format("dim({})", p);
  }
  void visit(const TensorDim& e) override {
    out_ = fmt::format("{}.{}[{}]", e.buffer->name,
                       e.field == TensorDim::Field::Size ? "size" : "stride", e.axis);
    if (e.divisor > 1)
      out_ = e.shift() > 0 ? fmt::format("({} >> {})", out_, e.shift())
                           : fmt::format("({} / {})", out_, e.divisor);
  }
  void visit(const Unary& e) override {
    out_ = fmt::format("{}({})", ir::unary_op_name(e.op), print(e.a));
  }
  void visit(const Binary& e) override {
    out_ = fmt::format("{}({}, {})", ir::binary_op_name(e.op), print(e.a), print(e.b));
  }
  void visit(const Select& e) override {
    out_ = fmt::format("select({}, {}, {})", print(e.cond), print(e.true_value),
                       print(e.false_value));
  }
  void visit(const Cast& e) override {
    out_ = fmt::format("cast<{}>({})", dtype(e.dtype), print(e.value));
  }
  void visit(const Load& e) override {
    out_ = fmt::format("{}[{}]", e.buffer->name, print(e.index));
    if (e.cache != ir::CacheOp::Unspecified)
      out_ = fmt::format("ld.{}({})", cache_qualifier(e.cache), out_);
  }
  void visit(const IndexOp& e) override {
    const std::string a = print(e.a), b = print(e.b);
    out_ = e.op == IndexOpType::CeilDiv
               ? fmt::format("ceilDiv({}, {})", a, b)
               : fmt::format("({} {} {})", a, index_op_symbol(e.op), b);
  }

 private:
  std::string out_;
};

class Printer : public IRVisitor {
 public:
  std::string out;

  void line(const std::string& text) {
    out += std::string(static_cast<size_t>(depth_) * 2, ' ') + text + "\n";
  }
  void nested(const std::vector<StmtP>& body) {
    ++depth_;
    include(body);
    --depth_;
  }

 protected:
  void visit(const Block& s) override {
    line("{");
    nested(s.body);
    line("}");
  }
  void visit(const For& s) override {
    line(fmt::format("for {} in [0, {}){}{} {{", s.var, print_expr(s.extent),
                     s.unroll ? " unroll" : "", s.unswitch ? " unswitch" : ""));
    nested(s.body);
    line("}");
  }
  void visit(const If& s) override {
    line("if " + print_expr(s.cond) + " {");
    nested(s.then_body);
    if (!s.else_body.empty()) {
      line("} else {");
      nested(s.else_body);
    }
    line("}");
  }
  void visit(const Store& s) override {
    line(fmt::format("{}[{}] = {}{}{}", s.buffer->name, print_expr(s.index),
                     print_expr(s.value),
                     s.vector > 1 ? fmt::format("  (vector of {})", s.vector) : "",
                     !s.async         ? ""
                     : s.src_valid    ? "  (cp.async, zero fill unless " + print_expr(s.src_valid) + ")"
                                      : "  (cp.async)"));
  }
  void visit(const Allocate& s) override {
    line(fmt::format("allocate {}: {}[{}] {}", s.buffer->name, dtype(s.buffer->dtype),
                     s.buffer->size, memory(*s.buffer)));
  }
  void visit(const Sync&) override { line("sync"); }
  void visit(const AsyncGroup& s) override {
    if (s.commit) line("cp.async.commit_group");
    if (s.wait >= 0) line(fmt::format("cp.async.wait_group {}", s.wait));
  }
  void visit(const Comment& s) override { line("// " + s.text); }
  void visit(const BlockReduce& s) override {
    line(fmt::format("{0}[{1}] = block_reduce<{2}, {3}>({0}[{1}], identity={4}, "
                     "participate={5}, workspace={6})",
                     s.buffer->name, print_expr(s.index), reduce_op(s.op), dims(s.dims),
                     print_expr(s.identity), print_expr(s.participate), s.workspace));
  }
  void visit(const MmaTile& s) override {
    auto list = [](const auto& xs) {
      std::string r;
      for (const ExprP& x : xs) r += (r.empty() ? "" : ", ") + print_expr(x);
      return r;
    };
    line(fmt::format("{}[{}] += mma.m16n8k16.{}(a=[{}] if [{}], b=[{}] if [{}]) if [{}]",
                     s.acc->name, list(s.acc_index), dtype(s.dtype), list(s.a), list(s.a_valid),
                     list(s.b), list(s.b_valid), list(s.acc_valid)));
    // How the operands reach the registers (lower/mma_tile.h).
    if (s.a_row)
      line(fmt::format("  a: ldmatrix.x4 row {} if {} else the elements", print_expr(s.a_row),
                       print_expr(s.a_full)));
    else
      line("  a: element reads (" + s.a_why + ")");
    if (s.b_row)
      line(fmt::format("  b: ldmatrix.x2{} row {} if {} else the elements", s.b_trans ? ".trans" : "",
                       print_expr(s.b_row), print_expr(s.b_full)));
    else
      line("  b: element reads (" + s.b_why + ")");
    if (!s.m_var.empty() || !s.n_var.empty())
      line(fmt::format("  warp tile: m {} x {}, n {} x {} (fragments read once per m and per n)",
                       s.m_var.empty() ? "-" : s.m_var, s.m_trips,
                       s.n_var.empty() ? "-" : s.n_var, s.n_trips));
  }
  void visit(const GridReduce& s) override {
    if (s.persistent()) {
      line(fmt::format("{}[{}] = grid_allreduce<{}>({}[{}], identity={}, participate={}, "
                       "valid={}, partials={}, barrier={} #{}, element={}, block={}, blocks={})",
                       s.buffer->name, print_expr(s.index), reduce_op(s.op), s.buffer->name,
                       print_expr(s.index), print_expr(s.identity), print_expr(s.participate),
                       print_expr(s.valid), s.partials->name, s.barrier->name, s.barrier_index,
                       print_expr(s.element), print_expr(s.block), print_expr(s.blocks)));
      return;
    }
    line(fmt::format("{}[{}] = grid_reduce<{}>({}[{}], identity={}, participate={}, "
                     "partials={}, semaphores={}, element={}, block={}, blocks={})",
                     s.out->name, print_expr(s.out_index), reduce_op(s.op), s.buffer->name,
                     print_expr(s.index), print_expr(s.identity), print_expr(s.participate),
                     s.partials->name, s.semaphores->name, print_expr(s.element),
                     print_expr(s.block), print_expr(s.blocks)));
  }

 private:
  int depth_ = 0;
};

std::string source_name(const Param& p) {
  switch (p.source) {
    case Param::Source::Input: return fmt::format("input {}", p.index);
    case Param::Source::Output: return fmt::format("output {}", p.index);
    case Param::Source::Workspace: return "workspace";
    case Param::Source::GridWorkspace:
      return p.barrier ? "grid barrier" : p.semaphore ? "grid semaphores" : "grid partials";
  }
  internal_error << "kir: unknown parameter source " << static_cast<int>(p.source);
}

}  // namespace

std::string print_expr(const ExprP& e) { return ExprPrinter().print(e); }

std::string print_kir(const Kernel& k) {
  Printer p;
  const char* barriers = !k.has_barrier ? ""
                         : k.grid_sync  ? ", barriers, grid barriers (every block resident)"
                                        : ", barriers";
  p.line(fmt::format("kernel (int{} indices{})", k.index_bits, barriers));
  for (const Param& param : k.params)
    p.line(fmt::format("  param {}: {} rank {} ({})", param.buffer->name,
                          dtype(param.buffer->dtype), param.buffer->rank, source_name(param)));
  for (const auto& b : k.buffers) {
    if (b->is_param) continue;
    std::string size = b->dynamic_elements ? print_expr(b->dynamic_elements)
                                           : std::to_string(b->size);
    p.line(fmt::format("  buffer {}: {}[{}] {}{}", b->name, dtype(b->dtype), size, memory(*b),
                          b->memory == ir::MemoryType::Shared
                              ? fmt::format(" at byte {}", b->shared_offset)
                              : ""));
  }
  for (const auto& [name, src] : k.size_sources) {
    auto c = k.specialized.find(name);
    auto d = k.divisible.find(name);
    p.line(c != k.specialized.end()
               ? fmt::format("  size {} = {} (compiled in)", name, c->second)
               : fmt::format("  size {} = {}.size[{}]{}{}", name, src.first->name, src.second,
                             k.size_scale.count(name)
                                 ? fmt::format(" * {}", k.size_scale.at(name))
                                 : "",
                             d != k.divisible.end()
                                 ? fmt::format(" (a multiple of {})", d->second)
                                 : ""));
  }
  if (k.static_block[0] > 0)
    p.line(fmt::format("  block ({}, {}, {}) (compiled in)", k.static_block[0], k.static_block[1],
                       k.static_block[2]));
  if (k.fast_math)
    p.line("  fast math: f32 exp, log, division, reciprocal, rsqrt and sigmoid approximated");
  if (k.native_half_math) p.line("  native half math: f16/bf16 +, -, *, neg, abs through __hadd2 and the like");
  for (const auto& [type, extents] : k.launch_extents) {
    std::string list;
    for (const ir::SizeExpr& e : extents) list += (list.empty() ? "" : ", ") + e.str();
    p.line(fmt::format("  launch {}: max({})", ir::parallel_type_name(type), list));
  }
  if (k.reduce_workspace_bytes > 0)
    p.line(fmt::format("  block-reduction workspace: {} B per thread at byte {}",
                          k.reduce_workspace_bytes, k.reduce_workspace_offset));
  for (const Kernel::VectorAccess& v : k.vector_accesses)
    p.line(fmt::format("  vector access {} x {}", v.buffer->name, v.width));
  if (k.body) {
    p.line("body");
    p.nested(k.body->body);
  } else {
    p.line("body (not generated yet)");
  }
  return p.out;
}

}  // namespace schedlab::kir
