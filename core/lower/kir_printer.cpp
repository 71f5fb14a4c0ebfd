#include "schedlab/lower/kir_printer.h"

#include <fmt/format.h>

#include "schedlab/base/error.h"

namespace schedlab::kir {

namespace {

std::string dtype(ir::DataType t) { return std::string(ir::dtype_name(t)); }

std::string memory(const Buffer& b) {
  return std::string(ir::memory_type_name(b.memory));
}

std::string args(const std::vector<ExprP>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + print_expr(v[i]);
  return s;
}

std::string dims(const std::array<bool, 3>& d) {
  std::string s;
  for (size_t i = 0; i < 3; ++i)
    if (d[i]) s += std::string(s.empty() ? "" : ",") + "xyz"[i];
  return s.empty() ? "-" : s;
}

std::string reduce_op(int op) {
  return std::string(ir::reduction_op_name(static_cast<ir::ReductionOpType>(op)));
}

class Printer {
 public:
  std::string out;

  void line(int depth, const std::string& text) {
    out += std::string(static_cast<size_t>(depth) * 2, ' ') + text + "\n";
  }

  void body(const std::vector<StmtP>& stmts, int depth) {
    for (const StmtP& s : stmts) stmt(*s, depth);
  }

  void stmt(const Stmt& s, int depth) {
    using K = Stmt::Kind;
    switch (s.kind) {
      case K::Block:
        line(depth, "{");
        body(s.body, depth + 1);
        line(depth, "}");
        return;
      case K::For:
        line(depth, fmt::format("for {} in [0, {}){}{} {{", s.var, print_expr(s.extent),
                                s.unroll ? " unroll" : "", s.unswitch ? " unswitch" : ""));
        body(s.body, depth + 1);
        line(depth, "}");
        return;
      case K::If:
        line(depth, "if " + print_expr(s.cond) + " {");
        body(s.body, depth + 1);
        if (!s.else_body.empty()) {
          line(depth, "} else {");
          body(s.else_body, depth + 1);
        }
        line(depth, "}");
        return;
      case K::Store:
        line(depth, fmt::format("{}[{}] = {}{}", s.buffer->name, print_expr(s.index),
                                print_expr(s.value),
                                s.vector > 1 ? fmt::format("  (vector of {})", s.vector) : ""));
        return;
      case K::Allocate:
        line(depth, fmt::format("allocate {}: {}[{}] {}", s.buffer->name, dtype(s.buffer->dtype),
                                s.buffer->size, memory(*s.buffer)));
        return;
      case K::Sync: line(depth, "sync"); return;
      case K::Comment: line(depth, "// " + s.text); return;
      case K::BlockReduce:
        line(depth, fmt::format("{0}[{1}] = block_reduce<{2}, {3}>({0}[{1}], identity={4}, "
                                "participate={5}, workspace={6})",
                                s.buffer->name, print_expr(s.index), reduce_op(s.reduce_op),
                                dims(s.reduce_dims), print_expr(s.value), print_expr(s.cond),
                                s.workspace));
        return;
      case K::GridReduce:
        internal_assert(s.workspaces.size() == 2 && s.grid.size() == 3)
            << "kir: a GridReduce has " << s.workspaces.size() << " workspaces and "
            << s.grid.size() << " grid terms";
        line(depth, fmt::format("{}[{}] = grid_reduce<{}>({}[{}], identity={}, participate={}, "
                                "partials={}, semaphores={}, element={}, block={}, blocks={})",
                                s.out->name, print_expr(s.out_index), reduce_op(s.reduce_op),
                                s.buffer->name, print_expr(s.index), print_expr(s.value),
                                print_expr(s.cond), s.workspaces[0]->name, s.workspaces[1]->name,
                                print_expr(s.grid[0]), print_expr(s.grid[1]),
                                print_expr(s.grid[2])));
        return;
    }
    internal_error << "kir: unknown statement kind " << static_cast<int>(s.kind);
  }
};

std::string source_name(const Param& p) {
  switch (p.source) {
    case Param::Source::Input: return fmt::format("input {}", p.index);
    case Param::Source::Output: return fmt::format("output {}", p.index);
    case Param::Source::Workspace: return "workspace";
    case Param::Source::GridWorkspace:
      return p.semaphore ? "grid semaphores" : "grid partials";
  }
  internal_error << "kir: unknown parameter source " << static_cast<int>(p.source);
  return "";  // not reached: internal_error throws
}

}  // namespace

std::string print_expr(const ExprP& e) {
  internal_assert(e != nullptr) << "kir: a null expression";
  using K = Expr::Kind;
  switch (e->kind) {
    case K::Int: return std::to_string(e->i);
    case K::Float: return fmt::format("{}:{}", e->f, dtype(e->dtype));
    case K::Bool: return e->i ? "true" : "false";
    case K::Var: return e->name;
    case K::Unary:
      return fmt::format("{}({})", ir::unary_op_name(static_cast<ir::UnaryOpType>(e->op)),
                         args(e->args));
    case K::Binary:
      return fmt::format("{}({})", ir::binary_op_name(static_cast<ir::BinaryOpType>(e->op)),
                         args(e->args));
    case K::Select: return "select(" + args(e->args) + ")";
    case K::Cast: return fmt::format("cast<{}>({})", dtype(e->dtype), args(e->args));
    case K::Load: return fmt::format("{}[{}]", e->buffer->name, args(e->args));
    case K::IntOp:
      if (e->name == "ceilDiv") return "ceilDiv(" + args(e->args) + ")";
      return fmt::format("({} {} {})", print_expr(e->args.at(0)), e->name,
                         print_expr(e->args.at(1)));
  }
  internal_error << "kir: unknown expression kind " << static_cast<int>(e->kind);
  return "";  // not reached: internal_error throws
}

std::string print_kir(const Kernel& k) {
  Printer p;
  p.line(0, fmt::format("kernel (int{} indices{})", k.index_bits,
                        k.has_barrier ? ", barriers" : ""));
  for (const Param& param : k.params)
    p.line(1, fmt::format("param {}: {} rank {} ({})", param.buffer->name,
                          dtype(param.buffer->dtype), param.buffer->rank, source_name(param)));
  for (const auto& b : k.buffers) {
    if (b->is_param) continue;
    std::string size = b->dynamic_elements ? print_expr(b->dynamic_elements)
                                           : std::to_string(b->size);
    p.line(1, fmt::format("buffer {}: {}[{}] {}{}", b->name, dtype(b->dtype), size, memory(*b),
                          b->memory == ir::MemoryType::Shared
                              ? fmt::format(" at byte {}", b->shared_offset)
                              : ""));
  }
  for (const auto& [name, src] : k.size_sources)
    p.line(1, fmt::format("size {} = {}.size[{}]", name, src.first->name, src.second));
  for (const auto& [type, extents] : k.launch_extents) {
    std::string list;
    for (const ir::SizeExpr& e : extents) list += (list.empty() ? "" : ", ") + e.str();
    p.line(1, fmt::format("launch {}: max({})", ir::parallel_type_name(type), list));
  }
  if (k.reduce_workspace_bytes > 0)
    p.line(1, fmt::format("block-reduction workspace: {} B per thread at byte {}",
                          k.reduce_workspace_bytes, k.reduce_workspace_offset));
  for (const Kernel::VectorAccess& v : k.vector_accesses)
    p.line(1, fmt::format("vector access {} x {}", v.buffer->name, v.width));
  if (k.body) {
    p.line(0, "body");
    p.body(k.body->body, 1);
  } else {
    p.line(0, "body (not generated yet)");
  }
  return p.out;
}

}  // namespace schedlab::kir
